//! A run directory's records as every part of the run manager reads them — its id, its
//! `list_runs` line, its JSON files and its owner lock — below both the manager (mod.rs) and
//! the start-up recovery (recovery.rs), which read them without importing each other.

use std::path::{Path, PathBuf};

use super::state::{RunState, RunStatus};

/// One line of `list_runs`.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct RunSummary {
    pub run_id: String,
    pub state: RunState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub workflow: String,
    pub adapter: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
}

impl From<RunStatus> for RunSummary {
    fn from(s: RunStatus) -> RunSummary {
        RunSummary {
            run_id: s.run_id,
            state: s.state,
            reason: s.reason,
            workflow: s.workflow,
            adapter: s.adapter,
            created_at: s.created_at,
            ended_at: s.ended_at,
        }
    }
}

/// `run-` and 16 lower-case hex digits; anything else never touches the file system.
/// One rule with the run directories' names (core's history measure reads them too).
pub fn is_run_id(id: &str) -> bool {
    scimcp_core::history::is_run_dir_name(id)
}

/// The run's owner lock (`owner.lock`), taken without waiting.
pub(super) use scimcp_core::lock::try_own;

/// Why one of a run's JSON records (`status.json`, `result.json`, …) could not be read.
#[derive(Debug, thiserror::Error)]
pub(super) enum RecordError {
    /// fs-err's message names the file.
    #[error(transparent)]
    Read(#[from] std::io::Error),
    #[error("{}: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
}

pub(super) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, RecordError> {
    let bytes = fs_err::read(path)?;
    serde_json::from_slice(&bytes).map_err(|source| RecordError::Parse {
        path: path.to_path_buf(),
        source,
    })
}
