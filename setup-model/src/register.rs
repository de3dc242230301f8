//! Client registration: plan the change of one client's entry, show it, apply it safely.
//!
//! Planning reads the file (a regular file only, at most 16 MiB: never a FIFO or a device),
//! parses it and computes the new text in memory; nothing is written. Applying keeps a
//! backup of the old bytes, writes the new bytes atomically with the file's own permissions,
//! owner and group (through a symbolic link to its target; never over a read-only file),
//! then re-reads the file and checks that it parses and holds exactly the intended entry. A
//! file that does not parse, or that repeats a key on the way to the entry, is never
//! written.
//!
//! Uninstall puts back the exact bytes from before the install while the file still holds
//! exactly what scimcp wrote; when the user changed it since, only scimcp's entry goes (and
//! the object that held it, if scimcp created that object and it is now empty).
//!
//! An entry serves either a local adapter's command or a remote server ([`Serves`]); both go
//! through the same plan, backup, write and verification. A remote entry may come with an
//! item kept beside it in the same file (VS Code's token prompt in `inputs`), which is
//! written, verified and removed together with the entry.

use std::path::{Path, PathBuf};

use scimcp_core::fs::{CONFIG_READ_LIMIT, ReadError, WriteError, plan_replace};
use scimcp_core::install_state::{ClientRecord, Pristine, ServerCommand};
use serde::Serialize;
use serde_json::Value as Json;

use crate::clients::{ClaudeCli, Client, ClientContext, ConfigFile, ListItem, RemoteEntry};
use crate::edit::EditError;
use crate::entry::Entry;
use crate::faults::checkpoint;
use crate::remote_server::RemoteServer;

/// What an entry serves: a local adapter's command, or a remote server.
#[derive(Debug, Clone, Copy)]
pub enum Serves<'a> {
    /// `scimcp serve --adapter …` on this computer (stdio).
    Command(&'a ServerCommand),
    /// A server elsewhere, over Streamable HTTP.
    Remote(&'a RemoteServer),
}

impl Serves<'_> {
    /// What `client` writes for the entry called `name`: the entry and its item, or the
    /// steps to follow by hand (a client without a file, or one that cannot take a remote
    /// entry without the secret).
    pub fn shape(&self, client: &dyn Client, cx: ClientContext<'_>, name: &str) -> Shape {
        let file = client.file(cx, name);
        let shape = match self {
            Serves::Command(server) => match &file {
                Some(_) => RemoteEntry::entry(client.entry(name, server)),
                None => RemoteEntry::Manual(client.manual_steps(name, server).unwrap_or_default()),
            },
            Serves::Remote(remote) => client.remote_entry(name, remote),
        };
        match (shape, file) {
            (RemoteEntry::Entry { entry, item }, Some(file)) => Shape::File { file, entry, item },
            (RemoteEntry::Entry { .. }, None) => Shape::Manual {
                steps: String::new(),
                file: None,
            },
            (RemoteEntry::Manual(steps), file) => Shape::Manual {
                steps,
                file: file.map(|f| f.path),
            },
        }
    }
}

/// What a client takes for one entry.
#[derive(Debug)]
pub enum Shape {
    /// This entry (and item) in this file.
    File {
        file: ConfigFile,
        entry: Entry,
        item: Option<ListItem>,
    },
    /// Steps for the user; `file` is the client's file when it has one scimcp cannot write
    /// the entry into.
    Manual {
        steps: String,
        file: Option<PathBuf>,
    },
}

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// Add the entry; replace an existing one only if scimcp wrote it.
    Install,
    /// Make the entry exactly what scimcp writes, whatever is there.
    Repair,
    /// Remove the entry if it is still what scimcp wrote.
    Uninstall,
}

/// What happens (or happened) to one client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Unchanged,
    Added,
    Replaced,
    Removed,
    /// The file itself goes: scimcp created it and nothing else is in it.
    FileRemoved,
    /// Uninstall leaves an entry that is not (or no longer) scimcp's.
    LeftAlone,
    /// Not registered and nothing to remove.
    Absent,
    /// The user has to do it in the client's UI.
    Manual,
}

/// The change for one client.
#[derive(Debug)]
pub struct ClientPlan {
    pub client: &'static dyn Client,
    /// The entry's name in the client (`scimcp-<adapter>`).
    pub name: String,
    pub outcome: Outcome,
    pub how: How,
    /// The entry as JSON (what scimcp writes, or what it removes; `null` for manual steps).
    pub entry: Json,
    /// The item kept beside the entry (VS Code's token prompt), when there is one.
    pub item: Option<ListItem>,
}

/// How a change is carried out.
#[derive(Debug)]
pub enum How {
    /// Edit a file: its bytes before and after (`None` = the file is absent / removed).
    File {
        file: ConfigFile,
        before: Option<String>,
        after: Option<String>,
        created: bool,
        /// Whether the object holding the entry was there before (for the receipt).
        container_existed: bool,
    },
    /// Through the client's CLI: remove first (`replace`), then add (`add`).
    Cli {
        cli: ClaudeCli,
        file: ConfigFile,
        remove: bool,
        add: bool,
    },
    /// Print these steps; `file` is the client's file when it has one scimcp leaves alone.
    Manual {
        steps: String,
        file: Option<PathBuf>,
    },
}

impl ClientPlan {
    /// Whether applying it changes anything.
    pub fn changes(&self) -> bool {
        !matches!(
            self.outcome,
            Outcome::Unchanged | Outcome::LeftAlone | Outcome::Absent | Outcome::Manual
        )
    }

    /// Where the entry lives, for messages and the receipt.
    pub fn location(&self) -> String {
        match &self.how {
            How::File { file, .. } => file.path.display().to_string(),
            How::Cli { cli, file, .. } => {
                format!("{} (via {})", file.path.display(), cli.program.display())
            }
            How::Manual {
                file: Some(path), ..
            } => format!("{} (by hand)", path.display()),
            How::Manual { file: None, .. } => "configured in the client's settings UI".into(),
        }
    }
}

/// Why one client could not be handled. Other clients are still handled.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("{path} is not UTF-8 text; scimcp leaves it untouched")]
    NotText { path: PathBuf },
    #[error(
        "{path} does not parse: {error}. scimcp has not changed it. Fix the file (or restore {}), \
         then run scimcp-setup again",
        backup.as_ref().map_or_else(|| "a copy you trust".to_string(), |b| format!("the backup {}", b.display()))
    )]
    Syntax {
        path: PathBuf,
        error: EditError,
        backup: Option<PathBuf>,
    },
    #[error("{path}: {message}. scimcp has not changed it")]
    Shape { path: PathBuf, message: String },
    #[error(
        "{path}:{line}:{column}: the key \"{key}\" appears a second time (first on line \
         {first_line}); clients disagree on which of the two counts (most read the last, some \
         the first), so scimcp has not changed the file. Merge the two \"{key}\" blocks into \
         one, then run scimcp-setup again"
    )]
    Duplicate {
        path: PathBuf,
        key: String,
        line: usize,
        column: usize,
        first_line: usize,
    },
    #[error(
        "{} is read-only; make it writable (chmod u+w {}) or pass --client to skip it. scimcp \
         has not changed it", .path.display(), shell_word(.path)
    )]
    ReadOnly { path: PathBuf },
    #[error(
        "{path} already has a `{name}` entry that scimcp did not write; it is left as it is. \
         Run `scimcp-setup repair` to replace it (the file is backed up first)"
    )]
    Conflict { path: PathBuf, name: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: WriteError,
    },
    #[error("{path} did not read back as written ({message}); restore the backup {backup}")]
    Verify {
        path: PathBuf,
        message: String,
        backup: String,
    },
    #[error(transparent)]
    Cli(#[from] crate::clients::CliError),
}

/// Everything needed to plan a client's change.
#[derive(Debug, Clone, Copy)]
pub struct Planner<'a> {
    pub cx: ClientContext<'a>,
    /// The entry's name (`scimcp-<adapter>`, or a remote server's name).
    pub name: &'a str,
    pub server: Serves<'a>,
    pub backups_dir: &'a Path,
}

impl Planner<'_> {
    /// Plan `intent` for `client`. `recorded` is what the receipt says scimcp wrote there.
    pub fn plan(
        &self,
        client: &'static dyn Client,
        intent: Intent,
        recorded: Option<&ClientRecord>,
    ) -> Result<ClientPlan, ClientError> {
        let name = self.name;
        let (file, entry, item) = match self.server.shape(client, self.cx, name) {
            Shape::File { file, entry, item } => (file, entry, item),
            Shape::Manual { steps, file } => {
                return Ok(ClientPlan {
                    client,
                    name: name.to_string(),
                    outcome: Outcome::Manual,
                    how: How::Manual { steps, file },
                    entry: Json::Null,
                    item: None,
                });
            }
        };
        let entry_json = entry.to_json();
        let item_json = item.as_ref().map(|i| i.value.to_json());
        let before = read_text(&file.path)?;
        let container_existed = match &before {
            Some(text) => container_exists(&file, text),
            None => false,
        };
        let current = match &before {
            Some(text) => file
                .format
                .read(text, file.slot(name))
                .map_err(|e| self.edit_error(client, &file, e))?,
            None => None,
        };
        let current_item = match (&before, &item) {
            (Some(text), Some(item)) => file
                .format
                .read_item(text, item.list, &item.id)
                .map_err(|e| self.edit_error(client, &file, e))?,
            _ => None,
        };
        let item_in_place = current_item == item_json;
        let ours = |v: &Json| *v == entry_json || recorded.is_some_and(|r| r.entry == *v);
        let outcome = match (intent, &current) {
            (Intent::Install | Intent::Repair, Some(v)) if *v == entry_json && item_in_place => {
                Outcome::Unchanged
            }
            (Intent::Install | Intent::Repair, None) => Outcome::Added,
            (Intent::Install, Some(v)) if ours(v) => Outcome::Replaced,
            (Intent::Install, Some(_)) => {
                return Err(ClientError::Conflict {
                    path: file.path,
                    name: name.to_string(),
                });
            }
            (Intent::Repair, Some(_)) => Outcome::Replaced,
            (Intent::Uninstall, None) => Outcome::Absent,
            (Intent::Uninstall, Some(v)) if ours(v) => Outcome::Removed,
            (Intent::Uninstall, Some(_)) => Outcome::LeftAlone,
        };
        if let Some(cli) = client.cli(self.cx) {
            let (remove, add) = match outcome {
                Outcome::Added => (false, true),
                Outcome::Replaced => (true, true),
                Outcome::Removed => (true, false),
                _ => (false, false),
            };
            return Ok(ClientPlan {
                client,
                name: name.to_string(),
                outcome,
                how: How::Cli {
                    cli,
                    file,
                    remove,
                    add,
                },
                entry: entry_json,
                item,
            });
        }
        let (after, outcome) = match outcome {
            Outcome::Added | Outcome::Replaced => {
                let text = before.as_deref().unwrap_or("");
                let mut after = file
                    .format
                    .set(text, file.slot(name), &entry)
                    .map_err(|e| self.edit_error(client, &file, e))?;
                if let Some(item) = &item {
                    after = file
                        .format
                        .set_item(&after, item.list, &item.id, &item.value)
                        .map_err(|e| self.edit_error(client, &file, e))?;
                }
                (Some(after), outcome)
            }
            Outcome::Removed => {
                let text = before.as_deref().unwrap_or("");
                if let Some(pristine) = recorded.and_then(|r| pristine_bytes(r, text, &file, name))
                {
                    (Some(pristine), Outcome::Removed)
                } else {
                    // The item goes first (only while it is still scimcp's), so that what is
                    // left decides whether the file scimcp created can go.
                    let text = match (&item, item_in_place && current_item.is_some()) {
                        (Some(item), true) => file
                            .format
                            .remove_item(text, item.list, &item.id)
                            .map_err(|e| self.edit_error(client, &file, e))?,
                        _ => text.to_string(),
                    };
                    let (mut after, empty) = file
                        .format
                        .remove(&text, file.slot(name))
                        .map_err(|e| self.edit_error(client, &file, e))?;
                    let created = recorded.is_some_and(|r| r.created_file);
                    if recorded.is_some_and(|r| r.created_container) {
                        after = file
                            .format
                            .remove_empty(&after, file.container)
                            .map_err(|e| self.edit_error(client, &file, e))?;
                    }
                    // A link (the user moved the file into their dotfiles since) stays.
                    if empty
                        && (created || file.format == crate::edit::Format::OwnedYaml)
                        && !is_link(&file.path)
                    {
                        (None, Outcome::FileRemoved)
                    } else {
                        (Some(after), Outcome::Removed)
                    }
                }
            }
            other => (before.clone(), other),
        };
        let changes = !matches!(
            outcome,
            Outcome::Unchanged | Outcome::LeftAlone | Outcome::Absent | Outcome::Manual
        );
        // Where the new bytes would go (a link's target) is checked now, so a file that
        // cannot be replaced fails the plan (and a dry run), not half-way through applying;
        // applying checks it again.
        if after.is_some() && changes {
            plan_replace(&file.path).map_err(|e| write_error(&file.path, e))?;
        }
        let created = before.is_none() || recorded.is_some_and(|r| r.created_file);
        Ok(ClientPlan {
            client,
            name: name.to_string(),
            outcome,
            how: How::File {
                file,
                before,
                after,
                created,
                container_existed,
            },
            entry: entry_json,
            item,
        })
    }

    fn edit_error(&self, client: &dyn Client, file: &ConfigFile, error: EditError) -> ClientError {
        match error {
            EditError::Syntax { .. } => ClientError::Syntax {
                path: file.path.clone(),
                backup: crate::backup::latest(self.backups_dir, client.id(), &file.path),
                error,
            },
            EditError::Shape(message) => ClientError::Shape {
                path: file.path.clone(),
                message,
            },
            EditError::Duplicate {
                key,
                line,
                column,
                first_line,
            } => ClientError::Duplicate {
                path: file.path.clone(),
                key,
                line,
                column,
                first_line,
            },
        }
    }
}

/// The file's text, `None` when it does not exist. Only a regular file (or a link to one) of
/// at most [`CONFIG_READ_LIMIT`] bytes is read: never a FIFO, a device or a directory.
pub fn read_text(path: &Path) -> Result<Option<String>, ClientError> {
    match scimcp_core::fs::read_regular(path, CONFIG_READ_LIMIT)? {
        Some(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| ClientError::NotText {
                path: path.to_path_buf(),
            }),
        None => Ok(None),
    }
}

/// Whether the object that holds scimcp's entry is already in `text`.
fn container_exists(file: &ConfigFile, text: &str) -> bool {
    let Ok(mut value) = file.format.document(text) else {
        return false;
    };
    for key in file.container {
        match value.get_mut(*key) {
            Some(v) => value = v.take(),
            None => return false,
        }
    }
    true
}

/// The bytes from before scimcp's entry was added, when `text` is still exactly what scimcp
/// wrote and the backup of them is intact (its hash as recorded, it parses, no scimcp entry).
fn pristine_bytes(
    record: &ClientRecord,
    text: &str,
    file: &ConfigFile,
    name: &str,
) -> Option<String> {
    let Pristine { backup, sha256 } = record.pristine.as_ref()?;
    if record.written_sha256.as_deref() != Some(sha_of(text).as_str()) {
        return None;
    }
    let bytes = scimcp_core::fs::read_regular(backup, CONFIG_READ_LIMIT).ok()??;
    let pristine = String::from_utf8(bytes).ok()?;
    if sha_of(&pristine) != *sha256 {
        return None;
    }
    match file.format.read(&pristine, file.slot(name)) {
        Ok(None) => Some(pristine),
        _ => None,
    }
}

fn sha_of(text: &str) -> String {
    scimcp_core::hash::sha256_hex(text.as_bytes())
}

fn is_link(path: &Path) -> bool {
    fs_err::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// A write refusal as the client's error: read-only files get the message that says what to do.
fn write_error(path: &Path, error: WriteError) -> ClientError {
    match error {
        WriteError::ReadOnly { path } => ClientError::ReadOnly { path },
        source => ClientError::Write {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// `path` as one shell word (quoted when it needs to be), for commands in messages.
fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+~".contains(c))
    {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// What applying a plan left behind, for the receipt.
#[derive(Debug, Default)]
pub struct Applied {
    pub backup: Option<PathBuf>,
    /// The file written when the configuration is a link.
    pub target: Option<PathBuf>,
}

/// Carry out `plan`. Call only under the setup lock.
pub fn apply(plan: &ClientPlan, backups_dir: &Path) -> Result<Applied, ClientError> {
    if !plan.changes() {
        return Ok(Applied::default());
    }
    match &plan.how {
        How::Manual { .. } => Ok(Applied::default()),
        How::Cli {
            cli, remove, add, ..
        } => {
            if *remove {
                cli.remove(&plan.name)?;
            }
            checkpoint();
            if *add {
                cli.add(&plan.name, &plan.entry)?;
            }
            Ok(Applied::default())
        }
        How::File {
            file,
            before,
            after,
            ..
        } => {
            let path = &file.path;
            // Checked again now: the file may have changed since it was planned.
            let replace = match after {
                Some(_) => Some(plan_replace(path).map_err(|e| write_error(path, e))?),
                None => None,
            };
            remove_stale_temps(replace.as_ref().map_or(path, |r| &r.target));
            let backup = match before {
                Some(old) => Some(
                    crate::backup::keep(backups_dir, plan.client.id(), path, old.as_bytes())
                        .map_err(|source| ClientError::Write {
                            path: path.clone(),
                            source,
                        })?,
                ),
                None => None,
            };
            checkpoint();
            let backup_text = backup.as_ref().map_or_else(
                || "(none: the file was new)".to_string(),
                |b| b.display().to_string(),
            );
            let mut written = None;
            match (after, replace) {
                (Some(text), Some(replace)) => {
                    if !replace.through_link()
                        && let Some(dir) = path.parent()
                    {
                        fs_err::create_dir_all(dir).map_err(|source| ClientError::Write {
                            path: path.clone(),
                            source: WriteError::Io {
                                path: dir.to_path_buf(),
                                source,
                            },
                        })?;
                    }
                    replace
                        .write(text.as_bytes(), crate::faults::staged)
                        .map_err(|e| write_error(path, e))?;
                    checkpoint();
                    verify(file, text, plan, &backup_text)?;
                    written = Some(replace);
                }
                _ => {
                    fs_err::remove_file(path).map_err(|source| ClientError::Write {
                        path: path.clone(),
                        source: WriteError::Io {
                            path: path.clone(),
                            source,
                        },
                    })?;
                    if let Some(dir) = path.parent() {
                        let _ = scimcp_core::fs::sync_dir(dir);
                    }
                }
            }
            checkpoint();
            Ok(Applied {
                backup,
                target: written.filter(|r| r.through_link()).map(|r| r.target),
            })
        }
    }
}

/// Re-read `file` and check it is `text`, parses, and holds (or no longer holds) the entry.
fn verify(
    file: &ConfigFile,
    text: &str,
    plan: &ClientPlan,
    backup: &str,
) -> Result<(), ClientError> {
    let fail = |message: String| ClientError::Verify {
        path: file.path.clone(),
        message,
        backup: backup.to_string(),
    };
    let back = scimcp_core::fs::read_regular(&file.path, CONFIG_READ_LIMIT)
        .map_err(|e| fail(e.to_string()))?
        .unwrap_or_default();
    if back != text.as_bytes() {
        return Err(fail("its bytes differ from what was written".into()));
    }
    file.format.check(text).map_err(|e| fail(e.to_string()))?;
    let entry = file
        .format
        .read(text, file.slot(&plan.name))
        .map_err(|e| fail(e.to_string()))?;
    let want = match plan.outcome {
        Outcome::Added | Outcome::Replaced => Some(&plan.entry),
        _ => None,
    };
    if entry.as_ref() != want {
        return Err(fail("the scimcp entry is not what was intended".into()));
    }
    if let Some(item) = &plan.item
        && want.is_some()
    {
        let found = file
            .format
            .read_item(text, item.list, &item.id)
            .map_err(|e| fail(e.to_string()))?;
        if found != Some(item.value.to_json()) {
            return Err(fail(format!(
                "the \"{}\" item {} is not what was intended",
                item.list, item.id
            )));
        }
    }
    Ok(())
}

/// Remove temporary files a killed scimcp-setup left next to `path` (named
/// `.<file name>.<random>.tmp` by `scimcp_core::fs::write_atomic`). Only ever called under
/// the setup lock, when no other scimcp writer can be mid-write.
fn remove_stale_temps(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let n = entry.file_name().to_string_lossy().into_owned();
        if n.starts_with(&prefix) && n.ends_with(".tmp") && n.len() == prefix.len() + 6 + 4 {
            let _ = fs_err::remove_file(entry.path());
        }
    }
}

/// How one client looks right now for one entry, for `clients` and `status`.
#[derive(Debug, Clone, Serialize)]
pub struct ClientStatus {
    pub id: &'static str,
    pub name: &'static str,
    /// The adapter whose entry this is (absent for a remote server's entry).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub adapter: String,
    /// The remote server's URL, for a remote entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// The entry's name in the client (`scimcp-<adapter>`, or the remote server's name).
    pub entry: String,
    pub detected: bool,
    /// The file (or `null` for a UI-only client).
    pub path: Option<PathBuf>,
    /// `file`, `cli`, `manual` (settings UI, or a remote entry the client cannot take in its
    /// file) or `project` (needs `--project`).
    pub method: &'static str,
    pub registered: bool,
    /// The entry equals what scimcp writes (and, for a local adapter, its command exists).
    pub healthy: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Inspect `adapter`'s entry (called `entry`) in `client` without changing anything.
pub fn status(
    cx: ClientContext<'_>,
    adapter: &str,
    entry: &str,
    server: &ServerCommand,
    client: &'static dyn Client,
) -> ClientStatus {
    let mut status = inspect(cx, entry, Serves::Command(server), client);
    status.adapter = adapter.to_string();
    if status.healthy && !server.command.is_file() {
        status.healthy = false;
        status.problem = Some(format!(
            "the command {} does not exist (run repair)",
            server.command.display()
        ));
    }
    status
}

/// Inspect a remote server's entry in `client` without changing anything.
pub fn remote_status(
    cx: ClientContext<'_>,
    remote: &RemoteServer,
    client: &'static dyn Client,
) -> ClientStatus {
    let mut status = inspect(cx, &remote.name, Serves::Remote(remote), client);
    status.remote = Some(remote.shown_url());
    status
}

fn inspect(
    cx: ClientContext<'_>,
    name: &str,
    serves: Serves<'_>,
    client: &'static dyn Client,
) -> ClientStatus {
    let shape = serves.shape(client, cx, name);
    let method = match (&shape, client.cli(cx)) {
        (Shape::Manual { steps, file: None }, _) if steps.is_empty() => "project",
        (Shape::Manual { .. }, _) => "manual",
        (Shape::File { .. }, Some(_)) => "cli",
        (Shape::File { .. }, None) => "file",
    };
    let mut status = ClientStatus {
        id: client.id(),
        name: client.name(),
        adapter: String::new(),
        remote: None,
        entry: name.to_string(),
        detected: client.detect(cx),
        path: match &shape {
            Shape::File { file, .. } => Some(file.path.clone()),
            Shape::Manual { file, .. } => file.clone(),
        },
        method,
        registered: false,
        healthy: false,
        problem: None,
    };
    let Shape::File { file, entry, item } = shape else {
        return status;
    };
    let text = match read_text(&file.path) {
        Ok(Some(text)) => text,
        Ok(None) => return status,
        Err(e) => {
            status.problem = Some(e.to_string());
            return status;
        }
    };
    let current = match file.format.read(&text, file.slot(name)) {
        Ok(v) => v,
        Err(e) => {
            status.problem = Some(format!("does not parse: {e}"));
            return status;
        }
    };
    let Some(current) = current else {
        return status;
    };
    status.registered = true;
    let item_ok = match &item {
        Some(item) => {
            file.format
                .read_item(&text, item.list, &item.id)
                .ok()
                .flatten()
                == Some(item.value.to_json())
        }
        None => true,
    };
    if current != entry.to_json() {
        status.problem = Some("the entry differs from what scimcp writes (run repair)".into());
    } else if !item_ok {
        status.problem = Some(format!(
            "the token prompt in \"{}\" is missing or changed (run repair)",
            item.as_ref().map_or("", |i| i.list)
        ));
    } else {
        status.healthy = true;
    }
    status
}

/// The receipt record for an applied plan (`None` when scimcp no longer has an entry).
pub fn record(
    plan: &ClientPlan,
    previous: Option<&ClientRecord>,
    applied: &Applied,
) -> Option<ClientRecord> {
    let present = matches!(
        plan.outcome,
        Outcome::Added | Outcome::Replaced | Outcome::Unchanged
    );
    if !present {
        return None;
    }
    let (method, created) = match &plan.how {
        How::File {
            created, before, ..
        } => ("file", *created || before.is_none()),
        How::Cli { .. } => ("cli", false),
        How::Manual { .. } => return None,
    };
    let mut backups = previous.map(|p| p.backups.clone()).unwrap_or_default();
    backups.extend(applied.backup.clone());
    let mut record = ClientRecord {
        name: plan.name.clone(),
        location: plan.location(),
        method: method.into(),
        entry: plan.entry.clone(),
        created_file: previous.map_or(created, |p| p.created_file),
        backups,
        target: previous.and_then(|p| p.target.clone()),
        written_sha256: previous.and_then(|p| p.written_sha256.clone()),
        pristine: previous.and_then(|p| p.pristine.clone()),
        created_container: previous.is_some_and(|p| p.created_container),
    };
    if let How::File {
        before,
        after,
        container_existed,
        ..
    } = &plan.how
    {
        let before_sha = before.as_deref().map(sha_of);
        match plan.outcome {
            Outcome::Added => {
                // The pristine bytes are those just backed up: the file without the entry.
                record.pristine = match (&before_sha, &applied.backup) {
                    (Some(sha256), Some(backup)) => Some(Pristine {
                        backup: backup.clone(),
                        sha256: sha256.clone(),
                    }),
                    _ => None,
                };
                record.created_container = !container_existed;
            }
            // Still pristine-able only if nobody else changed the file since scimcp's last
            // write: then it differs from the pristine bytes by the entry alone.
            Outcome::Replaced if record.written_sha256 != before_sha => record.pristine = None,
            _ => {}
        }
        if matches!(plan.outcome, Outcome::Added | Outcome::Replaced) {
            record.written_sha256 = after.as_deref().map(sha_of);
            record.target = applied.target.clone();
        }
    }
    Some(record)
}
