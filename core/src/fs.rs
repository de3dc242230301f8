//! Durable file writes: every file scimcp writes for a user goes through here.
//!
//! A write lands whole or not at all: the bytes go to a temporary file in the target's own
//! directory (so the final rename never crosses a file system), the temporary file is
//! flushed to disk, renamed over the target, and the directory entry itself is flushed. A
//! crash at any point leaves either the old bytes or the new bytes, never a mix.
//!
//! Files that belong to the user (an AI client's configuration) are read with
//! [`read_regular`] (never a FIFO, a device or gigabytes) and replaced with [`plan_replace`]
//! (through links, never read-only ones, keeping owner, group and mode).

mod dir;
mod error;
mod read;
mod user_file;

pub use dir::sync_dir;
pub use error::WriteError;
pub use read::{CONFIG_READ_LIMIT, ReadError, kind_of, read_regular, size_text};
pub use user_file::{ReplacePlan, plan_replace};

use std::io::Write;
use std::path::Path;

use tempfile::NamedTempFile;

use dir::parent_of;

/// Who may read a file scimcp writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privacy {
    /// Keep the permissions of the file being replaced; new files get the platform default.
    KeepExisting,
    /// Owner only (0600 on Unix): run state, logs, backups.
    Private,
}

fn staged(path: &Path, bytes: &[u8], privacy: Privacy) -> Result<NamedTempFile, WriteError> {
    let dir = parent_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| WriteError::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| WriteError::io(path, e))?;
    apply_permissions(tmp.as_file(), path, privacy).map_err(|e| WriteError::io(path, e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| WriteError::io(path, e))?;
    Ok(tmp)
}

#[expect(
    clippy::disallowed_types,
    reason = "tempfile hands out a std file; the caller maps errors to the target's path"
)]
#[cfg(unix)]
fn apply_permissions(file: &std::fs::File, target: &Path, privacy: Privacy) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = match privacy {
        Privacy::Private => 0o600,
        Privacy::KeepExisting => match fs_err::metadata(target) {
            Ok(meta) => meta.permissions().mode() & 0o7777,
            // tempfile creates 0600; a brand-new user file should look like any other file.
            Err(_) => 0o644,
        },
    };
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[expect(
    clippy::disallowed_types,
    reason = "tempfile hands out a std file; the caller maps errors to the target's path"
)]
#[cfg(not(unix))]
fn apply_permissions(file: &std::fs::File, target: &Path, privacy: Privacy) -> std::io::Result<()> {
    if privacy == Privacy::KeepExisting {
        if let Ok(meta) = fs_err::metadata(target) {
            file.set_permissions(meta.permissions())?;
        }
    }
    Ok(())
}

/// Replace `path` with `bytes` atomically: temp file in the same directory, fsync, rename,
/// fsync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8], privacy: Privacy) -> Result<(), WriteError> {
    write_atomic_then(path, bytes, privacy, || {})
}

/// [`write_atomic`], calling `staged` once the temporary file is complete and before it is
/// renamed into place (a fault-injection point: a process killed there leaves a `.tmp`).
pub fn write_atomic_then(
    path: &Path,
    bytes: &[u8],
    privacy: Privacy,
    staged_hook: impl FnOnce(),
) -> Result<(), WriteError> {
    let tmp = staged(path, bytes, privacy)?;
    staged_hook();
    tmp.persist(path)
        .map_err(|e| WriteError::io(path, e.error))?;
    sync_dir(parent_of(path)).map_err(|e| WriteError::io(parent_of(path), e))
}

/// [`write_atomic`] for one of several records written in turn into the same directory:
/// the file is flushed before it is renamed into place, so after a crash it reads whole,
/// old or new, but the directory is not flushed. The caller flushes it once after the last
/// record (a [`write_atomic`] or [`sync_dir`] there makes every earlier rename in the
/// directory durable too), which spares a disk flush per record. Use it only where losing
/// the rename in a crash leaves a state that is still valid (the previous record).
pub fn write_atomic_batched(path: &Path, bytes: &[u8], privacy: Privacy) -> Result<(), WriteError> {
    let tmp = staged(path, bytes, privacy)?;
    tmp.persist(path)
        .map_err(|e| WriteError::io(path, e.error))?;
    Ok(())
}

/// [`write_json_atomic`], batched as [`write_atomic_batched`] says.
pub fn write_json_atomic_batched<T: serde::Serialize>(
    path: &Path,
    value: &T,
) -> Result<(), WriteError> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("serializable to JSON");
    bytes.push(b'\n');
    write_atomic_batched(path, &bytes, Privacy::Private)
}

/// Write `value` as pretty JSON (with a trailing newline), atomically and privately.
pub fn write_json_atomic<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), WriteError> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("serializable to JSON");
    bytes.push(b'\n');
    write_atomic(path, &bytes, Privacy::Private)
}

/// Publish `bytes` at `path` exactly once: fails with [`WriteError::AlreadyExists`] when
/// the file is already there, and never replaces it, even when two writers race.
pub fn publish_once(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let tmp = staged(path, bytes, Privacy::Private)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {}
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(WriteError::AlreadyExists {
                path: path.to_path_buf(),
            });
        }
        Err(e) => return Err(WriteError::io(path, e.error)),
    }
    sync_dir(parent_of(path)).map_err(|e| WriteError::io(parent_of(path), e))
}

/// Create `dir` and its parents; on Unix the leaf is made owner-only (0700).
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs_err::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_whole_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Données été").join("state.json");
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        write_atomic(&path, b"old", Privacy::KeepExisting).unwrap();
        write_atomic(&path, b"new contents", Privacy::KeepExisting).unwrap();
        assert_eq!(fs_err::read(&path).unwrap(), b"new contents");
        let names: Vec<_> = fs_err::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "only the target remains: {names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn permissions_are_kept_or_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        fs_err::write(&path, b"{}").unwrap();
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"{\"a\":1}", Privacy::KeepExisting).unwrap();
        let mode = fs_err::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let private = dir.path().join("run.json");
        write_atomic(&private, b"{}", Privacy::Private).unwrap();
        let mode = fs_err::metadata(&private).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn publish_once_never_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        publish_once(&path, b"first").unwrap();
        let err = publish_once(&path, b"second").unwrap_err();
        assert!(matches!(err, WriteError::AlreadyExists { .. }), "{err}");
        assert_eq!(fs_err::read(&path).unwrap(), b"first");
    }
}
