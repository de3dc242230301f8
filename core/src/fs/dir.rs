//! Directory entries as the durable writers need them: the directory a file's rename lands
//! in, and flushing that directory so the rename survives a crash.

use std::path::Path;

/// The directory holding `path` (`.` for a bare file name), where its temporary file goes.
pub(super) fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Flush a directory entry to disk so a rename inside it survives a crash. A no-op where
/// the platform cannot open directories (Windows), where rename is already durable enough.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        fs_err::File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
    }
    Ok(())
}
