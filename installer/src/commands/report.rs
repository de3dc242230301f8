//! [`Report`]: what a command did (or would do), printed for humans or as JSON.

use std::path::PathBuf;

use serde::Serialize;

use super::setup::Setup;
use crate::clients::{Client, ClientContext};
use crate::register::Outcome;
use crate::remote_server::RemoteServer;

/// A command's result, printed for humans or as JSON.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub command: &'static str,
    pub dry_run: bool,
    pub data_root: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
    /// `upgrade --check`: the version an upgrade would install (absent when up to date).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<String>,
    /// What was done (or would be done) to the layout, in order.
    pub steps: Vec<String>,
    pub clients: Vec<ClientReport>,
    /// What the user should do next.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Unified diffs of every file that changes (`--dry-run` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diffs: Vec<FileDiff>,
    /// The remote server registered (`install --remote`), or removed (`uninstall --remote`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteSummary>,
}

/// One client's part of a report, for one adapter's entry.
#[derive(Debug, Serialize)]
pub struct ClientReport {
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
    pub location: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manual_steps: Option<String>,
}

/// A file's diff in a dry run.
#[derive(Debug, Serialize)]
pub struct FileDiff {
    pub path: PathBuf,
    pub diff: String,
}

impl Report {
    pub fn new(command: &'static str, setup: &Setup) -> Report {
        Report {
            schema_version: 1,
            command,
            dry_run: setup.dry_run,
            data_root: setup.layout.root.clone(),
            ..Report::default()
        }
    }

    pub fn step(&mut self, text: impl Into<String>) {
        self.steps.push(text.into());
    }

    /// The number of clients that failed.
    pub fn failures(&self) -> usize {
        self.clients.iter().filter(|c| c.error.is_some()).count()
    }

    /// Print the report on stdout (human text, or JSON with `--json`).
    pub fn print(&self, json: bool) {
        let mut out = String::new();
        if json {
            out = serde_json::to_string_pretty(self).expect("JSON");
            out.push('\n');
        } else {
            use std::fmt::Write;
            for d in &self.diffs {
                out.push_str(&d.diff);
                if !d.diff.ends_with('\n') {
                    out.push('\n');
                }
            }
            let verb = if self.dry_run { "would " } else { "" };
            for s in &self.steps {
                let _ = writeln!(out, "{verb}{s}");
            }
            for c in &self.clients {
                let what = match (&c.error, &c.outcome) {
                    (Some(e), _) => format!("FAILED: {e}"),
                    (None, Some(Outcome::Manual)) => "configure by hand:".to_string(),
                    (None, Some(o)) => outcome_text(o, self.dry_run).to_string(),
                    (None, None) => String::new(),
                };
                let _ = writeln!(
                    out,
                    "{:<26} {:<24} {what}  [{}]",
                    c.name, c.entry, c.location
                );
                if let Some(steps) = &c.manual_steps {
                    for line in steps.lines() {
                        let _ = writeln!(out, "    {line}");
                    }
                }
            }
            for n in &self.notes {
                let _ = writeln!(out, "\n{n}");
            }
        }
        print_stdout(&out);
    }
}

fn outcome_text(o: &Outcome, dry_run: bool) -> &'static str {
    match (o, dry_run) {
        (Outcome::Unchanged, _) => "up to date",
        (Outcome::Added, false) => "registered",
        (Outcome::Added, true) => "would register",
        (Outcome::Replaced, false) => "entry repaired",
        (Outcome::Replaced, true) => "would repair the entry",
        (Outcome::Removed, false) => "entry removed",
        (Outcome::Removed, true) => "would remove the entry",
        (Outcome::FileRemoved, false) => "file removed (scimcp created it)",
        (Outcome::FileRemoved, true) => "would remove the file (scimcp created it)",
        (Outcome::LeftAlone, _) => "left alone (the entry is not scimcp's)",
        (Outcome::Absent, _) => "not registered",
        (Outcome::Manual, _) => "configure by hand",
    }
}

/// Write to stdout; a closed pipe is not an error worth a panic.
pub fn print_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

impl ClientReport {
    /// A report line for `client`'s entry `name`, its location filled in from the client.
    pub(crate) fn new(
        cx: ClientContext<'_>,
        client: &'static dyn Client,
        name: &str,
    ) -> ClientReport {
        ClientReport {
            id: client.id(),
            name: client.name(),
            adapter: String::new(),
            remote: None,
            entry: name.to_string(),
            location: client
                .file(cx, name)
                .map_or_else(|| "(settings UI)".into(), |f| f.path.display().to_string()),
            outcome: None,
            error: None,
            manual_steps: None,
        }
    }
}

/// The remote server a command acted on, in its report.
#[derive(Debug, Clone, Serialize)]
pub struct RemoteSummary {
    /// Its entry's name in every client.
    pub name: String,
    pub url: String,
    /// The environment variable the clients read the token from (absent: no token).
    pub token_env: Option<String>,
}

impl From<&RemoteServer> for RemoteSummary {
    fn from(r: &RemoteServer) -> RemoteSummary {
        RemoteSummary {
            name: r.name.clone(),
            url: r.shown_url(),
            token_env: r.token_env.clone(),
        }
    }
}
