//! LM Studio: `~/.lmstudio/mcp.json`, `mcpServers` (Cursor notation).

use super::{Client, ClientContext, ConfigFile, seen};

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
}
