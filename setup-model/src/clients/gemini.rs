//! Gemini CLI: `~/.gemini/settings.json` (JSON with comments), `mcpServers`.

use scimcp_core::install_state::ServerCommand;

use super::client::{
    Client, ClientContext, ConfigFile, RemoteEntry, TOOL_TIMEOUT_MS, dollar_brace, path_text, seen,
    timed_args, url_headers, with,
};
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

/// `{"command", "args", "timeout"}`: Gemini CLI and its fork Qwen Code take the per-call
/// deadline in milliseconds.
pub fn gemini_entry(server: &ServerCommand) -> Entry {
    Entry::map([
        ("command", Entry::str(path_text(&server.command))),
        ("args", Entry::strs(timed_args(server))),
        ("timeout", Entry::Int(TOOL_TIMEOUT_MS)),
    ])
}

/// `httpUrl` (Streamable HTTP; `url` would mean SSE), `headers` with `${VAR}`, `timeout`.
pub fn gemini_remote(remote: &RemoteServer) -> RemoteEntry {
    let entry = url_headers(Vec::new(), "httpUrl", remote, dollar_brace);
    RemoteEntry::entry(with(entry, [("timeout", Entry::Int(TOOL_TIMEOUT_MS))]))
}

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
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        gemini_entry(server)
    }
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        gemini_remote(remote)
    }
}
