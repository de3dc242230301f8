//! [`WriteError`]: what a durable write or a user-file replacement reports, naming its path.
//! Its own file so the writers (`fs.rs`, `user_file.rs`) share it without importing each other.

use std::path::{Path, PathBuf};

/// An error from a durable write, naming the path that failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} already exists and is never replaced")]
    AlreadyExists { path: PathBuf },
    #[error("{path} is read-only")]
    ReadOnly { path: PathBuf },
    #[error("{path} may not be written by this user: {source}")]
    NotWritable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} belongs to user {uid} (group {gid}) and its new version could not be given the \
         same owner ({source}); it was left as it was: run this as that user"
    )]
    Owner {
        path: PathBuf,
        uid: u32,
        gid: u32,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is {what}, not a regular file; it was left as it was")]
    NotRegular { path: PathBuf, what: &'static str },
    #[error(
        "{path} is a symbolic link to {target}, which does not exist; create {target} or remove the link"
    )]
    DanglingLink { path: PathBuf, target: PathBuf },
}

impl WriteError {
    pub(super) fn io(path: &Path, source: std::io::Error) -> Self {
        WriteError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
