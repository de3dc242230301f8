//! [`Adapter`]: a manifest that passed validation, where it came from, and its canonical
//! form and hash. Its own file so the loader that builds one and `mod.rs` that re-exports it
//! do not import each other.

use std::path::PathBuf;

use super::error::ManifestError;
use super::types::{Manifest, Workflow};

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
    /// The front end that builds each run's command (a CWL tool), when templates do not.
    pub engine: Option<std::sync::Arc<dyn super::engine::CommandEngine>>,
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
            engine: None,
        }
    }

    /// This adapter with its commands built by `engine`; the engine's fingerprint becomes
    /// part of the adapter's hash.
    pub fn with_engine(
        mut self,
        engine: std::sync::Arc<dyn super::engine::CommandEngine>,
    ) -> Adapter {
        self.engine = Some(engine);
        self.fingerprint = std::sync::OnceLock::new();
        self
    }

    fn fingerprint(&self) -> &Fingerprint {
        self.fingerprint.get_or_init(|| {
            let mut value = serde_json::to_value(&self.manifest).expect("manifest serializes");
            // Only an engine's adapter gains the key: every other adapter keeps its hash.
            if let (Some(engine), Some(map)) = (&self.engine, value.as_object_mut()) {
                map.insert(
                    "engine".into(),
                    serde_json::json!({"name": engine.name(), "fingerprint": engine.fingerprint()}),
                );
            }
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
