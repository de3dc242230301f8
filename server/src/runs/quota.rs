//! The disk quota of `scimcp serve --max-history-bytes N` / `--min-free-bytes N`: a new run is
//! refused before it starts when the run history is over its size or the volume under the
//! free space asked for, with a message naming the quota, the figure and what to do.
//!
//! Free space is one `statvfs` (fs4) per start: a system call, cheap at any history size.
//! The history's size is not walked at every start (at 100,000 runs that is seconds): it is
//! measured once, in the background from the moment the server starts, and kept with the time
//! it was measured. A start older than [`REFRESH_AFTER`] since that measure triggers a new one
//! in the background and uses the kept figure meanwhile; a start the kept figure would refuse
//! measures again first, so a prune (by another process) never leaves a stale refusal behind.
//! So a refusal is always true at the time it is made, and what the figure misses is at most
//! what runs added in the last few minutes, which the quota admits on top of its limit.
//!
//! This module only measures and refuses; it never deletes anything (that is `runs prune`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use scimcp_core::fs::size_text;

/// How old the kept history size may get before a start measures it again (in the
/// background).
pub const REFRESH_AFTER: Duration = Duration::from_secs(300);

/// What the operator asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuotaConfig {
    /// Refuse new runs once the runs directory holds this many bytes.
    pub max_history_bytes: Option<u64>,
    /// Refuse new runs once the volume of the runs directory has less free space than this.
    pub min_free_bytes: Option<u64>,
}

impl QuotaConfig {
    pub fn is_set(self) -> bool {
        self.max_history_bytes.is_some() || self.min_free_bytes.is_some()
    }
}

/// Why a run is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuotaRefusal {
    #[error(
        "the run history in {} takes {} ({bytes} bytes), at or over this server's quota --max-history-bytes {limit} ({}): no new run starts until old runs are deleted",
        runs_dir.display(), size_text(*bytes), size_text(*limit)
    )]
    History {
        runs_dir: PathBuf,
        bytes: u64,
        limit: u64,
    },
    #[error(
        "the volume of {} has {} free ({free} bytes), under this server's --min-free-bytes {limit} ({}): no new run starts until space is freed",
        runs_dir.display(), size_text(*free), size_text(*limit)
    )]
    FreeSpace {
        runs_dir: PathBuf,
        free: u64,
        limit: u64,
    },
}

impl QuotaRefusal {
    /// What to do about it.
    pub fn hint(&self) -> String {
        let raise = match self {
            QuotaRefusal::History { .. } => "--max-history-bytes",
            QuotaRefusal::FreeSpace { .. } => "--min-free-bytes",
        };
        format!(
            "delete old runs: `scimcp runs prune --older-than 30d --dry-run` shows what would go, \
             the same without --dry-run deletes it (or restart the server with another {raise})"
        )
    }
}

#[derive(Debug, Default)]
struct Measured {
    bytes: Option<u64>,
    at: Option<Instant>,
    measuring: bool,
}

/// The quota of one runs directory, with its kept history size.
#[derive(Debug)]
pub struct HistoryQuota {
    config: QuotaConfig,
    runs_dir: PathBuf,
    measured: Arc<(Mutex<Measured>, Condvar)>,
}

impl HistoryQuota {
    /// A quota on `runs_dir`; with a history limit, its first measure starts now, in the
    /// background.
    pub fn new(config: QuotaConfig, runs_dir: PathBuf) -> HistoryQuota {
        let quota = HistoryQuota {
            config,
            runs_dir,
            measured: Arc::new((Mutex::new(Measured::default()), Condvar::new())),
        };
        if config.max_history_bytes.is_some() {
            quota.measure_in_background();
        }
        quota
    }

    /// Whether a new run may start now.
    pub fn admit(&self) -> Result<(), QuotaRefusal> {
        if let Some(limit) = self.config.min_free_bytes {
            match fs4::available_space(self.free_space_probe()) {
                Ok(free) if free < limit => {
                    return Err(QuotaRefusal::FreeSpace {
                        runs_dir: self.runs_dir.clone(),
                        free,
                        limit,
                    });
                }
                Ok(_) => {}
                // Not a reason to refuse every run: the measure itself is what failed.
                Err(e) => tracing::warn!(
                    "cannot measure free space at {}: {e}; --min-free-bytes is not enforced for this run",
                    self.runs_dir.display()
                ),
            }
        }
        let Some(limit) = self.config.max_history_bytes else {
            return Ok(());
        };
        let (bytes, at) = self.kept_size();
        if at.elapsed() >= REFRESH_AFTER {
            self.measure_in_background();
        }
        if bytes < limit {
            return Ok(());
        }
        // Refuse only on a fresh figure: the kept one may predate a prune.
        let bytes = self.measure_now();
        if bytes < limit {
            return Ok(());
        }
        Err(QuotaRefusal::History {
            runs_dir: self.runs_dir.clone(),
            bytes,
            limit,
        })
    }

    /// The directory whose volume is measured: the runs directory, or the nearest existing
    /// directory above it before the first run creates it.
    fn free_space_probe(&self) -> &Path {
        self.runs_dir
            .ancestors()
            .find(|p| p.is_dir())
            .unwrap_or(&self.runs_dir)
    }

    /// The kept size and when it was measured, waiting for the first measure if it is still
    /// under way.
    fn kept_size(&self) -> (u64, Instant) {
        let (lock, ready) = &*self.measured;
        let mut m = lock.lock().expect("quota lock");
        loop {
            if let (Some(bytes), Some(at)) = (m.bytes, m.at) {
                return (bytes, at);
            }
            if !m.measuring {
                drop(m);
                self.measure_now();
                m = lock.lock().expect("quota lock");
                continue;
            }
            m = ready.wait(m).expect("quota lock");
        }
    }

    /// Walk the runs directory on this thread and keep the figure.
    fn measure_now(&self) -> u64 {
        store(&self.measured, &self.runs_dir)
    }

    /// Walk it on a thread of its own, unless a walk is already under way.
    fn measure_in_background(&self) {
        {
            let mut m = self.measured.0.lock().expect("quota lock");
            if m.measuring {
                return;
            }
            m.measuring = true;
        }
        let measured = Arc::clone(&self.measured);
        let runs_dir = self.runs_dir.clone();
        let spawned = std::thread::Builder::new()
            .name("history-size".into())
            .spawn(move || {
                store(&measured, &runs_dir);
            });
        if spawned.is_err() {
            // No thread: the next start measures on its own.
            self.measured.0.lock().expect("quota lock").measuring = false;
            self.measured.1.notify_all();
        }
    }
}

/// Measure `runs_dir` and keep the figure (an unreadable directory counts as empty: nothing
/// is refused for a size that cannot be known, and the warning says why).
fn store(measured: &(Mutex<Measured>, Condvar), runs_dir: &Path) -> u64 {
    let bytes = match scimcp_core::history::measure(runs_dir) {
        Ok(usage) => usage.bytes,
        Err(e) => {
            tracing::warn!(
                "cannot measure the run history in {}: {e}; --max-history-bytes is not enforced until it can be",
                runs_dir.display()
            );
            0
        }
    };
    let (lock, ready) = measured;
    let mut m = lock.lock().expect("quota lock");
    m.bytes = Some(bytes);
    m.at = Some(Instant::now());
    m.measuring = false;
    drop(m);
    ready.notify_all();
    bytes
}

static INSTALLED: OnceLock<HistoryQuota> = OnceLock::new();

/// Set this process's quota (`scimcp serve`, once, before any run starts). Without it, every
/// run is admitted.
pub fn install(config: QuotaConfig, runs_dir: PathBuf) {
    if config.is_set() {
        let _ = INSTALLED.set(HistoryQuota::new(config, runs_dir));
    }
}

/// Whether the installed quota admits a new run.
pub fn admit() -> Result<(), QuotaRefusal> {
    INSTALLED.get().map_or(Ok(()), HistoryQuota::admit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(runs: &Path, id: &str, bytes: usize) {
        let dir = runs.join(id);
        fs_err::create_dir_all(&dir).unwrap();
        fs_err::write(dir.join("stdout.log"), vec![b'x'; bytes]).unwrap();
    }

    #[test]
    fn quota_refuses_over_the_history_limit_and_admits_again_after_a_prune() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        fill(&runs, "run-00000000000000aa", 6000);
        fill(&runs, "run-00000000000000bb", 6000);
        let quota = HistoryQuota::new(
            QuotaConfig {
                max_history_bytes: Some(10_000),
                min_free_bytes: None,
            },
            runs.clone(),
        );
        let err = quota.admit().unwrap_err();
        let text = err.to_string();
        assert!(text.contains("--max-history-bytes 10000"), "{text}");
        assert!(text.contains("(12000 bytes)"), "{text}");
        assert!(text.contains(&runs.display().to_string()), "{text}");
        assert!(err.hint().contains("scimcp runs prune"), "{}", err.hint());
        // A prune by another process: the kept figure still says 12,000, so the start
        // measures again before refusing, and is admitted.
        fs_err::remove_dir_all(runs.join("run-00000000000000bb")).unwrap();
        quota.admit().unwrap();
        assert_eq!(quota.kept_size().0, 6000);
        // Growth since the last measure is not seen until the next one (at most
        // REFRESH_AFTER later): an admitted start costs no walk.
        fill(&runs, "run-00000000000000cc", 6000);
        quota.admit().unwrap();
        assert_eq!(quota.kept_size().0, 6000);
    }

    #[test]
    fn quota_refuses_under_the_free_space_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs not yet created");
        let quota = HistoryQuota::new(
            QuotaConfig {
                max_history_bytes: None,
                min_free_bytes: Some(u64::MAX),
            },
            runs.clone(),
        );
        let err = quota.admit().unwrap_err();
        assert!(matches!(err, QuotaRefusal::FreeSpace { .. }), "{err}");
        assert!(err.to_string().contains("--min-free-bytes"), "{err}");
        let roomy = HistoryQuota::new(
            QuotaConfig {
                max_history_bytes: None,
                min_free_bytes: Some(1),
            },
            runs,
        );
        roomy.admit().unwrap();
    }
}
