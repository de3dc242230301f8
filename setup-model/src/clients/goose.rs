//! Goose: `extensions.scimcp-<adapter>` in `config.yaml` (`~/.config/goose`, or
//! `%APPDATA%\Block\goose\config` on Windows), edited with the comment-preserving bounded
//! YAML editor.

use std::path::PathBuf;

use scimcp_core::install_state::ServerCommand;

use super::client::{
    Client, ClientContext, ConfigFile, RemoteEntry, TOOL_TIMEOUT_S, dollar_brace, path_text, seen,
    timed_args,
};
use crate::edit::Format;
use crate::entry::Entry;
use crate::host::Platform;
use crate::remote_server::RemoteServer;

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
            ("args", Entry::strs(timed_args(server))),
            ("envs", Entry::Map(Vec::new())),
            ("timeout", Entry::Int(TOOL_TIMEOUT_S)),
        ])
    }
    /// `type: streamable_http, uri, headers`; the token variable is listed in `env_keys`
    /// (Goose takes it from the environment or its keyring) and named as `${VAR}` in the
    /// header, which Goose fills in from those keys.
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry {
        let mut pairs = vec![
            ("enabled".to_string(), Entry::Bool(true)),
            ("type".to_string(), Entry::str("streamable_http")),
            ("name".to_string(), Entry::str(name)),
            (
                "description".to_string(),
                Entry::str("Scientific analyses on a scimcp server"),
            ),
            ("uri".to_string(), Entry::str(&remote.url)),
        ];
        if let (Some(var), Some(bearer)) = (&remote.token_env, remote.bearer(dollar_brace)) {
            pairs.push(("env_keys".to_string(), Entry::strs([var.clone()])));
            pairs.push((
                "headers".to_string(),
                Entry::map([("Authorization", Entry::str(bearer))]),
            ));
        }
        pairs.push(("timeout".to_string(), Entry::Int(TOOL_TIMEOUT_S)));
        RemoteEntry::entry(Entry::Map(pairs))
    }
}
