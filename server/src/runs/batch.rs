//! Executing runs as Slurm batch jobs: submit the prepared run, mirror the job's state into
//! the run's status, cancel with `scancel`, read how it ended, and re-attach to jobs a
//! previous server submitted. Everything after the job ends (artifacts, `result.json`, the
//! run manifest) is the local executor's code.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use scimcp_core::fs::{Privacy, WriteError, write_atomic, write_json_atomic};

use super::execute::{Finish, exited};
use super::slurm::{
    Ending, JOB_RECORD, JobRecord, JobView, Observation, Phase, SlurmError, SlurmExecutor,
    Submission, UnquotableWord, phase, slurm_messages,
};
use super::state::{BatchJob, RECORD_SCHEMA_VERSION, RunState, RunStatus, now};
use super::{LiveRun, RunManager, is_run_id, read_json, try_own};
use crate::runtime::RuntimeProbe;
use crate::validate::Validation;

/// Bytes of Slurm's own error file quoted in a failed run's message.
const SLURM_MESSAGE_BYTES: usize = 1024;

/// A run created for a campaign's job array, not yet submitted.
pub struct PendingRun {
    pub run_id: String,
    dir: PathBuf,
    live: Arc<LiveRun>,
    v: Validation,
}

/// What one job (or array) asks Slurm for.
pub(crate) struct JobShape {
    pub cpus: u32,
    pub memory_mb: Option<u64>,
    pub time_limit_min: u64,
}

/// Why a run (or a campaign's job array) was not submitted: the failed run's message.
#[derive(Debug, thiserror::Error)]
enum SubmitError {
    /// A run directory could not be made absolute or a directory created.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Write(#[from] WriteError),
    #[error("cannot write the batch script: {0}")]
    Script(UnquotableWord),
    #[error("{path:?} contains a line break")]
    LineBreak { path: String },
    #[error("Slurm refused the job: {0}")]
    Refused(SlurmError),
    #[error("Slurm refused the job array: {0}")]
    RefusedArray(SlurmError),
    #[error("cancelled before the job array was submitted")]
    Cancelled,
    #[error("{0}")]
    Panicked(#[from] tokio::task::JoinError),
}

impl RunManager {
    /// The resources a run of `workflow` asks for: the workflow's `[workflow.resources]`,
    /// the time limit defaulting to the run timeout in whole minutes.
    pub(crate) fn job_shape(&self, v: &Validation) -> JobShape {
        let r = self.resources.get(&v.workflow).copied().unwrap_or_default();
        JobShape {
            cpus: r.job_cpus(),
            memory_mb: r.memory_mb,
            time_limit_min: r.job_time_limit_min(v.plan.timeout_s),
        }
    }

    /// The arguments of `scimcp __job` for one run directory or a runs file.
    pub(crate) fn job_args(&self, target: (&str, &Path)) -> Vec<String> {
        vec![
            target.0.to_string(),
            target.1.display().to_string(),
            "--state-dir".into(),
            self.state_dir.display().to_string(),
            "--max-log-bytes".into(),
            self.limits.max_log_bytes.to_string(),
            "--max-artifact-bytes".into(),
            self.limits.max_artifact_bytes.to_string(),
            // The job's CLI gets this server's sandbox, and `job_sandbox` reads its report
            // under the same mode.
            "--sandbox".into(),
            match crate::sandbox_policy::mode() {
                crate::sandbox_policy::Mode::Required => "required",
                crate::sandbox_policy::Mode::BestEffort => "best-effort",
                crate::sandbox_policy::Mode::Off => "off",
            }
            .into(),
        ]
    }

    /// Prepare the run's working directory, submit it, and wait for the job to end.
    pub(super) async fn run_batch(
        &self,
        exec: &Arc<SlurmExecutor>,
        dir: &Path,
        live: &LiveRun,
        v: &Validation,
    ) -> Finish {
        if let Some(f) = self.stopped_before_start(live) {
            return f;
        }
        if let Err(f) = self.prepare_work(dir, v).await {
            return f;
        }
        if let Some(f) = self.stopped_before_start(live) {
            return f;
        }
        let record = match self.submit(exec, dir, v).await {
            Ok(r) => r,
            Err(e) => return Finish::new(RunState::Failed, "submit_failed", &e.to_string()),
        };
        self.follow(exec, dir, live, &record).await
    }

    /// A run cancelled (or a server stopping) before its job was submitted.
    fn stopped_before_start(&self, live: &LiveRun) -> Option<Finish> {
        if !*live.cancel.borrow() {
            return None;
        }
        Some(if self.is_stopping() {
            Finish::new(
                RunState::Failed,
                "interrupted",
                "the server stopped before the run was submitted; start the analysis again",
            )
        } else {
            Finish::new(
                RunState::Cancelled,
                "cancelled",
                "cancelled before it started",
            )
        })
    }

    async fn submit(
        &self,
        exec: &Arc<SlurmExecutor>,
        dir: &Path,
        v: &Validation,
    ) -> Result<JobRecord, SubmitError> {
        let dir = std::path::absolute(dir)?;
        let shape = self.job_shape(v);
        let script = exec
            .script(&self.job_args(("--run-dir", &dir)))
            .map_err(SubmitError::Script)?;
        let script_path = dir.join("slurm-job.sh");
        let run_id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let submission = Submission {
            job_name: format!("scimcp-{run_id}"),
            script: script_path,
            chdir: dir.join(&v.plan.working_dir),
            output: dir.join("slurm-job.out"),
            error: dir.join("slurm-job.err"),
            cpus: shape.cpus,
            memory_mb: shape.memory_mb,
            time_limit_min: shape.time_limit_min,
            array: None,
        };
        let slurm = Arc::clone(&exec.slurm);
        let sub = submission.clone();
        // Durable writes and sbatch are blocking work: off the async workers.
        let job_id = tokio::task::spawn_blocking(move || {
            write_atomic(&sub.script, script.as_bytes(), Privacy::Private)?;
            slurm.submit(&sub).map_err(SubmitError::Refused)
        })
        .await??;
        let record = JobRecord {
            schema_version: RECORD_SCHEMA_VERSION,
            job_id,
            submitted_at: now(),
            time_limit_min: shape.time_limit_min,
            memory_mb: shape.memory_mb,
            cpus: shape.cpus,
            slurm_output: submission.output,
            slurm_error: submission.error,
            campaign_id: None,
        };
        // Recorded at once: a server dying from here on leaves a job the next one finds.
        let (path, written) = (dir.join(JOB_RECORD), record.clone());
        tokio::task::spawn_blocking(move || write_json_atomic(&path, &written)).await??;
        tracing::info!(run_id, job_id = record.job_id, "submitted to Slurm");
        Ok(record)
    }

    /// Follow a submitted job until it ends, mirroring its state into the run's status; a
    /// client's cancel becomes `scancel`. The run is detached from here on: a stopping
    /// server leaves the job running.
    pub(super) async fn follow(
        &self,
        exec: &Arc<SlurmExecutor>,
        dir: &Path,
        live: &LiveRun,
        record: &JobRecord,
    ) -> Finish {
        live.detached
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let key = record.job_id.clone();
        let mut jobs = exec.watch.track(&key);
        let mut cancel_rx = live.cancel.subscribe();
        let mut cancel_sent = false;
        if live.status.borrow().job.is_none() {
            self.transition_off_workers(dir, live, |s| {
                s.job = Some(BatchJob {
                    executor: "slurm".into(),
                    job_id: key.clone(),
                    state: "PENDING".into(),
                    reason: None,
                    node: None,
                });
            })
            .await;
        }
        let finish = loop {
            let view = jobs.borrow_and_update().clone();
            match view {
                JobView::Seen(o) => {
                    self.mirror(dir, live, &o).await;
                    if let Phase::Ended(ending) = phase(&o.state) {
                        break self.ended(dir, record, &o, ending, cancel_sent);
                    }
                }
                // A pending array task that is cancelled leaves no record behind.
                JobView::Gone if cancel_sent => {
                    break Finish::new(
                        RunState::Cancelled,
                        "cancelled",
                        &format!(
                            "cancelled at the client's request; Slurm removed job {key} (scancel)"
                        ),
                    );
                }
                JobView::Gone => break self.gone(dir, record),
                JobView::Unknown => {}
            }
            let cancel_now = tokio::select! {
                changed = jobs.changed() => {
                    if changed.is_err() {
                        break Finish::new(RunState::Failed, "internal", "the job poller stopped");
                    }
                    false
                }
                asked = cancel_rx.wait_for(|c| *c), if !cancel_sent => asked.is_ok(),
            };
            if cancel_now {
                cancel_sent = true;
                // A stopping server leaves its jobs running; only a client cancels them.
                if !self.is_stopping() {
                    let slurm = Arc::clone(&exec.slurm);
                    let k = key.clone();
                    match tokio::task::spawn_blocking(move || slurm.cancel(&[k])).await {
                        Ok(Ok(())) => tracing::info!(job_id = key, "scancel sent"),
                        Ok(Err(e)) => tracing::error!(job_id = key, "scancel failed: {e}"),
                        Err(e) => tracing::error!("the scancel task failed: {e}"),
                    }
                    exec.watch.poke();
                }
            }
        };
        exec.watch.forget(&key);
        finish
    }

    /// Record the job's latest state in the run's status (only when it changed).
    async fn mirror(&self, dir: &Path, live: &LiveRun, o: &Observation) {
        let job = BatchJob {
            executor: "slurm".into(),
            job_id: live
                .status
                .borrow()
                .job
                .as_ref()
                .map(|j| j.job_id.clone())
                .unwrap_or_else(|| o.key.clone()),
            state: o.state.clone(),
            reason: o.reason.clone(),
            node: o.node.clone(),
        };
        let (state, unchanged) = {
            let s = live.status.borrow();
            (s.state, s.job.as_ref() == Some(&job))
        };
        let running =
            matches!(phase(&o.state), Phase::Running | Phase::Ended(_)) && o.node.is_some();
        if unchanged && !(running && state == RunState::Queued) {
            return;
        }
        self.transition_off_workers(dir, live, |s| {
            if running && s.state == RunState::Queued {
                s.state = RunState::Running;
                s.started_at = Some(now());
            }
            s.job = Some(job);
        })
        .await;
    }

    /// How a job Slurm reports ended reads as a run's ending.
    fn ended(
        &self,
        dir: &Path,
        record: &JobRecord,
        o: &Observation,
        ending: Ending,
        cancel_requested: bool,
    ) -> Finish {
        let cli = crate::guard::take_status(&dir.join("cli-status.json"));
        let said = slurm_messages(&record.slurm_error, SLURM_MESSAGE_BYTES);
        let with_slurm = |m: String| match &said {
            Some(s) => format!("{m}; Slurm said: {s}"),
            None => m,
        };
        let id = &record.job_id;
        let reason = o.reason.as_deref().unwrap_or("no reason given");
        let mut finish = match ending {
            Ending::Completed | Ending::Failed if cli.is_some() => exited(cli),
            Ending::Completed | Ending::Failed => Finish::new(
                RunState::Failed,
                "job_failed",
                &with_slurm(format!(
                    "Slurm job {id} ended {} ({reason}) before the CLI recorded an exit status",
                    o.state
                )),
            ),
            Ending::Cancelled if cancel_requested => Finish::new(
                RunState::Cancelled,
                "cancelled",
                &format!("cancelled at the client's request; Slurm ended job {id} (scancel)"),
            ),
            Ending::Cancelled => Finish::new(
                RunState::Cancelled,
                "cancelled",
                &with_slurm(format!(
                    "Slurm job {id} was cancelled outside scimcp (scancel by its owner or an administrator)"
                )),
            ),
            Ending::Timeout | Ending::Deadline => Finish::new(
                RunState::Failed,
                "timeout",
                &with_slurm(format!(
                    "Slurm job {id} reached its time limit of {} min and Slurm ended it ({reason}); ask for more time in the workflow's resources",
                    record.time_limit_min
                )),
            ),
            Ending::OutOfMemory => Finish::new(
                RunState::Failed,
                "out_of_memory",
                &with_slurm(format!(
                    "Slurm job {id} used more than its memory ({}) and was killed",
                    record.memory_mb.map_or_else(
                        || "the cluster's default".to_string(),
                        |m| format!("{m} MiB")
                    )
                )),
            ),
            Ending::NodeFail | Ending::BootFail => Finish::new(
                RunState::Failed,
                "node_failure",
                &with_slurm(format!(
                    "the node running Slurm job {id} failed ({}, {reason}); start the analysis again",
                    o.state
                )),
            ),
            Ending::Preempted => Finish::new(
                RunState::Failed,
                "preempted",
                &with_slurm(format!(
                    "Slurm job {id} was preempted by a job of higher priority; start the analysis again"
                )),
            ),
            Ending::Other => Finish::new(
                RunState::Failed,
                "scheduler",
                &with_slurm(format!("Slurm job {id} ended {} ({reason})", o.state)),
            ),
        };
        if let Some(c) = cli {
            finish.exit_code = c.exit_code;
            finish.signal = c.signal;
        }
        finish.sandbox = job_sandbox(dir);
        finish
    }

    /// A job neither the controller nor accounting knows any more: its exit status, if the
    /// job recorded one, is all there is.
    fn gone(&self, dir: &Path, record: &JobRecord) -> Finish {
        let cli = crate::guard::take_status(&dir.join("cli-status.json"));
        if cli.is_some() {
            let mut f = exited(cli);
            if let Some(c) = cli {
                f.exit_code = c.exit_code;
                f.signal = c.signal;
            }
            f.sandbox = job_sandbox(dir);
            return f;
        }
        Finish::new(
            RunState::Failed,
            "lost",
            &format!(
                "Slurm no longer knows job {} (its record was purged) and the job left no exit status; start the analysis again",
                record.job_id
            ),
        )
    }

    /// Create a run (state `queued`) to be submitted with others as one job array; it does
    /// not count against `max_pending_runs` (the array's throttle bounds it).
    pub fn create_unqueued(
        &self,
        v: &Validation,
        request: &serde_json::Value,
    ) -> Result<PendingRun, crate::envelope::ToolError> {
        let (status, dir, live) = self.create(v, request, false)?;
        Ok(PendingRun {
            run_id: status.run_id,
            dir,
            live,
            v: v.clone(),
        })
    }

    /// Prepare every run's working directory and submit them all as one job array of at most
    /// `bound` tasks running at once (task `i` runs line `i` of `<campaign_dir>/runs.txt`);
    /// then follow each task as its run. Runs that could not be prepared, or were cancelled
    /// before the submission, end at once. Returns the array's job id.
    #[allow(clippy::too_many_arguments)]
    pub async fn submit_array(
        self: &Arc<Self>,
        exec: &Arc<SlurmExecutor>,
        runs: Vec<PendingRun>,
        bound: u32,
        campaign_dir: &Path,
        campaign_id: &str,
        cancel: tokio::sync::watch::Receiver<bool>,
        runtime: Option<RuntimeProbe>,
    ) -> Option<String> {
        let end_now = |run: PendingRun, finish: Finish| {
            let manager = Arc::clone(self);
            let runtime = runtime.clone();
            tokio::spawn(async move {
                manager
                    .conclude(
                        run.dir,
                        run.live,
                        run.v,
                        finish,
                        std::time::Duration::ZERO,
                        runtime,
                    )
                    .await;
            });
        };
        let mut ready = Vec::new();
        for run in runs {
            if *cancel.borrow() || *run.live.cancel.borrow() {
                end_now(
                    run,
                    Finish::new(
                        RunState::Cancelled,
                        "cancelled",
                        "cancelled before it started",
                    ),
                );
                continue;
            }
            match self.prepare_work(&run.dir, &run.v).await {
                Ok(()) => ready.push(run),
                Err(f) => end_now(run, f),
            }
        }
        let first = ready.first()?;
        let shape = self.job_shape(&first.v);
        let submitted = async {
            let campaign_dir = std::path::absolute(campaign_dir)?;
            let slurm_dir = campaign_dir.join("slurm");
            let mut lines = String::new();
            for run in &ready {
                let dir = std::path::absolute(&run.dir)?;
                let text = dir.display().to_string();
                if text.contains(['\n', '\r']) {
                    return Err(SubmitError::LineBreak { path: text });
                }
                lines.push_str(&text);
                lines.push('\n');
            }
            let runs_file = campaign_dir.join("runs.txt");
            let script = exec
                .script(&self.job_args(("--runs-file", &runs_file)))
                .map_err(SubmitError::Script)?;
            let script_path = campaign_dir.join("slurm-array.sh");
            // Durable writes are blocking work: off the async workers.
            let files = (slurm_dir.clone(), script_path.clone());
            tokio::task::spawn_blocking(move || -> Result<(), SubmitError> {
                scimcp_core::fs::create_private_dir(&files.0)?;
                write_atomic(&runs_file, lines.as_bytes(), Privacy::Private)?;
                write_atomic(&files.1, script.as_bytes(), Privacy::Private)?;
                Ok(())
            })
            .await??;
            if *cancel.borrow() {
                return Err(SubmitError::Cancelled);
            }
            let submission = Submission {
                job_name: format!("scimcp-{campaign_id}"),
                script: script_path,
                chdir: campaign_dir.clone(),
                output: slurm_dir.join("%a.out"),
                error: slurm_dir.join("%a.err"),
                cpus: shape.cpus,
                memory_mb: shape.memory_mb,
                time_limit_min: shape.time_limit_min,
                array: Some(format!("0-{}%{}", ready.len() - 1, bound.max(1))),
            };
            let slurm = Arc::clone(&exec.slurm);
            let array = tokio::task::spawn_blocking(move || slurm.submit(&submission))
                .await?
                .map_err(SubmitError::RefusedArray)?;
            Ok::<_, SubmitError>((array, slurm_dir))
        }
        .await;
        let (array, slurm_dir) = match submitted {
            Ok(s) => s,
            Err(e) => {
                let message = e.to_string();
                let cancelled = *cancel.borrow();
                for run in ready {
                    let finish = if cancelled {
                        Finish::new(
                            RunState::Cancelled,
                            "cancelled",
                            "cancelled before it started",
                        )
                    } else {
                        Finish::new(RunState::Failed, "submit_failed", &message)
                    };
                    end_now(run, finish);
                }
                return None;
            }
        };
        tracing::info!(
            campaign_id,
            array,
            tasks = ready.len(),
            bound,
            "submitted a job array to Slurm"
        );
        let records: Vec<JobRecord> = (0..ready.len())
            .map(|i| JobRecord {
                schema_version: RECORD_SCHEMA_VERSION,
                job_id: format!("{array}_{i}"),
                submitted_at: now(),
                time_limit_min: shape.time_limit_min,
                memory_mb: shape.memory_mb,
                cpus: shape.cpus,
                slurm_output: slurm_dir.join(format!("{i}.out")),
                slurm_error: slurm_dir.join(format!("{i}.err")),
                campaign_id: Some(campaign_id.to_string()),
            })
            .collect();
        // One durable write per task (each flushed): a campaign of hundreds of runs would
        // hold an async worker for as many flushes, so they run on the blocking pool.
        let writes: Vec<_> = ready
            .iter()
            .zip(&records)
            .map(|(run, record)| (run.run_id.clone(), run.dir.join(JOB_RECORD), record.clone()))
            .collect();
        let recorded = tokio::task::spawn_blocking(move || {
            for (run_id, path, record) in writes {
                if let Err(e) = write_json_atomic(&path, &record) {
                    tracing::error!(run_id, "cannot record the run's job: {e}");
                }
            }
        })
        .await;
        if let Err(e) = recorded {
            tracing::error!(campaign_id, "recording the array's jobs panicked: {e}");
        }
        for (run, record) in ready.into_iter().zip(records) {
            let manager = Arc::clone(self);
            let (exec, runtime) = (Arc::clone(exec), runtime.clone());
            tokio::spawn(async move {
                let finish = manager.follow(&exec, &run.dir, &run.live, &record).await;
                let duration = super::execute::since_started(&run.live);
                manager
                    .conclude(run.dir, run.live, run.v, finish, duration, runtime)
                    .await;
            });
        }
        Some(array)
    }

    /// True when a previous server left runs whose batch jobs may still run.
    pub fn has_detached_runs(&self) -> bool {
        !self.detached_runs().is_empty()
    }

    /// Non-terminal runs with a job record that no live server owns.
    fn detached_runs(&self) -> Vec<(PathBuf, RunStatus, JobRecord)> {
        // Only runs the index holds as not terminal can be waiting for their job.
        let unsettled = self.unsettled_ids();
        let ours = self.live.lock().expect("runs lock");
        unsettled
            .into_iter()
            .filter_map(|name| {
                (is_run_id(&name) && !ours.contains_key(&name)).then(|| self.root.join(&name))
            })
            .filter_map(|dir| {
                let status = read_json::<RunStatus>(&dir.join("status.json")).ok()?;
                if status.state.is_terminal() {
                    return None;
                }
                let record = JobRecord::read(&dir)?;
                Some((dir, status, record))
            })
            .collect()
    }

    /// Re-attach to every batch job a previous server submitted and did not see end: take
    /// ownership of its run, follow the job by id, and finish the run when it ends — with
    /// the same result the first server would have published.
    pub fn reattach(self: &Arc<Self>, runtime: Option<RuntimeProbe>) -> usize {
        let exec = match self.executor.slurm() {
            Some(e) => Arc::clone(e),
            None => match SlurmExecutor::new(Default::default()) {
                // A server on the local executor still follows the jobs it finds.
                Ok(e) => e,
                Err(e) => {
                    tracing::error!("cannot follow the Slurm jobs of earlier runs: {e}");
                    return 0;
                }
            },
        };
        let mut count = 0;
        for (dir, mut status, record) in self.detached_runs() {
            let Ok(Some(owner)) = try_own(&dir) else {
                continue;
            };
            status.server_pid = self.server_pid;
            if let Err(e) = write_json_atomic(&dir.join("status.json"), &status) {
                tracing::error!(run = %dir.display(), "cannot record the new owner: {e}");
            }
            let Some(v) = read_validation(&dir) else {
                tracing::error!(run = %dir.display(), "cannot re-attach: the run's validation or plan is unreadable");
                continue;
            };
            let run_id = status.run_id.clone();
            let live = LiveRun::new(status, owner);
            self.live
                .lock()
                .expect("runs lock")
                .insert(run_id.clone(), Arc::clone(&live));
            tracing::info!(
                run_id,
                job_id = record.job_id,
                "re-attached to a Slurm job left by an earlier server"
            );
            count += 1;
            let manager = Arc::clone(self);
            let (exec, runtime) = (Arc::clone(&exec), runtime.clone());
            tokio::spawn(async move {
                let finish = manager.follow(&exec, &dir, &live, &record).await;
                let duration = super::execute::since_started(&live);
                manager
                    .conclude(dir, live, v, finish, duration, runtime)
                    .await;
            });
        }
        count
    }
}

/// The validation a run was started with, from `validation.json` and `plan.json`.
/// What the sandbox applied to a job's CLI: the report its `__sandbox` wrapper wrote in the
/// run directory on the compute node (the run directory is shared), read as a local run's is.
fn job_sandbox(dir: &Path) -> Option<scimcp_process::sandbox::Applied> {
    crate::sandbox_policy::take_report(
        crate::sandbox_policy::mode(),
        &dir.join(crate::sandbox_policy::REPORT_FILE),
    )
}

fn read_validation(dir: &Path) -> Option<Validation> {
    let mut summary: serde_json::Value = read_json(&dir.join("validation.json")).ok()?;
    let plan: serde_json::Value = read_json(&dir.join("plan.json")).ok()?;
    summary.as_object_mut()?.insert("plan".into(), plan);
    serde_json::from_value(summary).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_sandbox_report_in_its_run_dir_is_read_into_its_finish() {
        let dir = tempfile::tempdir().unwrap();
        let written = crate::sandbox_policy::off_report();
        fs_err::write(
            dir.path().join(crate::sandbox_policy::REPORT_FILE),
            serde_json::to_vec(&written).unwrap(),
        )
        .unwrap();
        assert_eq!(job_sandbox(dir.path()), Some(written));
    }
}
