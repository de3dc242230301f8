//! OpenAI Codex CLI: `[mcp_servers.scimcp-<adapter>]` in `$CODEX_HOME/config.toml` (default
//! `~/.codex`). `toml_edit` escapes Windows backslashes correctly, the mistake that made
//! Codex hang on start-up with hand-written paths.

use std::path::PathBuf;

use scimcp_core::install_state::ServerCommand;

use super::client::{
    Client, ClientContext, ConfigFile, RemoteEntry, TOOL_TIMEOUT_S, path_text, seen, timed_args,
};
use crate::edit::Format;
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct Codex;

fn home(cx: ClientContext<'_>) -> PathBuf {
    cx.host
        .var_path("CODEX_HOME")
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| cx.host.home.join(".codex"))
}

impl Client for Codex {
    fn id(&self) -> &'static str {
        "codex"
    }
    fn name(&self) -> &'static str {
        "OpenAI Codex CLI"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::new(
            home(cx).join("config.toml"),
            Format::Toml,
            &["mcp_servers"],
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[home(cx)], &["codex"])
    }

    /// `command`, `args` and `tool_timeout_sec`: without it Codex gives up on a call after
    /// 300 s, exactly the server's longest wait.
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        Entry::map([
            ("command", Entry::str(path_text(&server.command))),
            ("args", Entry::strs(timed_args(server))),
            ("tool_timeout_sec", Entry::Int(TOOL_TIMEOUT_S)),
        ])
    }

    /// `url` and `bearer_token_env_var`: Codex reads the token from that variable itself.
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        let mut pairs = vec![("url".to_string(), Entry::str(&remote.url))];
        if let Some(var) = &remote.token_env {
            pairs.push(("bearer_token_env_var".to_string(), Entry::str(var)));
        }
        pairs.push(("tool_timeout_sec".to_string(), Entry::Int(TOOL_TIMEOUT_S)));
        RemoteEntry::entry(Entry::Map(pairs))
    }
}
