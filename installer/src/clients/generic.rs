//! The generic fallback: `<data root>/clients/mcp.json` in the Claude Desktop shape, for
//! any other MCP client (point it at this file, or copy the entry from it). Always selected.

use super::{Client, ClientContext, ConfigFile};

pub struct Generic;

impl Client for Generic {
    fn id(&self) -> &'static str {
        "generic"
    }
    fn name(&self) -> &'static str {
        "Other clients (mcp.json)"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(
            cx.layout.clients_dir().join("mcp.json"),
        ))
    }
    fn detect(&self, _cx: ClientContext<'_>) -> bool {
        true
    }
}
