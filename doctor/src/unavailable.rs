//! Why an input the checks share (an adapter's manifest, its runtime probe) is unavailable.
//! The context computes each input once and keeps the error; every check that needs the
//! input reports it as its finding.

use std::path::PathBuf;

use scimcp_core::manifest::ManifestErrors;

/// Why an adapter's manifest cannot be loaded: the finding of every check that needs it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("adapter {adapter} cannot be loaded: {source}")]
pub struct ManifestUnavailable {
    pub adapter: String,
    #[source]
    pub source: ManifestErrors,
}

/// Why the runtime probe gave no answer: the finding of the checks that need it.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(transparent)]
    Manifest(#[from] ManifestUnavailable),
    #[error("{} does not exist", interpreter.display())]
    NoInterpreter { interpreter: PathBuf },
    #[error("cannot run {}: {source}", interpreter.display())]
    Run {
        interpreter: PathBuf,
        #[source]
        source: scimcp_process::ProcessError,
    },
    #[error("{} did not answer within {seconds} s", interpreter.display())]
    TimedOut { interpreter: PathBuf, seconds: u64 },
    #[error("{} failed: {}", interpreter.display(), stderr_tail.join(" | "))]
    Failed {
        interpreter: PathBuf,
        stderr_tail: Vec<String>,
    },
    #[error("unexpected runtime probe output: {0}")]
    Output(#[source] serde_json::Error),
}
