//! Continue: a standalone block file `~/.continue/mcpServers/scimcp-<adapter>.yaml`.
//!
//! Why a file of its own rather than an edit of `config.yaml`: Continue's `mcpServers` is a
//! *list* of `{name, …}` items, which a bounded text edit cannot locate as reliably as a
//! mapping key, and `config.yaml` is often the user's most hand-tuned file. A block file in
//! `mcpServers/` is loaded next to it; scimcp owns every byte of it, so install writes it,
//! repair rewrites it, and uninstall deletes it without touching anything the user wrote.

use std::path::PathBuf;

use scimcp_core::install_state::ServerCommand;

use super::client::{Client, ClientContext, ConfigFile, RemoteEntry, path_text, seen};
use crate::edit::Format;
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct Continue;

fn dir(cx: ClientContext<'_>) -> PathBuf {
    cx.host.home.join(".continue")
}

impl Client for Continue {
    fn id(&self) -> &'static str {
        "continue"
    }
    fn name(&self) -> &'static str {
        "Continue"
    }
    fn file(&self, cx: ClientContext<'_>, name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::new(
            dir(cx).join("mcpServers").join(format!("{name}.yaml")),
            Format::OwnedYaml,
            &[],
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[dir(cx)], &["cn"])
    }
    fn entry(&self, name: &str, server: &ServerCommand) -> Entry {
        block(
            name,
            Entry::map([
                ("name", Entry::str(name)),
                ("type", Entry::str("stdio")),
                ("command", Entry::str(path_text(&server.command))),
                ("args", Entry::strs(server.args.iter().cloned())),
            ]),
        )
    }
    /// `type: streamable-http, url`, the token as Continue's secret reference
    /// `${{ secrets.VAR }}` in `requestOptions.headers`.
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry {
        let mut server = vec![
            ("name".to_string(), Entry::str(name)),
            ("type".to_string(), Entry::str("streamable-http")),
            ("url".to_string(), Entry::str(&remote.url)),
        ];
        if let Some(bearer) = remote.bearer(|v| format!("${{{{ secrets.{v} }}}}")) {
            server.push((
                "requestOptions".to_string(),
                Entry::map([(
                    "headers",
                    Entry::map([("Authorization", Entry::str(bearer))]),
                )]),
            ));
        }
        RemoteEntry::entry(block(name, Entry::Map(server)))
    }
}

/// A block file holding the one server `server`.
fn block(name: &str, server: Entry) -> Entry {
    Entry::map([
        ("name", Entry::str(name)),
        ("version", Entry::str(scimcp_core::version::SUITE_VERSION)),
        ("schema", Entry::str("v1")),
        ("mcpServers", Entry::List(vec![server])),
    ])
}
