//! A `--from` bundle, opened and its signature checked. Either step can fail, so this returns
//! the installer's [`SetupError`], which holds both a bundle's and a signature's errors; it
//! sits above [`crate::signature`] so that signature.rs needs nothing of error.rs, which
//! imports it.

use std::path::Path;

use scimcp_core::install_state::SignatureRecord;
use scimcp_verify::bundle_path;

use crate::bundle::{Bundle, version_from_name};
use crate::error::SetupError;
use crate::options::SignatureOptions;
use crate::signature::{SignatureError, check, verify_zip};

/// Open a `--from` bundle and check it. A signed zip named `scimcp-<version>…` is verified
/// before its contents are even parsed (so a damaged zip is refused with the verifier's
/// reason), then must hold the version its name was verified for.
pub fn open_checked(
    path: &Path,
    args: &SignatureOptions,
) -> Result<(Bundle, SignatureRecord), SetupError> {
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(version_from_name);
    if let Some(signed) = named
        && path.is_file()
        && bundle_path(path).is_file()
    {
        let zip = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let record = verify_zip(&zip, &signed, args)?;
        let bundle = Bundle::open(path)?;
        if bundle.version != signed {
            return Err(SignatureError::VersionMismatch {
                bundle: zip,
                signed: signed.to_string(),
                found: bundle.version.to_string(),
            }
            .into());
        }
        return Ok((bundle, record));
    }
    let bundle = Bundle::open(path)?;
    let record = check(&bundle, args)?;
    Ok((bundle, record))
}
