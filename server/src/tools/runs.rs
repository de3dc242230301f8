//! `get_run_status`, `get_run_result`, `cancel_run`, `list_runs`, `get_run_log`.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

use crate::envelope::ToolError;
use crate::request::{ListRunsRequest, LogRequest, LogStream, ResultRequest, RunRef};
use crate::runs::RunSummary;
use crate::runs::state::{RunResult, RunState, RunStatus};
use crate::server::ServerContext;

/// `get_run_status` output.
pub type StatusOutput = RunStatus;

/// `get_run_result` output: the result once terminal, a pending receipt before.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResultOutput {
    pub run_id: String,
    pub state: RunState,
    pub terminal: bool,
    /// Seconds this call waited.
    pub waited_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<RunResult>,
    /// Present for a terminal run without a published result (an interrupted run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    pub next_action: String,
}

/// `cancel_run` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CancelOutput {
    pub run_id: String,
    pub state: RunState,
    /// False when the run had already ended.
    pub changed: bool,
    pub message: String,
}

/// `list_runs` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunsOutput {
    pub runs: Vec<RunSummary>,
    pub total: usize,
    pub offset: usize,
    pub limit: usize,
    /// Pass as `offset` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// `get_run_log` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LogOutput {
    pub run_id: String,
    pub stream: LogStream,
    pub text: String,
    /// Bytes the log holds in all.
    pub total_bytes: u64,
    /// True when `text` is only the tail.
    pub truncated: bool,
}

pub(super) fn status(ctx: &ServerContext, req: RunRef) -> Result<RunStatus, ToolError> {
    ctx.runs.status(&req.run_id)
}

pub(super) async fn result(
    ctx: &ServerContext,
    req: ResultRequest,
) -> Result<ResultOutput, ToolError> {
    let started = Instant::now();
    let wait = Duration::from_secs(u64::from(req.wait_s.min(300)));
    let status = ctx.runs.wait_terminal(&req.run_id, wait).await?;
    let waited_s = (started.elapsed().as_millis() as f64 / 1000.0 * 10.0).round() / 10.0;
    if !status.state.is_terminal() {
        return Ok(ResultOutput {
            run_id: status.run_id.clone(),
            state: status.state,
            terminal: false,
            waited_s,
            result: None,
            status: Some(status.clone()),
            next_action: format!(
                "the run is still {:?}; call get_run_result again (or cancel_run)",
                status.state
            )
            .to_lowercase(),
        });
    }
    let result = ctx.runs.result(&req.run_id)?;
    let next_action = match status.state {
        RunState::Succeeded => {
            "summarize the reported metrics and artifacts for the scientist".to_string()
        }
        RunState::PartialFailure => {
            "tell the scientist which declared artifacts are missing (see problems)".to_string()
        }
        RunState::Cancelled => "the run was cancelled; start a new analysis if needed".to_string(),
        _ => "explain the failure from message and stderr_tail; fix the request and validate again"
            .to_string(),
    };
    Ok(ResultOutput {
        run_id: status.run_id.clone(),
        state: status.state,
        terminal: true,
        waited_s,
        status: result.is_none().then_some(status),
        result,
        next_action,
    })
}

pub(super) async fn cancel(ctx: &ServerContext, req: RunRef) -> Result<CancelOutput, ToolError> {
    let (status, changed) = ctx.runs.cancel(&req.run_id).await?;
    let message = if changed {
        format!("run {} is now {:?}", status.run_id, status.state).to_lowercase()
    } else {
        format!(
            "run {} had already ended ({:?}); nothing to cancel",
            status.run_id, status.state
        )
        .to_lowercase()
    };
    Ok(CancelOutput {
        run_id: status.run_id,
        state: status.state,
        changed,
        message,
    })
}

pub(super) fn list(ctx: &ServerContext, req: ListRunsRequest) -> RunsOutput {
    let offset = req.offset as usize;
    let limit = req.limit.clamp(1, 100) as usize;
    let (runs, total) = ctx.runs.list(offset, limit);
    let next = offset + runs.len();
    RunsOutput {
        runs,
        total,
        offset,
        limit,
        next_offset: (next < total).then_some(next),
    }
}

pub(super) fn log(ctx: &ServerContext, req: LogRequest) -> Result<LogOutput, ToolError> {
    let max = req.max_bytes.clamp(1, 65536) as usize;
    let tail = ctx.runs.log_tail(&req.run_id, req.stream, max)?;
    Ok(LogOutput {
        run_id: req.run_id,
        stream: req.stream,
        text: tail.text,
        total_bytes: tail.total_bytes,
        truncated: tail.truncated,
    })
}
