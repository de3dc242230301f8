//! Ending a whole process tree: the process group a [`crate::Step`] starts (Unix), the tree
//! `taskkill /T` walks (Windows).

use std::process::ExitStatus;
use std::time::{Duration, Instant};

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

/// [`crate::Child::terminate`] for a blocking caller ([`crate::run`] at its time limit):
/// SIGTERM to the group `child` leads, up to `grace` for it to exit, SIGKILL to the group,
/// and the child reaped. Its exit status, when it could be read.
pub(crate) fn terminate_blocking(
    child: &mut std::process::Child,
    grace: Duration,
) -> Option<ExitStatus> {
    let group = child.id();
    signal_tree(group, Kill::Terminate);
    let deadline = Instant::now() + grace;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if Instant::now() >= deadline {
            signal_tree(group, Kill::Kill);
            // The group's SIGKILL reached it unless it left the group.
            let _ = child.kill();
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // What it left in its group goes with it.
    signal_tree(group, Kill::Kill);
    status
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

/// One process as `/proc/<pid>/stat` describes it: its state letter, parent and group.
#[cfg(target_os = "linux")]
pub(crate) struct ProcStat {
    pub pid: u32,
    pub state: String,
    pub ppid: u32,
    pub pgrp: u32,
}

/// Every process `/proc` lists now. A process that ends while we look is skipped, not an
/// error.
#[cfg(target_os = "linux")]
pub(crate) fn proc_stats() -> Vec<ProcStat> {
    let Ok(entries) = fs_err::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = fs_err::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid pgrp …`; comm may contain spaces and parentheses.
            let after = &stat[stat.rfind(')')? + 1..];
            let mut fields = after.split_whitespace();
            let state = fields.next()?.to_string();
            let ppid: u32 = fields.next()?.parse().ok()?;
            let pgrp: u32 = fields.next()?.parse().ok()?;
            Some(ProcStat {
                pid,
                state,
                ppid,
                pgrp,
            })
        })
        .collect()
}

/// The live members of process group `pgid` (Linux; empty elsewhere, where no portable
/// listing exists).
pub fn group_members(pgid: u32) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        proc_stats()
            .into_iter()
            .filter(|p| p.pgrp == pgid && p.state != "Z" && p.state != "X")
            .map(|p| p.pid)
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
