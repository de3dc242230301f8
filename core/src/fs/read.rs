//! Reading a file a user (or anything else) may have replaced with something hostile: a FIFO
//! that never answers, a link to `/dev/zero`, a directory, a socket, a file of gigabytes.
//!
//! [`read_regular`] opens the path without blocking (`O_NONBLOCK` on Unix, cleared once the
//! handle is known to be a regular file), checks what it opened through the handle itself (so
//! a swap between a check and the open changes nothing), refuses anything but a regular file
//! with the kind named, and reads at most a cap. A symbolic link is followed only when its
//! final target is a regular file.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes read from a client's configuration file, the receipt or a runtime marker.
/// Real ones are a few KiB; the largest client file seen in the wild (`~/.claude.json`, with
/// its project history) is a few MiB.
pub const CONFIG_READ_LIMIT: u64 = 16 * 1024 * 1024;

/// Why a file could not be read. Every variant names the file; none leaves anything changed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} is {what}, not a regular file; scimcp reads only regular files there and has \
         not read or changed it: put the real file there (or remove it)"
    )]
    NotRegular { path: PathBuf, what: &'static str },
    #[error(
        "{path} is a symbolic link to {target}, which does not exist; scimcp has not changed \
         it: create {target} or remove the link"
    )]
    DanglingLink { path: PathBuf, target: PathBuf },
    #[error(
        "{path} is larger than {} ({}); scimcp reads at most that much of it and has not \
         changed it: move it aside if it is not the real file",
        size_text(*.limit), .size.map_or_else(|| "it kept growing while it was read".to_string(), |s| format!("{} bytes", s))
    )]
    TooLarge {
        path: PathBuf,
        size: Option<u64>,
        limit: u64,
    },
}

impl ReadError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReadError::Io { path, .. }
            | ReadError::NotRegular { path, .. }
            | ReadError::DanglingLink { path, .. }
            | ReadError::TooLarge { path, .. } => path,
        }
    }
}

/// `16 MiB`, `512 KiB`, `100 bytes`.
pub fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

/// What a file type is, in words, for messages.
pub fn kind_of(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        return "a directory";
    }
    if file_type.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// The bytes of the regular file at `path` (following links to one), at most `limit` of
/// them; `Ok(None)` when nothing is there. Never blocks on a FIFO or a device.
pub fn read_regular(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Windows has no non-blocking open: look first (the handle is checked again below).
    #[cfg(not(unix))]
    if let Ok(meta) = fs_err::metadata(path)
        && !meta.is_file()
    {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            what: kind_of(meta.file_type()),
        });
    }
    let mut options = fs_err::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use fs_err::os::unix::fs::OpenOptionsExt;
        use nix::fcntl::OFlag;
        options.custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits());
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) => return Err(classify_open_error(path, e)).or_else(absent),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            what: kind_of(meta.file_type()),
        });
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            size: Some(meta.len()),
            limit,
        });
    }
    #[cfg(unix)]
    {
        use nix::fcntl::{FcntlArg, OFlag, fcntl};
        // Back to ordinary blocking reads: O_NONBLOCK only had to get the open past a FIFO.
        let flags = fcntl(&file, FcntlArg::F_GETFL).map_err(|e| io(e.into()))?;
        let flags = OFlag::from_bits_truncate(flags) & !OFlag::O_NONBLOCK;
        fcntl(&file, FcntlArg::F_SETFL(flags)).map_err(|e| io(e.into()))?;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            size: None,
            limit,
        });
    }
    Ok(Some(bytes))
}

/// A missing file is not an error for [`read_regular`].
fn absent(e: ReadError) -> Result<Option<Vec<u8>>, ReadError> {
    match e {
        ReadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        other => Err(other),
    }
}

/// Say what is at `path` when it could not be opened: a dangling link, a socket (`ENXIO`), or
/// the I/O error itself.
fn classify_open_error(path: &Path, source: std::io::Error) -> ReadError {
    if source.kind() == std::io::ErrorKind::NotFound {
        if let Ok(meta) = fs_err::symlink_metadata(path)
            && meta.file_type().is_symlink()
        {
            let target = fs_err::read_link(path).unwrap_or_default();
            return ReadError::DanglingLink {
                path: path.to_path_buf(),
                target,
            };
        }
        return ReadError::Io {
            path: path.to_path_buf(),
            source,
        };
    }
    match fs_err::metadata(path) {
        Ok(meta) if !meta.is_file() => ReadError::NotRegular {
            path: path.to_path_buf(),
            what: kind_of(meta.file_type()),
        },
        _ => ReadError::Io {
            path: path.to_path_buf(),
            source,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn regular_files_are_read_and_missing_ones_are_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Données été.json");
        assert!(read_regular(&path, 10).unwrap().is_none());
        fs_err::write(&path, b"{}").unwrap();
        assert_eq!(read_regular(&path, 10).unwrap().unwrap(), b"{}");
        let err = read_regular(&path, 1).unwrap_err();
        assert!(
            matches!(err, ReadError::TooLarge { size: Some(2), .. }),
            "{err}"
        );
        assert!(err.to_string().contains("1 bytes"), "{err}");
        let dir_err = read_regular(dir.path(), 10).unwrap_err();
        assert!(
            matches!(
                dir_err,
                ReadError::NotRegular {
                    what: "a directory",
                    ..
                }
            ),
            "{dir_err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn fifos_devices_sockets_and_dangling_links_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let zero = dir.path().join("zero");
        fs_err::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let dangling = dir.path().join("dangling");
        fs_err::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let start = Instant::now();
        for (path, what) in [
            (&fifo, "a FIFO (named pipe)"),
            (&zero, "a character device"),
            (&socket, "a socket"),
        ] {
            let err = read_regular(path, CONFIG_READ_LIMIT).unwrap_err();
            match &err {
                ReadError::NotRegular { what: w, path: p } => {
                    assert_eq!((*w, p), (what, path), "{err}");
                }
                other => panic!("{}: {other}", path.display()),
            }
            assert!(err.to_string().contains(&path.display().to_string()));
        }
        let err = read_regular(&dangling, CONFIG_READ_LIMIT).unwrap_err();
        assert!(matches!(err, ReadError::DanglingLink { .. }), "{err}");
        assert!(start.elapsed() < Duration::from_secs(2));
        // A link to a regular file is followed.
        let real = dir.path().join("real.json");
        fs_err::write(&real, b"[1]").unwrap();
        let link = dir.path().join("link.json");
        fs_err::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(read_regular(&link, 10).unwrap().unwrap(), b"[1]");
    }
}
