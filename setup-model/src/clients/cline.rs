//! Cline: `cline_mcp_settings.json`, `mcpServers`. The VS Code extension keeps it in its
//! global storage; the CLI and newer builds under `~/.cline/data/settings`. The extension's
//! file wins when the extension's storage exists.

use std::path::PathBuf;

use super::client::{Client, ClientContext, ConfigFile, RemoteEntry, unless_token, url_headers};
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct Cline;

const FILE: &str = "cline_mcp_settings.json";

fn extension_dir(cx: ClientContext<'_>) -> PathBuf {
    cx.host
        .vscode_user_dir()
        .join("globalStorage")
        .join("saoudrizwan.claude-dev")
}

fn cli_dir(cx: ClientContext<'_>) -> PathBuf {
    cx.host.home.join(".cline").join("data")
}

impl Client for Cline {
    fn id(&self) -> &'static str {
        "cline"
    }
    fn name(&self) -> &'static str {
        "Cline"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        let dir = if extension_dir(cx).is_dir() {
            extension_dir(cx)
        } else {
            cli_dir(cx)
        };
        Some(ConfigFile::mcp_servers(dir.join("settings").join(FILE)))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        extension_dir(cx).is_dir() || cli_dir(cx).is_dir() || cx.host.which("cline").is_some()
    }

    /// `{"type": "streamableHttp", "url"}` (without `type` Cline falls back to SSE); no
    /// documented interpolation, so with a token the entry is added by hand.
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry {
        unless_token(self.name(), "mcpServers", name, remote, |r| {
            url_headers(
                vec![("type", Entry::str("streamableHttp"))],
                "url",
                r,
                |v| v.into(),
            )
        })
    }
}
