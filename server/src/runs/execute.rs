//! Executing one run: prepare the working directory, start the CLI isolated, wait for exit,
//! timeout or cancel, then index the artifacts, publish the result once and write the run
//! manifest that binds request, validation, plan, runtime identity, inputs and artifacts.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use scimcp_core::fs::{
    Privacy, create_private_dir, publish_once, write_atomic, write_json_atomic,
    write_json_atomic_batched,
};

use super::logs::{LogCapture, file_tail};
use super::state::{RECORD_SCHEMA_VERSION, RunResult, RunState, RunStatus, now};
use super::{LiveRun, RunManager, artifacts};
use crate::envelope::{ErrorCode, ToolError};
use crate::runtime::RuntimeProbe;
use crate::validate::Validation;

/// Bytes of stderr copied into a failed run's result.
const RESULT_STDERR_TAIL: usize = 2048;

/// How a run ends, decided before the result is written.
pub(super) struct Finish {
    pub(super) state: RunState,
    pub(super) reason: String,
    pub(super) message: String,
    pub(super) exit_code: Option<i32>,
    pub(super) signal: Option<i32>,
    /// The step of a stepped run that failed (and ended it).
    pub(super) failed_step: Option<String>,
    /// What the sandbox applied to the (last started) CLI.
    pub(super) sandbox: Option<scimcp_process::sandbox::Applied>,
}

impl Finish {
    pub(super) fn new(state: RunState, reason: &str, message: &str) -> Finish {
        Finish {
            state,
            reason: reason.into(),
            message: message.into(),
            exit_code: None,
            signal: None,
            failed_step: None,
            sandbox: None,
        }
    }
}

impl RunManager {
    pub(super) fn transition(
        &self,
        dir: &Path,
        live: &LiveRun,
        update: impl FnOnce(&mut RunStatus),
    ) -> RunStatus {
        let mut status = live.status.borrow().clone();
        update(&mut status);
        if let Err(e) = write_json_atomic(&dir.join("status.json"), &status) {
            tracing::error!(run_id = status.run_id, "cannot record the run's state: {e}");
        } else {
            self.indexed(&status);
        }
        live.status.send_replace(status.clone());
        status
    }

    /// The move to `running`, from async code: the write runs on the blocking pool, and the
    /// new state is published once it is written. The file is flushed but not its directory
    /// (one disk flush instead of two): should a crash lose the rename, the status reads
    /// `queued`, whole, and recovery ends the run as interrupted all the same (a crash that
    /// loses it also ended the CLI).
    pub(super) async fn transition_off_workers(
        &self,
        dir: &Path,
        live: &LiveRun,
        update: impl FnOnce(&mut RunStatus),
    ) -> RunStatus {
        let mut status = live.status.borrow().clone();
        update(&mut status);
        let (path, record) = (dir.join("status.json"), status.clone());
        let written =
            tokio::task::spawn_blocking(move || write_json_atomic_batched(&path, &record)).await;
        match written {
            Ok(Ok(())) => self.indexed(&status),
            Ok(Err(e)) => {
                tracing::error!(run_id = status.run_id, "cannot record the run's state: {e}");
            }
            Err(e) => {
                tracing::error!(
                    run_id = status.run_id,
                    "recording the run's state panicked: {e}"
                );
            }
        }
        live.status.send_replace(status.clone());
        status
    }

    pub(super) async fn execute(
        self: Arc<Self>,
        dir: PathBuf,
        live: Arc<LiveRun>,
        v: Validation,
        runtime: Option<RuntimeProbe>,
    ) {
        let started = Instant::now();
        let finish = match self.executor.slurm() {
            None => self.run_child(&dir, &live, &v).await,
            Some(slurm) => {
                let slurm = Arc::clone(slurm);
                self.run_batch(&slurm, &dir, &live, &v).await
            }
        };
        let duration = match self.executor {
            super::executor::Executor::Local => started.elapsed(),
            super::executor::Executor::Slurm(_) => since_started(&live),
        };
        self.conclude(dir, live, v, finish, duration, runtime).await;
    }

    /// Index the artifacts, publish the result once, and record the terminal state.
    pub(super) async fn conclude(
        self: &Arc<Self>,
        dir: PathBuf,
        live: Arc<LiveRun>,
        v: Validation,
        finish: Finish,
        duration: Duration,
        runtime: Option<RuntimeProbe>,
    ) {
        // An engine judges the exit status itself and writes the output object the
        // collector then indexes with the declared artifacts.
        let (finish, engine_artifacts) = match (&v.plan.engine, &self.adapter.engine) {
            (Some(command), Some(engine)) => {
                let (work, command, engine) = (
                    dir.join(&v.plan.working_dir),
                    command.clone(),
                    Arc::clone(engine),
                );
                let paths = self.run_paths(&work);
                tokio::task::spawn_blocking(move || {
                    super::engine_work::conclude(&*engine, &command, &work, &paths, finish)
                })
                .await
                .unwrap_or_else(|e| {
                    let message = format!("reading the tool's outputs panicked: {e}");
                    (
                        Finish::new(RunState::Failed, "internal", &message),
                        Vec::new(),
                    )
                })
            }
            _ => (finish, Vec::new()),
        };
        // Indexing up to max_artifacts files (each hashed), re-hashing the run's copy of the
        // dataset and writing the result, manifest and status durably are blocking work:
        // off the async workers, so the end of a large run never holds up other tool calls.
        let collected = {
            let work = dir.join(&v.plan.working_dir);
            let (mut plan, limits) = (v.plan.clone(), self.limits);
            plan.artifacts.extend(engine_artifacts);
            tokio::task::spawn_blocking(move || {
                // Stream copies are cut to their bound before they are hashed.
                let cut = super::stream_copy::settle(&plan, &work, limits.max_artifact_bytes);
                let mut c = artifacts::collect(&work, &plan.output_dir, &plan.artifacts, &limits);
                c.problems.extend(cut);
                super::metrics::read_metrics(&plan, &work, &mut c);
                c
            })
            .await
            .unwrap_or_default()
        };
        let run_id = live.status.borrow().run_id.clone();
        let manager = Arc::clone(self);
        let recorded = tokio::task::spawn_blocking(move || {
            manager.finish(
                &dir,
                &live,
                &v,
                (finish, collected),
                duration,
                runtime.as_ref(),
            );
        })
        .await;
        if let Err(e) = recorded {
            tracing::error!(run_id, "recording the run's end panicked: {e}");
        }
    }

    /// Copy the dataset and write the input files off the async workers; a failure is the
    /// run's ending.
    pub(super) async fn prepare_work(&self, dir: &Path, v: &Validation) -> Result<(), Finish> {
        let work = dir.join(&v.plan.working_dir);
        let paths = self.run_paths(&work);
        let prepared = {
            let (work, v, max) = (work.clone(), v.clone(), self.limits.max_dataset_bytes);
            tokio::task::spawn_blocking(move || prepare(&work, &v, max, &paths))
                .await
                .unwrap_or_else(|e| {
                    Err(ToolError::internal(format!(
                        "preparing the run panicked: {e}"
                    )))
                })
        };
        prepared.map_err(|e| {
            let input = e.field.as_deref().is_some_and(|f| f.starts_with("inputs."));
            let reason = match e.code {
                ErrorCode::DatasetChanged if input => crate::inputs::copy::INPUT_CHANGED,
                ErrorCode::DatasetChanged => "dataset_changed",
                _ => "internal",
            };
            Finish::new(RunState::Failed, reason, &e.message)
        })
    }

    pub(super) fn run_paths(&self, work: &Path) -> crate::plan::RunPaths {
        crate::plan::RunPaths {
            work_dir: std::path::absolute(work).unwrap_or_else(|_| work.to_path_buf()),
            state_dir: self.state_dir.clone(),
        }
    }

    async fn run_child(&self, dir: &Path, live: &LiveRun, v: &Validation) -> Finish {
        let mut cancel_rx = live.cancel.subscribe();
        let permit = tokio::select! {
            permit = Arc::clone(&self.slots).acquire_owned() => permit.ok(),
            _ = cancel_rx.wait_for(|c| *c) => None,
        };
        let Some(_permit) = permit else {
            if self.is_stopping() {
                return Finish::new(
                    RunState::Failed,
                    "interrupted",
                    "the server stopped before the run started (its client disconnected or it \
                     was asked to stop); start the analysis again",
                );
            }
            return Finish::new(
                RunState::Cancelled,
                "cancelled",
                "cancelled before it started",
            );
        };
        let work = dir.join(&v.plan.working_dir);
        // Copying and hashing a dataset of up to the size limit is blocking work: off the
        // async workers, so other tool calls keep their latency while a large run starts.
        let paths = self.run_paths(&work);
        if let Err(finish) = self.prepare_work(dir, v).await {
            return finish;
        }
        let logs = (
            LogCapture::create(&dir.join("stdout.log"), self.limits.max_log_bytes),
            LogCapture::create(&dir.join("stderr.log"), self.limits.max_log_bytes),
        );
        let (stdout_log, stderr_log) = match logs {
            (Ok(o), Ok(e)) => (o, e),
            (Err(e), _) | (_, Err(e)) => {
                return Finish::new(
                    RunState::Failed,
                    "internal",
                    &format!("cannot create the logs: {e}"),
                );
            }
        };
        *live.logs.lock().expect("logs lock") = Some((stdout_log.clone(), stderr_log.clone()));
        self.run_steps(
            dir,
            live,
            v,
            &paths,
            (stdout_log, stderr_log),
            &mut cancel_rx,
        )
        .await
    }

    fn finish(
        &self,
        dir: &Path,
        live: &LiveRun,
        v: &Validation,
        (mut f, collected): (Finish, artifacts::Collected),
        duration: Duration,
        runtime: Option<&RuntimeProbe>,
    ) {
        let work = dir.join(&v.plan.working_dir);
        let output = work.join(&v.plan.output_dir);
        if let Some(success) = &v.plan.success {
            f = success_predicate(&work, success, f);
        }
        f = check_requires(&v.plan, &work, &collected.reported, f);
        if f.state == RunState::Succeeded && !collected.problems.is_empty() {
            let list: Vec<String> = collected
                .problems
                .iter()
                .map(|p| format!("{} ({}): {}", p.id, p.path, p.problem))
                .collect();
            let metrics = collected
                .problems
                .iter()
                .any(|p| p.problem.starts_with("missing metric"));
            f = Finish {
                state: RunState::PartialFailure,
                reason: "missing_artifacts".into(),
                message: format!(
                    "the CLI succeeded but declared {} missing or invalid: {}",
                    if metrics {
                        "artifacts or metrics are"
                    } else {
                        "artifacts are"
                    },
                    list.join("; ")
                ),
                ..f
            };
        }
        // The copy the CLI read must still be the validated bytes when the result is published.
        let input_now = v.plan.dataset.as_ref().and_then(|d| {
            scimcp_core::hash::sha256_file(&work.join(&d.run_path))
                .map(|(h, _)| h)
                .ok()
        });
        if f.state == RunState::Succeeded
            && let Some(dataset) = &v.plan.dataset
            && input_now.as_deref() != Some(dataset.sha256.as_str())
        {
            f = Finish {
                state: RunState::Failed,
                reason: "dataset_changed".into(),
                message: "the run's copy of the dataset changed while the CLI ran".into(),
                ..f
            };
        }
        let inputs_now = crate::inputs::copy::hashes_now(&work, &v.plan.inputs);
        if f.state == RunState::Succeeded
            && let Some(message) =
                crate::inputs::copy::changed_since_validation(&v.plan.inputs, &inputs_now)
        {
            f = Finish {
                state: RunState::Failed,
                reason: crate::inputs::copy::INPUT_CHANGED.into(),
                message,
                ..f
            };
        }
        let stderr_tail = (f.state != RunState::Succeeded).then(|| {
            file_tail(&dir.join("stderr.log"), RESULT_STDERR_TAIL)
                .map(|t| t.text)
                .unwrap_or_default()
        });
        if f.reason == "exit_code"
            && let Some(tail) = &stderr_tail
        {
            f = sandbox_reading(f, tail);
        }
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
            adapter: self.adapter_identity(),
            workflow: v.workflow.clone(),
            validation_id: v.validation_id.clone(),
            request_sha256: v.request_sha256.clone(),
            plan_sha256: v.plan_sha256.clone(),
            dataset: v.plan.dataset.clone(),
            inputs: v.plan.inputs.clone(),
            failed_step: f.failed_step.clone(),
            exit_code: f.exit_code,
            signal: f.signal,
            started_at: status_now.started_at.clone(),
            ended_at: ended_at.clone(),
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            run_dir: dir.display().to_string(),
            output_dir: output.display().to_string(),
            artifacts: collected.artifacts,
            problems: collected.problems,
            reported: collected.reported,
            skipped: collected.skipped,
            stderr_tail,
            sandbox: f.sandbox.clone(),
        };
        let mut bytes = serde_json::to_vec_pretty(&result).expect("result serializes");
        bytes.push(b'\n');
        match publish_once(&dir.join("result.json"), &bytes) {
            Ok(()) => {
                write_run_manifest(dir, v, &result, &bytes, runtime, (input_now, &inputs_now))
            }
            Err(e) => tracing::error!(
                run_id = result.run_id,
                "cannot publish the run's result: {e}"
            ),
        }
        self.transition(dir, live, |s| {
            s.state = f.state;
            s.reason = reason;
            s.message = message;
            s.ended_at = Some(ended_at);
            s.exit_code = f.exit_code;
            s.signal = f.signal;
        });
        // Terminal: release ownership so a later server may treat the run as settled.
        live.owner_lock.lock().expect("owner lock").take();
    }
}

/// Hold a run that exited 0 to the plan's `[[workflow.require]]` (see [`super::require`]):
/// the first that does not hold makes it `failed` with reason `success_predicate`; any other
/// ending is left as it is.
pub(super) fn check_requires(
    plan: &crate::plan::Plan,
    work: &Path,
    reported: &std::collections::BTreeMap<
        String,
        std::collections::BTreeMap<String, serde_json::Value>,
    >,
    f: Finish,
) -> Finish {
    if f.state != RunState::Succeeded {
        return f;
    }
    match super::require::unmet_requirement(plan, work, reported) {
        Some(message) => Finish {
            state: RunState::Failed,
            reason: "success_predicate".into(),
            message,
            ..f
        },
        None => f,
    }
}

/// How a run whose CLI exited (on its own) ends: `succeeded` on status 0, else `failed`
/// (`exit_code`) with how it ended.
pub(super) fn exited(cli: Option<crate::guard::CliStatus>) -> Finish {
    if cli.is_some_and(|c| c.exit_code == Some(0)) {
        return Finish::new(RunState::Succeeded, "", "");
    }
    Finish::new(
        RunState::Failed,
        "exit_code",
        &format!(
            "the scientific CLI {}; see stderr_tail or get_run_log",
            match cli {
                Some(crate::guard::CliStatus {
                    exit_code: Some(c), ..
                }) => format!("exited with status {c}"),
                Some(crate::guard::CliStatus {
                    signal: Some(s), ..
                }) => format!("was ended by signal {s}"),
                _ => "ended without an exit status".to_string(),
            }
        ),
    )
}

/// A failed CLI's ending as the sandbox explains it: the wrapper's own refusal (exit 125, no
/// report: `--sandbox required` on a machine that cannot enforce a protection) becomes
/// `sandbox_unavailable`; a permission error under an applied sandbox names what it denied.
fn sandbox_reading(f: Finish, stderr_tail: &str) -> Finish {
    use crate::sandbox_policy::{denial_message, refusal};
    use scimcp_process::sandbox::State;
    if f.sandbox.is_none()
        && f.exit_code == Some(i32::from(scimcp_core::exit::WRAPPER_FAILED))
        && let Some(why) = refusal(stderr_tail)
    {
        return Finish {
            reason: "sandbox_unavailable".into(),
            message: format!(
                "the run sandbox could not be applied, so the CLI did not start: {why}; run \
                 where the protection is available, or start the server with \
                 --sandbox best-effort"
            ),
            ..f
        };
    }
    let applied = f.sandbox.as_ref().is_some_and(|s| {
        s.protections
            .iter()
            .any(|p| matches!(p.state, State::Enforced | State::Partial { .. }))
    });
    match denial_message(stderr_tail) {
        Some(denial) if applied => Finish {
            message: format!("{denial}; {}", f.message),
            ..f
        },
        _ => f,
    }
}

/// Time since the run's recorded start (a batch job's start, seen by the poller).
pub(super) fn since_started(live: &LiveRun) -> Duration {
    live.status
        .borrow()
        .started_at
        .as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .and_then(|t| {
            let ms = jiff::Timestamp::now().duration_since(t).as_millis();
            u64::try_from(ms).ok()
        })
        .map(Duration::from_millis)
        .unwrap_or_default()
}

/// `manifest.json`: one record binding everything the run depended on and produced.
fn write_run_manifest(
    dir: &Path,
    v: &Validation,
    result: &RunResult,
    result_bytes: &[u8],
    runtime: Option<&RuntimeProbe>,
    (input_sha256, inputs_now): (Option<String>, &[(String, Option<String>)]),
) {
    let work = dir.join(&v.plan.working_dir);
    let input_files: Vec<serde_json::Value> = v
        .plan
        .input_files
        .iter()
        .map(|f| serde_json::json!({"path": f.path, "sha256": scimcp_core::hash::sha256_file(&work.join(&f.path)).map(|(h, _)| h).ok()}))
        .collect();
    let mut manifest = serde_json::json!({
        "schema_version": RECORD_SCHEMA_VERSION,
        "run_id": result.run_id,
        "state": result.state,
        "adapter": result.adapter,
        "workflow": result.workflow,
        "request_sha256": v.request_sha256,
        "request_file_sha256": scimcp_core::hash::sha256_file(&dir.join("request.json")).map(|(h, _)| h).ok(),
        "validation_id": v.validation_id,
        "resolved_parameters": v.resolved_parameters,
        "plan_sha256": v.plan_sha256,
        "runtime": {
            "program": v.plan.program,
            "python": runtime.map(|r| r.python.clone()),
            "package": runtime.and_then(|r| r.package.clone()),
            "versions": runtime.map(|r| r.versions.clone()),
        },
        "inputs": v.plan.dataset.iter().map(|d| serde_json::json!({
            "reference": d.reference,
            "path": d.run_path,
            "validated_sha256": d.sha256,
            "sha256_at_end": input_sha256,
            "size_bytes": d.size_bytes,
        })).chain(crate::inputs::copy::manifest_records(&v.plan.inputs, inputs_now)).collect::<Vec<_>>(),
        "input_files": input_files,
        "artifacts": result.artifacts.iter().map(|a| serde_json::json!({"path": a.path, "sha256": a.sha256, "size_bytes": a.size_bytes})).collect::<Vec<_>>(),
        "result_sha256": scimcp_core::hash::sha256_hex(result_bytes),
    });
    if let Some(sandbox) = &result.sandbox {
        manifest["sandbox"] = serde_json::json!(sandbox);
    }
    // Which binaries ran: absent for a python runtime's interpreter (the probe above says).
    if !v.plan.programs.is_empty() {
        manifest["runtime"]["programs"] = serde_json::json!(v.plan.programs);
    }
    // Its directory is flushed by the terminal status written next.
    if let Err(e) = write_json_atomic_batched(&dir.join("manifest.json"), &manifest) {
        tracing::error!(run_id = result.run_id, "cannot write the run manifest: {e}");
    }
}

/// Copy the dataset into `work/inputs/` (checking its hash on the way) and write the
/// plan's input files.
fn prepare(
    work: &Path,
    v: &Validation,
    max_dataset_bytes: u64,
    paths: &crate::plan::RunPaths,
) -> Result<(), ToolError> {
    let internal = |e: &dyn std::fmt::Display| {
        ToolError::internal(format!("cannot prepare the run's working directory: {e}"))
    };
    create_private_dir(&work.join(&v.plan.output_dir)).map_err(|e| internal(&e))?;
    for dir in scimcp_core::run_env::DEFAULT_RUN_DIRS {
        create_private_dir(&work.join(dir)).map_err(|e| internal(&e))?;
    }
    create_private_dir(&paths.state_dir).map_err(|e| internal(&e))?;
    if let (Some(planned), Some(dataset)) = (&v.plan.dataset, &v.dataset) {
        let target = work.join(&planned.run_path);
        if let Some(parent) = target.parent() {
            create_private_dir(parent).map_err(|e| internal(&e))?;
        }
        // The one test seam on this path: a unit test holds the copy here (copy_gate.rs) to
        // prove it runs off the async workers. Only test builds have it; a build compiles
        // neither the statement nor the module.
        #[cfg(test)]
        super::copy_gate::wait(&dataset.path);
        // Opened again the way it was validated, and copied through that handle: what the
        // run gets is exactly the bytes hashed here.
        let copied = dataset.reopen(max_dataset_bytes)?.copy_to(
            &target,
            &dataset.reference,
            max_dataset_bytes,
        )?;
        if copied != dataset.sha256 {
            return Err(ToolError::new(
                ErrorCode::DatasetChanged,
                format!(
                    "dataset '{}' changed after validation: sha256 was {}, now {copied}",
                    dataset.reference, dataset.sha256
                ),
                "validate the analysis again",
            ));
        }
    }
    crate::inputs::copy::copy_inputs(work, &v.inputs, max_dataset_bytes)?;
    for file in &v.plan.input_files {
        let path = work.join(&file.path);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent).map_err(|e| internal(&e))?;
        }
        let content = paths.substitute(&file.content, file.escape);
        write_atomic(&path, content.as_bytes(), Privacy::Private).map_err(|e| internal(&e))?;
    }
    if let Some(engine) = &v.plan.engine {
        crate::runs::engine_work::prepare(work, engine).map_err(|e| internal(&e))?;
    }
    Ok(())
}

/// Hold a finished run to the workflow's success predicate: exit status 0 is not enough when
/// the CLI records its own verdict in a JSON file. A run that failed anyway gets the reason
/// the file gives (the CLI's own error message).
fn success_predicate(
    work: &Path,
    success: &scimcp_core::manifest::SuccessSpec,
    f: Finish,
) -> Finish {
    let file = work.join(&success.json);
    let parsed: Option<serde_json::Value> = scimcp_core::fs::read_regular(&file, 16 * 1024 * 1024)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let why = parsed.as_ref().map(|doc| {
        success
            .message
            .iter()
            .filter_map(|p| doc.pointer(p))
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(": ")
    });
    let verdict = parsed
        .as_ref()
        .and_then(|doc| doc.pointer(&success.pointer));
    match f.state {
        RunState::Succeeded => {
            if verdict == Some(&success.equals) {
                return f;
            }
            let found = match (&parsed, verdict) {
                (None, _) => format!("{} is missing or not JSON", success.json),
                (Some(_), None) => format!("{} has no {}", success.json, success.pointer),
                (Some(_), Some(v)) => format!(
                    "{} says {} = {v}, not {}",
                    success.json, success.pointer, success.equals
                ),
            };
            let message = match why.filter(|w| !w.is_empty()) {
                Some(w) => format!("the CLI exited 0 but {found}: {w}"),
                None => format!("the CLI exited 0 but {found}"),
            };
            Finish {
                state: RunState::Failed,
                reason: "success_predicate".into(),
                message,
                ..f
            }
        }
        RunState::Failed if f.reason == "exit_code" => match why.filter(|w| !w.is_empty()) {
            Some(w) => Finish {
                message: format!("{} ({w})", f.message),
                ..f
            },
            None => f,
        },
        _ => f,
    }
}
