//! Replacing a file that belongs to the user (an AI client's configuration), the way the
//! user would expect an editor to: atomically, and without changing anything about the file
//! but its bytes.
//!
//! - **Links are written through.** A configuration that is a symbolic link into a dotfiles
//!   repository stays a link: the new bytes replace the link's final target, atomically, in
//!   the target's own directory (temp file there, fsync, rename, fsync the directory).
//! - **Read-only means no.** A file without write permission for its owner, on a read-only
//!   mount, or that the kernel says this user may not write, is refused before anything is
//!   staged; it is never silently replaced.
//! - **Owner, group and mode stay.** The new file gets the old one's permission bits and, when
//!   they differ from the writer's (root editing another user's file, `sudo -E`), the old
//!   owner and group. A file whose owner cannot be kept is refused rather than changed.
//!
//! [`plan_replace`] does every check without writing (so a caller can refuse before it backs
//! anything up); [`ReplacePlan::write`] then writes.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::dir::{parent_of, sync_dir};
use super::error::WriteError;

/// What replacing a user's file will replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplacePlan {
    /// The path the caller named (a client's configuration path).
    pub path: PathBuf,
    /// The file that is actually replaced: `path` itself, or its link's final target.
    pub target: PathBuf,
    /// The file as it is now; `None` when it does not exist yet.
    existing: Option<Existing>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Existing {
    /// Permission bits (Unix), or the read-only attribute (elsewhere, as 0o444 / 0o644).
    mode: u32,
    uid: Option<u32>,
    gid: Option<u32>,
}

impl ReplacePlan {
    /// Whether `path` is a link and the bytes go to another file.
    pub fn through_link(&self) -> bool {
        self.path != self.target
    }

    /// Write `bytes` over the target. `staged` runs after the temporary file is complete
    /// and before it is renamed into place (a fault-injection point for tests).
    pub fn write(&self, bytes: &[u8], staged: impl FnOnce()) -> Result<(), WriteError> {
        let target = &self.target;
        let dir = parent_of(target);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let io = |path: &Path, source| WriteError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| io(dir, e))?;
        tmp.write_all(bytes).map_err(|e| io(target, e))?;
        self.keep_owner(tmp.as_file())?;
        set_mode(
            tmp.as_file(),
            self.existing.as_ref().map_or(0o644, |e| e.mode),
        )
        .map_err(|e| io(target, e))?;
        tmp.as_file().sync_all().map_err(|e| io(target, e))?;
        staged();
        tmp.persist(target).map_err(|e| io(target, e.error))?;
        sync_dir(dir).map_err(|e| io(dir, e))
    }

    /// Give the temporary file the replaced file's owner and group when they differ from
    /// the writer's; refuse when that is not allowed.
    #[expect(clippy::disallowed_types, reason = "tempfile hands out a std file")]
    fn keep_owner(&self, file: &std::fs::File) -> Result<(), WriteError> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let Some(Existing {
                uid: Some(uid),
                gid: Some(gid),
                ..
            }) = self.existing
            else {
                return Ok(());
            };
            let meta = file.metadata().map_err(|source| WriteError::Io {
                path: self.target.clone(),
                source,
            })?;
            if meta.uid() == uid && meta.gid() == gid {
                return Ok(());
            }
            std::os::unix::fs::fchown(file, Some(uid), Some(gid)).map_err(|source| {
                WriteError::Owner {
                    path: self.target.clone(),
                    uid,
                    gid,
                    source,
                }
            })?;
        }
        #[cfg(not(unix))]
        let _ = file;
        Ok(())
    }
}

#[expect(clippy::disallowed_types, reason = "tempfile hands out a std file")]
fn set_mode(file: &std::fs::File, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let mut permissions = file.metadata()?.permissions();
        permissions.set_readonly(mode & 0o200 == 0);
        file.set_permissions(permissions)
    }
}

/// Check that `path` can be replaced the way this module promises, and say what will be
/// written (the link's target for a link). Nothing is written.
pub fn plan_replace(path: &Path) -> Result<ReplacePlan, WriteError> {
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let target = match fs_err::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => match fs_err::canonicalize(path) {
            Ok(target) => target,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(WriteError::DanglingLink {
                    path: path.to_path_buf(),
                    target: fs_err::read_link(path).unwrap_or_default(),
                });
            }
            Err(e) => return Err(io(e)),
        },
        Ok(_) => path.to_path_buf(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ReplacePlan {
                path: path.to_path_buf(),
                target: path.to_path_buf(),
                existing: None,
            });
        }
        Err(e) => return Err(io(e)),
    };
    let meta = fs_err::metadata(&target).map_err(io)?;
    if !meta.is_file() {
        return Err(WriteError::NotRegular {
            path: target,
            what: super::read::kind_of(meta.file_type()),
        });
    }
    let existing = existing(&meta);
    if existing.mode & 0o200 == 0 {
        return Err(WriteError::ReadOnly { path: target });
    }
    #[cfg(unix)]
    {
        use nix::unistd::{AccessFlags, access};
        match access(&target, AccessFlags::W_OK) {
            Ok(()) => {}
            Err(nix::errno::Errno::EROFS) => return Err(WriteError::ReadOnly { path: target }),
            Err(e) => {
                return Err(WriteError::NotWritable {
                    path: target,
                    source: e.into(),
                });
            }
        }
    }
    Ok(ReplacePlan {
        path: path.to_path_buf(),
        target,
        existing: Some(existing),
    })
}

fn existing(meta: &std::fs::Metadata) -> Existing {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Existing {
            mode: meta.mode() & 0o7777,
            uid: Some(meta.uid()),
            gid: Some(meta.gid()),
        }
    }
    #[cfg(not(unix))]
    {
        Existing {
            mode: if meta.permissions().readonly() {
                0o444
            } else {
                0o644
            },
            uid: None,
            gid: None,
        }
    }
}

// Unix only: the cases are links, modes and owners. In a file of their own, so the file-loop
// test reads them as test code (it strips only a plain `#[cfg(test)]` block).
#[cfg(all(test, unix))]
mod tests;
