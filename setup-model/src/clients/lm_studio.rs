//! LM Studio: `~/.lmstudio/mcp.json`, `mcpServers` (Cursor notation).

use super::client::{
    Client, ClientContext, ConfigFile, RemoteEntry, seen, unless_token, url_headers,
};
use crate::remote_server::RemoteServer;

pub struct LmStudio;

impl Client for LmStudio {
    fn id(&self) -> &'static str {
        "lm-studio"
    }
    fn name(&self) -> &'static str {
        "LM Studio"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(
            cx.host.home.join(".lmstudio").join("mcp.json"),
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[cx.host.home.join(".lmstudio")], &["lms"])
    }

    /// `{"url"}` (Cursor notation); no documented interpolation, so with a token the entry is
    /// added by hand.
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry {
        unless_token(self.name(), "mcpServers", name, remote, |r| {
            url_headers(Vec::new(), "url", r, |v| v.into())
        })
    }
}
