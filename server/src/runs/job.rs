//! `scimcp __job`: what a Slurm batch job runs on the compute node. It executes the plan
//! recorded in the run directory the way the local executor does — the same isolated
//! environment, working directory, stdin answers and bounded logs — and records how the CLI
//! ended in `cli-status.json`, so the server reads a Slurm run exactly as a local one.
//!
//! Slurm owns the process tree here (its cgroup, `scancel`, the time limit), so there is no
//! run guard: a SIGTERM from Slurm is passed to the CLI's process group, which gets the
//! suite's grace ([`scimcp_process::TERMINATE_GRACE`], well inside Slurm's `KillWait`) before
//! it is killed, as a cancelled local run does.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::child::isolated_command;
use super::logs::LogCapture;
use super::streams::Streams;
use crate::guard::CliStatus;
use crate::plan::{Escape, Plan, RunPaths};

/// The hidden subcommand's name.
pub const SUBCOMMAND: &str = "__job";

/// Arguments of `scimcp __job`.
#[derive(Debug, clap::Args)]
pub(crate) struct JobArgs {
    /// The run directory (a single job).
    #[arg(
        long,
        required_unless_present = "runs_file",
        conflicts_with = "runs_file"
    )]
    run_dir: Option<PathBuf>,
    /// A file of run directories, one a line; line `SLURM_ARRAY_TASK_ID` (from 0) is this
    /// task's (a job array).
    #[arg(long)]
    runs_file: Option<PathBuf>,
    /// The adapter's persistent state directory (`{state_dir}`).
    #[arg(long)]
    state_dir: PathBuf,
    /// Bytes of stdout and of stderr kept (head plus tail).
    #[arg(long)]
    max_log_bytes: u64,
    /// Bytes of a complete stream copy (a `base = "stdout"` artifact) kept; absent from
    /// scripts written before stream artifacts, which then get the suite default.
    #[arg(long)]
    max_artifact_bytes: Option<u64>,
    /// The run sandbox on the compute node, as `serve --sandbox` says (the job inherits the
    /// submitting environment's `SCIMCP_SANDBOX`).
    #[arg(long, value_enum, env = "SCIMCP_SANDBOX", default_value_t = crate::sandbox_policy::SandboxArg::BestEffort)]
    sandbox: crate::sandbox_policy::SandboxArg,
}

pub(crate) fn run(args: JobArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    runtime.block_on(job(args))
}

fn fail(message: &str) -> ExitCode {
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("scimcp __job: {message}\n").as_bytes(),
    );
    ExitCode::from(scimcp_core::exit::WRAPPER_FAILED)
}

/// Why a job could not tell which run it is.
#[derive(Debug, thiserror::Error)]
enum RunDirError {
    #[error("no --run-dir or --runs-file")]
    Neither,
    #[error("SLURM_ARRAY_TASK_ID is not set: --runs-file needs a job array")]
    NoTaskId,
    #[error("SLURM_ARRAY_TASK_ID: {0}")]
    BadTaskId(#[from] std::num::ParseIntError),
    /// fs-err's message names the file.
    #[error(transparent)]
    Read(#[from] std::io::Error),
    #[error("{} has no line {task}", file.display())]
    NoLine { file: PathBuf, task: usize },
}

fn run_dir(args: &JobArgs) -> Result<PathBuf, RunDirError> {
    if let Some(dir) = &args.run_dir {
        return Ok(dir.clone());
    }
    let file = args.runs_file.as_ref().ok_or(RunDirError::Neither)?;
    let task: usize = std::env::var("SLURM_ARRAY_TASK_ID")
        .map_err(|_| RunDirError::NoTaskId)?
        .parse()?;
    let text = fs_err::read_to_string(file)?;
    text.lines()
        .nth(task)
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| RunDirError::NoLine {
            file: file.clone(),
            task,
        })
}

#[cfg(unix)]
async fn job(args: JobArgs) -> ExitCode {
    use tokio::signal::unix::{SignalKind, signal};

    let dir = match run_dir(&args) {
        Ok(d) => d,
        Err(e) => return fail(&e.to_string()),
    };
    let plan: Plan = match fs_err::read(dir.join("plan.json"))
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
    {
        Ok(p) => p,
        Err(e) => return fail(&format!("cannot read the run's plan: {e}")),
    };
    let work = dir.join(&plan.working_dir);
    let paths = RunPaths {
        work_dir: std::path::absolute(&work).unwrap_or_else(|_| work.clone()),
        state_dir: args.state_dir.clone(),
    };
    let cli_args: Vec<String> = plan
        .args
        .iter()
        .map(|a| paths.substitute(a, Escape::None))
        .collect();
    let env: std::collections::BTreeMap<String, String> = plan
        .env
        .iter()
        .map(|(k, v)| (k.clone(), paths.substitute(v, Escape::None)))
        .collect();
    let (stdout_log, stderr_log) = match (
        LogCapture::create(&dir.join("stdout.log"), args.max_log_bytes),
        LogCapture::create(&dir.join("stderr.log"), args.max_log_bytes),
    ) {
        (Ok(o), Ok(e)) => (o, e),
        (Err(e), _) | (_, Err(e)) => return fail(&format!("cannot create the logs: {e}")),
    };
    let Ok(mut terms) = signal(SignalKind::terminate()) else {
        return fail("cannot handle SIGTERM");
    };
    // The CLI starts inside the sandbox, as a local run's does.
    let mode = crate::sandbox_policy::Mode::from(args.sandbox);
    let program = Path::new(&plan.program);
    let is_python = !plan
        .programs
        .iter()
        .any(|p| Path::new(&p.executable) == program);
    let runtime = crate::sandbox_policy::runtime_paths(program, is_python).await;
    let policy = crate::sandbox_policy::policy(
        &runtime,
        &paths.work_dir,
        &paths.state_dir,
        plan.sandbox.as_ref(),
    );
    let report = dir.join(crate::sandbox_policy::REPORT_FILE);
    // An engine's CLI starts in its own directory below the working directory and may read
    // a staged file on stdin, exactly as a local run's does (runs/steps.rs).
    let cwd = match plan.engine.as_ref().and_then(|e| e.cwd.as_deref()) {
        Some(sub) => work.join(sub),
        None => work.clone(),
    };
    let cmd = match crate::sandbox_policy::wrap(mode, &policy, &report, program, &cli_args) {
        Some((wrapper, argv)) => isolated_command(&wrapper, &argv, &cwd, &env),
        None => isolated_command(program, &cli_args, &cwd, &env),
    };
    let mut cmd = cmd.piped();
    if let Some(file) = super::stream_copy::stdin_file(&plan, &work) {
        match fs_err::File::open(&file) {
            Ok(f) => cmd = cmd.stdin(f.into_parts().0),
            Err(e) => return fail(&format!("cannot open the CLI's stdin: {e}")),
        }
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return fail(&format!("cannot start {}: {e}", plan.program)),
    };
    let copies = super::stream_copy::stream_copies(
        &plan,
        0,
        &work,
        args.max_artifact_bytes
            .unwrap_or(scimcp_core::Limits::DEFAULT.max_artifact_bytes),
    );
    let streams = Streams::attach(
        &mut child,
        (stdout_log, stderr_log),
        &plan.stdin,
        &paths,
        copies,
    );
    let status = tokio::select! {
        status = child.wait() => status,
        _ = terms.recv() => {
            // Slurm is ending the job (scancel, time limit): end the CLI's group with it.
            child.terminate(scimcp_process::TERMINATE_GRACE).await;
            child.wait().await
        }
    };
    // Whatever the CLI left in its group ends with it, as in a local run.
    child.end_group();
    streams.drain().await;
    let Ok(status) = status else {
        return fail("waiting for the CLI failed");
    };
    use std::os::unix::process::ExitStatusExt;
    let cli = CliStatus {
        exit_code: status.code(),
        signal: status.signal(),
    };
    if let Err(e) = scimcp_core::fs::write_json_atomic(&dir.join("cli-status.json"), &cli) {
        return fail(&format!("cannot record the CLI's exit status: {e}"));
    }
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        (None, None) => i32::from(scimcp_core::exit::WRAPPER_FAILED),
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}

#[cfg(not(unix))]
async fn job(_args: JobArgs) -> ExitCode {
    fail("the Slurm executor runs on Unix compute nodes only")
}
