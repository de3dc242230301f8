//! A dataset reference resolved to a checked file, and how it is opened again: what the
//! readers ([`super::inspect`], [`super::kinds`]) take, below the catalog that makes it.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use super::open::{self, Opened};
use crate::envelope::ToolError;

/// Where a dataset comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DatasetSource {
    Builtin,
    File,
}

/// A dataset reference resolved to a checked file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct ResolvedDataset {
    /// The reference as the client gave it.
    pub reference: String,
    pub source: DatasetSource,
    /// Absolute path (its allowed directory, then the path below it).
    pub path: PathBuf,
    pub file_name: String,
    pub size_bytes: u64,
    pub sha256: String,
    /// The allowed directory it lies in, and its path below it: how it is opened again.
    #[serde(skip)]
    #[schemars(skip)]
    pub root: PathBuf,
    #[serde(skip)]
    #[schemars(skip)]
    pub relative: PathBuf,
}

impl ResolvedDataset {
    /// Open the file again, the same way it was resolved (below its root, no links
    /// followed, checked on the handle).
    pub fn reopen(&self, max_bytes: u64) -> Result<Opened, ToolError> {
        open::open_confined(&self.root, &self.relative, &self.reference, max_bytes)
    }
}
