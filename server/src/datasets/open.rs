//! Opening a dataset once, and reading it only through that handle.
//!
//! Checking a path and then opening it by name leaves a window in which the path can be
//! swapped (a directory for a symbolic link, a file for a FIFO or `/dev/zero`). So a dataset
//! is opened exactly once, by walking from its root one component at a time with
//! `openat(…, O_NOFOLLOW)` — a symbolic link anywhere below the root is refused, not followed
//! — and non-blocking, so a FIFO cannot hang the open. Everything else is checked on the open
//! handle (regular file, one link, size), and every read goes through that handle with a cap
//! at the size limit, so a file that grows while it is read is refused rather than copied.
//!
//! On Windows (no `openat`) the path is canonicalized, confined and opened by name: the
//! window remains there, and docs/RELIABILITY.md says so.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Component, Path};

use crate::envelope::{ErrorCode, ToolError};

/// A dataset file opened once inside its root.
#[derive(Debug)]
pub struct Opened {
    pub file: fs_err::File,
    pub size: u64,
}

/// Why a dataset could not be opened or read.
fn refusal(code: ErrorCode, message: String, next: &str) -> ToolError {
    ToolError::new(code, message, next).field("dataset")
}

/// Open `rel` below `root` (canonical, trusted) without following any symbolic link below
/// the root, and check the handle: a regular file with one link, at most `max_bytes`.
pub fn open_confined(
    root: &Path,
    rel: &Path,
    reference: &str,
    max_bytes: u64,
) -> Result<Opened, ToolError> {
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::CurDir => {}
            _ => {
                return Err(refusal(
                    ErrorCode::DatasetOutsideRoots,
                    format!(
                        "dataset path '{reference}' is not a plain path below an allowed directory"
                    ),
                    "give the path without '..', relative to an allowed directory or absolute inside one",
                ));
            }
        }
    }
    if names.is_empty() {
        return Err(refusal(
            ErrorCode::DatasetNotRegular,
            format!("dataset '{reference}' names a directory, not a file"),
            "pass the path of a data file",
        ));
    }
    let file = open_walk(root, &names, reference)?;
    check_handle(file, reference, max_bytes)
}

#[cfg(unix)]
fn open_walk(
    root: &Path,
    names: &[&std::ffi::OsStr],
    reference: &str,
) -> Result<fs_err::File, ToolError> {
    use rustix::fs::{Mode, OFlags, openat};
    use rustix::io::Errno;
    let not_found = || {
        refusal(
            ErrorCode::DatasetNotFound,
            format!("no dataset at '{reference}'"),
            "call list_datasets to see the datasets the server can read",
        )
    };
    let map = |e: Errno, last: bool| -> ToolError {
        match e {
            Errno::NOENT => not_found(),
            // O_NOFOLLOW on a symbolic link; O_DIRECTORY on a link or a file.
            Errno::LOOP | Errno::MLINK => refusal(
                ErrorCode::DatasetOutsideRoots,
                format!(
                    "dataset '{reference}' goes through a symbolic link; links inside data directories are not followed, so a path cannot be swapped to point elsewhere"
                ),
                "pass the file's real location (inside an allowed directory), or copy the file there",
            ),
            Errno::NOTDIR if !last => not_found(),
            Errno::ACCESS | Errno::PERM => refusal(
                ErrorCode::DatasetUnreadable,
                format!("dataset '{reference}' cannot be read: permission denied"),
                "check the file's permissions",
            ),
            other => refusal(
                ErrorCode::DatasetUnreadable,
                format!("cannot open dataset '{reference}': {other}"),
                "check the path and the file",
            ),
        }
    };
    let mut dir = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| map(e, false))?;
    let (last, parents) = names.split_last().expect("at least one name");
    for name in parents {
        dir = openat(
            &dir,
            *name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            // O_DIRECTORY|O_NOFOLLOW on a link fails with ENOTDIR on Linux: ask what it is.
            let link = rustix::fs::statat(&dir, *name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| {
                    rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
                });
            map(if link { Errno::LOOP } else { e }, false)
        })?;
    }
    let fd = openat(
        &dir,
        *last,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| map(e, true))?;
    // Reads below are blocking reads of a regular file (checked next): clear O_NONBLOCK.
    if let Ok(flags) = rustix::fs::fcntl_getfl(&fd) {
        let _ = rustix::fs::fcntl_setfl(&fd, flags - OFlags::NONBLOCK);
    }
    let mut path = root.to_path_buf();
    path.extend(names);
    // The handle comes from openat, not from a path: wrapped at once, so later errors name it.
    #[expect(
        clippy::disallowed_types,
        reason = "fs-err has no constructor from an OwnedFd; wrapped on the next line"
    )]
    let file = std::fs::File::from(fd);
    Ok(fs_err::File::from_parts(file, path))
}

#[cfg(not(unix))]
fn open_walk(
    root: &Path,
    names: &[&std::ffi::OsStr],
    reference: &str,
) -> Result<fs_err::File, ToolError> {
    let mut path = root.to_path_buf();
    path.extend(names);
    let canonical = fs_err::canonicalize(&path).map_err(|_| {
        refusal(
            ErrorCode::DatasetNotFound,
            format!("no dataset at '{reference}'"),
            "call list_datasets to see the datasets the server can read",
        )
    })?;
    if !canonical.starts_with(root) {
        return Err(refusal(
            ErrorCode::DatasetOutsideRoots,
            format!("dataset '{reference}' resolves outside its allowed directory"),
            "pass the file's real location inside an allowed directory",
        ));
    }
    fs_err::File::open(&canonical).map_err(|e| {
        refusal(
            ErrorCode::DatasetUnreadable,
            format!("cannot open dataset '{reference}': {e}"),
            "check the path and the file",
        )
    })
}

fn check_handle(file: fs_err::File, reference: &str, max_bytes: u64) -> Result<Opened, ToolError> {
    let meta = file.metadata().map_err(|e| {
        refusal(
            ErrorCode::DatasetUnreadable,
            format!("cannot read dataset '{reference}': {e}"),
            "check the file",
        )
    })?;
    if !meta.is_file() {
        return Err(refusal(
            ErrorCode::DatasetNotRegular,
            format!(
                "dataset '{reference}' is not a regular file (a directory, FIFO, socket or device cannot be analysed)"
            ),
            "pass the path of a data file",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(refusal(
                ErrorCode::DatasetNotRegular,
                format!(
                    "dataset '{reference}' has {} hard links; a hard-linked file cannot be proven to stay inside the allowed directories",
                    meta.nlink()
                ),
                "copy the file (cp makes an independent copy) and pass the copy",
            ));
        }
    }
    if meta.len() > max_bytes {
        return Err(too_large(reference, meta.len(), max_bytes));
    }
    Ok(Opened {
        file,
        size: meta.len(),
    })
}

fn too_large(reference: &str, size: u64, max_bytes: u64) -> ToolError {
    refusal(
        ErrorCode::DatasetTooLarge,
        format!(
            "dataset '{reference}' is {size} bytes, above this adapter's limit of {max_bytes} bytes"
        ),
        "use a smaller extract of the data",
    )
}

impl Opened {
    /// A reader over the file from its start that fails once more than `max_bytes` come
    /// through: the file was checked at that size, and may not grow past it while read.
    pub fn capped(&mut self, reference: &str, max_bytes: u64) -> std::io::Result<Capped<'_>> {
        self.file.seek(SeekFrom::Start(0))?;
        Ok(Capped {
            inner: &mut self.file,
            left: max_bytes,
            reference: reference.to_string(),
        })
    }

    /// SHA-256 and length of the file's bytes, read through the handle.
    pub fn sha256(&mut self, reference: &str, max_bytes: u64) -> Result<(String, u64), ToolError> {
        let reader = self
            .capped(reference, max_bytes)
            .map_err(|e| unreadable(reference, &e))?;
        scimcp_core::hash::sha256_reader(reader).map_err(|e| unreadable(reference, &e))
    }

    /// Copy the file's bytes into a new file `to` (created, never replaced), returning the
    /// SHA-256 of exactly the bytes written.
    pub fn copy_to(
        &mut self,
        to: &Path,
        reference: &str,
        max_bytes: u64,
    ) -> Result<String, ToolError> {
        let reader = self
            .capped(reference, max_bytes)
            .map_err(|e| unreadable(reference, &e))?;
        let mut dst = fs_err::OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(to)
            .map_err(|e| unreadable(reference, &e))?;
        let mut tee = scimcp_core::hash::HashingReader::new(reader);
        std::io::copy(&mut tee, &mut dst).map_err(|e| unreadable(reference, &e))?;
        dst.flush().map_err(|e| unreadable(reference, &e))?;
        // Not flushed to disk: the copy is the run's scratch input, checked against its hash
        // again when the run ends, and a crash that could lose it ends the run anyway (runs
        // never resume). Flushing a dataset of up to the size limit would cost seconds.
        // Everything was copied: finishing reads nothing more.
        let (sha256, _) = tee.finish().map_err(|e| unreadable(reference, &e))?;
        Ok(sha256)
    }
}

fn unreadable(reference: &str, e: &std::io::Error) -> ToolError {
    if e.kind() == std::io::ErrorKind::FileTooLarge {
        return refusal(
            ErrorCode::DatasetTooLarge,
            e.to_string(),
            "use a smaller extract of the data, or stop changing the file while it is analysed",
        );
    }
    refusal(
        ErrorCode::DatasetUnreadable,
        format!("cannot read dataset '{reference}': {e}"),
        "check the file",
    )
}

/// A reader that refuses to yield more than its budget.
pub struct Capped<'f> {
    inner: &'f mut fs_err::File,
    left: u64,
    reference: String,
}

impl Read for Capped<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // One byte past the budget proves the file grew.
        let room = usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX);
        let len = buf.len().min(room);
        let n = self.inner.read(&mut buf[..len])?;
        if n as u64 > self.left {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!(
                    "dataset '{}' grew past its size limit while it was read",
                    self.reference
                ),
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    // Links, FIFOs and devices are Unix file types.
    #[cfg(unix)]
    #[test]
    fn links_fifos_devices_and_growth_are_refused_through_the_handle() {
        use super::*;
        let dir = tempfile::tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        fs_err::create_dir(root.join("sub")).unwrap();
        fs_err::write(root.join("sub/a.csv"), "a\n1\n").unwrap();
        let mut ok = open_confined(&root, Path::new("sub/a.csv"), "sub/a.csv", 100).unwrap();
        assert_eq!(ok.size, 4);
        assert_eq!(ok.sha256("x", 100).unwrap().1, 4);
        assert_eq!(
            ok.sha256("x", 3).unwrap_err().code,
            ErrorCode::DatasetTooLarge
        );

        std::os::unix::fs::symlink(root.join("sub"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("sub/a.csv"), root.join("file-link.csv")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero.csv")).unwrap();
        for (rel, code) in [
            ("link/a.csv", ErrorCode::DatasetOutsideRoots),
            ("file-link.csv", ErrorCode::DatasetOutsideRoots),
            ("zero.csv", ErrorCode::DatasetOutsideRoots),
            ("sub", ErrorCode::DatasetNotRegular),
            ("missing.csv", ErrorCode::DatasetNotFound),
            ("../x.csv", ErrorCode::DatasetOutsideRoots),
        ] {
            let e = open_confined(&root, Path::new(rel), rel, 100).unwrap_err();
            assert_eq!(e.code, code, "{rel}: {}", e.message);
        }
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("fifo.csv"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RWXU,
            0,
        )
        .unwrap();
        let started = std::time::Instant::now();
        let e = open_confined(&root, Path::new("fifo.csv"), "fifo.csv", 100).unwrap_err();
        assert_eq!(e.code, ErrorCode::DatasetNotRegular);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "a FIFO never blocks"
        );
    }
}
