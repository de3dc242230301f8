//! One poller for every job this server tracks: each interval, a single `squeue` for all of
//! them (not one per run per tick), whose answers are published to each run's waiter through
//! a watch channel. A job the controller no longer lists for several polls in a row (its
//! record was purged after `MinJobAge`) is asked of the accounting database once, then
//! reported gone.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, watch};

use scimcp_slurm::{Observation, Slurm};

/// Polls in a row a job must be missing before it is declared gone.
const MISSES_BEFORE_GONE: u32 = 3;

/// What the poller knows of one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobView {
    /// Not polled yet.
    Unknown,
    Seen(Observation),
    /// Neither the controller nor accounting knows it any more.
    Gone,
}

#[derive(Debug)]
struct Tracked {
    tx: watch::Sender<JobView>,
    misses: u32,
}

/// The shared poller.
#[derive(Debug)]
pub struct JobWatch {
    slurm: Arc<Slurm>,
    jobs: Mutex<HashMap<String, Tracked>>,
    wake: Notify,
    started: AtomicBool,
}

impl JobWatch {
    pub fn new(slurm: Arc<Slurm>) -> Arc<JobWatch> {
        Arc::new(JobWatch {
            slurm,
            jobs: Mutex::new(HashMap::new()),
            wake: Notify::new(),
            started: AtomicBool::new(false),
        })
    }

    pub fn slurm(&self) -> &Arc<Slurm> {
        &self.slurm
    }

    /// Follow `key` (`12` or `12_3`) until [`JobWatch::forget`]; starts the poller.
    pub fn track(self: &Arc<Self>, key: &str) -> watch::Receiver<JobView> {
        let rx = {
            let mut jobs = self.jobs.lock().expect("jobs lock");
            jobs.entry(key.to_string())
                .or_insert_with(|| Tracked {
                    tx: watch::channel(JobView::Unknown).0,
                    misses: 0,
                })
                .tx
                .subscribe()
        };
        if !self.started.swap(true, Ordering::SeqCst) {
            tokio::spawn(Arc::clone(self).run());
        }
        self.poke();
        rx
    }

    pub fn forget(&self, key: &str) {
        self.jobs.lock().expect("jobs lock").remove(key);
    }

    /// Poll now rather than at the next interval (after a submit or a cancel).
    pub fn poke(&self) {
        self.wake.notify_one();
    }

    async fn run(self: Arc<Self>) {
        let interval = Duration::from_secs_f64(self.slurm.config.poll_interval_s);
        loop {
            let _ = tokio::time::timeout(interval, self.wake.notified()).await;
            let keys: Vec<String> = self
                .jobs
                .lock()
                .expect("jobs lock")
                .keys()
                .cloned()
                .collect();
            if keys.is_empty() {
                continue;
            }
            // Array tasks are listed by their array's id; one squeue answers for all.
            let ids: Vec<String> = keys
                .iter()
                .map(|k| k.split('_').next().unwrap_or(k).to_string())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let slurm = Arc::clone(&self.slurm);
            let answer = tokio::task::spawn_blocking(move || slurm.query(&ids)).await;
            let observations = match answer {
                Ok(Ok(o)) => o,
                Ok(Err(e)) => {
                    // The controller may be restarting: keep the last known states.
                    tracing::warn!("squeue failed; keeping the last known job states: {e}");
                    continue;
                }
                Err(e) => {
                    tracing::error!("the squeue task failed: {e}");
                    continue;
                }
            };
            let by_key: HashMap<&str, &Observation> =
                observations.iter().map(|o| (o.key.as_str(), o)).collect();
            let mut missing = Vec::new();
            {
                let mut jobs = self.jobs.lock().expect("jobs lock");
                for (key, t) in jobs.iter_mut() {
                    match by_key.get(key.as_str()) {
                        Some(o) => {
                            t.misses = 0;
                            t.tx.send_if_modified(|v| {
                                let new = JobView::Seen((*o).clone());
                                let changed = *v != new;
                                *v = new;
                                changed
                            });
                        }
                        None => {
                            t.misses += 1;
                            if t.misses >= MISSES_BEFORE_GONE {
                                missing.push(key.clone());
                            }
                        }
                    }
                }
            }
            for key in missing {
                let slurm = Arc::clone(&self.slurm);
                let k = key.clone();
                let found = tokio::task::spawn_blocking(move || slurm.accounting(&k))
                    .await
                    .ok()
                    .flatten();
                if let Some(t) = self.jobs.lock().expect("jobs lock").get(&key) {
                    t.tx.send_replace(found.map_or(JobView::Gone, JobView::Seen));
                }
            }
        }
    }
}
