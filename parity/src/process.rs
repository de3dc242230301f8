//! Process-tree facts the cancelled scenarios compare: is any live process left in a
//! process group, and ending a group the way the server does (SIGTERM, then SIGKILL).

use std::time::{Duration, Instant};

/// How long a process group may take to disappear after its run ended.
pub const TREE_GRACE: Duration = Duration::from_secs(5);

/// True when no live (non-zombie) process is left in process group `pgid`.
///
/// Zombies do not count: an orphaned worker is reparented to PID 1, and in a container
/// PID 1 may never reap it, although it no longer runs anything.
#[cfg(target_os = "linux")]
pub fn group_gone(pgid: u32) -> bool {
    let Ok(entries) = fs_err::read_dir("/proc") else {
        return group_gone_by_signal(pgid);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_str().and_then(|n| n.parse::<u32>().ok()).is_none() {
            continue; // not a process directory
        }
        let Ok(stat) = fs_err::read_to_string(entry.path().join("stat")) else {
            continue; // gone while we looked
        };
        // `pid (comm) state ppid pgrp …`; comm may contain spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = after.split_whitespace();
        let state = fields.next().unwrap_or("");
        let pgrp = fields.nth(1).and_then(|p| p.parse::<u32>().ok());
        if pgrp == Some(pgid) && state != "Z" && state != "X" {
            return false;
        }
    }
    true
}

/// Elsewhere on Unix: ask the kernel whether the group still has members.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn group_gone(pgid: u32) -> bool {
    group_gone_by_signal(pgid)
}

#[cfg(unix)]
fn group_gone_by_signal(pgid: u32) -> bool {
    use nix::sys::signal::killpg;
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pgid) else {
        return true;
    };
    matches!(
        killpg(Pid::from_raw(raw), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

/// Without process groups there is nothing portable to ask; report the tree as ended only
/// when the caller saw the process itself exit.
#[cfg(not(unix))]
pub fn group_gone(_pgid: u32) -> bool {
    true
}

/// Wait up to [`TREE_GRACE`] for process group `pgid` to have no live process.
pub async fn wait_group_gone(pgid: u32) -> bool {
    let deadline = Instant::now() + TREE_GRACE;
    loop {
        if group_gone(pgid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Send `signal` to every process in group `pgid`, ignoring a group that is already gone.
#[cfg(unix)]
pub fn signal_group(pgid: u32, signal: nix::sys::signal::Signal) {
    use nix::sys::signal::killpg;
    use nix::unistd::Pid;
    if let Ok(raw) = i32::try_from(pgid) {
        let _ = killpg(Pid::from_raw(raw), signal);
    }
}
