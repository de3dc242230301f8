//! Which adapters a command acts on, and where each one's manifest comes from.
//!
//! `--adapter NAME` names an adapter shipped with scimcp (`versions/<semver>/adapters/
//! <name>.toml`, the same manifest the server has embedded); `--adapter PATH` names a manifest
//! file. A file adapter is copied, with the files it refers to (each workflow's parameter
//! schema, the package source), into `<data root>/adapters/<name>/`, and the registered
//! command names that copy: the entry keeps working when the original is moved or edited,
//! and changes only when the user installs the adapter again. The copy is staged under
//! `.tmp/` while the runtime is provisioned and moved into place only once that succeeded.
//!
//! A manifest's `package_source` is relative to the directory that holds `adapters/` when
//! the manifest sits in a folder named `adapters` (a bundle, a checkout), and to the
//! manifest's own directory otherwise.

use std::path::{Path, PathBuf};

use scimcp_core::install_state::{AdapterRecord, AdapterSource};
use scimcp_core::manifest::Manifest;

use crate::error::SetupError;
use crate::layout::Layout;

/// An adapter ready to be provisioned and registered.
#[derive(Debug)]
pub struct Resolved {
    pub name: String,
    pub manifest: Manifest,
    pub source: AdapterSource,
    /// The value of `--adapter` in the registered command: the name of a shipped adapter,
    /// or the path of the managed copy of a file adapter.
    pub serve_arg: String,
    /// The directory `runtime.package_source` is relative to.
    pub package_base: PathBuf,
    /// A file adapter's copy, staged until [`Resolved::commit`].
    staged: Option<Staged>,
}

#[derive(Debug)]
struct Staged {
    scratch: tempfile::TempDir,
    /// The staged copy (`<scratch>/copy`).
    dir: PathBuf,
    /// Where it goes (`<data root>/adapters/<name>`).
    dest: PathBuf,
}

// Whether an argument names a manifest file, and where its package source is relative to:
// shared with the doctor.
pub use scimcp_setup_model::adapters::{is_path, package_base};

/// The names of the adapters `version_dir` ships (its `adapters/*.toml`), else the ones
/// embedded in this binary.
pub fn shipped_names(version_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs_err::read_dir(version_dir.join("adapters"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .strip_suffix(".toml")
                        .map(String::from)
                })
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        names = scimcp_core::manifest::embedded_names()
            .into_iter()
            .map(String::from)
            .collect();
    }
    names.sort();
    names
}

fn manifest_error(path: &Path, e: impl std::fmt::Display) -> SetupError {
    SetupError::Manifest {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// The shipped adapter `name` as `version_dir` ships it (else as this binary embeds it).
pub fn shipped(version_dir: &Path, name: &str) -> Result<Resolved, SetupError> {
    let path = version_dir.join("adapters").join(format!("{name}.toml"));
    let adapter = if path.is_file() {
        scimcp_core::manifest::load_file(&path).map_err(|e| manifest_error(&path, e))?
    } else {
        match scimcp_core::manifest::load_embedded(name) {
            Some(loaded) => loaded.map_err(|e| manifest_error(&path, e))?,
            None => {
                return Err(SetupError::UnknownAdapter {
                    name: name.to_string(),
                    shipped: shipped_names(version_dir).join(", "),
                });
            }
        }
    };
    Ok(Resolved {
        name: adapter.manifest.name.clone(),
        manifest: adapter.manifest,
        source: AdapterSource::Shipped,
        serve_arg: name.to_string(),
        package_base: version_dir.to_path_buf(),
        staged: None,
    })
}

/// The adapter `arg` (`NAME` or `PATH`) names, for the version at `version_dir`.
pub fn request(layout: &Layout, version_dir: &Path, arg: &str) -> Result<Resolved, SetupError> {
    if !is_path(arg) {
        let shipped_here = version_dir.join("adapters").join(format!("{arg}.toml"));
        if shipped_here.is_file()
            || scimcp_core::manifest::load_embedded(arg).is_some()
            || !Path::new(arg).is_file()
        {
            return shipped(version_dir, arg);
        }
    }
    let path = std::path::absolute(arg).unwrap_or_else(|_| PathBuf::from(arg));
    stage_file(layout, &path)
}

/// The adapter `name` as the receipt records it: a shipped one from `version_dir`, a file
/// adapter from its managed copy (copied again from the original when the copy is gone).
pub fn recorded(
    layout: &Layout,
    version_dir: &Path,
    name: &str,
    record: &AdapterRecord,
) -> Result<Resolved, SetupError> {
    match &record.source {
        AdapterSource::Shipped => shipped(version_dir, name),
        AdapterSource::File { original, manifest } => {
            match scimcp_core::manifest::load_file(manifest) {
                Ok(adapter) if adapter.manifest.name == name => Ok(Resolved {
                    name: name.to_string(),
                    manifest: adapter.manifest,
                    source: record.source.clone(),
                    serve_arg: manifest.to_string_lossy().into_owned(),
                    package_base: package_base(manifest),
                    staged: None,
                }),
                _ if original.is_file() => stage_file(layout, original),
                Ok(_) | Err(_) => Err(SetupError::AdapterCopyMissing {
                    name: name.to_string(),
                    copy: manifest.clone(),
                    original: original.clone(),
                }),
            }
        }
    }
}

/// Load the manifest at `path` and stage a copy of it and every file it refers to.
fn stage_file(layout: &Layout, path: &Path) -> Result<Resolved, SetupError> {
    let adapter = scimcp_core::manifest::load_file(path).map_err(|e| manifest_error(path, e))?;
    let manifest = adapter.manifest;
    let name = manifest.name.clone();
    let from_dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let file_name = path.file_name().map_or_else(
        || format!("{name}.toml"),
        |n| n.to_string_lossy().into_owned(),
    );
    let scratch_root = layout.scratch_dir();
    fs_err::create_dir_all(&scratch_root).map_err(SetupError::io("creating", &scratch_root))?;
    let scratch = tempfile::Builder::new()
        .prefix("adapter-")
        .tempdir_in(&scratch_root)
        .map_err(SetupError::io(
            "creating a scratch directory in",
            &scratch_root,
        ))?;
    let copy = scratch.path().join("copy");
    let copy_one = |from: &Path, to: &Path| -> Result<(), SetupError> {
        if let Some(parent) = to.parent() {
            fs_err::create_dir_all(parent).map_err(SetupError::io("creating", parent))?;
        }
        crate::bundle::copy_tree(from, to).map_err(SetupError::from)
    };
    copy_one(path, &copy.join(&file_name))?;
    for wf in &manifest.workflows {
        copy_one(&from_dir.join(&wf.parameters), &copy.join(&wf.parameters))?;
    }
    if let Some(rel) = &manifest.runtime.package_source {
        let src = package_base(path).join(rel);
        if !src.is_dir() {
            return Err(crate::runtime::ProvisionError::NoSource { path: src }.into());
        }
        copy_one(&src, &copy.join(rel))?;
    }
    // The copy must load on its own: a file the manifest refers to that was not copied is
    // an error now, not when a client starts the server.
    let staged_manifest = copy.join(&file_name);
    scimcp_core::manifest::load_file(&staged_manifest).map_err(|e| manifest_error(path, e))?;
    let dest = layout.adapters_dir().join(&name);
    Ok(Resolved {
        serve_arg: dest.join(&file_name).to_string_lossy().into_owned(),
        source: AdapterSource::File {
            original: path.to_path_buf(),
            manifest: dest.join(&file_name),
        },
        package_base: copy.clone(),
        name,
        manifest,
        staged: Some(Staged {
            scratch,
            dir: copy,
            dest,
        }),
    })
}

/// A file adapter as a dry run describes it: where its copy would go, nothing copied.
pub fn unstaged(layout: &Layout, path: &Path, manifest: Manifest) -> Resolved {
    let file_name = path.file_name().map_or_else(
        || format!("{}.toml", manifest.name),
        |n| n.to_string_lossy().into_owned(),
    );
    let copy = layout.adapters_dir().join(&manifest.name).join(file_name);
    Resolved {
        name: manifest.name.clone(),
        serve_arg: copy.to_string_lossy().into_owned(),
        source: AdapterSource::File {
            original: path.to_path_buf(),
            manifest: copy,
        },
        package_base: package_base(path),
        manifest,
        staged: None,
    }
}

impl Resolved {
    /// Move a staged copy into place (replacing the previous copy); nothing for a shipped
    /// adapter or a copy already in place.
    pub fn commit(&mut self) -> Result<(), SetupError> {
        let Some(staged) = self.staged.take() else {
            return Ok(());
        };
        let parent = staged.dest.parent().unwrap_or(Path::new("."));
        fs_err::create_dir_all(parent).map_err(SetupError::io("creating", parent))?;
        if fs_err::symlink_metadata(&staged.dest).is_ok() {
            let old = staged.scratch.path().join("old");
            fs_err::rename(&staged.dest, &old)
                .map_err(SetupError::io("moving aside", &staged.dest))?;
        }
        fs_err::rename(&staged.dir, &staged.dest)
            .map_err(SetupError::io("renaming into", &staged.dest))?;
        scimcp_core::fs::sync_dir(parent).map_err(SetupError::io("syncing", parent))?;
        self.package_base = staged.dest.clone();
        drop(staged.scratch);
        Ok(())
    }
}

/// Remove the managed copy of a file adapter.
pub fn remove_copy(layout: &Layout, record: &AdapterRecord) -> Result<bool, SetupError> {
    match &record.source {
        AdapterSource::File { manifest, .. } => {
            let dir = manifest.parent().unwrap_or(manifest);
            if dir.starts_with(layout.adapters_dir()) {
                crate::commands::remove_tree(dir)
            } else {
                Ok(false)
            }
        }
        AdapterSource::Shipped => Ok(false),
    }
}

/// Whether the runtime directory `dir_name` (`<adapter>-<16 hex>`) belongs to `adapter`.
pub fn owns_runtime(adapter: &str, dir_name: &str) -> bool {
    dir_name.rsplit_once('-').is_some_and(|(name, key)| {
        name == adapter && key.len() == 16 && key.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_sources_resolve_like_a_bundle_or_next_to_the_manifest() {
        assert_eq!(
            package_base(Path::new("/b/adapters/refsci.toml")),
            PathBuf::from("/b")
        );
        assert_eq!(
            package_base(Path::new("/tmp/x/demo.toml")),
            PathBuf::from("/tmp/x")
        );
        assert!(is_path("./demo.toml") && is_path("a/b") && !is_path("refsci"));
        assert!(owns_runtime("foo", "foo-0123456789abcdef"));
        assert!(!owns_runtime("foo", "foo-bar-0123456789abcdef"));
        assert!(owns_runtime("foo-bar", "foo-bar-0123456789abcdef"));
        assert!(!owns_runtime("foo", "foo-xyz"));
    }
}
