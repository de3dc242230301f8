//! A command engine: an adapter front end that builds each run's command from the request
//! itself instead of from manifest templates (the CWL front end, whose bindings, expressions
//! and output rules depend on every value of the job). The manifest still says what the
//! server offers (the workflow, its parameter schema, the program, limits and sandbox); the
//! engine says, per validated request, which files to stage and what exactly to start, and
//! after the run, what it produced. The server keeps everything else: confinement, copies
//! and hashes of every file, the plan and its hash, the sandbox, the run record.
//!
//! An engine never starts a process and never reads a file the server has not confined: it
//! names the files a request refers to ([`CommandEngine::stage`]), and builds the command
//! from the staged copies ([`CommandEngine::command`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::inputs::InputKind;

/// One group of files the server stages together into `inputs/<id>/` (a File with its
/// secondary files lands in one directory, as CWL requires).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageGroup {
    pub id: String,
    pub kind: InputKind,
    /// The paths as the request gave them (absolute, or relative to a data directory).
    pub paths: Vec<String>,
}

/// A staged group: where each file's confined source is now and where its copy will be.
#[derive(Debug, Clone)]
pub struct StagedGroup {
    pub id: String,
    pub kind: InputKind,
    /// Per file, in the order of [`StageGroup::paths`]: the confined source (for reading a
    /// size or `contents` now) and the copy's path relative to the working directory.
    pub files: Vec<(PathBuf, String)>,
    /// A directory input's copy, relative to the working directory.
    pub dir: Option<String>,
}

/// What the engine decided a run starts. Paths in it may use `{work_dir}` (substituted at
/// run time, so the plan is the same on every machine).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EngineCommand {
    /// The program (argv\[0\]) as the tool names it; the server resolves and hashes it.
    pub program: String,
    pub args: Vec<String>,
    /// The CLI's working directory, relative to the run's (an engine keeps it apart from
    /// the staged inputs and the server's own directories, e.g. CWL's output directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// A file (relative to the working directory, or `{work_dir}/…`) fed on stdin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin_file: Option<String>,
    /// File names in the working directory the streams are written to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_file: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Text files written into the run's working directory before the start (path, content).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<(String, String)>,
    /// Staged copies also placed at another name in the working directory (from, to),
    /// both relative to it; `writable` copies may be changed by the tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<EngineLink>,
    /// Empty directories made in the working directory before the start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
    /// The run's time limit when the tool sets a shorter one than the manifest (seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// Exit statuses that mean success (empty: only 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub success_codes: Vec<i32>,
    /// What runs differently from the tool's description, by the operator's choice (e.g. a
    /// container requirement served from PATH), for the person reading the plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The engine's own record of the job, which [`CommandEngine::outputs`] reads again
    /// (an object).
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub job: Value,
}

/// A staged file or directory placed at a second name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EngineLink {
    pub from: String,
    pub to: String,
    #[serde(default)]
    pub writable: bool,
}

/// Why an engine refused a request, or could not read a run's outputs.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    pub message: String,
    /// The request field it concerns (`parameters.<name>…`), when there is one.
    pub field: Option<String>,
    /// What to do about it.
    pub hint: String,
}

impl EngineError {
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> EngineError {
        EngineError {
            message: message.into(),
            field: None,
            hint: hint.into(),
        }
    }

    pub fn field(mut self, field: impl Into<String>) -> EngineError {
        self.field = Some(field.into());
        self
    }
}

/// An adapter front end that builds commands per request.
pub trait CommandEngine: Send + Sync + std::fmt::Debug {
    /// A short name for logs and plans (`cwl`).
    fn name(&self) -> &'static str;

    /// What identifies the engine's behaviour besides the manifest (the tool document's
    /// canonical hash): part of the adapter's hash.
    fn fingerprint(&self) -> &str;

    /// The files `params` names, grouped as they must be staged.
    fn stage(&self, params: &Map<String, Value>) -> Result<Vec<StageGroup>, EngineError>;

    /// Host files and directories the adapter itself names (written in its description, not
    /// chosen by a request), which a command may copy into the working directory as they
    /// are. Every other source of an [`EngineLink`] must be inside the working directory
    /// (a staged copy of a request's file): the server refuses the command otherwise.
    fn fixed_sources(&self) -> &[std::path::PathBuf] {
        &[]
    }

    /// The command for `params`, whose files are now `staged`.
    fn command(
        &self,
        params: &Map<String, Value>,
        staged: &[StagedGroup],
    ) -> Result<EngineCommand, EngineError>;

    /// The run's outputs, read from its working directory after the tool exited with
    /// `exit_code` (the engine's output object; JSON).
    fn outputs(
        &self,
        command: &EngineCommand,
        work_dir: &Path,
        exit_code: i32,
    ) -> Result<Value, EngineError>;
}
