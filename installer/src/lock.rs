//! The setup lock: an advisory exclusive lock on `<data root>/.setup.lock`, held by every
//! command that changes anything, so two `scimcp-setup` processes never interleave their
//! edits of the same client files or the layout. The operating system releases it when the
//! process ends, however it ends, so a killed setup never leaves a stale lock behind.

use std::path::{Path, PathBuf};

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct SetupLock {
    _file: fs_err::File,
    path: PathBuf,
}

/// The lock could not be taken.
#[derive(Debug, thiserror::Error)]
#[error("cannot lock {path}: {source}")]
pub struct LockError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl scimcp_core::failure::Hint for LockError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some("make the data directory writable, or choose another with SCIMCP_HOME".into())
    }
}

impl SetupLock {
    /// Wait for and take the lock at `path` (creating the file and its directory).
    pub fn acquire(path: &Path) -> Result<SetupLock, LockError> {
        let err = |source| LockError {
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
        match fs4::fs_err3::FileExt::try_lock(&file) {
            Ok(()) => {}
            Err(_) => {
                tracing_free_note(path);
                fs4::fs_err3::FileExt::lock(&file).map_err(err)?;
            }
        }
        Ok(SetupLock {
            _file: file,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Say why we are waiting, once, on a terminal only.
fn tracing_free_note(path: &Path) {
    use std::io::{IsTerminal, Write};
    if std::io::stderr().is_terminal() {
        let _ = writeln!(
            std::io::stderr(),
            "waiting for another scimcp-setup to finish (lock {})",
            path.display()
        );
    }
}
