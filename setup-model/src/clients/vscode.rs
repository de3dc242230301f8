//! VS Code: the user `mcp.json` next to `settings.json`, and a workspace's
//! `.vscode/mcp.json`. Its key is `servers` (a `mcpServers` key is silently ignored) and
//! stdio entries carry `"type": "stdio"`.
//!
//! A remote entry is `"type": "http"` with the token as `${input:<entry>-token}`, and an item
//! in the file's top-level `inputs` list defines that input as a password prompt: VS Code asks
//! for the token the first time it starts the server and keeps it in its secret storage, so
//! neither the file nor the environment ever holds it.

use scimcp_core::install_state::ServerCommand;

use super::client::{
    Client, ClientContext, ConfigFile, ListItem, RemoteEntry, seen, typed_stdio, url_headers,
};
use crate::edit::Format;
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct VsCode;

/// The `inputs` id of `name`'s token prompt.
pub fn input_id(name: &str) -> String {
    format!("{name}-token")
}

/// `{"type": "http", "url", "headers": {"Authorization": "Bearer ${input:ID}"}}` and the
/// password prompt `ID` names.
fn vscode_remote(name: &str, remote: &RemoteServer) -> RemoteEntry {
    let id = input_id(name);
    let entry = url_headers(vec![("type", Entry::str("http"))], "url", remote, |_| {
        format!("${{input:{id}}}")
    });
    let item = remote.token_env.as_ref().map(|_| ListItem {
        list: "inputs",
        id: id.clone(),
        value: Entry::map([
            ("id", Entry::str(&id)),
            ("type", Entry::str("promptString")),
            (
                "description",
                Entry::str(format!(
                    "Token for the scimcp server {} (from `scimcp token add` on the server)",
                    remote.url
                )),
            ),
            ("password", Entry::Bool(true)),
        ]),
    });
    RemoteEntry::Entry { entry, item }
}
pub struct VsCodeWorkspace;

impl Client for VsCode {
    fn id(&self) -> &'static str {
        "vscode"
    }
    fn name(&self) -> &'static str {
        "VS Code"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::new(
            cx.host.vscode_user_dir().join("mcp.json"),
            Format::Json,
            &["servers"],
        ))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[cx.host.vscode_user_dir()], &["code"])
    }
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        typed_stdio(server)
    }
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry {
        vscode_remote(name, remote)
    }
}

impl Client for VsCodeWorkspace {
    fn id(&self) -> &'static str {
        "vscode-workspace"
    }
    fn name(&self) -> &'static str {
        "VS Code (workspace .vscode/mcp.json)"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        cx.project.map(|p| {
            ConfigFile::new(
                p.join(".vscode").join("mcp.json"),
                Format::Json,
                &["servers"],
            )
        })
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        cx.project.is_some()
    }
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        typed_stdio(server)
    }
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry {
        vscode_remote(name, remote)
    }
    fn selected_by_default(&self) -> bool {
        false
    }
}
