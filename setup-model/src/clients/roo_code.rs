//! Roo Code (VS Code extension): `mcp_settings.json` in its global storage, `mcpServers`.

use std::path::PathBuf;

use super::client::{Client, ClientContext, ConfigFile, RemoteEntry, unless_token, url_headers};
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct RooCode;

fn storage(cx: ClientContext<'_>) -> PathBuf {
    cx.host
        .vscode_user_dir()
        .join("globalStorage")
        .join("rooveterinaryinc.roo-cline")
}

impl Client for RooCode {
    fn id(&self) -> &'static str {
        "roo-code"
    }
    fn name(&self) -> &'static str {
        "Roo Code"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(
            storage(cx).join("settings").join("mcp_settings.json"),
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        storage(cx).is_dir()
    }

    /// `{"type": "streamable-http", "url"}`; no documented interpolation, so with a token
    /// the entry is added by hand.
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry {
        unless_token(self.name(), "mcpServers", name, remote, |r| {
            url_headers(
                vec![("type", Entry::str("streamable-http"))],
                "url",
                r,
                |v| v.into(),
            )
        })
    }
}
