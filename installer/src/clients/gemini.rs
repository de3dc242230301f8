//! Gemini CLI: `~/.gemini/settings.json` (JSON with comments), `mcpServers`.

use super::{Client, ClientContext, ConfigFile, seen};

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
}
