//! The setup lock: an advisory exclusive lock on `<data root>/.setup.lock`, held by every
//! command that changes anything, so two `scimcp-setup` processes never interleave their
//! edits of the same client files or the layout. The operating system releases it when the
//! process ends, however it ends, so a killed setup never leaves a stale lock behind; one
//! that hangs still holds it, so waiting for it has a time limit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use scimcp_core::lock::{LockWait, lock_exclusive, timeout_from_env};

/// How long to wait for another setup by default: longer than any install takes without
/// building a runtime from source.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Raises (or lowers) the wait, in seconds.
pub const TIMEOUT_ENV: &str = "SCIMCP_LOCK_TIMEOUT_S";

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct SetupLock {
    _file: fs_err::File,
}

/// The lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot lock {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "another scimcp-setup (or scimcp-doctor --fix) has held the lock {} for {} s",
        path.display(),
        waited.as_secs()
    )]
    TimedOut { path: PathBuf, waited: Duration },
}

impl scimcp_core::failure::Hint for LockError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(match self {
            LockError::Io { .. } => {
                "make the data directory writable, or choose another with SCIMCP_HOME".into()
            }
            LockError::TimedOut { .. } => format!(
                "let it finish and try again; if none is running (a hung one: see your process \
                 list), end it; set {TIMEOUT_ENV} to wait longer"
            )
            .into(),
        })
    }
}

impl SetupLock {
    /// Wait for and take the lock at `path` (creating the file and its directory), within
    /// the time `SCIMCP_LOCK_TIMEOUT_S` allows.
    pub fn acquire(path: &Path) -> Result<SetupLock, LockError> {
        Self::acquire_within(path, timeout_from_env(TIMEOUT_ENV, DEFAULT_TIMEOUT))
    }

    fn acquire_within(path: &Path, timeout: Duration) -> Result<SetupLock, LockError> {
        let err = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            scimcp_core::fs::create_private_dir(parent).map_err(err)?;
        }
        let file = fs_err::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(err)?;
        match lock_exclusive(&file, timeout, || waiting_note(path)) {
            Ok(()) => Ok(SetupLock { _file: file }),
            Err(LockWait::Io(e)) => Err(err(e)),
            Err(LockWait::TimedOut(waited)) => Err(LockError::TimedOut {
                path: path.to_path_buf(),
                waited,
            }),
        }
    }
}

/// Say why we are waiting, once, on a terminal only.
fn waiting_note(path: &Path) {
    use std::io::{IsTerminal, Write};
    if std::io::stderr().is_terminal() {
        let _ = writeln!(
            std::io::stderr(),
            "waiting for another scimcp-setup to finish (lock {})",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_times_out_naming_the_file_and_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("root").join(".setup.lock");
        let held = SetupLock::acquire_within(&path, Duration::from_secs(5)).unwrap();
        let err = SetupLock::acquire_within(&path, Duration::from_millis(200)).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, LockError::TimedOut { .. }), "{text}");
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("another scimcp-setup"), "{text}");
        // What to do is the hint, apart from the message.
        let hint = scimcp_core::failure::Hint::hint(&err).unwrap_or_default();
        assert!(hint.contains(TIMEOUT_ENV), "{hint}");
        drop(held);
        SetupLock::acquire_within(&path, Duration::from_millis(200)).unwrap();
    }
}
