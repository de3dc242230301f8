//! The adapter manifest: one TOML file that describes one scientific CLI, the single source
//! of truth for what the server offers and what the installer and doctor must provide.
//!
//! Loading parses the TOML strictly (unknown keys are errors), reads each workflow's JSON
//! Schema, checks every cross-reference (placeholders, options, artifacts, limits) and
//! reports every problem at once with its file, line and field. A loaded [`Adapter`] has a
//! canonical JSON form and a SHA-256 over it that every dependent response carries.

mod embedded;
mod error;
mod inputs;
mod load;
mod outputs;
mod programs;
mod progress;
mod template;
mod types;

pub use embedded::{EMBEDDED_ADAPTERS, embedded_names};
pub use error::{ManifestError, ManifestErrors};
pub use inputs::{
    INPUT_PLACEHOLDER_PREFIX, INPUTS_DIR, InputKind, InputSpec, input_placeholder_id,
};
pub use load::{load_embedded, load_file, resolve};
pub use outputs::{Comparison, MetricReader, MetricSpec, OutputSource, RequireSpec, output_regex};
pub use programs::{
    PACKAGE_MANAGERS, ProgramFacts, ProgramRef, RUNTIME_PROGRAM, install_command,
    missing_program_remedy,
};
pub use progress::{
    CliProgress, PROGRESS_GROUPS, ProgressSpec, ProgressStream, is_unsafe_in_text, safe_text,
};
pub use template::{
    ABSOLUTE_RUN_VALUES, Filter, NULL, OPTIONS, Placeholder, RUN_VALUES, Template, TemplatePart,
};
pub use types::{
    ArtifactBase, ArtifactSpec, DatasetsSpec, InputFileFormat, InputFileSpec, Manifest,
    NativeRequirement, OptionFormat, OptionSpec, ProgramSpec, Resources, Runtime, RuntimeKind,
    StepSpec, SuccessSpec, VersionProbe, Workflow,
};

/// The JSON Schema keyword that marks a parameter as naming dataset columns (a string, or
/// an array of strings): `{"x-scimcp-column": {"numeric": true, "complete": true}}`. The
/// server checks the names against the dataset's header before any process starts:
/// each must exist, be numeric when `numeric`, and have no missing value when `complete`.
pub const COLUMN_KEYWORD: &str = "x-scimcp-column";

use std::path::PathBuf;

/// Where a loaded manifest came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AdapterOrigin {
    /// Compiled into the binaries (the adapters that ship with the suite).
    Embedded { name: String },
    /// Read from a manifest file on disk.
    File { path: PathBuf },
}

/// A manifest that passed validation, with its canonical form and hash.
#[derive(Debug, Clone)]
pub struct Adapter {
    pub manifest: Manifest,
    pub origin: AdapterOrigin,
    /// What is allowed but risky (a free-form object reaching the CLI): `adapter check`
    /// prints these; they never stop a manifest from loading.
    pub warnings: Vec<ManifestError>,
    /// Computed on first use: serializing the whole manifest, schemas included, and hashing
    /// it was a fifth of loading one, and a server needs the hash only when a request does
    /// (it warms it off the start's critical path).
    fingerprint: std::sync::OnceLock<Fingerprint>,
}

#[derive(Debug, Clone)]
struct Fingerprint {
    canonical_json: String,
    sha256: String,
}

impl Adapter {
    pub(crate) fn new(
        manifest: Manifest,
        origin: AdapterOrigin,
        warnings: Vec<ManifestError>,
    ) -> Adapter {
        Adapter {
            manifest,
            origin,
            warnings,
            fingerprint: std::sync::OnceLock::new(),
        }
    }

    fn fingerprint(&self) -> &Fingerprint {
        self.fingerprint.get_or_init(|| {
            let value = serde_json::to_value(&self.manifest).expect("manifest serializes");
            let canonical_json = crate::hash::canonical_json(&value);
            let sha256 = crate::hash::sha256_hex(canonical_json.as_bytes());
            Fingerprint {
                canonical_json,
                sha256,
            }
        })
    }

    /// Canonical JSON of the manifest, schemas included.
    pub fn canonical_json(&self) -> &str {
        &self.fingerprint().canonical_json
    }

    /// SHA-256 of [`Adapter::canonical_json`]: what plans, runs and bundles name the adapter by.
    pub fn sha256(&self) -> &str {
        &self.fingerprint().sha256
    }

    /// The workflow with this id, if the adapter declares it.
    pub fn workflow(&self, id: &str) -> Option<&Workflow> {
        self.manifest.workflows.iter().find(|w| w.id == id)
    }

    /// Every workflow id, in manifest order.
    pub fn workflow_ids(&self) -> Vec<&str> {
        self.manifest
            .workflows
            .iter()
            .map(|w| w.id.as_str())
            .collect()
    }
}
