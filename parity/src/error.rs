//! The gate's errors, in three kinds kept apart by what becomes of them:
//!
//! - [`Error`] stops the gate before any scenario runs: unreadable or invalid scenario
//!   files, adapter manifests and snapshot directories.
//! - [`SideError`] is a failure *inside* a scenario (a process that cannot start, an MCP
//!   call that breaks): it becomes that scenario's result, so one broken scenario never
//!   hides the others.
//! - [`ArgError`] is a flag value clap refuses (exit 2).

use std::borrow::Cow;
use std::path::PathBuf;

use scimcp_client::ClientError;
use scimcp_core::ManifestErrors;
use serde_json::Value;

/// A configuration problem, naming the file and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    ScenarioSyntax { path: PathBuf, message: String },
    #[error("{path}: `{field}` {message}")]
    ScenarioInvalid {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error("adapter manifest {path} is invalid:\n{errors}")]
    Adapter {
        path: PathBuf,
        errors: ManifestErrors,
    },
    #[error("no adapter manifests in {dir}")]
    NoAdapters { dir: PathBuf },
    #[error("no scenario files in {dir}")]
    NoScenarios { dir: PathBuf },
    /// Something the gate needs is missing or unusable (a flag's target, the runtime, a
    /// snapshot file); the hint says what fixes it.
    #[error("{message}")]
    Usage { message: String, hint: String },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: scimcp_core::fs::WriteError,
    },
    #[error("--scenario {glob}: not a glob: {source}")]
    Glob {
        glob: String,
        #[source]
        source: globset::Error,
    },
    #[error(transparent)]
    GlobSet(globset::Error),
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot create a temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    /// A blocking helper task (a runtime probe, a dataset export) panicked or was cancelled.
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
    #[error("the runtime probe printed something unexpected: {0}")]
    ProbeOutput(#[source] serde_json::Error),
    #[error(
        "{package} is not installed in {}: its built-in datasets cannot be found",
        python.display()
    )]
    NotInstalled { package: String, python: PathBuf },
}

impl scimcp_core::failure::Hint for Error {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            Error::NoAdapters { .. } => {
                Some("pass --adapters DIR with the adapters/*.toml to gate".into())
            }
            Error::NoScenarios { .. } => {
                Some("pass --scenarios DIR with the parity/scenarios/*.toml".into())
            }
            Error::Usage { hint, .. } => Some(hint.as_str().into()),
            _ => None,
        }
    }
}

impl Error {
    pub(crate) fn usage(message: impl Into<String>, hint: impl Into<String>) -> Error {
        Error::Usage {
            message: message.into(),
            hint: hint.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn invalid(
        path: impl Into<PathBuf>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Error {
        Error::ScenarioInvalid {
            path: path.into(),
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Why one side of one scenario (the direct command, the MCP session, or the setup both
/// share) gave no evidence. It is reported in the scenario's result, never printed as the
/// gate's own failure, so every message names the step that broke.
#[derive(Debug, thiserror::Error)]
pub enum SideError {
    /// A file or directory of the side's private tree (the message names the path).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("cannot start {}", program.display())]
    StartDirect {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the direct command did not finish within {timeout_s} s (timeout_s); it was killed")]
    DirectTimedOut { timeout_s: u64 },
    #[error("cannot start `{} serve`", program.display())]
    StartServer {
        program: PathBuf,
        #[source]
        source: ClientError,
    },
    /// The MCP session broke under a call (the protocol, not the tool).
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("{tool} failed")]
    ToolFailed {
        tool: String,
        #[source]
        source: ClientError,
    },
    #[error("validate_analysis says the request is not ready: {blockers}")]
    NotReady { blockers: Value },
    #[error("start_analysis returned no run_id")]
    NoRunId,
    #[error(
        "the run ended ({state}) before its stdout showed {marker:?}, so it could not be cancelled"
    )]
    EndedBeforeMarker { state: Value, marker: String },
    #[error("stdout never showed {marker:?} within {timeout_s} s")]
    MarkerNeverShown { marker: String, timeout_s: u64 },
    #[error("cancel_run changed nothing: {answer}")]
    CancelChangedNothing { answer: Value },
    #[error("get_run_status reported no pid for the running run: {status}")]
    NoPid { status: Value },
    #[error("the run ended without a published result: {answer}")]
    NoResult { answer: Value },
    #[error("the run did not finish within {timeout_s} s (timeout_s); it was cancelled")]
    McpTimedOut { timeout_s: u64 },
    #[error("result.artifacts is not a page of items: {page}")]
    NotAPage { page: Value },
    #[error("the artifact pages of {run_id} belong to different sequences")]
    MixedSequences { run_id: String },
    #[error("result.artifacts says {total} artifacts, the pages held {held}")]
    ArtifactCount { total: u64, held: usize },
    /// A field the result view always has is missing (`state`, `output_dir`).
    #[error("result has no {field}")]
    ResultField { field: &'static str },
    /// A field every artifact entry has is missing (`path`, `sha256`).
    #[error("artifact without {field}")]
    ArtifactField { field: &'static str },
    /// The server's last stderr lines, put in front of what broke the session so the
    /// report shows what the server said.
    #[error("server stderr (last lines):\n{tail}")]
    WithServerStderr {
        tail: String,
        #[source]
        source: Box<SideError>,
    },
}

impl SideError {
    /// The message and every cause not already part of it, joined by `: ` on one line, as
    /// the scenario's report shows it (the gate's own failures print the same facts as
    /// `caused by:` lines instead).
    pub(crate) fn chain_text(&self) -> String {
        let failure = scimcp_core::failure::Failure::new(self);
        std::iter::once(failure.message)
            .chain(failure.causes)
            .collect::<Vec<_>>()
            .join(": ")
    }
}

/// A flag value that is not what the flag takes; clap prints it and exits 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    #[error("`{0}` is not ADAPTER=PATH, e.g. geochemistrypi=.venv-geochemistrypi/bin/python")]
    NotAdapterPath(String),
    #[error("`{0}` is not NAME=VALUE, e.g. OPENBLAS_CORETYPE=Haswell")]
    NotNameValue(String),
    /// The variable is one a run may not set (the text is the core's rule).
    #[error("{0}")]
    Env(String),
    #[error("`{0}` is not a shard: write I/N with 1 <= I <= N, e.g. 2/4")]
    NotShard(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_error_reads_as_one_line_with_its_causes() {
        let e = SideError::WithServerStderr {
            tail: "Traceback".into(),
            source: Box::new(SideError::ToolFailed {
                tool: "get_environment".into(),
                source: ClientError::ToolFailed("no runtime".into()),
            }),
        };
        assert_eq!(
            e.chain_text(),
            "server stderr (last lines):\nTraceback: get_environment failed: \
             tool returned an error: no runtime"
        );
        // A cause the message already quotes is not repeated.
        let e = SideError::StartServer {
            program: "/opt/scimcp".into(),
            source: ClientError::Spawn {
                program: "/opt/scimcp".into(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            },
        };
        assert_eq!(
            e.chain_text(),
            "cannot start `/opt/scimcp serve`: cannot start /opt/scimcp: entity not found"
        );
    }
}
