//! Cursor: `~/.cursor/mcp.json` (global) and `<project>/.cursor/mcp.json`, `mcpServers`.

use super::client::{Client, ClientContext, ConfigFile, RemoteEntry, env_colon, seen, url_headers};
use crate::remote_server::RemoteServer;

/// `{"url", "headers": {"Authorization": "Bearer ${env:VAR}"}}`.
fn cursor_remote(remote: &RemoteServer) -> RemoteEntry {
    RemoteEntry::entry(url_headers(Vec::new(), "url", remote, env_colon))
}

pub struct Cursor;
pub struct CursorProject;

impl Client for Cursor {
    fn id(&self) -> &'static str {
        "cursor"
    }
    fn name(&self) -> &'static str {
        "Cursor"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(
            cx.host.home.join(".cursor").join("mcp.json"),
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[cx.host.home.join(".cursor")], &["cursor"])
    }
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        cursor_remote(remote)
    }
}

impl Client for CursorProject {
    fn id(&self) -> &'static str {
        "cursor-project"
    }
    fn name(&self) -> &'static str {
        "Cursor (project .cursor/mcp.json)"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        cx.project
            .map(|p| ConfigFile::mcp_servers(p.join(".cursor").join("mcp.json")))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        cx.project.is_some()
    }
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        cursor_remote(remote)
    }
    fn selected_by_default(&self) -> bool {
        false
    }
}
