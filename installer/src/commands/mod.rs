//! One module per subcommand, over the shared [`Setup`] context and [`Report`], and the
//! lock-and-receipt steps they share (session.rs).

pub mod approvals;
pub mod clients;
pub mod install;
pub mod remote;
pub mod rollback;
mod session;
pub mod status;
pub mod uninstall;
pub mod upgrade;

use std::path::{Path, PathBuf};

use scimcp_core::install_state::{ClientRecord, InstallState, ServerCommand, entry_name};
use serde::Serialize;

use crate::clients::{Client, ClientContext};
use crate::error::SetupError;
use crate::host::Host;
use crate::layout::{DEFAULT_ADAPTER, Layout};
use crate::register::{self, ClientPlan, How, Intent, Outcome, Planner, Serves};

/// Resolved settings every command runs with.
#[derive(Debug, Clone)]
pub struct Setup {
    pub host: Host,
    pub layout: Layout,
    /// `--client` ids (empty: the default selection).
    pub clients: Vec<String>,
    pub project: Option<PathBuf>,
    pub dry_run: bool,
    pub json: bool,
    pub yes: bool,
    /// `--adapter` values (names or manifest paths; empty: every installed adapter).
    pub adapters: Vec<String>,
}

impl Setup {
    pub fn client_context(&self) -> ClientContext<'_> {
        ClientContext {
            host: &self.host,
            layout: &self.layout,
            project: self.project.as_deref(),
        }
    }

    /// [`Setup::client_context`] in the project folder `project` (when given) instead of
    /// `--project`'s.
    pub fn context_in<'a>(&'a self, project: Option<&'a Path>) -> ClientContext<'a> {
        ClientContext {
            project: project.or(self.project.as_deref()),
            ..self.client_context()
        }
    }

    /// The project folder of `client`'s recorded project-scope entry, so that uninstall,
    /// repair and status find `P/.mcp.json` without `--project`. `--project` wins when it is
    /// given and `recorded_first` is false (installing into another project).
    pub fn recorded_project(
        &self,
        client: &dyn Client,
        record: Option<&ClientRecord>,
        recorded_first: bool,
    ) -> Option<PathBuf> {
        if self.project.is_some() && !recorded_first {
            return None;
        }
        let record = record?;
        crate::clients::recorded_project(
            client,
            self.client_context(),
            &record.name,
            &record.location,
        )
    }

    /// The project of `client`'s recorded entry when `--project` names another one.
    pub fn other_project(
        &self,
        client: &dyn Client,
        record: Option<&ClientRecord>,
    ) -> Option<PathBuf> {
        let given = self.project.as_deref()?;
        let recorded = self.recorded_project(client, record, true)?;
        let same = |a: &Path, b: &Path| {
            a == b || fs_err::canonicalize(a).ok() == fs_err::canonicalize(b).ok()
        };
        (!same(&recorded, given)).then_some(recorded)
    }

    /// The data folders in force for `state` (recorded, else the default one).
    pub fn data_dirs(&self, state: &InstallState) -> Vec<PathBuf> {
        self.layout.data_dirs(&self.host, &state.data_dirs)
    }

    /// The command the client entries of the adapter `serve_arg` (a shipped adapter's name
    /// or a manifest's path) run, with `state`'s data folders.
    pub fn server(&self, state: &InstallState, serve_arg: &str) -> ServerCommand {
        self.layout
            .server_command(serve_arg, &self.data_dirs(state))
    }

    /// The installed adapters a command acts on: those named with `--adapter` (by name, or
    /// by the name in the manifest a path names), else every installed one, else refsci.
    pub fn installed_adapters(&self, state: &InstallState) -> Result<Vec<String>, SetupError> {
        if self.adapters.is_empty() {
            let all: Vec<String> = state.adapters.keys().cloned().collect();
            return Ok(if all.is_empty() {
                vec![DEFAULT_ADAPTER.to_string()]
            } else {
                all
            });
        }
        let mut names = Vec::new();
        for arg in &self.adapters {
            let name = adapter_name(arg)?;
            if !names.contains(&name) {
                names.push(name);
            }
        }
        Ok(names)
    }

    /// The adapters `status` and `clients` show: [`Setup::installed_adapters`], except none
    /// on a computer with only remote servers registered (not refsci, which is not there).
    pub fn shown_adapters(&self, state: &InstallState) -> Result<Vec<String>, SetupError> {
        if self.adapters.is_empty() && state.adapters.is_empty() && !state.remotes.is_empty() {
            return Ok(Vec::new());
        }
        self.installed_adapters(state)
    }

    /// The command `adapter`'s entries run: the recorded one, else the one the layout
    /// prescribes for a shipped adapter of that name.
    pub fn adapter_server(&self, state: &InstallState, adapter: &str) -> ServerCommand {
        state
            .adapters
            .get(adapter)
            .and_then(|a| a.server.clone())
            .unwrap_or_else(|| self.server(state, adapter))
    }

    /// The clients to act on: the named ones, or every detected one that is selected by
    /// default; the generic file is always included. `extra` ids (from the receipt) are
    /// added for repair and uninstall.
    pub fn select(&self, extra: &[String]) -> Result<Vec<&'static dyn Client>, SetupError> {
        let all = crate::clients::all();
        let mut chosen: Vec<&'static dyn Client> = Vec::new();
        if self.clients.is_empty() {
            let cx = self.client_context();
            chosen.extend(
                all.iter()
                    .copied()
                    .filter(|c| c.selected_by_default() && c.detect(cx)),
            );
        } else {
            for id in &self.clients {
                let client = crate::clients::by_id(id).ok_or_else(|| {
                    SetupError::UnknownClient(
                        id.clone(),
                        all.iter().map(|c| c.id()).collect::<Vec<_>>().join(", "),
                    )
                })?;
                chosen.push(client);
            }
        }
        for id in extra.iter().map(String::as_str).chain(["generic"]) {
            if let Some(c) = crate::clients::by_id(id)
                && !chosen.iter().any(|x| x.id() == c.id())
            {
                chosen.push(c);
            }
        }
        Ok(chosen)
    }

    /// Load the receipt (or a new one).
    pub fn load_state(&self) -> Result<InstallState, SetupError> {
        Ok(InstallState::load(&self.layout.root)?.unwrap_or_else(InstallState::new))
    }

    /// Write the receipt if it changed.
    pub fn save_state(
        &self,
        before: &InstallState,
        state: &InstallState,
    ) -> Result<(), SetupError> {
        if before == state && InstallState::path(&self.layout.root).is_file() {
            return Ok(());
        }
        crate::faults::checkpoint();
        let path = InstallState::path(&self.layout.root);
        scimcp_core::fs::write_json_atomic(&path, state).map_err(SetupError::write(path))?;
        crate::faults::checkpoint();
        Ok(())
    }
}

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
    pub remote: Option<remote::RemoteSummary>,
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

/// The name of the adapter `arg` names: `arg` itself, or the name in the manifest file it
/// is the path of.
pub fn adapter_name(arg: &str) -> Result<String, SetupError> {
    scimcp_setup_model::adapters::adapter_name(arg).map_err(|e| SetupError::Manifest {
        path: e.path,
        message: e.message,
    })
}

/// Plan and (unless dry-run) apply `intent` for `adapter`'s entry in `clients`, updating
/// the adapter's client records. Per-client failures land in the report; the others still
/// proceed. An entry an older scimcp wrote under another name (`scimcp`) is removed first
/// (only while it is still what scimcp wrote) and added again as `scimcp-<adapter>`; so is
/// a project entry recorded in another project than `--project`'s (it moves).
pub fn register_clients(
    setup: &Setup,
    state: &mut InstallState,
    adapter: &str,
    clients: &[&'static dyn Client],
    intent: Intent,
    report: &mut Report,
) {
    let desired = entry_name(adapter);
    let server = setup.adapter_server(state, adapter);
    let backups = setup.layout.backups_dir();
    for client in cli_last(setup, clients) {
        let mut recorded = state
            .adapters
            .get(adapter)
            .and_then(|a| a.clients.get(client.id()))
            .cloned();
        let project =
            setup.recorded_project(client, recorded.as_ref(), intent == Intent::Uninstall);
        let cx = setup.context_in(project.as_deref());
        let mut line = ClientReport::new(cx, client, &desired);
        line.adapter = adapter.to_string();
        // The receipt keeps one entry per client: registering another project's while the
        // first stays would lose track of the first, which no uninstall could then find. So
        // the entry moves (removed there only while it is still what scimcp wrote).
        let moved_from = match intent {
            Intent::Uninstall => None,
            _ => setup.other_project(client, recorded.as_ref()),
        };
        if intent != Intent::Uninstall
            && let Some(old) = recorded
                .clone()
                .filter(|r| r.name != desired || moved_from.is_some())
        {
            let planner = Planner {
                cx: setup.context_in(moved_from.as_deref().or(project.as_deref())),
                name: &old.name,
                server: Serves::Command(&server),
                backups_dir: &backups,
            };
            let renamed = planner
                .plan(client, Intent::Uninstall, Some(&old))
                .map_err(|e| e.to_string())
                .and_then(|plan| {
                    if setup.dry_run {
                        add_diff(&plan, report);
                        Ok(())
                    } else {
                        register::apply(&plan, &backups)
                            .map(drop)
                            .map_err(|e| e.to_string())
                    }
                });
            match renamed {
                Ok(()) => {
                    report.step(match &moved_from {
                        Some(dir) => format!(
                            "move the entry `{}` of {} from the project {} to this one \
                             (scimcp keeps one project per client)",
                            old.name,
                            client.name(),
                            dir.display()
                        ),
                        None => format!(
                            "rename the entry `{}` an older scimcp wrote in {} to `{desired}`",
                            old.name,
                            client.name()
                        ),
                    });
                    if !setup.dry_run
                        && let Some(a) = state.adapters.get_mut(adapter)
                    {
                        a.clients.remove(client.id());
                    }
                    recorded = None;
                }
                Err(e) if moved_from.is_some() => {
                    line.error = Some(format!(
                        "the entry `{}` in the project {} could not be removed, and scimcp \
                         keeps one project per client: {e}",
                        old.name,
                        moved_from.as_deref().unwrap_or(Path::new("")).display()
                    ));
                    report.clients.push(line);
                    continue;
                }
                Err(e) => {
                    line.error = Some(format!(
                        "the entry `{}` an older scimcp wrote could not be renamed: {e}",
                        old.name
                    ));
                    report.clients.push(line);
                    continue;
                }
            }
        }
        let name = match (&recorded, intent) {
            (Some(r), Intent::Uninstall) => r.name.clone(),
            _ => desired.clone(),
        };
        line.entry = name.clone();
        let planner = Planner {
            cx,
            name: &name,
            server: Serves::Command(&server),
            backups_dir: &backups,
        };
        let change = carry_out(
            setup,
            &planner,
            client,
            intent,
            recorded.as_ref(),
            report,
            &mut line,
        );
        if let Some(a) = state.adapters.get_mut(adapter) {
            change.apply_to(&mut a.clients, client.id());
        }
        report.clients.push(line);
    }
}

/// `clients` with the one registered through its own CLI (Claude Code's `claude`) last: it
/// is the slowest and the least under our control.
pub(crate) fn cli_last(setup: &Setup, clients: &[&'static dyn Client]) -> Vec<&'static dyn Client> {
    let cx = setup.client_context();
    let mut ordered: Vec<&'static dyn Client> = clients.to_vec();
    ordered.sort_by_key(|c| c.cli(cx).is_some());
    ordered
}

/// What becomes of a client's record in the receipt after one registration.
#[derive(Debug)]
pub(crate) enum RecordChange {
    /// scimcp's entry is there: record it.
    Set(Box<ClientRecord>),
    /// scimcp has no entry there any more.
    Remove,
    /// Nothing to record (a dry run, a failure, steps to do by hand).
    Keep,
}

impl RecordChange {
    pub(crate) fn apply_to(
        self,
        records: &mut std::collections::BTreeMap<String, ClientRecord>,
        id: &str,
    ) {
        match self {
            RecordChange::Set(r) => {
                records.insert(id.to_string(), *r);
            }
            RecordChange::Remove => {
                records.remove(id);
            }
            RecordChange::Keep => {}
        }
    }
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

/// Plan `intent` for `client` with `planner`; show the change in a dry run, else apply it.
/// Fills in the report `line` and says what becomes of the client's record.
pub(crate) fn carry_out(
    setup: &Setup,
    planner: &Planner<'_>,
    client: &'static dyn Client,
    intent: Intent,
    recorded: Option<&ClientRecord>,
    report: &mut Report,
    line: &mut ClientReport,
) -> RecordChange {
    let plan = match planner.plan(client, intent, recorded) {
        Ok(plan) => plan,
        Err(e) => {
            line.error = Some(e.to_string());
            return RecordChange::Keep;
        }
    };
    line.location = plan.location();
    line.outcome = Some(plan.outcome.clone());
    if let How::Manual { steps, .. } = &plan.how {
        line.manual_steps = Some(steps.clone());
    }
    if setup.dry_run {
        add_diff(&plan, report);
        return RecordChange::Keep;
    }
    match register::apply(&plan, planner.backups_dir) {
        Ok(applied) => match register::record(&plan, recorded, &applied) {
            Some(r) => RecordChange::Set(Box::new(r)),
            None if plan.outcome != Outcome::Manual => RecordChange::Remove,
            None => RecordChange::Keep,
        },
        Err(e) => {
            line.error = Some(e.to_string());
            RecordChange::Keep
        }
    }
}

fn add_diff(plan: &ClientPlan, report: &mut Report) {
    match &plan.how {
        How::File {
            file,
            before,
            after,
            ..
        } if plan.changes() => report.diffs.push(crate::commands::FileDiff {
            path: file.path.clone(),
            diff: crate::diff::unified(&file.path, before.as_deref(), after.as_deref()),
        }),
        How::Cli {
            cli, remove, add, ..
        } if plan.changes() => {
            let mut lines = String::new();
            if *remove {
                lines.push_str(&format!(
                    "would run: {} mcp remove --scope user {}\n",
                    cli.program.display(),
                    plan.name
                ));
            }
            if *add {
                lines.push_str(&format!(
                    "would run: {} mcp add-json --scope user {} '{}'\n",
                    cli.program.display(),
                    plan.name,
                    plan.entry
                ));
            }
            report.diffs.push(crate::commands::FileDiff {
                path: cli.program.clone(),
                diff: lines,
            });
        }
        _ => {}
    }
}

/// Remove a directory tree if it exists.
pub fn remove_tree(path: &Path) -> Result<bool, SetupError> {
    match fs_err::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            fs_err::remove_dir_all(path).map_err(SetupError::io("removing", path))?;
            Ok(true)
        }
        Ok(_) => {
            fs_err::remove_file(path).map_err(SetupError::io("removing", path))?;
            Ok(true)
        }
        Err(_) => Ok(false),
    }
}
