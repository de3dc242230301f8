//! Goose: `extensions.scimcp-<adapter>` in `config.yaml` (`~/.config/goose`, or
//! `%APPDATA%\Block\goose\config` on Windows), edited with the comment-preserving bounded
//! YAML editor.

use std::path::PathBuf;

use scimcp_core::install_state::ServerCommand;

use super::{Client, ClientContext, ConfigFile, path_text, seen};
use crate::edit::Format;
use crate::entry::Entry;
use crate::host::Platform;

pub struct Goose;

fn dir(cx: ClientContext<'_>) -> PathBuf {
    match cx.host.platform {
        Platform::Windows => cx.host.appdata().join("Block").join("goose").join("config"),
        _ => cx.host.xdg_config().join("goose"),
    }
}

impl Client for Goose {
    fn id(&self) -> &'static str {
        "goose"
    }
    fn name(&self) -> &'static str {
        "Goose"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::new(
            dir(cx).join("config.yaml"),
            Format::Yaml,
            &["extensions"],
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[dir(cx)], &["goose"])
    }
    fn entry(&self, name: &str, server: &ServerCommand) -> Entry {
        Entry::map([
            ("enabled", Entry::Bool(true)),
            ("type", Entry::str("stdio")),
            ("name", Entry::str(name)),
            (
                "description",
                Entry::str("Scientific analyses through scimcp"),
            ),
            ("cmd", Entry::str(path_text(&server.command))),
            ("args", Entry::strs(server.args.iter().cloned())),
            ("envs", Entry::Map(Vec::new())),
            ("timeout", Entry::Int(300)),
        ])
    }
}
