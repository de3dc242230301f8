//! Kiro: `~/.kiro/settings/mcp.json`, `mcpServers`.

use super::{Client, ClientContext, ConfigFile, seen};

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
}
