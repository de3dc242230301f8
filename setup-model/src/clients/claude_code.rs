//! Claude Code. User scope lives in `~/.claude.json` (top-level `mcpServers`), a file the
//! running app rewrites constantly; so when `claude` is on PATH registration goes through
//! `claude mcp add-json --scope user` / `claude mcp remove --scope user`, and only without
//! it does scimcp edit the file itself (under its lock, atomically). Project scope is the
//! repository's `.mcp.json`.

use scimcp_core::install_state::ServerCommand;

use super::claude_cli::ClaudeCli;
use super::client::{
    Client, ClientContext, ConfigFile, RemoteEntry, TOOL_TIMEOUT_MS, dollar_brace, path_text,
    timed_args, url_headers, with,
};
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct ClaudeCode;
pub struct ClaudeCodeProject;

/// `{"type": "http", "url", "headers": {"Authorization": "Bearer ${VAR}"}, "timeout"}`:
/// Claude Code expands `${VAR}` in `url` and `headers` of user and project entries.
fn claude_remote(remote: &RemoteServer) -> RemoteEntry {
    let entry = url_headers(
        vec![("type", Entry::str("http"))],
        "url",
        remote,
        dollar_brace,
    );
    RemoteEntry::entry(with(entry, [("timeout", Entry::Int(TOOL_TIMEOUT_MS))]))
}

/// `{"type": "stdio", "command", "args", "env": {}, "timeout"}`: the shape `claude mcp
/// add-json` stores (2.1.332 keeps `timeout`, the per-call deadline in ms), so a CLI
/// registration and a file edit produce the same entry.
fn claude_entry(server: &ServerCommand) -> Entry {
    Entry::map([
        ("type", Entry::str("stdio")),
        ("command", Entry::str(path_text(&server.command))),
        ("args", Entry::strs(timed_args(server))),
        ("env", Entry::Map(Vec::new())),
        ("timeout", Entry::Int(TOOL_TIMEOUT_MS)),
    ])
}

impl Client for ClaudeCode {
    fn id(&self) -> &'static str {
        "claude-code"
    }
    fn name(&self) -> &'static str {
        "Claude Code"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(cx.host.home.join(".claude.json")))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        cx.host.home.join(".claude.json").is_file()
            || cx.host.home.join(".claude").is_dir()
            || cx.host.which("claude").is_some()
    }
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        claude_entry(server)
    }
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        claude_remote(remote)
    }
    fn cli(&self, cx: ClientContext<'_>) -> Option<ClaudeCli> {
        cx.host
            .which("claude")
            .map(|program| ClaudeCli::new(program, cx.host))
    }
}

impl Client for ClaudeCodeProject {
    fn id(&self) -> &'static str {
        "claude-code-project"
    }
    fn name(&self) -> &'static str {
        "Claude Code (project .mcp.json)"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        cx.project
            .map(|p| ConfigFile::mcp_servers(p.join(".mcp.json")))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        cx.project.is_some()
    }
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        claude_entry(server)
    }
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        claude_remote(remote)
    }
    fn selected_by_default(&self) -> bool {
        false
    }
}
