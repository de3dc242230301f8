//! Fingerprints of directory trees: comparing two shows whether anything under a directory
//! was created, removed or changed.

use std::collections::BTreeMap;
use std::path::Path;

/// Every entry under a directory by `/`-separated relative path (`.` for the directory
/// itself): its kind, mode (on Unix), and content (regular files by size and SHA-256, links
/// by target).
pub type Fingerprint = BTreeMap<String, String>;

/// The fingerprint of `dir`, links never followed and FIFOs or devices never opened;
/// entries named in `skip` (a lock file, say) are left out.
pub fn fingerprint(dir: &Path, skip: &[&str]) -> Fingerprint {
    let mut out = Fingerprint::new();
    if let Ok(meta) = fs_err::symlink_metadata(dir) {
        out.insert(".".to_string(), describe(dir, &meta));
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            if skip.iter().any(|s| entry.file_name() == **s) {
                continue;
            }
            let path = entry.path();
            let Ok(meta) = fs_err::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            let rel = path
                .strip_prefix(dir)
                .expect("under the directory")
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(rel, describe(&path, &meta));
        }
    }
    out
}

fn describe(path: &Path, meta: &std::fs::Metadata) -> String {
    let mode = mode_of(meta);
    if meta.file_type().is_symlink() {
        let target = fs_err::read_link(path).map(|t| t.display().to_string());
        return format!("link -> {}", target.unwrap_or_default());
    }
    if meta.is_file() {
        let sha = scimcp_core::hash::sha256_file(path)
            .map(|(sha, _)| sha)
            .unwrap_or_else(|e| format!("unreadable: {e}"));
        return format!("file {mode} {} {sha}", meta.len());
    }
    if meta.is_dir() {
        return format!("directory {mode}");
    }
    scimcp_core::fs::kind_of(meta.file_type()).to_string()
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> String {
    use std::os::unix::fs::PermissionsExt;
    format!("{:o}", meta.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_of(meta: &std::fs::Metadata) -> String {
    if meta.permissions().readonly() {
        "ro".to_string()
    } else {
        "rw".to_string()
    }
}
