//! The runs directory's start lock, below the manager (mod.rs) and the index, which both
//! take it: a start counts pending runs and creates its directory under it, and the index
//! compacts under it, so two servers sharing the directory never race.

use std::path::Path;
use std::time::Duration;

use crate::envelope::ToolError;

/// A start holds the start lock for a directory listing and a `mkdir`: waiting longer than
/// this means the holder hangs.
pub(super) const START_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// Take `root`'s start lock, waiting at most `timeout`.
pub(super) fn start_lock(root: &Path, timeout: Duration) -> Result<fs_err::File, ToolError> {
    let path = root.join(".start.lock");
    let cannot = |e: &dyn std::fmt::Display| {
        ToolError::internal(format!("cannot lock {}: {e}", path.display()))
    };
    let file = fs_err::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| cannot(&e))?;
    match scimcp_core::lock::lock_exclusive(&file, timeout, || {}) {
        Ok(()) => Ok(file),
        Err(scimcp_core::lock::LockWait::TimedOut(waited)) => Err(cannot(&format!(
            "another scimcp server sharing this runs directory has held it for {} s; \
             try again, and restart that server if it hangs",
            waited.as_secs()
        ))),
        Err(scimcp_core::lock::LockWait::Io(e)) => Err(cannot(&e)),
    }
}
