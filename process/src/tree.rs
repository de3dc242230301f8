//! Ending a whole process tree: the process group a [`crate::Step`] starts (Unix), the tree
//! `taskkill /T` walks (Windows).

/// How long a process tree gets between SIGTERM and SIGKILL when the suite ends it (a run
/// cancelled, over its time limit, or left by a stopping server): long enough for a CLI to
/// flush what it was writing, short enough that a cancel answers promptly. Tests derive
/// their limits from it (`scimcp-testkit`'s `limits`).
pub const TERMINATE_GRACE: std::time::Duration = std::time::Duration::from_millis(700);

/// How hard to end a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// Ask politely (SIGTERM).
    Terminate,
    /// No negotiation (SIGKILL).
    Kill,
}

/// Signal every process in the group led by `pid`. A group whose leader has exited still
/// receives the signal while any member lives; a group that is gone is ignored.
#[cfg(unix)]
pub fn signal_tree(pid: u32, how: Kill) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else { return };
    let signal = match how {
        Kill::Terminate => Signal::SIGTERM,
        Kill::Kill => Signal::SIGKILL,
    };
    let _ = killpg(Pid::from_raw(raw), signal);
}

/// Windows has no process groups to signal; `taskkill /T /F` ends the tree rooted at `pid`.
#[cfg(windows)]
pub fn signal_tree(pid: u32, _how: Kill) {
    let _ = std::process::Command::new("taskkill")
        .args(["/T", "/F", "/PID", &pid.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// Does process group `pgid` still have a live (non-zombie) member? A group outlives its
/// leader while any member runs: a worker whose parent was killed keeps it alive.
///
/// Zombies do not count: an orphan is reparented to PID 1, and in a container PID 1 may
/// never reap it, although it no longer runs anything.
#[cfg(target_os = "linux")]
pub fn group_alive(pgid: u32) -> bool {
    let Ok(entries) = fs_err::read_dir("/proc") else {
        return group_alive_by_signal(pgid);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_str().and_then(|n| n.parse::<u32>().ok()).is_none() {
            continue; // not a process directory
        }
        // A process that ends while we look is not an error here.
        let Ok(stat) = fs_err::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; comm may contain spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = after.split_whitespace();
        let state = fields.next().unwrap_or("");
        let pgrp = fields.nth(1).and_then(|p| p.parse::<u32>().ok());
        if pgrp == Some(pgid) && state != "Z" && state != "X" {
            return true;
        }
    }
    false
}

/// The live members of process group `pgid` (Linux; empty elsewhere, where no portable
/// listing exists).
pub fn group_members(pgid: u32) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        let Ok(entries) = fs_err::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| {
                let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
                let stat = fs_err::read_to_string(entry.path().join("stat")).ok()?;
                let after = &stat[stat.rfind(')')? + 1..];
                let mut fields = after.split_whitespace();
                let state = fields.next()?;
                let pgrp: u32 = fields.nth(1)?.parse().ok()?;
                (pgrp == pgid && state != "Z" && state != "X").then_some(pid)
            })
            .collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pgid;
        Vec::new()
    }
}

/// Elsewhere on Unix: ask the kernel whether the group still has members (zombies count).
#[cfg(all(unix, not(target_os = "linux")))]
pub fn group_alive(pgid: u32) -> bool {
    group_alive_by_signal(pgid)
}

#[cfg(unix)]
fn group_alive_by_signal(pgid: u32) -> bool {
    use nix::sys::signal::killpg;
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pgid) else {
        return false;
    };
    !matches!(
        killpg(Pid::from_raw(raw), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

/// Without process groups there is nothing portable to ask.
#[cfg(not(unix))]
pub fn group_alive(_pgid: u32) -> bool {
    false
}
