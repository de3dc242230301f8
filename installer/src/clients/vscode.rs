//! VS Code: the user `mcp.json` next to `settings.json`, and a workspace's
//! `.vscode/mcp.json`. Its key is `servers` (a `mcpServers` key is silently ignored) and
//! stdio entries carry `"type": "stdio"`.

use scimcp_core::install_state::ServerCommand;

use super::{Client, ClientContext, ConfigFile, seen, typed_stdio};
use crate::edit::Format;
use crate::entry::Entry;

pub struct VsCode;
pub struct VsCodeWorkspace;

impl Client for VsCode {
    fn id(&self) -> &'static str {
        "vscode"
    }
    fn name(&self) -> &'static str {
        "VS Code"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::new(
            cx.host.vscode_user_dir().join("mcp.json"),
            Format::Json,
            &["servers"],
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[cx.host.vscode_user_dir()], &["code"])
    }
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        typed_stdio(server)
    }
}

impl Client for VsCodeWorkspace {
    fn id(&self) -> &'static str {
        "vscode-workspace"
    }
    fn name(&self) -> &'static str {
        "VS Code (workspace .vscode/mcp.json)"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        cx.project.map(|p| {
            ConfigFile::new(
                p.join(".vscode").join("mcp.json"),
                Format::Json,
                &["servers"],
            )
        })
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        cx.project.is_some()
    }
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        typed_stdio(server)
    }
    fn selected_by_default(&self) -> bool {
        false
    }
}
