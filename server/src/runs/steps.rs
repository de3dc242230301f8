//! Running a plan's programs on the local executor: its one program, or each of its
//! `steps` in order in the same working directory. The run's timeout covers every step (one
//! deadline); cancel and timeout end the current step's process tree; the first step that
//! does not exit 0 ends the run, and a stepped run's result names it (`failed_step`). Every
//! step's stdout and stderr go to the run's one stdout.log and stderr.log, in step order.
//!
//! Each step's complete streams, when an artifact or metric needs them, are copied as
//! `stream_copy::stream_copies` says for the step's index.

use std::path::Path;
use std::time::Duration;

use tokio::time::Instant;

use super::child::isolated_command;
use super::execute::{Finish, exited};
use super::logs::LogCapture;
use super::state::{RunState, now};
use super::streams::Streams;
use super::{LiveRun, RunManager};
use crate::plan::{Escape, Plan, RunPaths};
use crate::validate::Validation;

/// One program start of a run.
pub(super) struct StepCommand<'p> {
    /// The step's id; `None` for a single-program plan.
    pub(super) id: Option<&'p str>,
    pub(super) program: &'p str,
    pub(super) args: &'p [String],
    pub(super) stdin: &'p [String],
}

/// What a plan starts, in order.
pub(super) fn step_commands(plan: &Plan) -> Vec<StepCommand<'_>> {
    if plan.steps.is_empty() {
        return vec![StepCommand {
            id: None,
            program: &plan.program,
            args: &plan.args,
            stdin: &plan.stdin,
        }];
    }
    plan.steps
        .iter()
        .map(|s| StepCommand {
            id: Some(&s.id),
            program: &s.program,
            args: &s.args,
            stdin: &s.stdin,
        })
        .collect()
}

/// Why the wait for one step ended.
enum Ending {
    Exited,
    TimedOut,
    Cancelled,
}

impl RunManager {
    /// Start each of the plan's programs in turn, logging into `logs`, until one fails or
    /// the last succeeds.
    pub(super) async fn run_steps(
        &self,
        dir: &Path,
        live: &LiveRun,
        v: &Validation,
        paths: &RunPaths,
        logs: (LogCapture, LogCapture),
        cancel_rx: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Finish {
        let work = dir.join(&v.plan.working_dir);
        let env: std::collections::BTreeMap<String, String> = v
            .plan
            .env
            .iter()
            .map(|(k, val)| (k.clone(), paths.substitute(val, Escape::None)))
            .collect();
        let deadline = Instant::now() + Duration::from_secs(v.plan.timeout_s);
        let commands = step_commands(&v.plan);
        let count = commands.len();
        let mut finish = Finish::new(RunState::Succeeded, "", "");
        for (index, step) in commands.iter().enumerate() {
            let last = index + 1 == count;
            finish = self
                .run_one(
                    dir,
                    live,
                    v,
                    &work,
                    paths,
                    &env,
                    step,
                    (&logs, last),
                    deadline,
                    cancel_rx,
                )
                .await;
            if finish.state != RunState::Succeeded {
                if !last {
                    logs.0.finish();
                    logs.1.finish();
                }
                if let Some(id) = step.id {
                    finish.message = format!(
                        "step '{id}' ({}): {}{}",
                        step.program,
                        finish.message,
                        if last {
                            String::new()
                        } else {
                            "; the steps after it did not run".into()
                        }
                    );
                    if finish.state == RunState::Failed {
                        finish.failed_step = Some(id.to_string());
                    }
                }
                return finish;
            }
        }
        finish
    }

    /// One program start: spawned under the guard, fed its stdin, waited for until it
    /// exits, the run's deadline passes or the client cancels.
    #[allow(clippy::too_many_arguments)]
    async fn run_one(
        &self,
        dir: &Path,
        live: &LiveRun,
        v: &Validation,
        work: &Path,
        paths: &RunPaths,
        env: &std::collections::BTreeMap<String, String>,
        step: &StepCommand<'_>,
        (logs, last): (&(LogCapture, LogCapture), bool),
        deadline: Instant,
        cancel_rx: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Finish {
        // The CLI runs under the guard (same process group), which ends the group should
        // this server die; the plan still names the CLI, and its status is the CLI's own.
        let status_file = dir.join("cli-status.json");
        let args: Vec<String> = step
            .args
            .iter()
            .map(|a| paths.substitute(a, Escape::None))
            .collect();
        let program = Path::new(step.program);
        // Inside the guard, the CLI starts through the sandbox's exec wrapper, which writes
        // what it applied to a report outside the working directory.
        let mode = crate::sandbox_policy::mode();
        let report_file = dir.join(crate::sandbox_policy::REPORT_FILE);
        let _ = fs_err::remove_file(&report_file);
        let is_python = !v
            .plan
            .programs
            .iter()
            .any(|p| Path::new(&p.executable) == program);
        let runtime = crate::sandbox_policy::runtime_paths(program, is_python).await;
        let policy = crate::sandbox_policy::policy(
            &runtime,
            work,
            &paths.state_dir,
            v.plan.sandbox.as_ref(),
        );
        let (program, args) =
            match crate::sandbox_policy::wrap(mode, &policy, &report_file, program, &args) {
                Some((wrapper, argv)) => (wrapper, argv),
                None => (program.to_path_buf(), args),
            };
        // An engine may start the CLI in a directory of its own below the working directory.
        let cwd = match v.plan.engine.as_ref().and_then(|e| e.cwd.as_deref()) {
            Some(dir) => work.join(dir),
            None => work.to_path_buf(),
        };
        let cmd = match crate::guard::wrap(&program, &args, &status_file) {
            Some((guard, argv)) => isolated_command(&guard, argv, &cwd, env),
            None => isolated_command(&program, &args, &cwd, env),
        };
        let mut cmd = cmd.piped();
        // An engine's stdin is a staged file: the CLI reads it directly, as from a shell's `<`.
        if let Some(file) = super::stream_copy::stdin_file(&v.plan, work) {
            match fs_err::File::open(&file) {
                Ok(f) => cmd = cmd.stdin(f.into_parts().0),
                Err(e) => {
                    let msg = format!("cannot open {} for the CLI's stdin: {e}", file.display());
                    return Finish::new(RunState::Failed, "spawn_failed", &msg);
                }
            }
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                let msg = format!("cannot start {}: {e}", step.program);
                return Finish::new(RunState::Failed, "spawn_failed", &msg);
            }
        };
        let pid = child.pid();
        // Recovery ends the recorded process group: it must be the current step's.
        self.transition_off_workers(dir, live, |s| {
            s.state = RunState::Running;
            if s.started_at.is_none() {
                s.started_at = Some(now());
            }
            s.pid = Some(pid);
        })
        .await;
        let index = v
            .plan
            .steps
            .iter()
            .position(|s| Some(s.id.as_str()) == step.id)
            .unwrap_or(0);
        let copies =
            super::stream_copy::stream_copies(&v.plan, index, work, self.limits.max_artifact_bytes);
        let streams = Streams::attach(
            &mut child,
            (logs.0.clone(), logs.1.clone()),
            step.stdin,
            paths,
            copies,
        );
        let ending = tokio::select! {
            status = child.wait() => match status {
                Ok(_) => Ending::Exited,
                Err(e) => {
                    tracing::error!("waiting for the run failed: {e}");
                    Ending::Cancelled
                }
            },
            _ = tokio::time::sleep_until(deadline) => Ending::TimedOut,
            _ = cancel_rx.wait_for(|c| *c) => Ending::Cancelled,
        };
        let exit = if matches!(ending, Ending::Exited) {
            // Whatever the CLI left behind in its group (workers, daemons) ends with it.
            child.end_group();
            child.wait().await.ok()
        } else {
            child
                .terminate(scimcp_process::TERMINATE_GRACE)
                .await
                .status()
        };
        // The CLI's own ending, as the guard recorded it; the guard's when it could not.
        let cli = crate::guard::take_status(&status_file).or_else(|| {
            exit.map(|status| crate::guard::CliStatus {
                exit_code: status.code(),
                signal: scimcp_process::exit_signal(&status),
            })
        });
        if last {
            streams.drain().await;
        } else {
            streams.drain_open().await;
        }
        let mut finish = match ending {
            Ending::TimedOut => Finish::new(
                RunState::Failed,
                "timeout",
                &format!(
                    "the run exceeded its {}s timeout and was killed",
                    v.plan.timeout_s
                ),
            ),
            Ending::Cancelled if self.is_stopping() => Finish::new(
                RunState::Failed,
                "interrupted",
                "the server stopped while the run was running (its client disconnected or it was \
                 asked to stop); the process tree was ended. Start the analysis again",
            ),
            Ending::Cancelled => Finish::new(
                RunState::Cancelled,
                "cancelled",
                "cancelled at the client's request; the process tree was ended",
            ),
            Ending::Exited => exited(cli),
        };
        if let Some(cli) = cli {
            finish.exit_code = cli.exit_code;
            finish.signal = cli.signal;
        }
        finish.sandbox = crate::sandbox_policy::take_report(mode, &report_file);
        finish
    }
}
