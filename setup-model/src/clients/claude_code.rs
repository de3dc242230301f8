//! Claude Code. User scope lives in `~/.claude.json` (top-level `mcpServers`), a file the
//! running app rewrites constantly; so when `claude` is on PATH registration goes through
//! `claude mcp add-json --scope user` / `claude mcp remove --scope user`, and only without
//! it does scimcp edit the file itself (under its lock, atomically). Project scope is the
//! repository's `.mcp.json`.

use std::path::PathBuf;
use std::process::Command;

use scimcp_core::install_state::ServerCommand;

use super::{
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
        cx.host.which("claude").map(|program| ClaudeCli {
            program,
            envs: cx
                .host
                .vars()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
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

/// The `claude` program and the environment to run it in.
#[derive(Debug, Clone)]
pub struct ClaudeCli {
    pub program: PathBuf,
    envs: Vec<(String, std::ffi::OsString)>,
}

/// The `claude` CLI failed.
#[derive(Debug, thiserror::Error)]
#[error("`{program} {args}` did not register scimcp: {detail}")]
pub struct CliError {
    pub program: String,
    pub args: String,
    pub detail: String,
}

impl ClaudeCli {
    fn run(&self, args: &[&str]) -> Result<(), CliError> {
        let mut cmd = Command::new(&self.program);
        cmd.args(args)
            .env_clear()
            .envs(self.envs.iter().map(|(k, v)| (k, v)));
        let step = format!("`claude {}`", args[..2.min(args.len())].join(" "));
        let limit = crate::steps::limit(crate::steps::CLIENT_CLI);
        scimcp_process::run(scimcp_process::Step::new(&step, cmd).timeout(limit))
            .and_then(|c| c.check())
            .map(|_| ())
            .map_err(|e| CliError {
                program: self.program.display().to_string(),
                args: args.join(" "),
                detail: e.to_string(),
            })
    }

    /// `claude mcp add-json --scope user NAME JSON`.
    pub fn add(&self, name: &str, entry: &serde_json::Value) -> Result<(), CliError> {
        let json = entry.to_string();
        self.run(&["mcp", "add-json", "--scope", "user", name, &json])
    }

    /// `claude mcp remove --scope user NAME`.
    pub fn remove(&self, name: &str) -> Result<(), CliError> {
        self.run(&["mcp", "remove", "--scope", "user", name])
    }
}
