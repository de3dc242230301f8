//! Windsurf: `~/.codeium/windsurf/mcp_config.json`, `mcpServers`.

use super::{Client, ClientContext, ConfigFile, seen};

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
}
