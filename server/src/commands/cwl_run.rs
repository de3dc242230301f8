//! `scimcp cwl-run`: a `cwl-runner`-compatible command that runs one CWL CommandLineTool job
//! through the real MCP path — it starts `scimcp serve --adapter TOOL.cwl` as a child over
//! stdio, validates, starts and waits for the run with MCP tool calls, and prints the CWL
//! output object built from the run's artifacts. It is not the MCP server: it alone of the
//! subcommands prints a result (the output object, JSON) on stdout, as cwltest expects;
//! everything else goes to stderr.
//!
//! Exit status: 0 when the run succeeded, 33 when the tool needs a CWL feature scimcp does not
//! support (cwltest's "unsupported"), 1 otherwise.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use scimcp_client::McpSession;
use serde_json::{Value, json};

use crate::cli::CwlRunArgs;

/// Why a cwl-run ended without an output object.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Cwl(#[from] scimcp_cwl::CwlError),
    #[error("the MCP server: {0}")]
    Client(#[from] scimcp_client::ClientError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{what}")]
    Run { what: String },
}

impl RunError {
    fn exit(&self) -> ExitCode {
        match self {
            RunError::Cwl(e) if e.is_unsupported() => {
                ExitCode::from(scimcp_cwl::UNSUPPORTED_FEATURE_EXIT)
            }
            _ => ExitCode::FAILURE,
        }
    }
}

/// A line on stderr (the only place cwl-run logs: stdout is the output object's).
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub(crate) fn run(args: CwlRunArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            say!("scimcp cwl-run: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run_job(&args)) {
        Ok(object) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", scimcp_cwl::output_json::output_text(&object));
            ExitCode::SUCCESS
        }
        Err(e) => {
            say!("scimcp cwl-run: {e}");
            e.exit()
        }
    }
}

fn local(reference: &str) -> PathBuf {
    scimcp_cwl::job::location_path(reference, Path::new("."))
}

async fn run_job(args: &CwlRunArgs) -> Result<Value, RunError> {
    let tool_path = std::path::absolute(local(&args.tool))?;
    let options = scimcp_cwl::EngineOptions {
        allow_shell: args.allow_shell,
        no_container: args.no_container,
    };
    let (_, engine) = scimcp_cwl::engine::load_engine(&tool_path, options)?;
    let job_path = args.job.as_deref().map(local);
    let job_path = job_path.map(std::path::absolute).transpose()?;
    let job = scimcp_cwl::job::read_job(job_path.as_deref())?;
    let job_dir = job_path
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| engine.dir.clone());
    let outdir = std::path::absolute(args.outdir.clone().unwrap_or_else(|| PathBuf::from(".")))?;
    fs_err::create_dir_all(&outdir)?;

    // The server's home and start directory are this run's own, removed afterwards.
    let scratch = Scratch::new()?;
    let home = scratch.0.join("home");
    let start = scratch.0.join("start");
    fs_err::create_dir_all(&home)?;
    fs_err::create_dir_all(&start)?;
    let request = scimcp_cwl::runner::request(&engine, &job, &job_dir);

    let mut serve_args = vec![
        "serve".to_string(),
        "--adapter".into(),
        tool_path.display().to_string(),
    ];
    if args.allow_shell {
        serve_args.push("--cwl-allow-shell".into());
    }
    if args.no_container {
        serve_args.push("--cwl-no-container".into());
    }
    for dir in &request.data_dirs {
        if dir.is_dir() {
            serve_args.push("--data-dir".into());
            serve_args.push(dir.display().to_string());
        }
    }
    let exe = std::env::current_exe()?;
    let session = McpSession::spawn(
        &exe,
        &serve_args,
        &[
            ("SCIMCP_HOME".to_string(), home.display().to_string()),
            ("SCIMCP_LOG".to_string(), "warn".to_string()),
        ],
        &start,
    )
    .await?;
    let outcome = drive(&session, request.request, args.quiet).await;
    let server_log = session.stderr();
    let _ = session.close().await;
    let result = match outcome {
        Ok(r) => r,
        Err(e) => {
            if !server_log.trim().is_empty() {
                say!("{}", server_log.trim_end());
            }
            return Err(e);
        }
    };
    let run_dir = PathBuf::from(result["run_dir"].as_str().unwrap_or_default());
    let work = run_dir.join("work");
    let outputs: Value = fs_err::read(work.join(".scimcp/outputs.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| RunError::Run {
            what: format!("run {} wrote no output object", result["run_id"]),
        })?;
    Ok(scimcp_cwl::runner::output_object(
        &outputs,
        &work.join(scimcp_cwl::engine::OUTDIR),
        &outdir,
    )?)
}

/// A directory of this run's own below the temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        let dir =
            std::env::temp_dir().join(format!("scimcp-cwl-run-{}", uuid::Uuid::new_v4().simple()));
        fs_err::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs_err::remove_dir_all(&self.0);
    }
}

/// validate_analysis, start_analysis, get_run_result until terminal: the result of a
/// succeeded run, or why there is none.
async fn drive(session: &McpSession, request: Value, quiet: bool) -> Result<Value, RunError> {
    let validation = session.call("validate_analysis", request.clone()).await?;
    if validation.is_error {
        return Err(RunError::Run {
            what: format!("validate_analysis refused the job: {}", validation.text),
        });
    }
    let validation = validation.structured;
    if validation["ready"] != true {
        return Err(RunError::Run {
            what: format!(
                "the job is not ready to run: {}",
                serde_json::to_string(&validation["blockers"]).unwrap_or_default()
            ),
        });
    }
    let mut start = request;
    start["validation_id"] = validation["validation_id"].clone();
    let started = session.call("start_analysis", start).await?;
    if started.is_error {
        return Err(RunError::Run {
            what: format!("start_analysis refused the job: {}", started.text),
        });
    }
    let run_id = started.structured["run_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if !quiet {
        say!("scimcp cwl-run: started {run_id}");
    }
    loop {
        let out = session
            .call("get_run_result", json!({"run_id": run_id, "wait_s": 30}))
            .await?;
        if out.is_error {
            return Err(RunError::Run {
                what: format!("get_run_result: {}", out.text),
            });
        }
        if out.structured["terminal"] == true {
            let result = out.structured["result"].clone();
            if result["state"] != "succeeded" {
                return Err(RunError::Run {
                    what: format!(
                        "run {run_id} ended {} ({}): {}\n{}",
                        result["state"].as_str().unwrap_or("?"),
                        result["reason"].as_str().unwrap_or(""),
                        result["message"].as_str().unwrap_or(""),
                        result["stderr_tail"].as_str().unwrap_or("")
                    ),
                });
            }
            return Ok(result);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
