//! The adapter arguments the installer and the doctor accept: a name, or the path of a
//! manifest file.

use std::path::{Path, PathBuf};

/// Whether `arg` names a manifest file rather than an adapter.
pub fn is_path(arg: &str) -> bool {
    arg.contains(['/', '\\']) || arg.ends_with(".toml")
}

/// The directory `package_source` is relative to, for the manifest at `manifest`.
pub fn package_base(manifest: &Path) -> PathBuf {
    let dir = manifest
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    match (dir.file_name(), dir.parent()) {
        (Some(name), Some(parent)) if name == "adapters" => parent.to_path_buf(),
        _ => dir,
    }
}

/// A manifest file named as an adapter could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct ManifestError {
    pub path: PathBuf,
    pub message: String,
}

/// The name of the adapter `arg` names: `arg` itself, or the name in the manifest file it
/// is the path of.
pub fn adapter_name(arg: &str) -> Result<String, ManifestError> {
    if !is_path(arg) {
        return Ok(arg.to_string());
    }
    let path = Path::new(arg);
    scimcp_core::manifest::load_file(path)
        .map(|a| a.manifest.name)
        .map_err(|e| ManifestError {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
}
