//! Managed runs: each analysis runs once, in its own durable directory, with its state
//! written atomically at every transition and its result published exactly once.
//!
//! Layout of `<runs>/<run_id>/`:
//! `request.json`, `validation.json`, `plan.json`, `status.json`, `result.json`,
//! `stdout.log`, `stderr.log`, and `work/` (the CLI's working directory, holding
//! `inputs/<dataset>` and `output/`). Only files under `work/output/` are ever indexed.

pub mod artifacts;
pub mod child;
pub mod logs;
pub mod state;

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scimcp_core::fs::{Privacy, create_private_dir, publish_once, write_atomic, write_json_atomic};
use scimcp_core::{Adapter, Limits};
use tokio::io::AsyncWriteExt;
use tokio::sync::{Semaphore, watch};

use crate::envelope::{ErrorCode, ToolError};
use crate::request::LogStream;
use crate::validate::Validation;
use child::{Signal, isolated_command, process_alive, signal_tree};
use logs::{LogCapture, LogTail, file_tail};
use state::{AdapterIdentity, RECORD_SCHEMA_VERSION, RunResult, RunState, RunStatus, now};

/// How long a terminated process tree gets before it is killed outright.
const TERMINATE_GRACE: Duration = Duration::from_millis(700);
/// How long log readers may keep draining after the process is gone.
const DRAIN_GRACE: Duration = Duration::from_secs(5);
/// Bytes of stderr copied into a failed run's result.
const RESULT_STDERR_TAIL: usize = 2048;

/// A run this server process is executing.
#[derive(Debug)]
struct LiveRun {
    status: watch::Sender<RunStatus>,
    cancel: watch::Sender<bool>,
    logs: Mutex<Option<(LogCapture, LogCapture)>>,
}

/// Why the wait for the child ended.
enum Ending {
    Exited(std::process::ExitStatus),
    TimedOut,
    Cancelled,
}

/// Runs of one adapter, stored under one runs directory.
#[derive(Debug)]
pub struct RunManager {
    root: PathBuf,
    limits: Limits,
    adapter: AdapterIdentity,
    live: Mutex<HashMap<String, Arc<LiveRun>>>,
    slots: Arc<Semaphore>,
    server_pid: u32,
}

/// One line of `list_runs`.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct RunSummary {
    pub run_id: String,
    pub state: RunState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub workflow: String,
    pub adapter: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
}

/// `run-` and 16 lower-case hex digits; anything else never touches the file system.
pub fn is_run_id(id: &str) -> bool {
    id.strip_prefix("run-").is_some_and(|hex| {
        hex.len() == 16 && hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
    })
}

fn unknown_run(run_id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::UnknownRun,
        format!("no run '{run_id}'"),
        "call list_runs to see the known runs",
    )
    .field("run_id")
}

impl RunManager {
    /// Open (creating privately) the runs directory and recover runs a crashed server left.
    pub fn open(root: PathBuf, adapter: &Adapter) -> std::io::Result<RunManager> {
        create_private_dir(&root)?;
        let limits = adapter.manifest.effective_limits();
        let manager = RunManager {
            root,
            limits,
            adapter: AdapterIdentity {
                name: adapter.manifest.name.clone(),
                version: adapter.manifest.version.clone(),
                sha256: adapter.sha256.clone(),
            },
            live: Mutex::new(HashMap::new()),
            slots: Arc::new(Semaphore::new(limits.max_concurrent_runs as usize)),
            server_pid: std::process::id(),
        };
        manager.recover();
        Ok(manager)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self, run_id: &str) -> PathBuf {
        self.root.join(run_id)
    }

    /// Mark runs left `queued`/`running` by a server that is gone as `failed`
    /// (`interrupted`). A run whose result was already published takes that state.
    fn recover(&self) {
        let Ok(entries) = fs_err::read_dir(&self.root) else {
            return;
        };
        for entry in entries.flatten() {
            let run_id = entry.file_name().to_string_lossy().into_owned();
            if !is_run_id(&run_id) {
                continue;
            }
            let dir = entry.path();
            let Ok(mut status) = read_json::<RunStatus>(&dir.join("status.json")) else {
                continue;
            };
            if status.state.is_terminal()
                || (status.server_pid != self.server_pid && process_alive(status.server_pid))
            {
                continue;
            }
            if let Ok(result) = read_json::<RunResult>(&dir.join("result.json")) {
                status.state = result.state;
                status.reason = result.reason;
                status.ended_at = Some(result.ended_at);
            } else {
                status.state = RunState::Failed;
                status.reason = Some("interrupted".into());
                status.message = Some(format!(
                    "the server (pid {}) that ran this analysis stopped before it finished; start the analysis again",
                    status.server_pid
                ));
                status.ended_at = Some(now());
            }
            tracing::warn!(run_id, state = ?status.state, "recovered a run left unfinished by a stopped server");
            let _ = write_json_atomic(&dir.join("status.json"), &status);
        }
    }

    /// Live runs that are not terminal yet.
    fn pending(&self) -> usize {
        self.live
            .lock()
            .expect("runs lock")
            .values()
            .filter(|r| !r.status.borrow().state.is_terminal())
            .count()
    }

    /// Create the run directory, record the request, and start executing in the background.
    pub fn start(
        self: &Arc<Self>,
        validation: &Validation,
        request: &serde_json::Value,
    ) -> Result<RunStatus, ToolError> {
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
        if self.pending() >= self.limits.max_pending_runs as usize {
            return Err(ToolError::new(
                ErrorCode::TooManyRuns,
                format!(
                    "{} runs are already queued or running (max_pending_runs = {})",
                    self.pending(),
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
        create_private_dir(&dir).map_err(|e| internal(&e))?;
        write_json_atomic(&dir.join("request.json"), request).map_err(|e| internal(&e))?;
        write_json_atomic(&dir.join("plan.json"), &validation.plan).map_err(|e| internal(&e))?;
        let mut summary = serde_json::to_value(validation).expect("validation serializes");
        if let Some(obj) = summary.as_object_mut() {
            obj.remove("plan");
        }
        write_json_atomic(&dir.join("validation.json"), &summary).map_err(|e| internal(&e))?;
        let status = RunStatus {
            schema_version: RECORD_SCHEMA_VERSION,
            run_id: run_id.clone(),
            state: RunState::Queued,
            reason: None,
            message: None,
            adapter: self.adapter.name.clone(),
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
        };
        write_json_atomic(&dir.join("status.json"), &status).map_err(|e| internal(&e))?;
        let (status_tx, _) = watch::channel(status.clone());
        let (cancel_tx, _) = watch::channel(false);
        let live = Arc::new(LiveRun {
            status: status_tx,
            cancel: cancel_tx,
            logs: Mutex::new(None),
        });
        self.live
            .lock()
            .expect("runs lock")
            .insert(run_id.clone(), live.clone());
        let manager = Arc::clone(self);
        let validation = validation.clone();
        tokio::spawn(async move {
            manager.execute(dir, live, validation).await;
        });
        Ok(status)
    }

    fn transition(
        &self,
        dir: &Path,
        live: &LiveRun,
        update: impl FnOnce(&mut RunStatus),
    ) -> RunStatus {
        let mut status = live.status.borrow().clone();
        update(&mut status);
        if let Err(e) = write_json_atomic(&dir.join("status.json"), &status) {
            tracing::error!(run_id = status.run_id, "cannot record the run's state: {e}");
        }
        live.status.send_replace(status.clone());
        status
    }

    async fn execute(self: Arc<Self>, dir: PathBuf, live: Arc<LiveRun>, v: Validation) {
        let mut cancel_rx = live.cancel.subscribe();
        let permit = tokio::select! {
            permit = Arc::clone(&self.slots).acquire_owned() => permit.ok(),
            _ = cancel_rx.wait_for(|c| *c) => None,
        };
        let started = Instant::now();
        let Some(_permit) = permit else {
            self.finish(
                &dir,
                &live,
                &v,
                Finish::early(
                    RunState::Cancelled,
                    "cancelled",
                    "cancelled before it started",
                ),
                started,
            );
            return;
        };
        let work = dir.join(&v.plan.working_dir);
        if let Err(e) = self.prepare(&work, &v) {
            let reason = if e.code == ErrorCode::DatasetChanged {
                "dataset_changed"
            } else {
                "internal"
            };
            self.finish(
                &dir,
                &live,
                &v,
                Finish::early(RunState::Failed, reason, &e.message),
                started,
            );
            return;
        }
        let (stdout_log, stderr_log) = match (
            LogCapture::create(&dir.join("stdout.log"), self.limits.max_log_bytes),
            LogCapture::create(&dir.join("stderr.log"), self.limits.max_log_bytes),
        ) {
            (Ok(o), Ok(e)) => (o, e),
            (Err(e), _) | (_, Err(e)) => {
                self.finish(
                    &dir,
                    &live,
                    &v,
                    Finish::early(
                        RunState::Failed,
                        "internal",
                        &format!("cannot create the logs: {e}"),
                    ),
                    started,
                );
                return;
            }
        };
        *live.logs.lock().expect("logs lock") = Some((stdout_log.clone(), stderr_log.clone()));
        let mut cmd = isolated_command(Path::new(&v.plan.program), &v.plan.args, &work);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                let msg = format!("cannot start {}: {e}", v.plan.program);
                self.finish(
                    &dir,
                    &live,
                    &v,
                    Finish::early(RunState::Failed, "spawn_failed", &msg),
                    started,
                );
                return;
            }
        };
        let pid = child.id();
        self.transition(&dir, &live, |s| {
            s.state = RunState::Running;
            s.started_at = Some(now());
            s.pid = pid;
        });
        let pumps = [
            tokio::spawn(
                stdout_log
                    .clone()
                    .pump(child.stdout.take().expect("piped stdout")),
            ),
            tokio::spawn(
                stderr_log
                    .clone()
                    .pump(child.stderr.take().expect("piped stderr")),
            ),
        ];
        if let Some(mut stdin) = child.stdin.take() {
            let answers: Vec<u8> = v
                .plan
                .stdin
                .iter()
                .flat_map(|l| format!("{l}\n").into_bytes())
                .collect();
            tokio::spawn(async move {
                // A CLI that exits without reading its answers closes the pipe: that is its business.
                let _ = stdin.write_all(&answers).await;
                let _ = stdin.shutdown().await;
            });
        }
        let timeout = Duration::from_secs(v.plan.timeout_s);
        let ending = tokio::select! {
            status = child.wait() => match status {
                Ok(s) => Ending::Exited(s),
                Err(e) => {
                    tracing::error!("waiting for the run failed: {e}");
                    Ending::Cancelled
                }
            },
            _ = tokio::time::sleep(timeout) => Ending::TimedOut,
            _ = cancel_rx.wait_for(|c| *c) => Ending::Cancelled,
        };
        if let Some(pid) = pid {
            if !matches!(ending, Ending::Exited(_)) {
                signal_tree(pid, Signal::Terminate);
                if tokio::time::timeout(TERMINATE_GRACE, child.wait())
                    .await
                    .is_err()
                {
                    signal_tree(pid, Signal::Kill);
                }
            }
            // Whatever the CLI left behind in its group (workers, daemons) ends with it.
            signal_tree(pid, Signal::Kill);
        }
        let exit = child.wait().await.ok();
        for pump in pumps {
            let _ = tokio::time::timeout(DRAIN_GRACE, pump).await;
        }
        stdout_log.finish();
        stderr_log.finish();
        let mut finish = match ending {
            Ending::TimedOut => Finish::early(
                RunState::Failed,
                "timeout",
                &format!(
                    "the run exceeded its {}s timeout and was killed",
                    v.plan.timeout_s
                ),
            ),
            Ending::Cancelled => Finish::early(
                RunState::Cancelled,
                "cancelled",
                "cancelled at the client's request; the process tree was ended",
            ),
            Ending::Exited(status) if status.success() => {
                Finish::early(RunState::Succeeded, "", "")
            }
            Ending::Exited(status) => {
                let msg = format!(
                    "the scientific CLI exited with {status}; see stderr_tail or get_run_log"
                );
                Finish::early(RunState::Failed, "exit_code", &msg)
            }
        };
        if let Some(status) = exit {
            finish.exit_code = status.code();
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                finish.signal = status.signal();
            }
        }
        self.finish(&dir, &live, &v, finish, started);
    }

    /// Copy the dataset into `work/inputs/` (checking its hash on the way) and write the
    /// plan's input files.
    fn prepare(&self, work: &Path, v: &Validation) -> Result<(), ToolError> {
        let internal = |e: &dyn std::fmt::Display| {
            ToolError::internal(format!("cannot prepare the run's working directory: {e}"))
        };
        let output = work.join(&v.plan.output_dir);
        create_private_dir(&output).map_err(|e| internal(&e))?;
        let target = work.join(&v.plan.dataset.run_path);
        if let Some(parent) = target.parent() {
            create_private_dir(parent).map_err(|e| internal(&e))?;
        }
        let copied = copy_hashing(&v.dataset.path, &target).map_err(|e| internal(&e))?;
        if copied != v.dataset.sha256 {
            return Err(ToolError::new(
                ErrorCode::DatasetChanged,
                format!(
                    "dataset '{}' changed after validation: sha256 was {}, now {copied}",
                    v.dataset.reference, v.dataset.sha256
                ),
                "validate the analysis again",
            ));
        }
        for file in &v.plan.input_files {
            let path = work.join(&file.path);
            if let Some(parent) = path.parent() {
                fs_err::create_dir_all(parent).map_err(|e| internal(&e))?;
            }
            write_atomic(&path, file.content.as_bytes(), Privacy::Private)
                .map_err(|e| internal(&e))?;
        }
        Ok(())
    }

    fn finish(&self, dir: &Path, live: &LiveRun, v: &Validation, mut f: Finish, started: Instant) {
        let output = dir.join(&v.plan.working_dir).join(&v.plan.output_dir);
        let collected = if output.is_dir() {
            artifacts::collect(&output, &v.plan.artifacts, &self.limits)
        } else {
            artifacts::Collected::default()
        };
        if f.state == RunState::Succeeded && !collected.problems.is_empty() {
            let list: Vec<String> = collected
                .problems
                .iter()
                .map(|p| format!("{} ({}): {}", p.id, p.path, p.problem))
                .collect();
            f.state = RunState::PartialFailure;
            f.reason = "missing_artifacts".into();
            f.message = format!(
                "the CLI succeeded but declared artifacts are missing or invalid: {}",
                list.join("; ")
            );
        }
        if f.state == RunState::Succeeded {
            // The copy the CLI read must still be the validated bytes when we publish.
            let copy = dir.join(&v.plan.working_dir).join(&v.plan.dataset.run_path);
            match scimcp_core::hash::sha256_file(&copy) {
                Ok((sha, _)) if sha == v.dataset.sha256 => {}
                _ => {
                    f.state = RunState::Failed;
                    f.reason = "dataset_changed".into();
                    f.message = "the run's copy of the dataset changed while the CLI ran".into();
                }
            }
        }
        let stderr_tail = (f.state != RunState::Succeeded).then(|| {
            file_tail(&dir.join("stderr.log"), RESULT_STDERR_TAIL)
                .map(|t| t.text)
                .unwrap_or_default()
        });
        let status_now = live.status.borrow().clone();
        let ended_at = now();
        let reason = (!f.reason.is_empty()).then(|| f.reason.clone());
        let message = (!f.message.is_empty()).then(|| f.message.clone());
        let result = RunResult {
            schema_version: RECORD_SCHEMA_VERSION,
            run_id: status_now.run_id.clone(),
            state: f.state,
            reason: reason.clone(),
            message: message.clone(),
            adapter: self.adapter.clone(),
            workflow: v.workflow.clone(),
            validation_id: v.validation_id.clone(),
            request_sha256: v.request_sha256.clone(),
            plan_sha256: v.plan_sha256.clone(),
            dataset: v.plan.dataset.clone(),
            exit_code: f.exit_code,
            signal: f.signal,
            started_at: status_now.started_at.clone(),
            ended_at: ended_at.clone(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            run_dir: dir.display().to_string(),
            output_dir: output.display().to_string(),
            artifacts: collected.artifacts,
            problems: collected.problems,
            reported: collected.reported,
            skipped: collected.skipped,
            stderr_tail,
        };
        let mut bytes = serde_json::to_vec_pretty(&result).expect("result serializes");
        bytes.push(b'\n');
        if let Err(e) = publish_once(&dir.join("result.json"), &bytes) {
            tracing::error!(
                run_id = result.run_id,
                "cannot publish the run's result: {e}"
            );
        }
        self.transition(dir, live, |s| {
            s.state = f.state;
            s.reason = reason;
            s.message = message;
            s.ended_at = Some(ended_at);
            s.exit_code = f.exit_code;
            s.signal = f.signal;
        });
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

    /// The published result of a terminal run.
    pub fn result(&self, run_id: &str) -> Result<Option<RunResult>, ToolError> {
        if !is_run_id(run_id) {
            return Err(unknown_run(run_id));
        }
        let path = self.dir(run_id).join("result.json");
        if !path.exists() {
            return Ok(None);
        }
        read_json(&path)
            .map(Some)
            .map_err(|e| ToolError::internal(format!("cannot read {}: {e}", path.display())))
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

    /// Runs in the runs directory, newest first, paged.
    pub fn list(&self, offset: usize, limit: usize) -> (Vec<RunSummary>, usize) {
        let Ok(entries) = fs_err::read_dir(&self.root) else {
            return (Vec::new(), 0);
        };
        let mut all: Vec<RunSummary> = entries
            .flatten()
            .filter(|e| is_run_id(&e.file_name().to_string_lossy()))
            .filter_map(|e| {
                let run_id = e.file_name().to_string_lossy().into_owned();
                let s = self.status(&run_id).ok()?;
                Some(RunSummary {
                    run_id: s.run_id,
                    state: s.state,
                    reason: s.reason,
                    workflow: s.workflow,
                    adapter: s.adapter,
                    created_at: s.created_at,
                    ended_at: s.ended_at,
                })
            })
            .collect();
        all.sort_by(|a, b| {
            b.created_at
                .cmp(&a.created_at)
                .then_with(|| a.run_id.cmp(&b.run_id))
        });
        let total = all.len();
        (all.into_iter().skip(offset).take(limit).collect(), total)
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
        match file_tail(&self.dir(run_id).join(name), max) {
            Ok(t) => Ok(t),
            Err(_) => Ok(LogTail {
                text: String::new(),
                total_bytes: 0,
                truncated: false,
            }),
        }
    }
}

/// How a run ends, decided before the result is written.
struct Finish {
    state: RunState,
    reason: String,
    message: String,
    exit_code: Option<i32>,
    signal: Option<i32>,
}

impl Finish {
    fn early(state: RunState, reason: &str, message: &str) -> Finish {
        Finish {
            state,
            reason: reason.into(),
            message: message.into(),
            exit_code: None,
            signal: None,
        }
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let bytes = fs_err::read(path).map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Copy `from` to `to` (private), returning the SHA-256 of the bytes copied.
fn copy_hashing(from: &Path, to: &Path) -> std::io::Result<String> {
    use sha2_free::HashingWriter;
    let mut src = fs_err::File::open(from)?;
    let mut dst = fs_err::OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(to)?;
    let mut writer = HashingWriter::new(&mut dst);
    std::io::copy(&mut src, &mut writer)?;
    let hash = writer.finish();
    dst.flush()?;
    dst.sync_all()?;
    Ok(hash)
}

/// A writer that hashes what passes through it (core's hash module hashes readers; this
/// is its mirror for a copy that must hash exactly the bytes written).
mod sha2_free {
    use std::io::Write;

    pub struct HashingWriter<W> {
        inner: W,
        buf: Vec<u8>,
    }

    impl<W: Write> HashingWriter<W> {
        pub fn new(inner: W) -> Self {
            HashingWriter {
                inner,
                buf: Vec::new(),
            }
        }

        pub fn finish(self) -> String {
            scimcp_core::hash::sha256_hex(&self.buf)
        }
    }

    impl<W: Write> Write for HashingWriter<W> {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            let n = self.inner.write(data)?;
            self.buf.extend_from_slice(&data[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            self.inner.flush()
        }
    }
}
