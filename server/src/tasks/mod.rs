//! MCP tasks (the 2026-07-28 `io.modelcontextprotocol/tasks` extension) mapped onto the
//! durable runs and campaigns: a task is a small record, `<data root>/tasks/<task id>.json`,
//! naming the run or campaign it follows and the caller that created it, so the run's own
//! `status.json` and `result.json` are the task's state. A task therefore survives a server
//! restart and never expires while its run lives (`ttlMs: null`); rmcp's in-memory
//! `TaskManager`, which aborts work past a TTL, is deliberately not used.
//!
//! This module must not run or stop anything itself: it reads through the tools
//! (`get_run_result`, `get_campaign_result` with no wait) and cancels through `cancel_run` /
//! `cancel_campaign`, so a task shows exactly what the tools show and ends a run exactly as
//! they do.
//!
//! 2025-11-25's experimental tasks (`params.task`, `tasks/result`, `tasks/list`) follow the
//! same records in that version's shape (legacy.rs), through a JSON-RPC layer under rmcp
//! (wire.rs), which cannot route them. 2025-11-25 sessions also get the person's
//! confirmation (confirm.rs).

pub mod confirm;
pub mod legacy;
mod version;
pub mod wire;
pub use version::modern;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CreateTaskResult, DetailedTask,
    JsonObject, Task, TaskPayload,
};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::context::ServerContext;
use crate::tools::Call;

/// How often a client should poll `tasks/get`, in milliseconds.
const POLL_INTERVAL_MS: u64 = 2000;

/// The tools a client may ask to run as a task.
pub const TASK_TOOLS: &[&str] = &["start_analysis", "start_campaign", "get_run_result"];

/// What a task follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    Run,
    Campaign,
    /// A 2025-11-25 task-augmented call that started nothing (a preview, a person's
    /// decline, an error, a run already ended): that version wants a task for every such
    /// call, so the task is created ended, its result the answer kept in `receipt`.
    Answer,
}

impl Target {
    /// The tool that reads the target and its id argument; `None` for an answer.
    fn reader(self) -> Option<(&'static str, &'static str)> {
        match self {
            Target::Run => Some(("get_run_result", "run_id")),
            Target::Campaign => Some(("get_campaign_result", "campaign_id")),
            Target::Answer => None,
        }
    }
}

/// The durable record of one task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskRecord {
    pub task_id: String,
    pub target: Target,
    /// The run or campaign id.
    pub id: String,
    /// The caller that created the task (`stdio`, `loopback` or a token's name): only it
    /// sees the task.
    pub owner: String,
    /// The tool call that created it.
    pub tool: String,
    pub created_at: String,
    /// The structured answer of the call that created it (a start's receipt), which
    /// 2025-11-25's `tasks/result` completes with the run's result (legacy.rs); absent for a
    /// task-augmented `get_run_result` and in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Value>,
}

/// What can go wrong with a task record.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("cannot write the task record {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: scimcp_core::fs::WriteError,
    },
    #[error("cannot create the tasks directory {path}: {source}")]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<TaskError> for McpError {
    fn from(e: TaskError) -> Self {
        McpError::internal_error(e.to_string(), None)
    }
}

/// True when this request runs under protocol 2026-07-28 or later and declared the tasks
/// extension in its own `_meta` capabilities (the extension does not exist before that
/// version, so a legacy session's `initialize` capabilities never count).
pub fn wants_task(context: &RequestContext<RoleServer>) -> bool {
    modern(context)
        && context
            .meta
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks())
}

fn dir(ctx: &ServerContext) -> PathBuf {
    ctx.data_root.join("tasks")
}

/// A task id: 128 random bits, never derived from the run id (which `list_runs` shows).
fn new_task_id() -> String {
    format!("task-{}", uuid::Uuid::new_v4().simple())
}

fn is_task_id(id: &str) -> bool {
    id.strip_prefix("task-")
        .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn record_path(root: &Path, task_id: &str) -> PathBuf {
    root.join(format!("{task_id}.json"))
}

/// Create (durably, before the reply) a task following `id` for `call`'s caller.
pub fn create(
    ctx: &ServerContext,
    call: &Call,
    tool: &str,
    target: Target,
    id: &str,
    receipt: Option<&Value>,
) -> Result<CreateTaskResult, TaskError> {
    let root = dir(ctx);
    scimcp_core::fs::create_private_dir(&root).map_err(|source| TaskError::Dir {
        path: root.clone(),
        source,
    })?;
    let record = TaskRecord {
        task_id: new_task_id(),
        target,
        id: id.to_string(),
        owner: call.caller.name().to_string(),
        tool: tool.to_string(),
        created_at: crate::runs::state::now(),
        receipt: receipt.cloned(),
    };
    let path = record_path(&root, &record.task_id);
    scimcp_core::fs::write_json_atomic(&path, &record)
        .map_err(|source| TaskError::Write { path, source })?;
    tracing::info!(task_id = record.task_id, target = id, "task created");
    let task = Task::new(
        record.task_id.clone(),
        rmcp::model::TaskStatus::Working,
        record.created_at.clone(),
        record.created_at.clone(),
    )
    .with_poll_interval_ms(POLL_INTERVAL_MS)
    .with_status_message(format!(
        "{id} started; poll tasks/get for its state and result"
    ));
    Ok(CreateTaskResult::new(task))
}

/// The task `task_id` as `call`'s caller may see it: an unknown id and another caller's
/// task answer alike (-32602), so a task's existence does not leak across tokens.
pub fn load(ctx: &ServerContext, call: &Call, task_id: &str) -> Result<TaskRecord, McpError> {
    let unknown = || {
        McpError::invalid_params(
            format!("unknown task: {task_id}"),
            Some(
                json!({"taskId": task_id, "hint": "use the taskId a task-augmented tools/call returned, with the same credentials"}),
            ),
        )
    };
    if !is_task_id(task_id) {
        return Err(unknown());
    }
    let text = fs_err::read_to_string(record_path(&dir(ctx), task_id)).map_err(|_| unknown())?;
    let record: TaskRecord = serde_json::from_str(&text).map_err(|e| {
        McpError::internal_error(
            format!("the record of task {task_id} is unreadable: {e}"),
            None,
        )
    })?;
    if record.owner != call.caller.name() {
        return Err(unknown());
    }
    Ok(record)
}

/// Every task record `call`'s caller created (unreadable records are skipped: they belong to
/// no one this caller can prove to be).
pub fn records_of(ctx: &ServerContext, call: &Call) -> Vec<TaskRecord> {
    let Ok(entries) = fs_err::read_dir(dir(ctx)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .is_some_and(is_task_id)
        })
        .filter_map(|e| fs_err::read_to_string(e.path()).ok())
        .filter_map(|text| serde_json::from_str::<TaskRecord>(&text).ok())
        .filter(|r| r.owner == call.caller.name())
        .collect()
}

/// Run a tool in-process and return its answer; an unknown tool is a bug here.
async fn tool(
    ctx: &Arc<ServerContext>,
    call: &Call,
    name: &str,
    args: Value,
) -> Result<CallToolResult, McpError> {
    let args = args.as_object().cloned();
    crate::tools::dispatch(ctx, call, name, args)
        .await
        .ok_or_else(|| McpError::internal_error(format!("tool {name} is missing"), None))
}

fn structured(r: &CallToolResult) -> &Value {
    static NULL: Value = Value::Null;
    r.structured_content.as_ref().unwrap_or(&NULL)
}

/// The task's state now, read from its run or campaign.
pub async fn get(
    ctx: &Arc<ServerContext>,
    call: &Call,
    record: &TaskRecord,
) -> Result<DetailedTask, McpError> {
    let Some((tool_name, key)) = record.target.reader() else {
        return answered(record);
    };
    let answer = tool(ctx, call, tool_name, json!({key: record.id, "wait_s": 0})).await?;
    let s = structured(&answer);
    let state = s["state"].as_str().unwrap_or("unknown").to_string();
    let terminal = s["terminal"].as_bool().unwrap_or(false);
    let now = jiff::Timestamp::now().to_string();
    let mut task = Task::new(
        record.task_id.clone(),
        rmcp::model::TaskStatus::Working,
        record.created_at.clone(),
        now,
    )
    .with_poll_interval_ms(POLL_INTERVAL_MS);
    if answer.is_error == Some(true) {
        // The run or campaign itself cannot be read (e.g. its directory was removed): the
        // tool's error answer is the task's result, a completed task with isError.
        let text = s["error"]["message"]
            .as_str()
            .unwrap_or("unreadable")
            .to_string();
        task = task.with_status_message(format!("{}: {text}", record.id));
        return Ok(DetailedTask::new(
            task,
            TaskPayload::Completed {
                result: to_object(&answer)?,
            },
        ));
    }
    if !terminal {
        task = task.with_status_message(working_message(ctx, record, &state, s));
        return Ok(DetailedTask::new(task, TaskPayload::Working));
    }
    task = task.with_status_message(format!("{} ended: {state}", record.id));
    if state == "cancelled" {
        return Ok(DetailedTask::new(task, TaskPayload::Cancelled));
    }
    Ok(DetailedTask::new(
        task,
        TaskPayload::Completed {
            result: to_object(&answer)?,
        },
    ))
}

/// A [`Target::Answer`] task: ended when created, with the kept answer as its result.
fn answered(record: &TaskRecord) -> Result<DetailedTask, McpError> {
    let Some(Value::Object(result)) = &record.receipt else {
        return Err(McpError::internal_error(
            format!("the record of task {} keeps no answer", record.task_id),
            None,
        ));
    };
    let task = Task::new(
        record.task_id.clone(),
        rmcp::model::TaskStatus::Completed,
        record.created_at.clone(),
        record.created_at.clone(),
    )
    .with_poll_interval_ms(POLL_INTERVAL_MS)
    .with_status_message(format!(
        "{} answered at once and started nothing",
        record.tool
    ));
    Ok(DetailedTask::new(
        task,
        TaskPayload::Completed {
            result: result.clone(),
        },
    ))
}

/// Create an ended task whose result is `answer` (a [`Target::Answer`]).
pub fn create_answered(
    ctx: &ServerContext,
    call: &Call,
    tool: &str,
    answer: &CallToolResult,
) -> Result<TaskRecord, McpError> {
    let answer = serde_json::to_value(answer).map_err(|e| {
        McpError::internal_error(format!("a tool answer did not serialize: {e}"), None)
    })?;
    let created = create(ctx, call, tool, Target::Answer, tool, Some(&answer))?;
    load(ctx, call, &created.task.task_id)
}

fn to_object(answer: &CallToolResult) -> Result<JsonObject, McpError> {
    match serde_json::to_value(answer) {
        Ok(Value::Object(o)) => Ok(o),
        other => Err(McpError::internal_error(
            format!("a tool answer did not serialize to an object: {other:?}"),
            None,
        )),
    }
}

/// The status message of a live task: the run's state and what its CLI last printed, or a
/// campaign's counts.
fn working_message(
    ctx: &ServerContext,
    record: &TaskRecord,
    state: &str,
    answer: &Value,
) -> String {
    match record.target {
        Target::Run => {
            let said = ctx
                .runs
                .status(&record.id)
                .ok()
                .and_then(|status| crate::runs::progress::read(&ctx.adapter, &ctx.runs, &status))
                .map(|p| p.describe())
                .filter(|d| !d.is_empty());
            let text = match said {
                Some(d) => format!("{} is {state}; the CLI reports: {d}", record.id),
                None => format!("{} is {state}", record.id),
            };
            scimcp_core::manifest::safe_text(&text)
        }
        Target::Campaign => format!("{} is {state}; counts {}", record.id, answer["counts"]),
        Target::Answer => format!("{} answered", record.tool),
    }
}

/// Cancel the task's run or campaign through the tools' own cancel path (the whole
/// process tree ends). Cooperative, as the extension says: the reply is an ack, the state
/// follows on `tasks/get`.
pub async fn cancel(
    ctx: &Arc<ServerContext>,
    call: &Call,
    record: &TaskRecord,
) -> Result<(), McpError> {
    let (name, key) = match record.target {
        Target::Run => ("cancel_run", "run_id"),
        Target::Campaign => ("cancel_campaign", "campaign_id"),
        Target::Answer => {
            return Err(McpError::invalid_params(
                format!(
                    "task {} ended when it was created ({} started nothing): there is nothing to cancel",
                    record.task_id, record.tool
                ),
                Some(json!({"taskId": record.task_id})),
            ));
        }
    };
    let answer = tool(ctx, call, name, json!({key: record.id, "confirm": true})).await?;
    if answer.is_error == Some(true) {
        let s = structured(&answer);
        return Err(McpError::internal_error(
            format!(
                "cancelling {} failed: {}",
                record.id,
                s["error"]["message"].as_str().unwrap_or("unknown error")
            ),
            Some(s.clone()),
        ));
    }
    tracing::info!(
        task_id = record.task_id,
        target = record.id,
        "task cancelled"
    );
    Ok(())
}

/// For a task-augmented call of a [`TASK_TOOLS`] tool: the task to answer with, once the
/// tool answered `answer`. `None` keeps the ordinary answer (a preview, an error, a run that
/// already ended): the server decides per call whether a task is worth creating.
pub fn for_answer(
    ctx: &ServerContext,
    call: &Call,
    tool: &str,
    answer: &CallToolResult,
) -> Result<Option<CreateTaskResult>, TaskError> {
    if answer.is_error == Some(true) {
        return Ok(None);
    }
    let s = structured(answer);
    let (target, id) = match tool {
        "start_analysis" if s["started"] == true => (Target::Run, &s["run_id"]),
        "start_campaign" if s["started"] == true => (Target::Campaign, &s["campaign_id"]),
        _ => return Ok(None),
    };
    let Some(id) = id.as_str() else {
        return Ok(None);
    };
    create(ctx, call, tool, target, id, Some(s)).map(Some)
}

/// For a task-augmented `get_run_result`: a task following the run when it has not ended
/// (the call then waits for nothing), `None` to answer as usual.
pub fn for_waiting_result(
    ctx: &ServerContext,
    call: &Call,
    args: Option<&JsonObject>,
) -> Result<Option<CreateTaskResult>, TaskError> {
    let Some(run_id) = args.and_then(|a| a.get("run_id")).and_then(Value::as_str) else {
        return Ok(None);
    };
    match ctx.runs.status(run_id) {
        Ok(status) if !status.state.is_terminal() => {
            create(ctx, call, "get_run_result", Target::Run, run_id, None).map(Some)
        }
        _ => Ok(None),
    }
}

/// What `tools/call` does before the tool runs.
pub enum Before {
    /// Answer at once (a confirmation form, a person's decline, a task for a waiting call).
    Respond(CallToolResponse),
    /// Run the tool with these arguments.
    Call(Option<JsonObject>),
}

/// The tasks and confirmation hooks of `tools/call`, before the tool runs.
pub async fn before_call(
    ctx: &Arc<ServerContext>,
    call: &Call,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<Before, McpError> {
    if let Some(outcome) = confirm::intercept(ctx, call, request, context).await {
        return Ok(match outcome {
            confirm::Outcome::Ask(ask) => Before::Respond(CallToolResponse::InputRequired(ask)),
            confirm::Outcome::Answer(answer) => Before::Respond(CallToolResponse::Complete(answer)),
            confirm::Outcome::Proceed(args) => Before::Call(Some(args)),
            // `intercept` answers a decline itself (with the tool's preview); should one reach
            // here, nothing runs.
            confirm::Outcome::Declined(..) => {
                Before::Respond(CallToolResponse::Complete(CallToolResult::error(vec![])))
            }
        });
    }
    if request.name == "get_run_result"
        && wants_task(context)
        && let Some(task) = for_waiting_result(ctx, call, request.arguments.as_ref())?
    {
        return Ok(Before::Respond(CallToolResponse::Task(task)));
    }
    Ok(Before::Call(request.arguments.clone()))
}

/// The tasks hook of `tools/call`, after the tool answered: the task to answer with instead.
pub fn after_call(
    ctx: &ServerContext,
    call: &Call,
    tool: &str,
    answer: &CallToolResult,
    context: &RequestContext<RoleServer>,
) -> Result<Option<CreateTaskResult>, McpError> {
    if !wants_task(context) || !TASK_TOOLS.contains(&tool) {
        return Ok(None);
    }
    Ok(for_answer(ctx, call, tool, answer)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_random_and_checked_before_any_path_is_built() {
        let a = new_task_id();
        assert!(is_task_id(&a), "{a}");
        assert_ne!(a, new_task_id());
        for bad in [
            "",
            "task-",
            "task-../../etc/passwd",
            "run-0123456789abcdef",
            &format!("{a}x"),
        ] {
            assert!(!is_task_id(bad), "{bad}");
        }
    }
}
