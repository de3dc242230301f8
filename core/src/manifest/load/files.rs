//! The files a manifest is read from and names (its parameter schemas): from disk, only
//! regular files inside the manifest's directory and of bounded size; or from an embedded
//! adapter's own text.

use std::path::{Path, PathBuf};

use crate::manifest::embedded::EmbeddedAdapter;

/// The most bytes read from a manifest or a file it names: real ones are a few KiB.
const MANIFEST_READ_LIMIT: u64 = 4 * 1024 * 1024;

/// The text of a manifest or schema file, read only when it is a regular file (a FIFO, a
/// device or a link to one is refused before any read, so `adapter check` and `serve` never
/// block on one) and at most [`MANIFEST_READ_LIMIT`] bytes of it.
pub(super) fn read_text(path: &Path) -> Result<String, String> {
    use crate::fs::{ReadError, read_regular};
    let bytes = match read_regular(path, MANIFEST_READ_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err("file not found".into()),
        Err(ReadError::Io { source, .. }) => return Err(io_reason(&source)),
        Err(ReadError::NotRegular { what, .. }) => {
            return Err(format!(
                "it is {what}, not a regular file; nothing was read"
            ));
        }
        Err(e @ (ReadError::DanglingLink { .. } | ReadError::TooLarge { .. })) => {
            return Err(e.to_string());
        }
    };
    String::from_utf8(bytes).map_err(|_| "not valid UTF-8".into())
}

/// A file a manifest names, read only when it resolves inside the manifest's directory: a
/// link that leads elsewhere would let a manifest read (and serve as its schema) any file
/// of the user's.
fn read_inside(base: &Path, rel: &str) -> Result<String, String> {
    let path = base.join(rel);
    let root = fs_err::canonicalize(base).map_err(|e| io_reason(&e))?;
    let real = match fs_err::canonicalize(&path) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("file not found".into()),
        Err(e) => return Err(io_reason(&e)),
    };
    if !real.starts_with(&root) {
        return Err(format!(
            "it resolves to {}, outside the manifest's directory {}; a manifest may use only \
             files below its own directory (copy the file there)",
            real.display(),
            root.display()
        ));
    }
    read_text(&real)
}

fn io_reason(e: &std::io::Error) -> String {
    // fs_err's message repeats the path we already print; keep only the cause.
    match e.kind() {
        std::io::ErrorKind::NotFound => "file not found".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::InvalidData => "not valid UTF-8".into(),
        _ => e.to_string(),
    }
}

/// Where a manifest's referenced files come from.
pub(super) enum Files<'a> {
    Disk(PathBuf),
    Embedded(&'a EmbeddedAdapter),
}

impl Files<'_> {
    pub(super) fn read(&self, rel: &str) -> Result<String, String> {
        match self {
            Files::Disk(base) => read_inside(base, rel),
            Files::Embedded(adapter) => adapter
                .files
                .iter()
                .find(|(p, _)| *p == rel)
                .map(|(_, text)| (*text).to_string())
                .ok_or_else(|| "not among the embedded files".to_string()),
        }
    }

    pub(super) fn display(&self, rel: &str) -> PathBuf {
        match self {
            Files::Disk(base) => base.join(rel),
            Files::Embedded(adapter) => PathBuf::from(format!("<embedded {}>/{rel}", adapter.name)),
        }
    }
}
