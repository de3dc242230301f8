//! Tool argument types. Every one is strict: unknown fields are refused with the field named.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::paging::Detail;

/// An analysis: a workflow, a dataset and the workflow's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalysisRequest {
    /// Workflow id, as listed by get_capabilities.
    pub workflow: String,
    /// `builtin:<id>` for a built-in dataset, or the path of a CSV file (absolute, or
    /// relative to the server's start directory) inside an allowed directory. Required by
    /// workflows that read a table (`{dataset}` or column parameters); refused by workflows
    /// that take only named `inputs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// Named file inputs, by the workflow's input ids: a path, `{path, sha256}`, or
    /// `{run_id, artifact}` (an artifact of an earlier run); a list for `kind = "files"`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub inputs: crate::inputs::RequestInputs,
    /// The workflow's parameters; get_capabilities(workflow=…) gives their exact schema.
    #[serde(default)]
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// Refuse the request unless the dataset's SHA-256 equals this (hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_dataset_sha256: Option<String>,
}

/// `start_analysis` arguments: the analysis, optionally bound to an earlier validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartRequest {
    /// Workflow id, as listed by get_capabilities.
    pub workflow: String,
    /// Dataset reference, as for validate_analysis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// Named file inputs, as for validate_analysis.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub inputs: crate::inputs::RequestInputs,
    /// The workflow's parameters.
    #[serde(default)]
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// Refuse unless the dataset's SHA-256 equals this (hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_dataset_sha256: Option<String>,
    /// The id validate_analysis (or a preview) returned in this session: it starts one run,
    /// within 15 minutes, and the start is refused if the request, the dataset bytes or the
    /// plan changed since. Required with `confirm: true`
    /// where the server requires confirmation, so what starts is what the person approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_id: Option<String>,
    /// `true` starts the run. `false` (or, where the server requires confirmation, leaving
    /// it out) starts nothing and returns a preview of exactly what would run. Set it to
    /// `true` only after the person agreed to that preview.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<bool>,
}

impl StartRequest {
    /// The analysis part of the request.
    pub fn analysis(&self) -> AnalysisRequest {
        AnalysisRequest {
            workflow: self.workflow.clone(),
            dataset: self.dataset.clone(),
            inputs: self.inputs.clone(),
            parameters: self.parameters.clone(),
            expected_dataset_sha256: self.expected_dataset_sha256.clone(),
        }
    }
}

/// `get_capabilities` arguments.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilitiesRequest {
    /// Only this workflow, with its exact parameter schema and the schema's hash.
    #[serde(default)]
    pub workflow: Option<String>,
    /// `compact` (default) lists workflows with their schema hashes; `full` includes every
    /// workflow's schema.
    #[serde(default)]
    pub detail: Detail,
}

/// `list_datasets` arguments.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatasetsRequest {
    /// Skip this many datasets (sorted by reference).
    #[serde(default)]
    pub offset: usize,
    /// Page size (default 50; at most 100 compact, 1000 full).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub detail: Detail,
}

/// Arguments of tools that take nothing.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArguments {}

/// `inspect_dataset` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectRequest {
    /// Data file reference (`builtin:<id>` or a path list_datasets gives): a table, a
    /// sequence, structure or FITS file, or any other file.
    pub dataset: String,
    /// Tables: how many leading rows to include (0-10, default 3), restricted to the
    /// columns of this page.
    #[serde(default = "default_sample_rows")]
    #[schemars(range(min = 0, max = 10))]
    pub sample_rows: u8,
    /// First column of the page of columns.
    #[serde(default)]
    pub column_offset: usize,
    /// Columns per page (default 50; at most 100 compact, 2000 full).
    #[serde(default)]
    pub column_limit: Option<usize>,
    #[serde(default)]
    pub detail: Detail,
}

fn default_sample_rows() -> u8 {
    3
}

/// Arguments naming one run.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRef {
    /// The run id start_analysis returned (`run-` and 16 hex digits).
    pub run_id: String,
}

/// `cancel_run` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelRequest {
    /// The run id start_analysis returned (`run-` and 16 hex digits).
    pub run_id: String,
    /// `true` cancels the run. `false` (or, where the server requires confirmation, leaving
    /// it out) cancels nothing and returns the run's status. Set it to `true` only after the
    /// person agreed.
    #[serde(default)]
    pub confirm: Option<bool>,
}

/// `get_run_result` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultRequest {
    /// The run id start_analysis returned.
    pub run_id: String,
    /// Seconds to wait for a terminal state before answering with a pending receipt (0-300).
    /// Default: the longest wait that ends before this client gives up on one call (from
    /// `serve --client-timeout-s`, or the deadline known for the client's declared name,
    /// else 45 s); a larger `wait_s` is lowered below that deadline.
    #[serde(default)]
    #[schemars(range(min = 0, max = 300))]
    pub wait_s: Option<u32>,
    /// The `result_sha256` of a result already held: an unchanged terminal result is
    /// answered with a short `not_modified`.
    #[serde(default)]
    pub if_result_sha256: Option<String>,
    /// First artifact of the page of artifacts.
    #[serde(default)]
    pub artifact_offset: usize,
    /// Artifacts per page (default 50; at most 100 compact, 2000 full).
    #[serde(default)]
    pub artifact_limit: Option<usize>,
    #[serde(default)]
    pub detail: Detail,
}

/// `list_runs` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRunsRequest {
    /// Skip this many runs (newest first). For paging through a history that grows while
    /// it is read, pass `cursor` instead.
    #[serde(default)]
    pub offset: u32,
    /// At most this many runs (default 20; at most 100 compact, 1000 full).
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: u32,
    #[serde(default)]
    pub detail: Detail,
    /// Start after the run this cursor names: the `next_cursor` of the previous page (runs
    /// started since do not shift the pages that follow).
    #[serde(default)]
    pub cursor: Option<String>,
    /// Only runs in this state, or in one of these states.
    #[serde(default)]
    pub state: Option<States>,
    /// Only runs of this workflow.
    #[serde(default)]
    pub workflow: Option<String>,
    /// Only runs of this adapter.
    #[serde(default)]
    pub adapter: Option<String>,
    /// Only the runs of this campaign (`camp-…`).
    #[serde(default)]
    pub campaign_id: Option<String>,
    /// Only runs started by this caller: a token's name, `loopback` or `stdio`.
    #[serde(default)]
    pub started_by: Option<String>,
    /// Only runs created after this time (RFC 3339, e.g. `2026-01-31T00:00:00Z`).
    #[serde(default)]
    pub created_after: Option<String>,
    /// Only runs created before this time (RFC 3339).
    #[serde(default)]
    pub created_before: Option<String>,
}

fn default_limit() -> u32 {
    20
}

/// One run state or several.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum States {
    One(crate::runs::state::RunState),
    Many(Vec<crate::runs::state::RunState>),
}

impl States {
    pub fn into_vec(self) -> Vec<crate::runs::state::RunState> {
        match self {
            States::One(s) => vec![s],
            States::Many(v) => v,
        }
    }
}

/// Which captured stream to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LogStream {
    Stdout,
    Stderr,
}

/// `get_run_log` arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogRequest {
    /// The run id start_analysis returned.
    pub run_id: String,
    /// `stdout` or `stderr` (default stderr).
    #[serde(default = "default_stream")]
    pub stream: LogStream,
    /// Bytes of the tail to return (default 8192; at most 16384 compact, 262144 full).
    #[serde(default = "default_max_bytes")]
    #[schemars(range(min = 1, max = 262144))]
    pub max_bytes: u32,
    #[serde(default)]
    pub detail: Detail,
}

fn default_stream() -> LogStream {
    LogStream::Stderr
}

fn default_max_bytes() -> u32 {
    8192
}
