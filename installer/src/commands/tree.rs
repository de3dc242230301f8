//! Removing what scimcp put on disk.

use std::path::Path;

use crate::error::SetupError;

/// Remove a directory tree if it exists.
pub fn remove_tree(path: &Path) -> Result<bool, SetupError> {
    match fs_err::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            fs_err::remove_dir_all(path).map_err(SetupError::io("removing", path))?;
            Ok(true)
        }
        Ok(_) => {
            fs_err::remove_file(path).map_err(SetupError::io("removing", path))?;
            Ok(true)
        }
        Err(_) => Ok(false),
    }
}
