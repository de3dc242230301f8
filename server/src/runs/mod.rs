//! Managed runs: each analysis runs once, in its own durable directory, with its state
//! written atomically at every transition and its result published exactly once.
//!
//! Layout of `<runs>/<run_id>/`: `request.json`, `validation.json`, `plan.json`,
//! `status.json`, `owner.lock` (held by the server running it), `stdout.log`, `stderr.log`,
//! `result.json` and `manifest.json` (a finished run), `receipt.json` (a run recovered after
//! its server died), and `work/` (the CLI's working directory: `inputs/<dataset>`,
//! `output/`). Only files under `work/output/` are ever indexed.

pub mod artifacts;
mod batch;
pub mod child;
#[cfg(test)]
mod copy_gate;
mod engine_work;
mod execute;
pub mod executor;
pub mod index;
pub mod job;
pub mod logs;
mod metrics;
pub mod progress;
pub mod prune;
pub mod quota;
mod record;
mod recovery;
mod require;
pub mod slurm;
mod start_lock;
pub mod state;
mod steps;
pub mod stream_copy;
mod streams;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scimcp_core::fs::{create_private_dir, write_json_atomic, write_json_atomic_batched};
use scimcp_core::{Adapter, Limits};
use tokio::sync::{Semaphore, watch};

pub use record::{RunSummary, is_run_id};
use record::{read_json, try_own};
use start_lock::{START_LOCK_TIMEOUT, start_lock};

use crate::envelope::{ErrorCode, ToolError};
use crate::request::LogStream;
use crate::runtime::RuntimeProbe;
use crate::validate::Validation;
use logs::{LogCapture, LogTail, file_tail};
use state::{AdapterIdentity, RECORD_SCHEMA_VERSION, RunResult, RunState, RunStatus, now};

/// A run this server process is executing.
#[derive(Debug)]
struct LiveRun {
    status: watch::Sender<RunStatus>,
    cancel: watch::Sender<bool>,
    logs: Mutex<Option<(LogCapture, LogCapture)>>,
    /// Held until the run is terminal: another server seeing it locked knows the run is
    /// alive, whatever happened to pids.
    owner_lock: Mutex<Option<fs_err::File>>,
    /// Set once the run's process lives outside this server (a submitted batch job): a
    /// stopping server leaves it running, and the next server re-attaches to it.
    detached: std::sync::atomic::AtomicBool,
}

impl LiveRun {
    fn new(status: RunStatus, owner: fs_err::File) -> Arc<LiveRun> {
        Arc::new(LiveRun {
            status: watch::channel(status).0,
            cancel: watch::channel(false).0,
            logs: Mutex::new(None),
            owner_lock: Mutex::new(Some(owner)),
            detached: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn is_detached(&self) -> bool {
        self.detached.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Runs of one adapter, stored under one runs directory.
#[derive(Debug)]
pub struct RunManager {
    root: PathBuf,
    /// The adapter's persistent state directory (`{state_dir}`), beside `runs/`.
    state_dir: PathBuf,
    limits: Limits,
    adapter: Arc<Adapter>,
    live: Mutex<HashMap<String, Arc<LiveRun>>>,
    slots: Arc<Semaphore>,
    server_pid: u32,
    /// Set by [`RunManager::shutdown`]: a run stopped from now on was interrupted by the
    /// server stopping, not cancelled by a client.
    stopping: std::sync::atomic::AtomicBool,
    /// The run index (runs/index.rs): every run's `list_runs` line, so that start-up
    /// recovery, pending counts and listings read the status of the runs that are not
    /// terminal only, instead of every run's in a long history.
    index: index::Index,
    /// Where runs execute.
    executor: executor::Executor,
    /// Each workflow's `[workflow.resources]`, for a scheduler.
    resources: HashMap<String, scimcp_core::manifest::Resources>,
}

fn unknown_run(run_id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::UnknownRun,
        format!("no run '{run_id}'"),
        "call list_runs to see the known runs",
    )
    .field("run_id")
}

/// A run directory being created: removed on drop unless [`NewRunDir::keep`] was called.
struct NewRunDir {
    path: PathBuf,
    keep: bool,
}

impl NewRunDir {
    fn create(path: &Path) -> std::io::Result<NewRunDir> {
        create_private_dir(path)?;
        Ok(NewRunDir {
            path: path.to_path_buf(),
            keep: false,
        })
    }

    fn keep(&mut self) {
        self.keep = true;
    }
}

impl Drop for NewRunDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs_err::remove_dir_all(&self.path);
        }
    }
}

impl RunManager {
    /// The adapter as a run's result names it.
    fn adapter_identity(&self) -> AdapterIdentity {
        AdapterIdentity {
            name: self.adapter.manifest.name.clone(),
            version: self.adapter.manifest.version.clone(),
            sha256: self.adapter.sha256().to_string(),
        }
    }

    /// Open (creating privately) the runs directory and recover runs a dead server left
    /// (batch jobs are re-attached later, by [`RunManager::reattach`]).
    pub fn open(
        root: PathBuf,
        adapter: &Arc<Adapter>,
        executor: executor::Executor,
    ) -> std::io::Result<RunManager> {
        create_private_dir(&root)?;
        let index = index::Index::open(&root).map_err(std::io::Error::other)?;
        let limits = adapter.manifest.effective_limits();
        let state_dir = root
            .parent()
            .map_or_else(|| root.join("state"), |p| p.join("state"))
            .join(&adapter.manifest.name);
        let manager = RunManager {
            root,
            state_dir,
            limits,
            adapter: Arc::clone(adapter),
            live: Mutex::new(HashMap::new()),
            slots: Arc::new(Semaphore::new(limits.max_concurrent_runs as usize)),
            server_pid: std::process::id(),
            stopping: std::sync::atomic::AtomicBool::new(false),
            index,
            executor,
            resources: adapter
                .manifest
                .workflows
                .iter()
                .map(|w| (w.id.clone(), w.resources.unwrap_or_default()))
                .collect(),
        };
        recovery::recover(&manager.root, manager.server_pid, &manager.index);
        // The terminal runs' lines load while the server answers its first requests.
        manager.index.prefetch();
        Ok(manager)
    }

    fn dir(&self, run_id: &str) -> PathBuf {
        self.root.join(run_id)
    }

    /// Create the run directory, record the request, and start executing in the background.
    pub fn start(
        self: &Arc<Self>,
        validation: &Validation,
        request: &serde_json::Value,
        runtime: Option<RuntimeProbe>,
    ) -> Result<RunStatus, ToolError> {
        let (status, dir, live) = self.create(validation, request, true)?;
        let manager = Arc::clone(self);
        let validation = validation.clone();
        tokio::spawn(async move {
            manager.execute(dir, live, validation, runtime).await;
        });
        Ok(status)
    }

    /// The executor runs run on.
    pub fn executor(&self) -> &executor::Executor {
        &self.executor
    }

    /// Create a run's directory and records (state `queued`) and register it as live;
    /// nothing executes yet. `limited`: refuse when `max_pending_runs` runs are already
    /// queued or running (a campaign's job array bounds itself instead).
    fn create(
        &self,
        validation: &Validation,
        request: &serde_json::Value,
        limited: bool,
    ) -> Result<(RunStatus, PathBuf, Arc<LiveRun>), ToolError> {
        if !validation.ready {
            let why = validation
                .blockers
                .iter()
                .map(|b| b.message.as_str())
                .collect::<Vec<_>>()
                .join("; ");
            return Err(ToolError::new(
                ErrorCode::NotReady,
                format!("the analysis cannot start: {why}"),
                "resolve the blockers (get_environment shows the runtime), then start again",
            ));
        }
        if let Some(refusal) =
            crate::plan_steps::executor_refusal(&validation.plan, self.executor.slurm().is_some())
        {
            return Err(ToolError::new(
                ErrorCode::NotReady,
                refusal.message,
                "run this workflow on a server with the local executor",
            ));
        }
        // The disk quota (serve --max-history-bytes / --min-free-bytes), before anything is
        // written and outside the start locks (a refusal may measure the history again).
        quota::admit().map_err(|refusal| {
            ToolError::new(ErrorCode::NotReady, refusal.to_string(), refusal.hint())
        })?;
        // Checked and inserted under one lock so concurrent starts cannot overshoot: this
        // process's lock, and the runs directory's start lock for servers sharing it.
        let mut live_runs = self.live.lock().expect("runs lock");
        let _starting = self.start_lock()?;
        let pending = live_runs
            .values()
            .filter(|r| !r.status.borrow().state.is_terminal())
            .count()
            + self.pending_elsewhere(&live_runs);
        if limited && pending >= self.limits.max_pending_runs as usize {
            return Err(ToolError::new(
                ErrorCode::TooManyRuns,
                format!(
                    "{pending} runs are already queued or running in {} (max_pending_runs = {}, counted across every server sharing it)",
                    self.root.display(),
                    self.limits.max_pending_runs
                ),
                "wait for a run to finish (get_run_result) or cancel one (cancel_run), then start again",
            ));
        }
        let run_id = format!("run-{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
        let dir = self.dir(&run_id);
        let internal = |e: &dyn std::fmt::Display| {
            ToolError::internal(format!(
                "cannot create the run directory {}: {e}",
                dir.display()
            ))
        };
        // Until the run is recorded, a failure removes its directory: no folder holding only
        // a lock is left behind.
        let mut new_dir = NewRunDir::create(&dir).map_err(|e| internal(&e))?;
        let owner = try_own(&dir)
            .map_err(|e| internal(&e))?
            .ok_or_else(|| internal(&"the new run is locked by another process"))?;
        // Each record is flushed before it is renamed into place; the directory once, by the
        // status write below: a crash before it leaves a directory without a status, which
        // nothing lists or recovers.
        write_json_atomic_batched(&dir.join("request.json"), request).map_err(|e| internal(&e))?;
        write_json_atomic_batched(&dir.join("plan.json"), &validation.plan)
            .map_err(|e| internal(&e))?;
        let mut summary = serde_json::to_value(validation).expect("validation serializes");
        if let Some(obj) = summary.as_object_mut() {
            obj.remove("plan");
        }
        write_json_atomic_batched(&dir.join("validation.json"), &summary)
            .map_err(|e| internal(&e))?;
        let status = RunStatus {
            schema_version: RECORD_SCHEMA_VERSION,
            run_id: run_id.clone(),
            state: RunState::Queued,
            reason: None,
            message: None,
            adapter: self.adapter.manifest.name.clone(),
            workflow: validation.workflow.clone(),
            validation_id: validation.validation_id.clone(),
            plan_sha256: validation.plan_sha256.clone(),
            created_at: now(),
            started_at: None,
            ended_at: None,
            pid: None,
            exit_code: None,
            signal: None,
            server_pid: self.server_pid,
            job: None,
        };
        write_json_atomic(&dir.join("status.json"), &status).map_err(|e| internal(&e))?;
        // Still under the start lock: the index records the directory change this made.
        self.index.created(&status, request);
        new_dir.keep();
        let live = LiveRun::new(status.clone(), owner);
        live_runs.insert(run_id, live.clone());
        drop(live_runs);
        Ok((status, dir, live))
    }

    /// The runs directory's start lock: held while a start counts pending runs and creates
    /// its directory, so two servers sharing the directory cannot both take the last slot.
    fn start_lock(&self) -> Result<fs_err::File, ToolError> {
        start_lock(&self.root, START_LOCK_TIMEOUT)
    }

    /// Runs queued or running under another server sharing this directory: a non-terminal
    /// status whose owner lock a live process holds. (A stale one is recovery's business,
    /// not a slot.)
    fn pending_elsewhere(&self, ours: &HashMap<String, Arc<LiveRun>>) -> usize {
        let mut pending = 0;
        // Only what the index holds as not terminal: the caller holds the start lock, so no
        // other server is creating a run the index has not seen.
        for entry in self.index.unsettled() {
            if ours.contains_key(&entry.run_id) || !is_run_id(&entry.run_id) {
                continue;
            }
            let dir = self.dir(&entry.run_id);
            match read_json::<RunStatus>(&dir.join("status.json")) {
                Ok(s) if s.state.is_terminal() => self.index.changed(&s),
                Ok(_) => pending += usize::from(matches!(try_own(&dir), Ok(None))),
                Err(_) => {}
            }
        }
        pending
    }

    fn live_run(&self, run_id: &str) -> Option<Arc<LiveRun>> {
        self.live.lock().expect("runs lock").get(run_id).cloned()
    }

    /// The run's current status, from memory when this server runs it, else from disk.
    pub fn status(&self, run_id: &str) -> Result<RunStatus, ToolError> {
        if !is_run_id(run_id) {
            return Err(unknown_run(run_id));
        }
        if let Some(live) = self.live_run(run_id) {
            return Ok(live.status.borrow().clone());
        }
        read_json::<RunStatus>(&self.dir(run_id).join("status.json"))
            .map_err(|_| unknown_run(run_id))
    }

    /// Wait up to `wait` for the run to reach a terminal state; returns the latest status.
    pub async fn wait_terminal(
        &self,
        run_id: &str,
        wait: Duration,
    ) -> Result<RunStatus, ToolError> {
        let status = self.status(run_id)?;
        if status.state.is_terminal() {
            return Ok(status);
        }
        let Some(live) = self.live_run(run_id) else {
            return Ok(status);
        };
        let mut rx = live.status.subscribe();
        let _ = tokio::time::timeout(wait, rx.wait_for(|s| s.state.is_terminal())).await;
        let latest = rx.borrow().clone();
        Ok(latest)
    }

    /// The published result of a terminal run, with the SHA-256 of its file.
    pub fn result(&self, run_id: &str) -> Result<Option<(RunResult, String)>, ToolError> {
        if !is_run_id(run_id) {
            return Err(unknown_run(run_id));
        }
        let path = self.dir(run_id).join("result.json");
        let bytes = match fs_err::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(ToolError::internal(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        let result = serde_json::from_slice(&bytes).map_err(|e| {
            ToolError::internal(format!("{} is not a valid result: {e}", path.display()))
        })?;
        Ok(Some((result, scimcp_core::hash::sha256_hex(&bytes))))
    }

    /// Ask a run to stop and wait (briefly) until its process tree is gone. Returns the
    /// status and whether this call changed anything.
    pub async fn cancel(&self, run_id: &str) -> Result<(RunStatus, bool), ToolError> {
        let status = self.status(run_id)?;
        if status.state.is_terminal() {
            return Ok((status, false));
        }
        let Some(live) = self.live_run(run_id) else {
            return Err(ToolError::new(
                ErrorCode::UnknownRun,
                format!("run '{run_id}' belongs to another server process (pid {}), which must cancel it", status.server_pid),
                "cancel it from the client that started it",
            )
            .field("run_id"));
        };
        live.cancel.send_replace(true);
        let status = self.wait_terminal(run_id, Duration::from_secs(10)).await?;
        Ok((status, true))
    }

    /// Ask a queued or running run to stop without waiting (a campaign cancels many at once
    /// and then waits for all); false when this server does not run it.
    pub fn request_cancel(&self, run_id: &str) -> bool {
        match self.live_run(run_id) {
            Some(live) if !live.status.borrow().state.is_terminal() => {
                live.cancel.send_replace(true);
                true
            }
            _ => false,
        }
    }

    /// The server is stopping (its client hung up, or SIGINT/SIGTERM): end every queued or
    /// running run's process tree and record it `failed` (`interrupted`) with its result,
    /// waiting at most `wait` in all. Without this, a stopping server would leave the CLI's
    /// own children running and the run reading `running` until the next server's recovery.
    pub async fn shutdown(&self, wait: Duration) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let live: Vec<(String, Arc<LiveRun>)> = self
            .live
            .lock()
            .expect("runs lock")
            .iter()
            // A submitted batch job outlives this server on purpose: the next one re-attaches.
            .filter(|(_, r)| !r.status.borrow().state.is_terminal() && !r.is_detached())
            .map(|(id, r)| (id.clone(), r.clone()))
            .collect();
        if live.is_empty() {
            return;
        }
        tracing::info!("stopping: ending {} live run(s)", live.len());
        for (_, run) in &live {
            run.cancel.send_replace(true);
        }
        let all = async {
            for (run_id, run) in &live {
                let mut rx = run.status.subscribe();
                if rx.wait_for(|s| s.state.is_terminal()).await.is_err() {
                    tracing::warn!("run {run_id} ended without a terminal status");
                }
            }
        };
        if tokio::time::timeout(wait, all).await.is_err() {
            tracing::warn!(
                "runs still ending after {}s; the next server start records them interrupted",
                wait.as_secs()
            );
        }
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The current statuses of the runs this server executes that are not terminal.
    fn live_statuses(&self) -> HashMap<String, RunStatus> {
        self.live
            .lock()
            .expect("runs lock")
            .iter()
            .map(|(id, r)| (id.clone(), r.status.borrow().clone()))
            .filter(|(_, s)| !s.state.is_terminal())
            .collect()
    }

    fn index_failed(&self, e: &index::IndexError) -> ToolError {
        ToolError::internal(format!(
            "cannot read the run index of {}: {e}",
            self.root.display()
        ))
    }

    /// Every run in the runs directory, newest first.
    pub fn list(&self) -> Vec<RunSummary> {
        let live = self.live_statuses();
        self.index.summaries(&live).unwrap_or_else(|e| {
            tracing::error!("{}", self.index_failed(&e).message);
            Vec::new()
        })
    }

    /// One page of the runs matching `filter`, newest first, from the index.
    pub fn list_page(
        &self,
        filter: &index::Filter,
        start: &index::Start,
        limit: usize,
    ) -> Result<index::Listed, ToolError> {
        let live = self.live_statuses();
        self.index
            .list(filter, start, limit, &live)
            .map_err(|e| self.index_failed(&e))
    }

    /// Runs the index holds as not terminal (their statuses are read again by the caller).
    pub(crate) fn unsettled_ids(&self) -> Vec<String> {
        self.index
            .unsettled()
            .into_iter()
            .map(|e| e.run_id)
            .collect()
    }

    /// Record a run's new state in the index, after its `status.json` was written.
    pub(crate) fn indexed(&self, status: &RunStatus) {
        self.index.changed(status);
    }

    /// The tail of a run's stdout or stderr.
    pub fn log_tail(
        &self,
        run_id: &str,
        stream: LogStream,
        max: usize,
    ) -> Result<LogTail, ToolError> {
        self.status(run_id)?;
        if let Some(live) = self.live_run(run_id)
            && let Some((out, err)) = live.logs.lock().expect("logs lock").as_ref()
            && !live.status.borrow().state.is_terminal()
        {
            return Ok(match stream {
                LogStream::Stdout => out.tail(max),
                LogStream::Stderr => err.tail(max),
            });
        }
        let name = match stream {
            LogStream::Stdout => "stdout.log",
            LogStream::Stderr => "stderr.log",
        };
        Ok(
            file_tail(&self.dir(run_id).join(name), max).unwrap_or(LogTail {
                text: String::new(),
                total_bytes: 0,
                truncated: false,
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(run_id: &str, state: RunState, created_at: &str) -> RunStatus {
        RunStatus {
            schema_version: RECORD_SCHEMA_VERSION,
            run_id: run_id.into(),
            state,
            reason: None,
            message: None,
            adapter: "refsci".into(),
            workflow: "regression".into(),
            validation_id: "val-0".into(),
            plan_sha256: String::new(),
            created_at: created_at.into(),
            started_at: None,
            ended_at: None,
            pid: None,
            exit_code: None,
            signal: None,
            server_pid: 1,
            job: None,
        }
    }

    /// Terminal runs are remembered; a run another server is still running is read again
    /// at every listing and every pending count, until it is terminal too.
    #[test]
    fn terminal_runs_are_remembered_and_live_ones_read_again() {
        let root = tempfile::tempdir().unwrap();
        let runs = root.path().join("runs");
        let (done, elsewhere) = ("run-00000000000000aa", "run-00000000000000bb");
        for (id, state, at) in [
            (done, RunState::Succeeded, "2026-01-01T00:00:00Z"),
            (elsewhere, RunState::Running, "2026-01-02T00:00:00Z"),
        ] {
            fs_err::create_dir_all(runs.join(id)).unwrap();
            write_json_atomic(&runs.join(id).join("status.json"), &status(id, state, at)).unwrap();
        }
        // Another server owns the running one: its owner lock is held (a second open file
        // description in this process conflicts like another process would).
        let _other_server = try_own(&runs.join(elsewhere)).unwrap().unwrap();
        let adapter = Arc::new(scimcp_core::manifest::resolve("refsci").unwrap());
        let manager = RunManager::open(runs.clone(), &adapter, executor::Executor::Local).unwrap();

        let states = |m: &RunManager| {
            m.list()
                .into_iter()
                .map(|s| (s.run_id, s.state))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            states(&manager),
            [
                (elsewhere.to_string(), RunState::Running),
                (done.to_string(), RunState::Succeeded)
            ]
        );
        assert_eq!(manager.pending_elsewhere(&HashMap::new()), 1);

        // The other server finishes its run.
        write_json_atomic(
            &runs.join(elsewhere).join("status.json"),
            &status(elsewhere, RunState::Failed, "2026-01-02T00:00:00Z"),
        )
        .unwrap();
        assert_eq!(manager.pending_elsewhere(&HashMap::new()), 0);
        assert_eq!(
            states(&manager)[0],
            (elsewhere.to_string(), RunState::Failed)
        );
        // Both are terminal in the index now: the next start reads neither.
        assert!(manager.index.unsettled().is_empty());
    }

    #[test]
    fn a_held_start_lock_times_out_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let held = start_lock(dir.path(), Duration::from_secs(5)).unwrap();
        let err = start_lock(dir.path(), Duration::from_millis(100)).unwrap_err();
        let text = format!("{err:?}");
        assert!(text.contains(".start.lock"), "{text}");
        assert!(text.contains("another scimcp server"), "{text}");
        drop(held);
        start_lock(dir.path(), Duration::from_millis(100)).unwrap();
    }
}
