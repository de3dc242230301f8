//! Backups of client files: the previous bytes of every file scimcp changes, kept under
//! `<data root>/backups/` as `<UTC time>-<client>-<file name>` (private, never overwritten).

use std::path::{Path, PathBuf};

use scimcp_core::fs::{Privacy, WriteError, write_atomic_then};

/// Keep `bytes` (the current content of `original`) as a backup for `client`.
pub fn keep(
    backups_dir: &Path,
    client: &str,
    original: &Path,
    bytes: &[u8],
) -> Result<PathBuf, WriteError> {
    scimcp_core::fs::create_private_dir(backups_dir).map_err(|source| WriteError::Io {
        path: backups_dir.to_path_buf(),
        source,
    })?;
    let now = jiff::Timestamp::now();
    let stamp = format!(
        "{}{:06}Z",
        now.strftime("%Y%m%dT%H%M%S."),
        now.subsec_microsecond()
    );
    let file = original
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into());
    let mut path = backups_dir.join(format!("{stamp}-{client}-{file}"));
    let mut n = 1;
    while path.exists() {
        path = backups_dir.join(format!("{stamp}-{n}-{client}-{file}"));
        n += 1;
    }
    write_atomic_then(&path, bytes, Privacy::Private, crate::faults::staged)?;
    Ok(path)
}

/// The newest backup kept for `client`'s file `original`, if any.
pub fn latest(backups_dir: &Path, client: &str, original: &Path) -> Option<PathBuf> {
    let file = original.file_name()?.to_string_lossy().into_owned();
    let suffix = format!("-{client}-{file}");
    let mut found: Vec<PathBuf> = fs_err::read_dir(backups_dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(&suffix))
        })
        .collect();
    found.sort();
    found.pop()
}

/// Delete every backup that holds `needle` (a secret an older scimcp wrote into client
/// files), so that no backup keeps it once its entries are gone; returns how many went.
/// Only regular files directly in `backups_dir` are read, each at most the size limit of a
/// client file.
pub fn forget_containing(backups_dir: &Path, needle: &str) -> usize {
    let Ok(entries) = fs_err::read_dir(backups_dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(Some(bytes)) =
            scimcp_core::fs::read_regular(&path, scimcp_core::fs::CONFIG_READ_LIMIT)
        else {
            continue;
        };
        let holds = bytes
            .windows(needle.len().max(1))
            .any(|w| w == needle.as_bytes());
        if holds && fs_err::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    if removed > 0 {
        let _ = scimcp_core::fs::sync_dir(backups_dir);
    }
    removed
}
