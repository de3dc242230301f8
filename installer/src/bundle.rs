//! Where a version comes from: a bundle directory, a bundle `.zip`, or the binaries this
//! `scimcp-setup` runs from (with `adapters/` and `refsci/` from the checkout or unpacked
//! bundle around them).
//!
//! The version of a bundle is read, in order, from `RELEASE.json`'s `version` field, then
//! from its name `scimcp-<MAJOR.MINOR.PATCH>[-<target>]` (a directory, or a zip without the
//! `.zip`); the running binaries are the version they were built as. A pre-release version
//! can only come from `RELEASE.json`, since `-<target>` would read as one in a name.

use std::io::Read;
use std::path::{Path, PathBuf};

use semver::Version;

/// The top-level entries a bundle contributes to `versions/<semver>/`.
pub const BUNDLE_PARTS: &[&str] = &["bin", "adapters", "refsci", "RELEASE.json"];

/// The binaries copied from next to the running `scimcp-setup`, when present.
const SUITE_BINARIES: &[&str] = &[
    "scimcp",
    "scimcp-setup",
    "scimcp-doctor",
    "scimcp-release",
    "scimcp-parity",
];

/// Source-tree litter never copied into a version.
const SKIPPED: &[&str] = &[
    "__pycache__",
    ".pytest_cache",
    "build",
    "tests",
    ".git",
    ".venv",
];

/// Why a bundle cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("cannot read the bundle {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a usable zip: {message}")]
    Zip { path: PathBuf, message: String },
    #[error("cannot tell the version of {path}")]
    NoVersion { path: PathBuf },
    #[error("{path} has an invalid RELEASE.json: {message}")]
    Release { path: PathBuf, message: String },
    #[error("{path} is not a scimcp bundle: it has no {missing}")]
    Incomplete { path: PathBuf, missing: String },
    #[error(
        "cannot find the adapters next to {exe}: no directory above it holds adapters/refsci.toml"
    )]
    NoAdapters { exe: PathBuf },
}

impl scimcp_core::failure::Hint for BundleError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(match self {
            BundleError::Io { .. } | BundleError::Incomplete { .. } => {
                "--from takes a scimcp release bundle: a scimcp-<version>-<target>.zip, or \
                 the folder it unpacks to"
                    .into()
            }
            BundleError::NoVersion { .. } => "add a RELEASE.json with a \"version\" field, or \
                 name it scimcp-<MAJOR.MINOR.PATCH>"
                .into(),
            BundleError::NoAdapters { .. } => "install from a bundle with --from BUNDLE".into(),
            BundleError::Zip { .. } | BundleError::Release { .. } => return None,
        })
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A version ready to be unpacked.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub version: Version,
    pub kind: BundleKind,
}

/// The kinds of bundle source.
#[derive(Debug, Clone)]
pub enum BundleKind {
    Dir(PathBuf),
    Zip(PathBuf),
    /// The running binaries: `bin_dir` holds them, `root` holds `adapters/` and `refsci/`.
    Running {
        bin_dir: PathBuf,
        root: PathBuf,
    },
}

#[derive(serde::Deserialize)]
struct ReleaseJson {
    version: String,
}

fn parse_release(path: &Path, text: &[u8]) -> Result<Version, BundleError> {
    let release: ReleaseJson = serde_json::from_slice(text).map_err(|e| BundleError::Release {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Version::parse(release.version.trim_start_matches('v')).map_err(|e| BundleError::Release {
        path: path.to_path_buf(),
        message: format!("version {:?}: {e}", release.version),
    })
}

/// `scimcp-1.2.3`, `scimcp-1.2.3-x86_64-unknown-linux-gnu`, `scimcp-1.2.3.zip` → 1.2.3.
pub fn version_from_name(name: &str) -> Option<Version> {
    let rest = name.strip_prefix("scimcp-")?;
    let rest = rest.strip_suffix(".zip").unwrap_or(rest);
    let core = rest.split('-').next()?;
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() != 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Version::parse(core).ok()
}

impl Bundle {
    /// Open `path`: a bundle directory or a `.zip`.
    pub fn open(path: &Path) -> Result<Bundle, BundleError> {
        let path = std::path::absolute(path).map_err(io(path))?;
        let meta = fs_err::metadata(&path).map_err(io(&path))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if meta.is_dir() {
            for part in ["bin", "adapters"] {
                if !path.join(part).is_dir() {
                    return Err(BundleError::Incomplete {
                        path,
                        missing: format!("{part}/ directory"),
                    });
                }
            }
            let release = path.join("RELEASE.json");
            let version = if release.is_file() {
                parse_release(&release, &fs_err::read(&release).map_err(io(&release))?)?
            } else {
                version_from_name(&name)
                    .ok_or_else(|| BundleError::NoVersion { path: path.clone() })?
            };
            Ok(Bundle {
                version,
                kind: BundleKind::Dir(path),
            })
        } else {
            let mut zip = open_zip(&path)?;
            let release = zip_release(&path, &mut zip)?;
            let version = match release {
                Some(v) => v,
                None => version_from_name(&name)
                    .ok_or_else(|| BundleError::NoVersion { path: path.clone() })?,
            };
            Ok(Bundle {
                version,
                kind: BundleKind::Zip(path),
            })
        }
    }

    /// The binaries this process runs from, with the adapters found around them.
    pub fn running() -> Result<Bundle, BundleError> {
        let exe = std::env::current_exe().map_err(io(Path::new("the running executable")))?;
        let exe = fs_err::canonicalize(&exe).unwrap_or(exe);
        let bin_dir = exe.parent().unwrap_or(Path::new(".")).to_path_buf();
        let root = bin_dir
            .ancestors()
            .find(|d| d.join("adapters").join("refsci.toml").is_file())
            .map(Path::to_path_buf)
            .ok_or(BundleError::NoAdapters { exe: exe.clone() })?;
        Ok(Bundle {
            version: scimcp_core::version::suite_semver(),
            kind: BundleKind::Running { bin_dir, root },
        })
    }

    /// Where this bundle comes from, for messages and the receipt.
    pub fn describe(&self) -> String {
        match &self.kind {
            BundleKind::Dir(p) | BundleKind::Zip(p) => p.display().to_string(),
            BundleKind::Running { bin_dir, .. } => {
                format!("the running binaries in {}", bin_dir.display())
            }
        }
    }

    /// Put the bundle's `bin/`, `adapters/`, `refsci/` (and `RELEASE.json`) into `dest`, a
    /// fresh scratch directory.
    pub fn unpack(&self, dest: &Path, exe_suffix: &str) -> Result<(), BundleError> {
        fs_err::create_dir_all(dest).map_err(io(dest))?;
        match &self.kind {
            BundleKind::Dir(src) => {
                for part in BUNDLE_PARTS {
                    let from = src.join(part);
                    if from.exists() {
                        copy_tree(&from, &dest.join(part))?;
                    }
                }
            }
            BundleKind::Zip(path) => extract_zip(path, dest)?,
            BundleKind::Running { bin_dir, root } => {
                let bin = dest.join("bin");
                fs_err::create_dir_all(&bin).map_err(io(&bin))?;
                for name in SUITE_BINARIES {
                    let file = format!("{name}{exe_suffix}");
                    let from = bin_dir.join(&file);
                    if from.is_file() {
                        copy_file(&from, &bin.join(&file))?;
                    }
                }
                for part in ["adapters", "refsci", "RELEASE.json"] {
                    let from = root.join(part);
                    if from.exists() {
                        copy_tree(&from, &dest.join(part))?;
                    }
                }
            }
        }
        let server = dest.join("bin").join(format!("scimcp{exe_suffix}"));
        if !server.is_file() {
            return Err(BundleError::Incomplete {
                path: PathBuf::from(self.describe()),
                missing: format!("bin/scimcp{exe_suffix}"),
            });
        }
        Ok(())
    }
}

fn open_zip(path: &Path) -> Result<zip::ZipArchive<fs_err::File>, BundleError> {
    let file = fs_err::File::open(path).map_err(io(path))?;
    zip::ZipArchive::new(file).map_err(|e| BundleError::Zip {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The bundle's top-level prefix inside a zip: entries may sit at the root or under one
/// directory named like the zip (`scimcp-1.2.3/bin/…`).
fn zip_prefix(zip: &zip::ZipArchive<fs_err::File>) -> String {
    let names: Vec<String> = zip
        .file_names()
        .filter_map(Result::ok)
        .map(|n| n.into_owned())
        .collect();
    if names.iter().any(|n| n.starts_with("bin/")) {
        return String::new();
    }
    names
        .iter()
        .find_map(|n| {
            let (first, rest) = n.split_once('/')?;
            rest.starts_with("bin/").then(|| format!("{first}/"))
        })
        .unwrap_or_default()
}

fn zip_release(
    path: &Path,
    zip: &mut zip::ZipArchive<fs_err::File>,
) -> Result<Option<Version>, BundleError> {
    let name = format!("{}RELEASE.json", zip_prefix(zip));
    let Ok(mut entry) = zip.by_name(&name) else {
        return Ok(None);
    };
    let mut text = Vec::new();
    entry.read_to_end(&mut text).map_err(io(path))?;
    parse_release(path, &text).map(Some)
}

fn extract_zip(path: &Path, dest: &Path) -> Result<(), BundleError> {
    let mut zip = open_zip(path)?;
    let prefix = zip_prefix(&zip);
    let zip_err = |e: zip::result::ZipError| BundleError::Zip {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(zip_err)?;
        // enclosed_name refuses absolute paths and `..`: nothing lands outside `dest`.
        let Some(rel) = entry.enclosed_name() else {
            return Err(BundleError::Zip {
                path: path.to_path_buf(),
                message: format!("entry {:?} escapes the bundle", entry.name()),
            });
        };
        let Ok(rel) = rel.strip_prefix(&prefix) else {
            continue;
        };
        let top = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        if !BUNDLE_PARTS.contains(&top.as_str()) {
            continue;
        }
        let out = dest.join(rel);
        if entry.is_dir() {
            fs_err::create_dir_all(&out).map_err(io(&out))?;
            continue;
        }
        if let Some(parent) = out.parent() {
            fs_err::create_dir_all(parent).map_err(io(parent))?;
        }
        let mut file = fs_err::File::create(&out).map_err(io(&out))?;
        std::io::copy(&mut entry, &mut file).map_err(io(&out))?;
        #[cfg(unix)]
        if let Some(mode) = entry.unix_mode() {
            use std::os::unix::fs::PermissionsExt;
            fs_err::set_permissions(&out, std::fs::Permissions::from_mode(mode & 0o755))
                .map_err(io(&out))?;
        }
    }
    Ok(())
}

/// Copy a file, keeping its permissions (executables stay executable).
fn copy_file(from: &Path, to: &Path) -> Result<(), BundleError> {
    fs_err::copy(from, to).map_err(io(from))?;
    Ok(())
}

/// Copy a directory tree, skipping caches and build litter.
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), BundleError> {
    let meta = fs_err::metadata(from).map_err(io(from))?;
    if meta.is_file() {
        return copy_file(from, to);
    }
    fs_err::create_dir_all(to).map_err(io(to))?;
    let mut entries: Vec<_> = fs_err::read_dir(from)
        .map_err(io(from))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if SKIPPED.contains(&name.as_str()) || name.ends_with(".pyc") || name.ends_with(".egg-info")
        {
            continue;
        }
        copy_tree(&entry.path(), &to.join(&name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_names() {
        assert_eq!(
            version_from_name("scimcp-1.2.3"),
            Some(Version::new(1, 2, 3))
        );
        assert_eq!(
            version_from_name("scimcp-0.2.0-aarch64-apple-darwin.zip"),
            Some(Version::new(0, 2, 0))
        );
        assert_eq!(version_from_name("scimcp-1.2"), None);
        assert_eq!(version_from_name("other-1.2.3"), None);
    }
}
