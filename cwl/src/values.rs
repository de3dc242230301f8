//! A File's location as a local path, which the document loader, the command line, a job and
//! the runner all read: below each of them, so none imports another for it.

use std::path::{Path, PathBuf};

/// A CWL `location` or `path` as a local path: `file://` URIs decoded (`%23` is `#`),
/// relative ones against `base`.
pub fn location_path(loc: &str, base: &Path) -> PathBuf {
    let raw = match loc.strip_prefix("file://") {
        Some(rest) => percent_encoding::percent_decode_str(rest)
            .decode_utf8_lossy()
            .into_owned(),
        None => loc.to_string(),
    };
    let p = PathBuf::from(raw);
    if p.is_absolute() { p } else { base.join(p) }
}
