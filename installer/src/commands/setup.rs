//! [`Setup`]: the resolved settings every command runs with, and the adapter, client and
//! receipt look-ups they share.

use std::path::{Path, PathBuf};

use scimcp_core::install_state::{ClientRecord, InstallState, ServerCommand};

use crate::clients::{Client, ClientContext};
use crate::error::SetupError;
use crate::host::Host;
use crate::layout::{DEFAULT_ADAPTER, Layout};

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

/// The name of the adapter `arg` names: `arg` itself, or the name in the manifest file it
/// is the path of.
pub fn adapter_name(arg: &str) -> Result<String, SetupError> {
    scimcp_setup_model::adapters::adapter_name(arg).map_err(|e| SetupError::Manifest {
        path: e.path,
        message: e.message,
    })
}
