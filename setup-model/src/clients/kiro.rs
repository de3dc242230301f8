//! Kiro: `~/.kiro/settings/mcp.json`, `mcpServers`.

use super::client::{
    Client, ClientContext, ConfigFile, RemoteEntry, seen, unless_token, url_headers,
};
use crate::remote_server::RemoteServer;

pub struct Kiro;

impl Client for Kiro {
    fn id(&self) -> &'static str {
        "kiro"
    }
    fn name(&self) -> &'static str {
        "Kiro"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(
            cx.host.home.join(".kiro").join("settings").join("mcp.json"),
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[cx.host.home.join(".kiro")], &["kiro"])
    }

    /// `{"url"}`; no documented interpolation, so with a token the entry is added by hand.
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry {
        unless_token(self.name(), "mcpServers", name, remote, |r| {
            url_headers(Vec::new(), "url", r, |v| v.into())
        })
    }
}
