//! Errors that stop the gate before any scenario runs: unreadable or invalid scenario
//! files, adapter manifests and snapshot directories. Failures *inside* a scenario (a
//! process that cannot start, an MCP call that breaks) are not errors of this kind: they
//! become that scenario's result, so one broken scenario never hides the others.

use std::borrow::Cow;
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
    #[error("no adapter manifests in {dir}")]
    NoAdapters { dir: PathBuf },
    #[error("no scenario files in {dir}")]
    NoScenarios { dir: PathBuf },
    /// Something the gate needs is missing or unusable (a flag's target, the runtime, a
    /// snapshot file); the hint says what fixes it.
    #[error("{message}")]
    Usage { message: String, hint: String },
    #[error("cannot write {path}: {message}")]
    Write { path: PathBuf, message: String },
    #[error("{0}")]
    Setup(String),
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
