//! The files a manifest is read from and names (its parameter schemas): from disk, only
//! regular files inside the manifest's directory and of bounded size; or from an embedded
//! adapter's own text.

use std::path::{Path, PathBuf};

use crate::fs::{ReadError, read_regular};
use crate::manifest::embedded::EmbeddedAdapter;

/// The most bytes read from a manifest or a file it names: real ones are a few KiB.
const MANIFEST_READ_LIMIT: u64 = 4 * 1024 * 1024;

/// Why a manifest or a file it names could not be read. The message is the cause alone: the
/// error it ends up in already names the file.
#[derive(Debug, thiserror::Error)]
pub(super) enum ReadFailure {
    #[error("file not found")]
    NotFound,
    #[error("permission denied")]
    PermissionDenied,
    #[error("not valid UTF-8")]
    NotUtf8,
    /// Any other I/O failure, in its own words.
    #[error("{0}")]
    Io(std::io::Error),
    #[error("it is {what}, not a regular file; nothing was read")]
    NotRegular { what: &'static str },
    /// A dangling link or a file over [`MANIFEST_READ_LIMIT`]: the read's own message.
    #[error("{0}")]
    Refused(ReadError),
    #[error(
        "it resolves to {}, outside the manifest's directory {}; a manifest may use only \
         files below its own directory (copy the file there)",
        real.display(),
        root.display()
    )]
    Outside { real: PathBuf, root: PathBuf },
    #[error("not among the embedded files")]
    NotEmbedded,
}

impl From<std::io::Error> for ReadFailure {
    fn from(e: std::io::Error) -> Self {
        // fs_err's message repeats the path we already print; keep only the cause.
        match e.kind() {
            std::io::ErrorKind::NotFound => ReadFailure::NotFound,
            std::io::ErrorKind::PermissionDenied => ReadFailure::PermissionDenied,
            std::io::ErrorKind::InvalidData => ReadFailure::NotUtf8,
            _ => ReadFailure::Io(e),
        }
    }
}

/// The text of a manifest or schema file, read only when it is a regular file (a FIFO, a
/// device or a link to one is refused before any read, so `adapter check` and `serve` never
/// block on one) and at most [`MANIFEST_READ_LIMIT`] bytes of it.
pub(super) fn read_text(path: &Path) -> Result<String, ReadFailure> {
    let bytes = match read_regular(path, MANIFEST_READ_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(ReadFailure::NotFound),
        Err(ReadError::Io { source, .. }) => return Err(source.into()),
        Err(ReadError::NotRegular { what, .. }) => return Err(ReadFailure::NotRegular { what }),
        Err(e @ (ReadError::DanglingLink { .. } | ReadError::TooLarge { .. })) => {
            return Err(ReadFailure::Refused(e));
        }
    };
    String::from_utf8(bytes).map_err(|_| ReadFailure::NotUtf8)
}

/// A file a manifest names, read only when it resolves inside the manifest's directory: a
/// link that leads elsewhere would let a manifest read (and serve as its schema) any file
/// of the user's.
fn read_inside(base: &Path, rel: &str) -> Result<String, ReadFailure> {
    let path = base.join(rel);
    let root = fs_err::canonicalize(base)?;
    let real = fs_err::canonicalize(&path)?;
    if !real.starts_with(&root) {
        return Err(ReadFailure::Outside { real, root });
    }
    read_text(&real)
}

/// Where a manifest's referenced files come from.
pub(super) enum Files<'a> {
    Disk(PathBuf),
    Embedded(&'a EmbeddedAdapter),
    /// A manifest another front end generated (a CWL tool's): its files are in memory and
    /// `dir` is the directory of the document it came from, for messages.
    Memory {
        dir: PathBuf,
        files: &'a [(String, String)],
    },
}

impl Files<'_> {
    pub(super) fn read(&self, rel: &str) -> Result<String, ReadFailure> {
        match self {
            Files::Disk(base) => read_inside(base, rel),
            Files::Embedded(adapter) => adapter
                .files
                .iter()
                .find(|(p, _)| *p == rel)
                .map(|(_, text)| (*text).to_string())
                .ok_or(ReadFailure::NotEmbedded),
            Files::Memory { files, .. } => files
                .iter()
                .find(|(p, _)| p == rel)
                .map(|(_, text)| text.clone())
                .ok_or(ReadFailure::NotEmbedded),
        }
    }

    pub(super) fn display(&self, rel: &str) -> PathBuf {
        match self {
            Files::Disk(base) => base.join(rel),
            Files::Embedded(adapter) => PathBuf::from(format!("<embedded {}>/{rel}", adapter.name)),
            Files::Memory { dir, .. } => dir.join(rel),
        }
    }
}
