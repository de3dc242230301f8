//! Which repository files go into a bundle: the checked-in allowlist (`release/bundle.toml`)
//! selects, and a deny list in code refuses what must never ship (tests, `.git`, editor and
//! build litter) even when the allowlist names it. The deny list is code, not data, so a
//! one-line edit of the allowlist cannot slip a test into a release.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;

use super::error::BundleError;

/// `release/bundle.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowlist {
    /// Repository-relative paths or globs to include.
    pub include: Vec<String>,
    /// Binary names placed under `bin/`.
    pub binaries: Vec<String>,
}

/// Path segments and file-name patterns that never ship.
const DENIED_SEGMENTS: &[&str] = &[
    "tests",
    "test",
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".venv",
    "target",
    "build",
    ".idea",
    ".vscode",
];

/// Why `path` must never be in a bundle, if it must not.
pub fn denied(path: &str) -> Option<&'static str> {
    let segments: Vec<&str> = path.split('/').collect();
    if segments.iter().any(|s| DENIED_SEGMENTS.contains(s)) {
        return Some("a test, VCS or build directory");
    }
    let name = segments.last().copied().unwrap_or_default();
    if name.starts_with("test_")
        || name.ends_with("_test.py")
        || name.ends_with("_tests.rs")
        || name == "conftest.py"
    {
        return Some("a test file");
    }
    if name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".swo")
        || name == ".DS_Store"
        || name.starts_with(".#")
    {
        return Some("an editor or OS file");
    }
    if name.ends_with(".pyc")
        || name.ends_with(".pyo")
        || segments.iter().any(|s| s.ends_with(".egg-info"))
    {
        return Some("build output");
    }
    None
}

impl Allowlist {
    /// Read and check `path`: every entry must be a relative pattern, and no entry may name
    /// something the deny list refuses.
    pub fn load(path: &Path) -> Result<Allowlist, BundleError> {
        let text = fs_err::read_to_string(path).map_err(|e| BundleError::io(path, e))?;
        let list: Allowlist = toml::from_str(&text).map_err(|e| BundleError::Allowlist {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        for entry in &list.include {
            if entry.starts_with('/') || entry.split('/').any(|s| s == ".." || s.is_empty()) {
                return Err(BundleError::Allowlist {
                    path: path.to_path_buf(),
                    message: format!("'{entry}' must be a relative path without '..'"),
                });
            }
            if let Some(why) = denied(entry) {
                return Err(BundleError::Allowlist {
                    path: path.to_path_buf(),
                    message: format!("'{entry}' names {why}, which never ships in a bundle"),
                });
            }
        }
        Ok(list)
    }

    /// Every repository file the allowlist selects, as sorted `/`-separated relative paths.
    /// Each entry must match at least one file (a stale entry is an error, not a no-op).
    pub fn select(&self, root: &Path) -> Result<Vec<String>, BundleError> {
        let mut all = Vec::new();
        walk(root, root, &mut all).map_err(|e| BundleError::io(root, e))?;
        all.sort();
        let mut selected = Vec::new();
        for entry in &self.include {
            let matcher: GlobMatcher = GlobBuilder::new(entry)
                .literal_separator(true)
                .build()
                .map_err(|e| BundleError::Allowlist {
                    path: PathBuf::from("release/bundle.toml"),
                    message: format!("'{entry}': {e}"),
                })?
                .compile_matcher();
            let before = selected.len();
            for file in &all {
                if matcher.is_match(file) {
                    if let Some(why) = denied(file) {
                        return Err(BundleError::Denied {
                            path: file.clone(),
                            why: why.to_string(),
                        });
                    }
                    selected.push(file.clone());
                }
            }
            if selected.len() == before {
                return Err(BundleError::Allowlist {
                    path: PathBuf::from("release/bundle.toml"),
                    message: format!("'{entry}' matches no file under {}", root.display()),
                });
            }
        }
        selected.sort();
        selected.dedup();
        Ok(selected)
    }
}

/// Regular files under `dir`, skipping denied directories without descending into them.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let kind = entry.file_type()?;
        if kind.is_dir() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if matches!(name.as_str(), ".git" | "target" | ".venv" | "node_modules") {
                continue;
            }
            walk(root, &path, out)?;
        } else if kind.is_file() {
            out.push(rel);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_rules_catch_tests_and_litter() {
        assert!(denied("refsci/tests/test_cli.py").is_some());
        assert!(denied("refsci/src/refsci/test_helpers.py").is_some());
        assert!(denied("refsci/conftest.py").is_some());
        assert!(denied(".git/config").is_some());
        assert!(denied("adapters/refsci.toml~").is_some());
        assert!(denied("refsci/src/refsci/__pycache__/cli.cpython-311.pyc").is_some());
        assert!(denied("refsci/src/refsci.egg-info/PKG-INFO").is_some());
        assert!(denied("refsci/src/refsci/cli.py").is_none());
        assert!(denied("adapters/refsci/schemas/regression.json").is_none());
    }

    #[test]
    fn an_allowlist_naming_a_test_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bundle.toml");
        fs_err::write(
            &path,
            "include = [\"LICENSE\", \"refsci/tests/*.py\"]\nbinaries = []\n",
        )
        .unwrap();
        let e = Allowlist::load(&path).unwrap_err();
        assert!(e.to_string().contains("refsci/tests/*.py"), "{e}");
    }
}
