//! Claude Desktop: `claude_desktop_config.json`, `mcpServers`. On Windows the Store (MSIX)
//! build reads its config inside its package's virtualized AppData, not `%APPDATA%\Claude`;
//! that location wins whenever the package directory exists.

use std::path::PathBuf;

use super::client::{Client, ClientContext, ConfigFile, RemoteEntry};
use crate::host::Platform;
use crate::remote_server::RemoteServer;

pub struct ClaudeDesktop;

const FILE: &str = "claude_desktop_config.json";
/// The Claude Desktop MSIX package family name.
const MSIX_PACKAGE: &str = "Claude_pzs8sxrjxfjjc";

fn msix_dir(cx: ClientContext<'_>) -> PathBuf {
    cx.host.local_appdata().join("Packages").join(MSIX_PACKAGE)
}

fn config_dir(cx: ClientContext<'_>) -> PathBuf {
    match cx.host.platform {
        Platform::Windows if msix_dir(cx).is_dir() => msix_dir(cx)
            .join("LocalCache")
            .join("Roaming")
            .join("Claude"),
        // Linux has no official build; community builds use ~/.config/Claude.
        _ => cx.host.app_config().join("Claude"),
    }
}

impl Client for ClaudeDesktop {
    fn id(&self) -> &'static str {
        "claude-desktop"
    }
    fn name(&self) -> &'static str {
        "Claude Desktop"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(config_dir(cx).join(FILE)))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        config_dir(cx).is_dir() || msix_dir(cx).is_dir()
    }

    /// Claude Desktop reads no remote servers from its file; its connectors live in the app.
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        let token = match &remote.token_env {
            Some(_) => {
                " Its connectors authenticate with OAuth only, not with a bearer token: for a \
                 server that requires a token, use Claude Code or another client registered here."
            }
            None => "",
        };
        RemoteEntry::Manual(format!(
            "Claude Desktop does not read remote servers from claude_desktop_config.json. Add it \
             in the app: Settings > Connectors > Add custom connector, URL {}.{token}",
            remote.url
        ))
    }
}
