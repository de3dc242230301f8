//! What every client module builds on: the [`Client`] trait, the [`ClientContext`] it is
//! asked in, the [`ConfigFile`] and [`RemoteEntry`] it answers with, and the entry helpers
//! the dialects share. It lives below the client modules (mod.rs only lists them), so no
//! client imports the file that names it.

use std::path::{Path, PathBuf};

use scimcp_core::install_state::ServerCommand;

use super::claude_cli::ClaudeCli;

use crate::edit::{Format, Slot};
use crate::entry::Entry;
use crate::host::Host;
use crate::layout::Layout;
use crate::remote_server::RemoteServer;

/// What a client's paths are computed from.
#[derive(Debug, Clone, Copy)]
pub struct ClientContext<'a> {
    pub host: &'a Host,
    pub layout: &'a Layout,
    /// The project directory for project-scope clients (`--project`).
    pub project: Option<&'a Path>,
}

/// A configuration file and where scimcp's entry sits in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    pub path: PathBuf,
    pub format: Format,
    /// Keys of the object that holds the servers (`["mcpServers"]`, `["servers"]`, …).
    pub container: &'static [&'static str],
}

impl ConfigFile {
    pub fn new(path: PathBuf, format: Format, container: &'static [&'static str]) -> ConfigFile {
        ConfigFile {
            path,
            format,
            container,
        }
    }

    /// `mcpServers` in a JSON file: the shape most clients share.
    pub fn mcp_servers(path: PathBuf) -> ConfigFile {
        ConfigFile::new(path, Format::Json, &["mcpServers"])
    }

    /// Where the entry called `name` sits in the file.
    pub fn slot<'a>(&self, name: &'a str) -> Slot<'a> {
        Slot {
            container: self.container,
            name,
        }
    }
}

/// One MCP client.
pub trait Client: Send + Sync {
    /// The id used with `--client` (kebab-case, stable).
    fn id(&self) -> &'static str;
    /// The product's name as users know it.
    fn name(&self) -> &'static str;
    /// The file scimcp edits on this host for the entry called `name`; `None` when there is
    /// none to edit (a client configured only in its UI, or a project-scope client without
    /// `--project`).
    fn file(&self, cx: ClientContext<'_>, name: &str) -> Option<ConfigFile>;
    /// Whether the client looks installed for this user.
    fn detect(&self, cx: ClientContext<'_>) -> bool;
    /// The entry called `name` running `server`, in this client's dialect.
    fn entry(&self, _name: &str, server: &ServerCommand) -> Entry {
        command_args(server)
    }
    /// The client's own command-line tool, when registration should go through it.
    fn cli(&self, _cx: ClientContext<'_>) -> Option<ClaudeCli> {
        None
    }
    /// The entry called `name` for the remote server `remote`, in this client's dialect for
    /// Streamable HTTP servers; or what to do by hand when the client cannot take it in its
    /// file without the secret itself.
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry;
    /// What to tell the user for a client that has no file scimcp can write.
    fn manual_steps(&self, _name: &str, _server: &ServerCommand) -> Option<String> {
        None
    }
    /// Whether the default selection (no `--client`) includes it when it is detected.
    fn selected_by_default(&self) -> bool {
        true
    }
}

impl std::fmt::Debug for dyn Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// How a client takes a remote server.
#[derive(Debug, Clone, PartialEq)]
pub enum RemoteEntry {
    /// This entry in the client's file, and an item kept beside it (VS Code's prompt for
    /// the token).
    Entry {
        entry: Entry,
        item: Option<ListItem>,
    },
    /// Nothing scimcp can write: these steps instead.
    Manual(String),
}

impl RemoteEntry {
    /// An entry with nothing beside it.
    pub fn entry(entry: Entry) -> RemoteEntry {
        RemoteEntry::Entry { entry, item: None }
    }
}

/// An object scimcp keeps in a top-level list of the same file as its entry, found by its
/// `id`: VS Code's `inputs` item that its `${input:…}` token reference names.
#[derive(Debug, Clone, PartialEq)]
pub struct ListItem {
    /// The top-level key of the list (`inputs`).
    pub list: &'static str,
    /// The item's `id`.
    pub id: String,
    pub value: Entry,
}

/// `{"url": …}` or, with a token, `{"url": …, "headers": {"Authorization": "Bearer …"}}`
/// under the keys a client names them with (`url`/`serverUrl`/`httpUrl`, `headers`), after
/// the `lead` pairs (a `type`). `reference` renders the token variable the client's way.
pub fn url_headers(
    lead: Vec<(&str, Entry)>,
    url_key: &str,
    remote: &RemoteServer,
    reference: impl Fn(&str) -> String,
) -> Entry {
    let mut pairs: Vec<(String, Entry)> =
        lead.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    pairs.push((url_key.to_string(), Entry::str(&remote.url)));
    if let Some(bearer) = remote.bearer(reference) {
        pairs.push((
            "headers".to_string(),
            Entry::map([("Authorization", Entry::str(bearer))]),
        ));
    }
    Entry::Map(pairs)
}

/// `${NAME}`: the interpolation of Claude Code, Gemini CLI and Goose.
pub fn dollar_brace(var: &str) -> String {
    format!("${{{var}}}")
}

/// `${env:NAME}`: the interpolation of Cursor and Windsurf.
pub fn env_colon(var: &str) -> String {
    format!("${{env:{var}}}")
}

/// For a client that cannot read the token from anywhere but its own file: the entry when
/// the server takes no token (`--no-token`); otherwise the steps to add it by hand under
/// `container`, with a placeholder where the token goes.
pub fn unless_token(
    client: &str,
    container: &str,
    name: &str,
    remote: &RemoteServer,
    entry: impl Fn(&RemoteServer) -> Entry,
) -> RemoteEntry {
    if remote.token_env.is_none() {
        return RemoteEntry::entry(entry(remote));
    }
    let placeholder = RemoteServer {
        token_env: None,
        ..remote.clone()
    };
    let mut shown = entry(&placeholder).to_json();
    if let Some(map) = shown.as_object_mut() {
        map.insert(
            "headers".into(),
            serde_json::json!({"Authorization": "Bearer <your token>"}),
        );
    }
    let json = serde_json::json!({ container: { name: shown } });
    RemoteEntry::Manual(format!(
        "{client} has no documented way to read the token from an environment variable, and \
         scimcp-setup never writes a token into a file. Add this entry yourself, with your \
         token in place of <your token>:\n{}",
        serde_json::to_string_pretty(&json).expect("JSON")
    ))
}

/// How long scimcp asks a client to let one tool call run, in the clients that take a
/// per-server key for it. The server never waits longer than 300 s in one call
/// (`MAX_WAIT_S`), so with 600 s its "still running, call again" answer always arrives
/// before the client gives up; Codex's own default, 300 s, lost that race (issue 26).
pub const TOOL_TIMEOUT_S: i64 = 600;

/// [`TOOL_TIMEOUT_S`] in milliseconds, the unit of Claude Code, Gemini CLI, Qwen Code and
/// Copilot CLI.
pub const TOOL_TIMEOUT_MS: i64 = TOOL_TIMEOUT_S * 1000;

/// `serve`'s arguments for an entry that sets the client's deadline: the server is told it
/// (`--client-timeout-s`) and chooses its default waits below it.
pub fn timed_args(server: &ServerCommand) -> Vec<String> {
    let mut args = server.args.clone();
    args.extend(["--client-timeout-s".to_string(), TOOL_TIMEOUT_S.to_string()]);
    args
}

/// `entry` (a map) with `pairs` appended.
pub fn with(entry: Entry, pairs: impl IntoIterator<Item = (&'static str, Entry)>) -> Entry {
    match entry {
        Entry::Map(mut map) => {
            map.extend(pairs.into_iter().map(|(k, v)| (k.to_string(), v)));
            Entry::Map(map)
        }
        other => other,
    }
}

/// `{"command": …, "args": […]}`: the Claude Desktop shape most clients read.
pub fn command_args(server: &ServerCommand) -> Entry {
    Entry::map([
        ("command", Entry::str(path_text(&server.command))),
        ("args", Entry::strs(server.args.iter().cloned())),
    ])
}

/// `{"type": "stdio", "command": …, "args": […]}`.
pub fn typed_stdio(server: &ServerCommand) -> Entry {
    Entry::map([
        ("type", Entry::str("stdio")),
        ("command", Entry::str(path_text(&server.command))),
        ("args", Entry::strs(server.args.iter().cloned())),
    ])
}

/// A path as the text written into a client file.
pub fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The project folder of a project-scope entry recorded at `location` (`P/.mcp.json`,
/// `P/.cursor/mcp.json`, `P/.vscode/mcp.json`): the ancestor `P` for which `client` names
/// exactly that file. `None` for a client whose file does not depend on a project.
pub fn recorded_project(
    client: &dyn Client,
    cx: ClientContext<'_>,
    name: &str,
    location: &str,
) -> Option<PathBuf> {
    let unscoped = ClientContext {
        project: None,
        ..cx
    };
    if client.file(unscoped, name).is_some() {
        return None;
    }
    let path = Path::new(location);
    if !path.is_absolute() {
        return None;
    }
    path.ancestors().skip(1).find_map(|dir| {
        let scoped = ClientContext {
            project: Some(dir),
            ..cx
        };
        let file = client.file(scoped, name)?;
        (file.path == path).then(|| dir.to_path_buf())
    })
}

/// Whether any of `dirs` exists, or any of `programs` is on `PATH`.
pub(super) fn seen(cx: ClientContext<'_>, dirs: &[PathBuf], programs: &[&str]) -> bool {
    dirs.iter().any(|d| d.is_dir()) || programs.iter().any(|p| cx.host.which(p).is_some())
}
