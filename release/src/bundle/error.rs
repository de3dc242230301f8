//! Why a bundle cannot be built: each variant names the file, target or adapter, and what
//! to do when that is not obvious. Below the rest of `bundle`, so the files that build a
//! bundle share it without importing each other.

use std::path::{Path, PathBuf};

/// Why a bundle cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the bundle allowlist {path} is invalid: {message}")]
    Allowlist { path: PathBuf, message: String },
    #[error("{path} must never ship in a bundle ({why}); remove it from release/bundle.toml")]
    Denied { path: String, why: String },
    #[error(
        "no binary '{name}' for target {target} in {source_dir}; build it (or run dist build) first"
    )]
    MissingBinary {
        name: String,
        target: String,
        source_dir: PathBuf,
    },
    #[error(
        "{target} is not a target scimcp bundles (use a linux, apple-darwin or windows triple)"
    )]
    UnknownTarget { target: String },
    #[error("adapter {path} is invalid:\n{message}")]
    Adapter { path: PathBuf, message: String },
    #[error("cannot write the zip: {0}")]
    Zip(#[source] zip::result::ZipError),
    /// Writing a zip or `RELEASE.json` into the output directory.
    #[error(transparent)]
    Write(#[from] scimcp_core::fs::WriteError),
    /// A `dist build` zip archive that cannot be read.
    #[error("cannot read the archive {}: {source}", archive.display())]
    Archive {
        archive: PathBuf,
        #[source]
        source: zip::result::ZipError,
    },
    #[error(
        "cannot determine the source date: set SOURCE_DATE_EPOCH or build inside a git checkout ({0})"
    )]
    NoEpoch(String),
    /// git could not say when `HEAD` was committed (not a checkout, no git, or it hung).
    #[error(
        "cannot determine the source date: set SOURCE_DATE_EPOCH or build inside a git checkout"
    )]
    NoCommitTime(#[source] scimcp_process::ProcessError),
}

impl BundleError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> BundleError {
        BundleError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
