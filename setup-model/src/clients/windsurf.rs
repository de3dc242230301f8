//! Windsurf: `~/.codeium/windsurf/mcp_config.json`, `mcpServers`.

use super::client::{Client, ClientContext, ConfigFile, RemoteEntry, env_colon, seen, url_headers};
use crate::remote_server::RemoteServer;

pub struct Windsurf;

impl Client for Windsurf {
    fn id(&self) -> &'static str {
        "windsurf"
    }
    fn name(&self) -> &'static str {
        "Windsurf"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(
            cx.host
                .home
                .join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(
            cx,
            &[cx.host.home.join(".codeium").join("windsurf")],
            &["windsurf"],
        )
    }

    /// `serverUrl` (a plain `url` does not connect), `headers` with `${env:VAR}`.
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        RemoteEntry::entry(url_headers(Vec::new(), "serverUrl", remote, env_colon))
    }
}
