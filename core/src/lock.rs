//! Waiting for an advisory file lock with a time limit: a process that hangs while holding
//! a lock (or a lock on a network file system that never answers) must not make every other
//! command wait forever. Callers turn [`LockWait::TimedOut`] into a message that names the
//! lock file, who holds it and what to do.

use std::fs::TryLockError;
use std::path::Path;
use std::time::{Duration, Instant};

/// Why an exclusive lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockWait {
    #[error("still held by another process after {} s", .0.as_secs_f32())]
    TimedOut(Duration),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Take the exclusive lock of `dir/owner.lock` without waiting (created if missing); `None`
/// when another process holds it. A run's and a campaign's owner lock: the OS releases the
/// lock of a dead process, so a live owner is told from an abandoned directory whatever
/// happened to pids.
pub fn try_own(dir: &Path) -> std::io::Result<Option<fs_err::File>> {
    let file = fs_err::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("owner.lock"))?;
    match file.file().try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Take an exclusive lock on `file`, waiting at most `timeout`. `waiting` runs once, when
/// the lock is found held (to tell the user why nothing happens).
pub fn lock_exclusive(
    file: &fs_err::File,
    timeout: Duration,
    waiting: impl FnOnce(),
) -> Result<(), LockWait> {
    let start = Instant::now();
    let mut waiting = Some(waiting);
    // Polling, because the blocking `lock` cannot be given a deadline; short sleeps first
    // so a lock released at once costs little, then at most a quarter second.
    let mut pause = Duration::from_millis(10);
    loop {
        match file.file().try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::Error(e)) => return Err(e.into()),
            Err(TryLockError::WouldBlock) => {}
        }
        if let Some(w) = waiting.take() {
            w();
        }
        let waited = start.elapsed();
        if waited >= timeout {
            return Err(LockWait::TimedOut(waited));
        }
        std::thread::sleep(pause.min(timeout - waited));
        pause = (pause * 2).min(Duration::from_millis(250));
    }
}

/// A time limit from the environment variable `var` (whole seconds, more than 0), else
/// `default`.
pub fn timeout_from_env(var: &str, default: Duration) -> Duration {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map_or(default, Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &std::path::Path) -> fs_err::File {
        fs_err::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .unwrap()
    }

    #[test]
    fn a_held_lock_times_out_and_a_free_one_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let holder = open(&path);
        lock_exclusive(&holder, Duration::from_secs(1), || {}).unwrap();
        let other = open(&path);
        let mut told = 0;
        let err = lock_exclusive(&other, Duration::from_millis(100), || told += 1).unwrap_err();
        assert!(matches!(err, LockWait::TimedOut(d) if d >= Duration::from_millis(100)));
        assert_eq!(told, 1);
        drop(holder);
        lock_exclusive(&other, Duration::from_millis(100), || {}).unwrap();
    }
}
