//! Ending the processes a subreaper inherited: the descendants of a run's CLI that left its
//! process group (`setsid()`, `setpgid()`), which a group's signal never reaches.
//!
//! The run guard is a child subreaper on Linux (`PR_SET_CHILD_SUBREAPER`), so every orphan
//! among its descendants — a daemon whose parent exited, whatever its group or session — is
//! reparented to it. Once the CLI has ended, the guard's remaining children are exactly what
//! the run left behind; [`end_children`] ends them the suite's way (SIGTERM, the grace,
//! SIGKILL), reaps them, and repeats, since ending a daemon orphans its own children, which
//! then become the guard's.
//!
//! Elsewhere there is no subreaper and no portable listing of a process's children: an
//! orphan goes to PID 1 (or launchd), out of the caller's reach, and [`end_children`] ends
//! nothing. What holds there is the group rule alone: a descendant that stays in the run's
//! group ends with it, one that left it survives (docs/RELIABILITY.md says so).

use std::time::Duration;

/// How many rounds [`end_children`] makes at most: each round ends the children it finds,
/// which orphans their own children to the next. A daemon that keeps forking faster than it
/// is ended cannot hold the caller forever.
pub const END_CHILDREN_ROUNDS: usize = 16;

/// The children of process `pid`, zombies included (they are still to be reaped): read from
/// `/proc/*/stat`, whose parent field is reliable without `CONFIG_PROC_CHILDREN` (Linux;
/// empty elsewhere, where no portable listing exists).
pub fn children_of(pid: u32) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        crate::tree::proc_stats()
            .into_iter()
            .filter(|p| p.ppid == pid)
            .map(|p| p.pid)
            .collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        Vec::new()
    }
}

/// End every child of this process except `spare`: SIGTERM, up to `grace` for them to exit,
/// SIGKILL to the rest, each reaped; then again for the children that ending orphaned (a
/// subreaper inherits them), for at most [`END_CHILDREN_ROUNDS`] rounds. How many processes
/// it ended or reaped.
///
/// `spare` names children the caller still waits for itself (a CLI it has not reaped):
/// reaping one here would take its exit status from the caller. It blocks, sleeping between
/// looks, for at most `grace` per round.
#[cfg(unix)]
pub fn end_children(grace: Duration, spare: &[u32]) -> usize {
    use nix::sys::signal::{Signal, kill};
    use std::time::Instant;

    let me = std::process::id();
    let mut ended = 0;
    for _ in 0..END_CHILDREN_ROUNDS {
        let mut left: Vec<u32> = children_of(me)
            .into_iter()
            .filter(|pid| !spare.contains(pid))
            .collect();
        if left.is_empty() {
            break;
        }
        ended += left.len();
        for &pid in &left {
            let _ = kill(as_pid(pid), Signal::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        loop {
            left.retain(|&pid| !reaped(pid));
            if left.is_empty() || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        for &pid in &left {
            let _ = kill(as_pid(pid), Signal::SIGKILL);
            // SIGKILL cannot be refused: this returns as soon as the kernel has ended it.
            let _ = nix::sys::wait::waitpid(as_pid(pid), None);
        }
    }
    ended
}

/// Without a subreaper nothing is inherited to end (see the module documentation).
#[cfg(not(unix))]
pub fn end_children(_grace: Duration, _spare: &[u32]) -> usize {
    0
}

#[cfg(unix)]
fn as_pid(pid: u32) -> nix::unistd::Pid {
    nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX))
}

/// Has child `pid` ended (and is now reaped), or is it no child of ours any more?
#[cfg(unix)]
fn reaped(pid: u32) -> bool {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    !matches!(
        waitpid(as_pid(pid), Some(WaitPidFlag::WNOHANG)),
        Ok(WaitStatus::StillAlive)
    )
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A child that ignores nothing, and a grandchild orphaned when the child ends: both are
    /// ended, the grandchild through the subreaper in the second round. The test process is
    /// made a subreaper, as the guard is; nextest runs each test in its own process, so no
    /// other test's children are among the ones ended.
    #[test]
    fn children_and_the_orphans_they_leave_are_ended_and_reaped() {
        nix::sys::prctl::set_child_subreaper(true).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("grandchild.pid");
        // The shell leaves a sleeper in a new session (out of any group) and exits: the
        // sleeper is orphaned to us at once.
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > '{}'",
                pid_file.display()
            ))
            .status()
            .unwrap();
        assert!(status.success());
        let mut sleeper = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap();
        let orphan: u32 = fs_err::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let me = std::process::id();
        assert!(children_of(me).contains(&orphan));
        // The spared child is left alone.
        let ended = end_children(crate::TERMINATE_GRACE, &[sleeper.id()]);
        assert!(ended >= 1);
        assert!(!children_of(me).contains(&orphan));
        assert!(children_of(me).contains(&sleeper.id()));
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        assert!(!children_of(me).contains(&sleeper.id()));
    }
}
