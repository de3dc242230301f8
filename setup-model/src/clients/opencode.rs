//! OpenCode: `mcp.scimcp-<adapter>` with `type: local` and the whole command line as one array, in
//! `~/.config/opencode/opencode.json` (`opencode.jsonc` when only that one exists: the CST
//! editor keeps its comments).

use std::path::PathBuf;

use scimcp_core::install_state::ServerCommand;

use super::client::{Client, ClientContext, ConfigFile, RemoteEntry, path_text, seen, url_headers};
use crate::edit::Format;
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct OpenCode;

fn dir(cx: ClientContext<'_>) -> PathBuf {
    cx.host.xdg_config().join("opencode")
}

impl Client for OpenCode {
    fn id(&self) -> &'static str {
        "opencode"
    }
    fn name(&self) -> &'static str {
        "OpenCode"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        let json = dir(cx).join("opencode.json");
        let jsonc = dir(cx).join("opencode.jsonc");
        let path = if !json.exists() && jsonc.is_file() {
            jsonc
        } else {
            json
        };
        Some(ConfigFile::new(path, Format::Json, &["mcp"]))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[dir(cx)], &["opencode"])
    }
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        let mut command = vec![path_text(&server.command)];
        command.extend(server.args.iter().cloned());
        Entry::map([
            ("type", Entry::str("local")),
            ("command", Entry::strs(command)),
            ("enabled", Entry::Bool(true)),
        ])
    }
    /// `type: remote, url, headers` with OpenCode's `{env:VAR}` substitution.
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        let Entry::Map(mut pairs) =
            url_headers(vec![("type", Entry::str("remote"))], "url", remote, |v| {
                format!("{{env:{v}}}")
            })
        else {
            unreachable!("url_headers builds a map")
        };
        pairs.push(("enabled".to_string(), Entry::Bool(true)));
        RemoteEntry::entry(Entry::Map(pairs))
    }
}
