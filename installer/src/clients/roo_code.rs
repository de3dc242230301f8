//! Roo Code (VS Code extension): `mcp_settings.json` in its global storage, `mcpServers`.

use std::path::PathBuf;

use super::{Client, ClientContext, ConfigFile};

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
}
