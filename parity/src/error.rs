//! Errors that stop the gate before any scenario runs: unreadable or invalid scenario
//! files, adapter manifests and snapshot directories. Failures *inside* a scenario (a
//! process that cannot start, an MCP call that breaks) are not errors of this kind: they
//! become that scenario's result, so one broken scenario never hides the others.

use std::path::PathBuf;

use scimcp_core::ManifestErrors;

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
    #[error("no adapter manifests in {dir}: pass --adapters DIR with the adapters/*.toml to gate")]
    NoAdapters { dir: PathBuf },
    #[error("no scenario files in {dir}: pass --scenarios DIR with the parity/scenarios/*.toml")]
    NoScenarios { dir: PathBuf },
    #[error("cannot write {path}: {message}")]
    Write { path: PathBuf, message: String },
    #[error("{0}")]
    Setup(String),
}

impl Error {
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
