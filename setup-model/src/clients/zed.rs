//! Zed: `context_servers` in its JSONC `settings.json` (comments and trailing commas are
//! normal there, so the CST editor matters most here). `~/.config/zed` on Linux (honouring
//! `XDG_CONFIG_HOME`) and macOS, `%APPDATA%\Zed` on Windows.

use std::path::PathBuf;

use scimcp_core::install_state::ServerCommand;

use super::client::{
    Client, ClientContext, ConfigFile, RemoteEntry, path_text, seen, unless_token, url_headers,
};
use crate::edit::Format;
use crate::entry::Entry;
use crate::host::Platform;
use crate::remote_server::RemoteServer;

pub struct Zed;

fn dir(cx: ClientContext<'_>) -> PathBuf {
    match cx.host.platform {
        Platform::Windows => cx.host.appdata().join("Zed"),
        _ => cx.host.xdg_config().join("zed"),
    }
}

impl Client for Zed {
    fn id(&self) -> &'static str {
        "zed"
    }
    fn name(&self) -> &'static str {
        "Zed"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::new(
            dir(cx).join("settings.json"),
            Format::Json,
            &["context_servers"],
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[dir(cx)], &["zed"])
    }
    /// `command, args, env`, the custom-server shape of Zed's documentation.
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        Entry::map([
            ("command", Entry::str(path_text(&server.command))),
            ("args", Entry::strs(server.args.iter().cloned())),
            ("env", Entry::Map(Vec::new())),
        ])
    }
    /// `{"url"}`; Zed documents no interpolation in `headers`, so with a token the entry is
    /// added by hand.
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry {
        unless_token(self.name(), "context_servers", name, remote, |r| {
            url_headers(Vec::new(), "url", r, |v| v.into())
        })
    }
}
