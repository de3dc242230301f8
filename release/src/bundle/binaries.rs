//! Where a target's binaries come from: a build directory (`target/<profile>` or
//! `target/<triple>/<profile>`), or the archives `dist build` wrote (`.tar.gz`, `.tar.xz` is
//! not read, `.zip` on Windows) — so the bundles ship exactly the bytes dist built.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::error::BundleError;

/// Where binaries come from.
#[derive(Debug, Clone)]
pub enum BinarySource {
    /// A directory holding the binaries themselves (one target).
    Dir(PathBuf),
    /// A directory of dist archives, any number of targets.
    Dist(PathBuf),
}

fn exe_name(name: &str, target: &str) -> String {
    if target.contains("windows") {
        format!("{name}.exe")
    } else {
        name.to_string()
    }
}

impl BinarySource {
    /// `(file name, bytes)` for each of `names` for `target`, in `names` order.
    pub fn collect(
        &self,
        names: &[String],
        target: &str,
    ) -> Result<Vec<(String, Vec<u8>)>, BundleError> {
        let mut out = Vec::new();
        match self {
            BinarySource::Dir(dir) => {
                for name in names {
                    let file = exe_name(name, target);
                    let path = dir.join(&file);
                    let bytes = fs_err::read(&path).map_err(|_| BundleError::MissingBinary {
                        name: file.clone(),
                        target: target.into(),
                        source_dir: dir.clone(),
                    })?;
                    out.push((file, bytes));
                }
            }
            BinarySource::Dist(dir) => {
                let found = from_archives(dir, target)?;
                for name in names {
                    let file = exe_name(name, target);
                    let bytes = found
                        .iter()
                        .find(|(n, _)| *n == file)
                        .map(|(_, b)| b.clone())
                        .ok_or_else(|| BundleError::MissingBinary {
                            name: file.clone(),
                            target: target.into(),
                            source_dir: dir.clone(),
                        })?;
                    out.push((file, bytes));
                }
            }
        }
        Ok(out)
    }
}

/// Every regular file in the target's dist archives, by base name.
fn from_archives(dir: &Path, target: &str) -> Result<Vec<(String, Vec<u8>)>, BundleError> {
    let mut files = Vec::new();
    let entries = fs_err::read_dir(dir).map_err(|e| BundleError::io(dir, e))?;
    let mut archives: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name.contains(target) && (name.ends_with(".tar.gz") || name.ends_with(".zip"))
        })
        .collect();
    archives.sort();
    for archive in archives {
        let name = archive.to_string_lossy().into_owned();
        if name.ends_with(".tar.gz") {
            let file = fs_err::File::open(&archive).map_err(|e| BundleError::io(&archive, e))?;
            let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
            for entry in tar.entries().map_err(|e| BundleError::io(&archive, e))? {
                let mut entry = entry.map_err(|e| BundleError::io(&archive, e))?;
                if !entry.header().entry_type().is_file() {
                    continue;
                }
                let base = entry
                    .path()
                    .ok()
                    .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_default();
                let mut bytes = Vec::new();
                entry
                    .read_to_end(&mut bytes)
                    .map_err(|e| BundleError::io(&archive, e))?;
                files.push((base, bytes));
            }
        } else {
            let file = fs_err::File::open(&archive).map_err(|e| BundleError::io(&archive, e))?;
            let unreadable = |source| BundleError::Archive {
                archive: archive.clone(),
                source,
            };
            let mut zip = zip::ZipArchive::new(file).map_err(&unreadable)?;
            for i in 0..zip.len() {
                let mut entry = zip.by_index(i).map_err(&unreadable)?;
                if !entry.is_file() {
                    continue;
                }
                let name = entry.name().map(|n| n.into_owned()).unwrap_or_default();
                let base = name
                    .rsplit(['/', '\\'])
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let mut bytes = Vec::new();
                entry
                    .read_to_end(&mut bytes)
                    .map_err(|e| BundleError::io(&archive, e))?;
                files.push((base, bytes));
            }
        }
    }
    Ok(files)
}
