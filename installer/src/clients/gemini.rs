//! Gemini CLI: `~/.gemini/settings.json` (JSON with comments), `mcpServers`.

use super::{Client, ClientContext, ConfigFile, RemoteEntry, dollar_brace, seen, url_headers};
use crate::remote_server::RemoteServer;

pub struct Gemini;

impl Client for Gemini {
    fn id(&self) -> &'static str {
        "gemini"
    }
    fn name(&self) -> &'static str {
        "Gemini CLI"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(
            cx.host.home.join(".gemini").join("settings.json"),
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[cx.host.home.join(".gemini")], &["gemini"])
    }

    /// `httpUrl` (Streamable HTTP; `url` would mean SSE), `headers` with `${VAR}`.
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        RemoteEntry::entry(url_headers(Vec::new(), "httpUrl", remote, dollar_brace))
    }
}
