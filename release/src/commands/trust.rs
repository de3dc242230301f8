//! The trusted root `sign --keyless`, `verify` and `verify-bundle` check against.

use std::path::Path;

use super::error::CommandError;
use crate::verify::TrustedRoot;

/// The trusted root at `path`, or the embedded public-good root.
pub(crate) fn trusted_root(path: Option<&Path>) -> Result<TrustedRoot, CommandError> {
    match path {
        Some(path) => {
            let bytes = fs_err::read(path)?;
            TrustedRoot::from_json(&bytes).map_err(|source| CommandError::TrustedRoot {
                path: path.to_path_buf(),
                source,
            })
        }
        None => Ok(TrustedRoot::production()?),
    }
}
