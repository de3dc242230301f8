//! Qwen Code (npm `@qwen-code/qwen-code`, `qwen`), a fork of Gemini CLI: `mcpServers` in
//! `settings.json` under `$QWEN_HOME` (default `~/.qwen`), JSON with comments, in Gemini's
//! dialect: `command`/`args`, `httpUrl` for Streamable HTTP, `${VAR}` expanded in the
//! settings, `timeout` in milliseconds (its default is 10 minutes; scimcp writes it anyway,
//! so the deadline it tells the server is the one the client keeps).

use std::path::PathBuf;

use scimcp_core::install_state::ServerCommand;

use super::client::{Client, ClientContext, ConfigFile, RemoteEntry, seen};
use super::gemini::{gemini_entry, gemini_remote};
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct Qwen;

/// `$QWEN_HOME` when it is an absolute path, else `~/.qwen` (what `Storage.getGlobalQwenDir`
/// in Qwen Code 0.15 resolves).
fn dir(cx: ClientContext<'_>) -> PathBuf {
    cx.host
        .var_path("QWEN_HOME")
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| cx.host.home.join(".qwen"))
}

impl Client for Qwen {
    fn id(&self) -> &'static str {
        "qwen-code"
    }
    fn name(&self) -> &'static str {
        "Qwen Code"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(dir(cx).join("settings.json")))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[dir(cx)], &["qwen"])
    }
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        gemini_entry(server)
    }
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        gemini_remote(remote)
    }
}
