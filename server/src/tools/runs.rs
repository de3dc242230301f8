//! `get_run_status`, `get_run_result`, `cancel_run`, `list_runs`, `get_run_log`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::handler::{Call, Progress, ToolHandler};
use crate::context::{ConfirmMode, ServerContext};
use crate::envelope::ToolError;
use crate::paging::{Detail, Page};
use crate::plan::PlannedDataset;
use crate::request::{
    CancelRequest, ListRunsRequest, LogRequest, LogStream, ResultRequest, RunRef,
};
use crate::runs::RunSummary;
use crate::runs::state::{
    AdapterIdentity, ArtifactProblem, ArtifactRecord, RunResult, RunState, RunStatus,
};

/// How often a waiting `get_run_result` reports progress (and looks at the run's state).
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Largest reported value shown inline; larger ones are replaced by their size and hash.
const MAX_REPORTED_VALUE_BYTES: usize = 4096;

/// `get_run_status` output.
pub type StatusOutput = RunStatus;

/// A terminal result as the tool shows it: the record of `result.json`, with its long
/// lists paged and oversized reported values replaced by their size and hash.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResultView {
    pub run_id: String,
    pub state: RunState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub adapter: AdapterIdentity,
    pub workflow: String,
    pub validation_id: String,
    pub request_sha256: String,
    pub plan_sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset: Option<PlannedDataset>,
    /// The named file inputs the run read, each file with its SHA-256.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<crate::inputs::PlannedInput>,
    /// The step of a stepped workflow that failed and ended the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_step: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub started_at: Option<String>,
    pub ended_at: String,
    pub duration_ms: u64,
    pub run_dir: String,
    pub output_dir: String,
    /// Every regular file of the output directory with its SHA-256, paged.
    pub artifacts: Page<ArtifactRecord>,
    /// Declared artifacts that are missing or invalid (first page).
    pub problems: Page<ArtifactProblem>,
    /// Values of the declared `json_keys`, per artifact id.
    pub reported: BTreeMap<String, BTreeMap<String, Value>>,
    /// Files not indexed, and why (first page).
    pub skipped: Page<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// What the run sandbox applied to the CLI (each protection's state), so a client sees
    /// which protections held; absent for a run that never started its CLI.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub sandbox: Option<scimcp_process::sandbox::Applied>,
}

fn bounded_value(v: Value) -> Value {
    let text = serde_json::to_string(&v).unwrap_or_default();
    if text.len() <= MAX_REPORTED_VALUE_BYTES {
        return v;
    }
    serde_json::json!({"omitted": true, "bytes": text.len(), "sha256": scimcp_core::hash::sha256_hex(text.as_bytes())})
}

impl ResultView {
    fn of(r: RunResult, artifact_offset: usize, artifact_limit: usize) -> ResultView {
        ResultView {
            artifacts: Page::of(&r.artifacts, artifact_offset, artifact_limit),
            problems: Page::of(&r.problems, 0, 50),
            skipped: Page::of(&r.skipped, 0, 20),
            reported: r
                .reported
                .into_iter()
                .map(|(id, values)| {
                    (
                        id,
                        values
                            .into_iter()
                            .map(|(k, v)| (k, bounded_value(v)))
                            .collect(),
                    )
                })
                .collect(),
            run_id: r.run_id,
            state: r.state,
            reason: r.reason,
            message: r.message,
            adapter: r.adapter,
            workflow: r.workflow,
            validation_id: r.validation_id,
            request_sha256: r.request_sha256,
            plan_sha256: r.plan_sha256,
            dataset: r.dataset,
            inputs: r.inputs,
            failed_step: r.failed_step,
            exit_code: r.exit_code,
            signal: r.signal,
            started_at: r.started_at,
            ended_at: r.ended_at,
            duration_ms: r.duration_ms,
            run_dir: r.run_dir,
            output_dir: r.output_dir,
            stderr_tail: r.stderr_tail,
            sandbox: r.sandbox,
        }
    }
}

/// `get_run_result` output: the result once terminal, a pending receipt before, or a short
/// `not_modified` when the caller already holds this exact result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResultOutput {
    pub run_id: String,
    pub state: RunState,
    pub terminal: bool,
    /// Seconds this call waited.
    pub waited_s: f64,
    /// SHA-256 of the published `result.json`; pass it as `if_result_sha256` next time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_sha256: Option<String>,
    /// True when `if_result_sha256` matched: the result is unchanged and not repeated.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub not_modified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultView>,
    /// The status, for a run that has not ended or ended without a published result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    /// For an answer that is still pending: seconds after which to call again (0: at
    /// once; the next call waits again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u32>,
    pub next_action: String,
}

/// `cancel_run` output: the run after a confirmed cancel, or (`changed: false`,
/// `status` set) the run a confirmed cancel would stop.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CancelOutput {
    pub run_id: String,
    pub state: RunState,
    /// False when nothing changed: the run had already ended, or this was a preview.
    pub changed: bool,
    /// True when this server cancels only with `confirm: true`.
    pub confirmation_required: bool,
    /// Who started the run (a token's name, `loopback` or `stdio`), when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
    /// The run's full status (previews only): what a confirmed cancel would stop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    pub message: String,
}

/// `list_runs` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunsOutput {
    /// Runs, newest first.
    pub runs: Page<RunSummary>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
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

/// The `get_run_status` tool.
pub(super) struct GetRunStatus;

impl ToolHandler for GetRunStatus {
    const NAME: &'static str = "get_run_status";
    const DESCRIPTION: &'static str = "The state of one run (queued, running, succeeded, partial_failure, failed, cancelled) and why it ended.";
    const READ_ONLY: bool = true;
    type Request = RunRef;
    type Output = StatusOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        _call: &Call,
        req: RunRef,
    ) -> Result<StatusOutput, ToolError> {
        status(ctx, req)
    }
}

pub(super) fn status(ctx: &ServerContext, req: RunRef) -> Result<RunStatus, ToolError> {
    ctx.runs.status(&req.run_id)
}

/// The `get_run_result` tool.
pub(super) struct GetRunResult;

impl ToolHandler for GetRunResult {
    const NAME: &'static str = "get_run_result";
    const DESCRIPTION: &'static str = "Wait up to `wait_s` seconds (at most 300; by default as long as this client lets one call run, less a margin: 45 s for a client whose deadline is unknown) for a run to finish, sending progress notifications (state, elapsed time) when the request carries a progress token; returns its result (artifacts with SHA-256, reported metrics, problems) or a pending receipt with `retry_after_s`: call get_run_result again then, as many times as the run needs. Cancelling this call ends the wait, not the run.";
    const READ_ONLY: bool = true;
    type Request = ResultRequest;
    type Output = ResultOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        call: &Call,
        req: ResultRequest,
    ) -> Result<ResultOutput, ToolError> {
        result(ctx, call, req).await
    }
}

pub(super) async fn result(
    ctx: &ServerContext,
    call: &Call,
    req: ResultRequest,
) -> Result<ResultOutput, ToolError> {
    let started = Instant::now();
    let plan = crate::paging::wait_for(req.wait_s, &call.deadline(ctx))?;
    let wait = plan.duration();
    let status = match &call.progress {
        Some(progress) => wait_reporting(ctx, &req.run_id, wait, progress).await?,
        None => ctx.runs.wait_terminal(&req.run_id, wait).await?,
    };
    let waited_s = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    let base = |status: &RunStatus, next_action: String| ResultOutput {
        run_id: status.run_id.clone(),
        state: status.state,
        terminal: status.state.is_terminal(),
        waited_s,
        result_sha256: None,
        not_modified: false,
        result: None,
        status: None,
        retry_after_s: None,
        next_action,
    };
    if !status.state.is_terminal() {
        let retry = plan.retry_after_s();
        let next = format!(
            "the run is still {} after this call's wait ({}); call get_run_result again {} with run_id \"{}\" (or cancel_run)",
            state_word(status.state),
            plan.why,
            if retry == 0 {
                "now".to_string()
            } else {
                format!("in {retry} s")
            },
            status.run_id
        );
        return Ok(ResultOutput {
            status: Some(status.clone()),
            retry_after_s: Some(retry),
            ..base(&status, next)
        });
    }
    let Some((result, sha)) = ctx.runs.result(&req.run_id)? else {
        let next = "the run ended without a result (see status.reason); start the analysis again"
            .to_string();
        return Ok(ResultOutput {
            status: Some(status.clone()),
            ..base(&status, next)
        });
    };
    if req.if_result_sha256.as_deref() == Some(sha.as_str()) {
        let next = "unchanged since you last read it".to_string();
        return Ok(ResultOutput {
            result_sha256: Some(sha),
            not_modified: true,
            ..base(&status, next)
        });
    }
    let next = match result.state {
        RunState::Succeeded => "summarize the reported metrics and artifacts for the scientist",
        RunState::PartialFailure => {
            "tell the scientist which declared artifacts are missing (see problems)"
        }
        RunState::Cancelled => "the run was cancelled; start a new analysis if needed",
        _ => "explain the failure from message and stderr_tail; fix the request and validate again",
    };
    let limit = crate::paging::page_limit(
        "artifact_limit",
        req.artifact_limit,
        50,
        req.detail,
        100,
        2000,
    )?;
    Ok(ResultOutput {
        result_sha256: Some(sha),
        result: Some(ResultView::of(result, req.artifact_offset, limit)),
        ..base(&status, next.to_string())
    })
}

/// Wait up to `wait` for the run to end, reporting its state and the time elapsed every
/// [`PROGRESS_EVERY`] and once more when it ends.
async fn wait_reporting(
    ctx: &ServerContext,
    run_id: &str,
    wait: Duration,
    progress: &Progress,
) -> Result<RunStatus, ToolError> {
    let begun = Instant::now();
    let total = wait.as_secs_f64();
    let mut last = 0.0_f64;
    let mut status = ctx.runs.status(run_id)?;
    loop {
        // The progress value is the time waited, which only grows.
        let waited = begun.elapsed().as_secs_f64().max(last + 0.001);
        last = waited;
        progress
            .report(
                waited,
                Some(total.max(waited)),
                progress_message(
                    &status,
                    crate::runs::progress::read(&ctx.adapter, &ctx.runs, &status),
                    waited,
                    total,
                ),
            )
            .await;
        let left = wait.saturating_sub(begun.elapsed());
        if status.state.is_terminal() || left.is_zero() {
            return Ok(status);
        }
        let slice = left.min(PROGRESS_EVERY);
        let asked = Instant::now();
        status = ctx.runs.wait_terminal(run_id, slice).await?;
        // A run another server executes is read from disk: pace the polling.
        if !status.state.is_terminal() {
            tokio::time::sleep(slice.saturating_sub(asked.elapsed())).await;
        }
    }
}

fn progress_message(
    status: &RunStatus,
    cli: Option<scimcp_core::manifest::CliProgress>,
    waited: f64,
    total: f64,
) -> String {
    let since_start = status
        .started_at
        .as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| jiff::Timestamp::now().duration_since(t).as_secs().max(0));
    let state = state_word(status.state);
    let what = match (status.state, since_start) {
        (RunState::Queued, _) => format!("{} is queued, waiting for a free slot", status.run_id),
        (RunState::Running, Some(s)) => format!("{} is running ({s} s so far)", status.run_id),
        (_, _) if status.state.is_terminal() => format!("{} ended: {state}", status.run_id),
        _ => format!("{} is {state}", status.run_id),
    };
    // What the CLI itself last said it was doing, when its workflow declares how to read it.
    let said = cli
        .map(|p| p.describe())
        .filter(|d| !d.is_empty())
        .map(|d| format!("; the CLI reports: {d}"))
        .unwrap_or_default();
    format!("{what}{said}; waited {waited:.0} s of {total:.0} s")
}

fn state_word(state: RunState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// The `cancel_run` tool.
pub(super) struct CancelRun;

impl ToolHandler for CancelRun {
    const NAME: &'static str = "cancel_run";
    const DESCRIPTION: &'static str = "Stop a queued or running run: its whole process tree is ended and the run reads `cancelled`. Without `confirm: true` where this server requires confirmation (or with `confirm: false` anywhere) it cancels nothing and returns the run's status: show it to the person and call again with `confirm: true` only after they agree.";
    const READ_ONLY: bool = false;
    type Request = CancelRequest;
    type Output = CancelOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        call: &Call,
        req: CancelRequest,
    ) -> Result<CancelOutput, ToolError> {
        cancel(ctx, call, req).await
    }
}

pub(super) async fn cancel(
    ctx: &ServerContext,
    call: &Call,
    req: CancelRequest,
) -> Result<CancelOutput, ToolError> {
    let required = ctx.confirm == ConfirmMode::Required;
    let started_by = crate::resources::started_by(ctx, &req.run_id);
    if !req.confirm.unwrap_or(!required) {
        let status = ctx.runs.status(&req.run_id)?;
        let message = if status.state.is_terminal() {
            format!(
                "run {} has already ended ({}); there is nothing to cancel",
                status.run_id,
                state_word(status.state)
            )
        } else {
            format!(
                "nothing was cancelled: run {} ({}, workflow {}, created {}{}) is {}. Show this to the person; after they agree, call cancel_run again with confirm: true",
                status.run_id,
                status.adapter,
                status.workflow,
                status.created_at,
                started_by
                    .as_deref()
                    .map(|who| format!(", started by {who}"))
                    .unwrap_or_default(),
                state_word(status.state),
            )
        };
        return Ok(CancelOutput {
            run_id: status.run_id.clone(),
            state: status.state,
            changed: false,
            confirmation_required: required,
            started_by,
            status: Some(status),
            message,
        });
    }
    tracing::info!(
        run_id = req.run_id,
        by = call.caller.name(),
        "cancelling a run"
    );
    let (status, changed) = ctx.runs.cancel(&req.run_id).await?;
    let message = if changed {
        format!("run {} is now {}", status.run_id, state_word(status.state))
    } else {
        format!(
            "run {} had already ended ({}); nothing to cancel",
            status.run_id,
            state_word(status.state)
        )
    };
    Ok(CancelOutput {
        run_id: status.run_id,
        state: status.state,
        changed,
        confirmation_required: required,
        started_by,
        status: None,
        message,
    })
}

/// Every run's summary, newest first. Reading a `status.json` per run is blocking work
/// (thousands of files in a long history): off the async workers.
pub(super) async fn all(ctx: &ServerContext) -> Result<Vec<RunSummary>, ToolError> {
    let runs = std::sync::Arc::clone(&ctx.runs);
    tokio::task::spawn_blocking(move || runs.list())
        .await
        .map_err(|e| ToolError::internal(format!("listing the runs panicked: {e}")))
}

/// The `list_runs` tool.
pub(super) struct ListRuns;

impl ToolHandler for ListRuns {
    const NAME: &'static str = "list_runs";
    const DESCRIPTION: &'static str = "Runs in this server's state directory, newest first, paged with a cursor (or offset) and limit; filters: state, workflow, adapter, campaign_id, started_by (a token's name, loopback or stdio), created_after/created_before (RFC 3339).";
    const READ_ONLY: bool = true;
    type Request = ListRunsRequest;
    type Output = RunsOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        _call: &Call,
        req: ListRunsRequest,
    ) -> Result<RunsOutput, ToolError> {
        list(ctx, req).await
    }
}

pub(super) async fn list(
    ctx: &ServerContext,
    req: ListRunsRequest,
) -> Result<RunsOutput, ToolError> {
    use crate::runs::index::{Filter, Start};
    let limit =
        crate::paging::page_limit("limit", Some(req.limit as usize), 20, req.detail, 100, 1000)?;
    let start = match &req.cursor {
        None => Start::Offset(req.offset as usize),
        Some(_) if req.offset != 0 => {
            return Err(ToolError::new(
                crate::envelope::ErrorCode::InvalidParameters,
                "pass either offset or cursor, not both",
                "page with cursor alone (each page's next_cursor)",
            )
            .field("offset"));
        }
        Some(text) => {
            let (at, run_id) = decode_cursor(text).ok_or_else(|| {
                ToolError::new(
                    crate::envelope::ErrorCode::InvalidParameters,
                    format!("{text:?} is not a cursor list_runs gave"),
                    "pass the next_cursor of a previous list_runs page, or start again without one",
                )
                .field("cursor")
            })?;
            Start::After(at, run_id)
        }
    };
    let filter = Filter {
        states: req
            .state
            .map(crate::request::States::into_vec)
            .unwrap_or_default(),
        workflow: req.workflow,
        adapter: req.adapter,
        campaign_id: req.campaign_id,
        started_by: req.started_by,
        created_after: req
            .created_after
            .as_deref()
            .map(|t| time_bound("created_after", t))
            .transpose()?,
        created_before: req
            .created_before
            .as_deref()
            .map(|t| time_bound("created_before", t))
            .transpose()?,
    };
    // Catching up with the index's journal and reading the few unsettled runs' statuses is
    // blocking work: off the async workers.
    let runs = Arc::clone(&ctx.runs);
    let listed = tokio::task::spawn_blocking(move || runs.list_page(&filter, &start, limit))
        .await
        .map_err(|e| ToolError::internal(format!("listing the runs panicked: {e}")))??;
    let next_offset = listed.offset + listed.items.len();
    Ok(RunsOutput {
        next_cursor: listed.next.map(|(at, id)| encode_cursor(at, &id)),
        runs: Page {
            offset: listed.offset,
            limit,
            total: listed.total,
            next_offset: (next_offset < listed.total).then_some(next_offset),
            truncated: listed.items.len() < listed.total,
            page_sha256: scimcp_core::hash::canonical_sha256_of(&listed.items),
            sequence_sha256: listed.sequence_sha256,
            items: listed.items,
        },
    })
}

/// A `list_runs` cursor: the last listed run's creation time (nanoseconds) and id.
fn encode_cursor(at: i128, run_id: &str) -> String {
    format!("r1.{at}.{run_id}")
}

fn decode_cursor(text: &str) -> Option<(i128, String)> {
    let (at, run_id) = text.strip_prefix("r1.")?.split_once('.')?;
    crate::runs::is_run_id(run_id).then(|| Some((at.parse().ok()?, run_id.to_string())))?
}

/// A `created_after`/`created_before` bound in nanoseconds since the epoch.
fn time_bound(field: &str, text: &str) -> Result<i128, ToolError> {
    text.parse::<jiff::Timestamp>()
        .map(|t| t.as_nanosecond())
        .map_err(|e| {
            ToolError::new(
                crate::envelope::ErrorCode::InvalidParameters,
                format!("{field} = {text:?} is not an RFC 3339 time: {e}"),
                format!("pass {field} like 2026-01-31T00:00:00Z"),
            )
            .field(field)
        })
}

/// The `get_run_log` tool.
pub(super) struct GetRunLog;

impl ToolHandler for GetRunLog {
    const NAME: &'static str = "get_run_log";
    const DESCRIPTION: &'static str = "The tail of a run's stdout or stderr (bounded).";
    const READ_ONLY: bool = true;
    type Request = LogRequest;
    type Output = LogOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        _call: &Call,
        req: LogRequest,
    ) -> Result<LogOutput, ToolError> {
        log(ctx, req)
    }
}

pub(super) fn log(ctx: &ServerContext, req: LogRequest) -> Result<LogOutput, ToolError> {
    let cap = match req.detail {
        Detail::Compact => 16 * 1024,
        Detail::Full => 256 * 1024,
    };
    let mut max = crate::paging::in_range(
        "max_bytes",
        req.max_bytes as usize,
        1,
        cap,
        "the log tail one answer can hold in this view; detail \"full\" allows 262144",
    )?;
    loop {
        let tail = ctx.runs.log_tail(&req.run_id, req.stream, max)?;
        // Escaping can inflate text (control bytes become \\u00XX): shrink until it fits.
        let escaped = serde_json::to_string(&tail.text)
            .map(|s| s.len())
            .unwrap_or(usize::MAX);
        if escaped <= cap || max <= 64 {
            return Ok(LogOutput {
                run_id: req.run_id,
                stream: req.stream,
                text: tail.text,
                total_bytes: tail.total_bytes,
                truncated: tail.truncated,
            });
        }
        max /= 2;
    }
}
