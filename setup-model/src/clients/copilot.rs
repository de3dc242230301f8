//! GitHub Copilot CLI (npm `@github/copilot`, `copilot`): `mcpServers` in
//! `mcp-config.json` under `$COPILOT_HOME` (default `~/.copilot`). The shape is the one
//! `copilot mcp add` 1.0.102 writes: `"type": "local"` with `command`/`args`, or
//! `"type": "http"` with `url`/`headers` (Copilot expands `${VAR}` in a header when it
//! connects: checked against a loopback listener), `tools` (`["*"]`: every tool) and
//! `timeout`, the per-call deadline in milliseconds.

use std::path::PathBuf;

use scimcp_core::install_state::ServerCommand;

use super::client::{
    Client, ClientContext, ConfigFile, RemoteEntry, TOOL_TIMEOUT_MS, dollar_brace, path_text, seen,
    timed_args, url_headers, with,
};
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct Copilot;

/// `$COPILOT_HOME` when it is an absolute path, else `~/.copilot` (`copilot help
/// environment`).
fn dir(cx: ClientContext<'_>) -> PathBuf {
    cx.host
        .var_path("COPILOT_HOME")
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| cx.host.home.join(".copilot"))
}

/// `tools` and `timeout`, after the rest of an entry.
fn tail() -> [(&'static str, Entry); 2] {
    [
        ("tools", Entry::strs(["*"])),
        ("timeout", Entry::Int(TOOL_TIMEOUT_MS)),
    ]
}

impl Client for Copilot {
    fn id(&self) -> &'static str {
        "copilot-cli"
    }
    fn name(&self) -> &'static str {
        "GitHub Copilot CLI"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(dir(cx).join("mcp-config.json")))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[dir(cx)], &["copilot"])
    }
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        let entry = Entry::map([
            ("type", Entry::str("local")),
            ("command", Entry::str(path_text(&server.command))),
            ("args", Entry::strs(timed_args(server))),
        ]);
        with(entry, tail())
    }
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        let entry = url_headers(
            vec![("type", Entry::str("http"))],
            "url",
            remote,
            dollar_brace,
        );
        RemoteEntry::entry(with(entry, tail()))
    }
}
