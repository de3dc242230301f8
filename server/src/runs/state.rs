//! The durable records of a run: its status (rewritten atomically at each transition) and
//! its result (published once, never replaced).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use scimcp_core::manifest::ArtifactBase;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::PlannedDataset;

/// Version of `status.json` and `result.json`.
pub const RECORD_SCHEMA_VERSION: u32 = 1;

/// Where a run is in its life. Transitions only go forward:
/// queued → running → one terminal state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Queued,
    Running,
    Succeeded,
    /// The CLI exited 0 but a required artifact is missing or invalid.
    PartialFailure,
    Failed,
    Cancelled,
}

impl RunState {
    pub fn is_terminal(self) -> bool {
        !matches!(self, RunState::Queued | RunState::Running)
    }
}

/// `status.json`: the run's current state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunStatus {
    pub schema_version: u32,
    pub run_id: String,
    pub state: RunState,
    /// Why a run ended other than `succeeded`: `exit_code`, `timeout`, `cancelled`,
    /// `missing_artifacts`, `dataset_changed`, `spawn_failed`, `interrupted`, `internal`;
    /// on Slurm also `out_of_memory`, `node_failure`, `preempted`, `submit_failed`,
    /// `job_failed`, `lost`, `scheduler`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub adapter: String,
    pub workflow: String,
    pub validation_id: String,
    pub plan_sha256: String,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Process id (and process group id) of the CLI while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The server process that owns the run.
    pub server_pid: u32,
    /// The batch job running it, when the executor is a scheduler (Slurm); absent for a
    /// local run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<BatchJob>,
}

/// A run's batch job, as its scheduler last reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BatchJob {
    /// `slurm`.
    pub executor: String,
    /// `12`, or `12_3` for task 3 of array job 12.
    pub job_id: String,
    /// The scheduler's own state word (`PENDING`, `RUNNING`, `TIMEOUT`, …).
    pub state: String,
    /// The scheduler's reason (`Resources`, `Priority`, `JobArrayTaskLimit`, `TimeLimit`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// One file found in the run's output directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ArtifactRecord {
    /// The declared artifact it satisfies, or none for an undeclared file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Relative to the output directory (or, with `base: work`, to the working directory),
    /// `/`-separated.
    pub path: String,
    pub media_type: String,
    pub size_bytes: u64,
    pub sha256: String,
    /// `work` for a declared artifact the CLI wrote elsewhere in its working directory.
    #[serde(default, skip_serializing_if = "ArtifactBase::is_output")]
    #[schemars(with = "Option<String>")]
    pub base: ArtifactBase,
}

/// A declared artifact that is absent or does not meet its declaration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ArtifactProblem {
    pub id: String,
    pub path: String,
    pub problem: String,
}

/// The adapter a run used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterIdentity {
    pub name: String,
    pub version: String,
    pub sha256: String,
}

/// `result.json`: the terminal receipt of a run, published once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    pub schema_version: u32,
    pub run_id: String,
    pub state: RunState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub adapter: AdapterIdentity,
    pub workflow: String,
    pub validation_id: String,
    pub request_sha256: String,
    pub plan_sha256: String,
    /// The table the run read, for workflows that take one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<PlannedDataset>,
    /// The named file inputs the run read, each file with its hash (and the run it came
    /// from, for an earlier run's artifact).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<crate::inputs::PlannedInput>,
    /// The step of a stepped workflow that failed and ended the run (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_step: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub started_at: Option<String>,
    pub ended_at: String,
    pub duration_ms: u64,
    /// Absolute path of the run directory.
    pub run_dir: String,
    /// Absolute path of the output directory.
    pub output_dir: String,
    /// Every regular file in the output directory, sorted by path.
    pub artifacts: Vec<ArtifactRecord>,
    /// Declared artifacts that are missing or invalid.
    pub problems: Vec<ArtifactProblem>,
    /// Values of the declared `json_keys`, per artifact id.
    pub reported: BTreeMap<String, BTreeMap<String, Value>>,
    /// Files left out of `artifacts` (symbolic links, over the size or count limit).
    pub skipped: Vec<String>,
    /// The end of stderr when the run did not succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// What the run sandbox applied to the CLI (each protection's state), as the sandbox's
    /// exec wrapper reported it; absent when the CLI never started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub sandbox: Option<scimcp_process::sandbox::Applied>,
}

/// The current time as an RFC 3339 UTC timestamp.
pub fn now() -> String {
    jiff::Timestamp::now().to_string()
}
