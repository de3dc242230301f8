//! The data directory: `state.permissions` (private directories are 0700 on Unix and
//! writable), `state.disk` (free space on its volume) and `paths.encoding` (names with
//! spaces and non-ASCII letters resolve there).

use std::path::{Path, PathBuf};

use crate::check::{CheckResult, Status, shell_quote};
use crate::context::{Context, short};

/// Below this much free space the doctor warns: a fresh runtime of the reference adapter
/// takes about 600 MiB, and analyses write their artifacts beside it.
pub const DISK_WARN_BYTES: u64 = 1 << 30;
/// Below this much free space it fails: runs and provisioning will run out mid-way.
pub const DISK_FAIL_BYTES: u64 = 256 << 20;

/// A file name with a space, Latin letters with diacritics and CJK characters.
const PROBE_NAME: &str = ".scimcp doctor Jürgen Müller 数据 probe";

/// The directories scimcp keeps private (created 0700): the data root, the server's runs,
/// the client-file backups and each provisioned runtime.
fn private_dirs(ctx: &Context) -> Vec<PathBuf> {
    let mut dirs = vec![
        ctx.root().to_path_buf(),
        ctx.layout.runs_dir(),
        ctx.layout.backups_dir(),
    ];
    if let Ok(Some(state)) = &ctx.state {
        dirs.extend(state.runtimes.values().map(|r| r.dir.clone()));
    }
    dirs.into_iter().filter(|d| d.is_dir()).collect()
}

pub fn permissions(ctx: &Context, id: &str) -> CheckResult {
    let root = ctx.root();
    if !root.is_dir() {
        return CheckResult::skipped(id, format!("{} does not exist", root.display()));
    }
    let mut problems = Vec::new();
    // A file where a state directory belongs makes that state unwritable for everyone,
    // root included (mode bits do not bind root; ENOTDIR does).
    for dir in [ctx.layout.runs_dir(), ctx.layout.backups_dir()] {
        if dir.exists() && !dir.is_dir() {
            problems.push((
                Status::Fail,
                format!(
                    "{} exists but is not a directory: nothing can be written in it",
                    short(root, &dir)
                ),
            ));
        }
    }
    let dirs = private_dirs(ctx);
    for dir in &dirs {
        let name = match short(root, dir) {
            s if s.is_empty() => root.display().to_string(),
            s => s,
        };
        if let Err(e) = probe_writable(dir) {
            problems.push((Status::Fail, format!("{name} is not writable ({e})")));
            continue;
        }
        if let Some(mode) = open_mode(dir) {
            problems.push((
                Status::Warn,
                format!("{name} is {mode:o}: other users can read it (want 700)"),
            ));
        }
    }
    let state = scimcp_core::install_state::InstallState::path(root);
    if state.is_file()
        && let Err(e) = fs_err::OpenOptions::new().append(true).open(&state)
    {
        problems.push((Status::Fail, format!("state.json is not writable ({e})")));
    }
    let remedy = remedy_for(&problems, &dirs, root);
    let mut result = CheckResult::from_problems(
        id,
        format!("{} private directories are 700 and writable", dirs.len()),
        problems,
    );
    if let Some(remedy) = remedy {
        result = result.remedy(remedy);
    }
    result
}

/// `chmod` commands for what is wrong: write access first (without it nothing works).
fn remedy_for(problems: &[(Status, String)], dirs: &[PathBuf], root: &Path) -> Option<String> {
    if problems.is_empty() {
        return None;
    }
    let quoted: Vec<String> = dirs
        .iter()
        .map(|d| shell_quote(&d.display().to_string()))
        .collect();
    if problems.iter().any(|(s, _)| *s == Status::Fail) {
        Some(format!(
            "chmod -R u+rwX {} (or, if another user owns it: sudo chown -R \"$USER\" {})",
            shell_quote(&root.display().to_string()),
            shell_quote(&root.display().to_string())
        ))
    } else {
        Some(format!("chmod 700 {}", quoted.join(" ")))
    }
}

/// Create and remove a temporary file in `dir`: the only reliable test of write access
/// (mode bits lie under ACLs, read-only mounts and root).
fn probe_writable(dir: &Path) -> std::io::Result<()> {
    let file = tempfile::Builder::new()
        .prefix(".scimcp-doctor-")
        .tempfile_in(dir)?;
    file.close()
}

/// The mode of `dir` when group or others have any access to it (Unix only).
fn open_mode(dir: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs_err::metadata(dir).ok()?.permissions().mode() & 0o777;
        (mode & 0o077 != 0).then_some(mode)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

pub fn disk(ctx: &Context, id: &str) -> CheckResult {
    // The data root may not exist yet: measure the volume it would be created on.
    let Some(existing) = ctx.root().ancestors().find(|p| p.is_dir()) else {
        return CheckResult::skipped(id, "no existing directory above the data root");
    };
    match fs4::available_space(existing) {
        Ok(free) => disk_status(id, free, existing),
        Err(e) => CheckResult::warn(
            id,
            format!("cannot measure free space at {}: {e}", existing.display()),
        )
        .remedy(format!(
            "check free space by hand: df -h {}",
            shell_quote(&existing.display().to_string())
        )),
    }
}

/// The result for `free` bytes available at `at`.
pub fn disk_status(id: &str, free: u64, at: &Path) -> CheckResult {
    let status = if free < DISK_FAIL_BYTES {
        Status::Fail
    } else if free < DISK_WARN_BYTES {
        Status::Warn
    } else {
        Status::Ok
    };
    CheckResult::new(
        id,
        status,
        format!(
            "{} free on the volume of {} (warn below {}, fail below {})",
            human_bytes(free),
            at.display(),
            human_bytes(DISK_WARN_BYTES),
            human_bytes(DISK_FAIL_BYTES)
        ),
    )
    .remedy(format!(
        "free at least {} on that volume, or move scimcp there with SCIMCP_HOME=DIR and run scimcp-setup install",
        human_bytes(DISK_WARN_BYTES)
    ))
}

fn human_bytes(n: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    let f = n as f64;
    if f >= GIB {
        format!("{:.1} GiB", f / GIB)
    } else {
        format!("{:.0} MiB", f / MIB)
    }
}

/// What went wrong with the probe file of `state.encoding` (the finding names the file and
/// the data root).
#[derive(Debug, thiserror::Error)]
enum EncodingProblem {
    #[error("cannot create it: {0}")]
    Create(#[source] std::io::Error),
    #[error("{0}")]
    List(#[source] std::io::Error),
    #[error("cannot read it back: {0}")]
    ReadBack(#[source] std::io::Error),
    #[error("it read back different bytes")]
    Differs,
    #[error("the directory lists it under another spelling")]
    Respelled,
}

pub fn encoding(ctx: &Context, id: &str) -> CheckResult {
    let root = ctx.root();
    if !root.is_dir() {
        return CheckResult::skipped(id, format!("{} does not exist", root.display()));
    }
    let probe = root.join(format!("{PROBE_NAME} {}.tmp", std::process::id()));
    let result = (|| -> Result<(), EncodingProblem> {
        fs_err::write(&probe, b"scimcp").map_err(EncodingProblem::Create)?;
        let listed = fs_err::read_dir(root)
            .map_err(EncodingProblem::List)?
            .flatten()
            .any(|e| e.path() == probe);
        let back = fs_err::read(&probe).map_err(EncodingProblem::ReadBack)?;
        if back != b"scimcp" {
            return Err(EncodingProblem::Differs);
        }
        if !listed {
            // A file system that normalizes names (HFS+ stores NFD) lists another spelling.
            return Err(EncodingProblem::Respelled);
        }
        Ok(())
    })();
    let removed = match fs_err::remove_file(&probe) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    let name = format!("\"{PROBE_NAME}\"");
    match (result, removed) {
        (Ok(()), Ok(())) if root.to_str().is_some() => CheckResult::ok(
            id,
            format!(
                "a file named {name} was created, read back and removed under {}",
                root.display()
            ),
        ),
        (Ok(()), Ok(())) => CheckResult::warn(
            id,
            format!(
                "{} is not valid Unicode: some clients cannot pass it to scimcp",
                root.display()
            ),
        )
        .remedy("set SCIMCP_HOME to a directory with a Unicode name and run scimcp-setup install"),
        (Err(e), _) => CheckResult::fail(
            id,
            format!("a file named {name} under {}: {e}", root.display()),
        )
        .remedy("set SCIMCP_HOME to a directory on a file system that keeps Unicode names, then run scimcp-setup install"),
        (Ok(()), Err(e)) => CheckResult::fail(
            id,
            format!("the probe file {} cannot be removed: {e}", probe.display()),
        )
        .remedy(format!("rm {}", shell_quote(&probe.display().to_string()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_thresholds() {
        let at = Path::new("/data");
        assert_eq!(disk_status("state.disk", 5 << 30, at).status, Status::Ok);
        let warn = disk_status("state.disk", 700 << 20, at);
        assert_eq!(warn.status, Status::Warn);
        assert_eq!(
            warn.finding,
            "700 MiB free on the volume of /data (warn below 1.0 GiB, fail below 256 MiB)"
        );
        assert!(warn.remedy.is_some());
        assert_eq!(disk_status("state.disk", 10 << 20, at).status, Status::Fail);
        assert_eq!(disk_status("state.disk", 5 << 30, at).remedy, None);
    }

    #[cfg(unix)]
    #[test]
    fn group_readable_directories_are_named_with_the_chmod() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        fs_err::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(open_mode(dir.path()), Some(0o755));
        fs_err::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(open_mode(dir.path()), None);
        let problems = vec![(Status::Warn, "x".to_string())];
        let dirs = vec![PathBuf::from("/a b")];
        assert_eq!(
            remedy_for(&problems, &dirs, Path::new("/a b")).unwrap(),
            "chmod 700 '/a b'"
        );
    }
}
