//! Protocol 2025-11-25's experimental tasks, on the same durable task records as the
//! 2026-07-28 extension (mod.rs): a restart and a cancel behave the same on both. rmcp hands
//! these requests over as custom methods, renamed by the wire layer (wire.rs).
//!
//! What differs from 2026-07-28 is the wire shape, not the task: the client asks with
//! `params.task`, the task is nested (`{task: {…, ttl, pollInterval}}`), `tasks/result`
//! blocks until the task ends and answers the tool's own `CallToolResult`, `tasks/list`
//! pages the caller's tasks, `tasks/cancel` answers once the task reads `cancelled`, and a
//! result with `isError: true` reads `failed` (2025-11-25's meaning, not 2026-07-28's).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, DetailedTask, TaskPayload,
};
use serde_json::{Value, json};

use super::{Target, TaskRecord};
use crate::context::ServerContext;
use crate::tools::Call;

/// How often a blocking method re-reads the run.
const RECHECK: Duration = Duration::from_millis(250);
/// How long `tasks/cancel` waits for the run to read `cancelled` before it answers anyway.
const CANCEL_WAIT: Duration = Duration::from_secs(30);
/// Tasks per `tasks/list` page.
const PAGE: usize = 50;
/// The `_meta` key naming the task a message belongs to.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// How often a live task's run is read for `notifications/tasks/status`.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// One of the renamed requests (wire.rs), by the name after the prefix.
pub enum Method {
    Call,
    Get,
    Result,
    List,
    Cancel,
}

impl Method {
    pub fn parse(method: &str) -> Option<Method> {
        Some(match method.strip_prefix(super::wire::LEGACY_PREFIX)? {
            "call" => Method::Call,
            "get" => Method::Get,
            "result" => Method::Result,
            "list" => Method::List,
            "cancel" => Method::Cancel,
            _ => return None,
        })
    }
}

fn params_error(what: &str, e: impl std::fmt::Display) -> McpError {
    McpError::invalid_params(format!("invalid {what} params: {e}"), None)
}

/// The `taskId` of a `tasks/get`, `tasks/result` or `tasks/cancel`.
pub fn task_id(method: &str, params: Option<&Value>) -> Result<String, McpError> {
    params
        .and_then(|p| p.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| params_error(method, "taskId (a string) is required"))
}

/// The task-augmented `tools/call`'s params as rmcp's type (the `task` member set aside).
pub fn call_params(params: Option<Value>) -> Result<CallToolRequestParams, McpError> {
    serde_json::from_value(params.unwrap_or_else(|| json!({})))
        .map_err(|e| params_error("tools/call", e))
}

/// The 2025-11-25 `Task` of a detailed task read from its run.
fn task_json(detailed: &DetailedTask) -> Value {
    let task = &detailed.task;
    let status = match &detailed.payload {
        TaskPayload::Working => "working",
        TaskPayload::InputRequired { .. } => "input_required",
        TaskPayload::Completed { result } if result.get("isError") == Some(&json!(true)) => {
            "failed"
        }
        TaskPayload::Completed { .. } => "completed",
        TaskPayload::Cancelled => "cancelled",
        // `Failed`, and any payload a later rmcp adds: not a result this task can give.
        _ => "failed",
    };
    let mut out = json!({
        "taskId": task.task_id,
        "status": status,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        // The record lasts as long as its run: no TTL ends it.
        "ttl": null,
        "pollInterval": task.poll_interval_ms,
    });
    if let Some(message) = &task.status_message {
        out["statusMessage"] = json!(message);
    }
    out
}

fn terminal(task: &Value) -> bool {
    matches!(
        task["status"].as_str(),
        Some("completed" | "failed" | "cancelled")
    )
}

/// `tools/call` with `params.task`: a task following the run or campaign the tool started
/// (a `get_run_result` on a run still going is caught before the call, in server.rs). Any
/// other answer of a task tool (a preview, a decline, an error, a run already ended) is an
/// ended task holding that answer, since 2025-11-25 clients expect a task for every such
/// call; a tool that is no task tool answers as usual (the `task` member is ignored).
pub async fn created(
    ctx: &Arc<ServerContext>,
    call: &Call,
    tool: &str,
    response: CallToolResponse,
) -> Result<Value, McpError> {
    let CallToolResponse::Complete(answer) = response else {
        // A form round (MRTR) or a 2026 task belongs to 2026-07-28 requests only.
        return Err(McpError::internal_error(
            format!("{tool} answered a 2025-11-25 task request in a 2026-07-28 shape"),
            None,
        ));
    };
    if let Some(task) = super::for_answer(ctx, call, tool, &answer)? {
        return Ok(json!({"task": created_task(&task.task)}));
    }
    if !super::TASK_TOOLS.contains(&tool) {
        return serialize(&answer);
    }
    let record = super::create_answered(ctx, call, tool, &answer)?;
    Ok(json!({"task": get(ctx, call, &record).await?}))
}

/// The seed task of a `CreateTaskResult`, in 2025-11-25's shape.
pub fn created_task(task: &rmcp::model::Task) -> Value {
    task_json(&DetailedTask::new(task.clone(), TaskPayload::Working))
}

fn serialize(value: &impl serde::Serialize) -> Result<Value, McpError> {
    serde_json::to_value(value).map_err(|e| {
        McpError::internal_error(format!("a tool answer did not serialize: {e}"), None)
    })
}

/// `tasks/get`.
pub async fn get(
    ctx: &Arc<ServerContext>,
    call: &Call,
    record: &TaskRecord,
) -> Result<Value, McpError> {
    Ok(task_json(&super::get(ctx, call, record).await?))
}

/// `tasks/result`: waits for the task to end, then answers the original call's result,
/// tagged with the task. 2025-11-25 clients check it against the original tool's output
/// schema, so a start's answer is its receipt completed by the run's result (see
/// [`completed`]); a task-augmented `get_run_result` answers as that tool does.
pub async fn result(
    ctx: &Arc<ServerContext>,
    call: &Call,
    record: &TaskRecord,
) -> Result<Value, McpError> {
    while !terminal(&get(ctx, call, record).await?) {
        tokio::time::sleep(RECHECK).await;
    }
    let mut out = match record.target.reader() {
        Some((name, key)) => {
            let answer = super::tool(ctx, call, name, json!({key: record.id, "wait_s": 0})).await?;
            serialize(&completed(record, answer))?
        }
        None => record
            .receipt
            .clone()
            .unwrap_or_else(|| json!({"content": []})),
    };
    out["_meta"][RELATED_TASK] = json!({"taskId": record.task_id});
    Ok(out)
}

/// The original call's answer once its run or campaign ended, from `answer` (what the
/// reading tool says now). A run's result is merged over the start's receipt: every field
/// both tools have means the same (`run_id`, `state`, `next_action`), so the answer fits
/// both `start_analysis`'s and `get_run_result`'s schemas. A campaign's result, whose
/// fields do not line up with `start_campaign`'s, goes whole under `campaign_result`.
fn completed(record: &TaskRecord, answer: CallToolResult) -> CallToolResult {
    let Some(Value::Object(receipt)) = &record.receipt else {
        return answer;
    };
    if record.target == Target::Answer {
        return answer;
    }
    if answer.is_error == Some(true) {
        return answer;
    }
    let Some(now) = answer.structured_content.clone() else {
        return answer;
    };
    let mut merged = receipt.clone();
    match (record.target, now) {
        (Target::Run, Value::Object(now)) => merged.extend(now),
        (_, now) => {
            merged.insert("campaign_result".into(), now);
        }
    }
    CallToolResult::structured(Value::Object(merged))
}

/// Send `notifications/tasks/status` to this session each time the task's status changes,
/// until it ends or the session goes (2025-11-25 makes these optional; clients still poll).
/// Reads go through the same `tasks/get` path, so a notification says what a poll would.
pub fn notify_changes(
    ctx: &Arc<ServerContext>,
    call: &Call,
    task: &Value,
    peer: rmcp::Peer<rmcp::RoleServer>,
) {
    let Some(task_id) = task["taskId"].as_str().map(str::to_string) else {
        return;
    };
    if terminal(task) {
        return;
    }
    let (ctx, call) = (Arc::clone(ctx), call.clone());
    let mut last = task["status"].clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(WATCH_EVERY).await;
            let Ok(record) = super::load(&ctx, &call, &task_id) else {
                return;
            };
            let Ok(now) = get(&ctx, &call, &record).await else {
                continue;
            };
            if now["status"] != last {
                last = now["status"].clone();
                let notification = rmcp::model::CustomNotification::new(
                    "notifications/tasks/status",
                    Some(now.clone()),
                );
                if peer
                    .send_notification(rmcp::model::ServerNotification::CustomNotification(
                        notification,
                    ))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            if terminal(&now) {
                return;
            }
        }
    });
}

/// `tasks/cancel`: the run ends through `cancel_run`'s path; the answer is the task once it
/// reads `cancelled` (2025-11-25 answers with the task, not an ack). A task already ended
/// cannot be cancelled (-32602, as 2025-11-25 says).
pub async fn cancel(
    ctx: &Arc<ServerContext>,
    call: &Call,
    record: &TaskRecord,
) -> Result<Value, McpError> {
    let now = get(ctx, call, record).await?;
    if terminal(&now) {
        return Err(McpError::invalid_params(
            format!(
                "task {} has already ended ({}); only a working task can be cancelled",
                record.task_id, now["status"]
            ),
            Some(json!({"taskId": record.task_id, "status": now["status"]})),
        ));
    }
    super::cancel(ctx, call, record).await?;
    let begun = Instant::now();
    loop {
        let task = get(ctx, call, record).await?;
        if terminal(&task) || begun.elapsed() > CANCEL_WAIT {
            return Ok(task);
        }
        tokio::time::sleep(RECHECK).await;
    }
}

/// `tasks/list`: the caller's tasks, newest first, [`PAGE`] at a time; the cursor is the
/// last task id of the previous page.
pub async fn list(
    ctx: &Arc<ServerContext>,
    call: &Call,
    params: Option<&Value>,
) -> Result<Value, McpError> {
    let cursor = params.and_then(|p| p.get("cursor")).and_then(Value::as_str);
    let mut records = super::records_of(ctx, call);
    records.sort_by(|a, b| {
        (b.created_at.as_str(), b.task_id.as_str()).cmp(&(a.created_at.as_str(), &a.task_id))
    });
    let start = match cursor {
        None => 0,
        Some(c) => {
            records
                .iter()
                .position(|r| r.task_id == c)
                .ok_or_else(|| {
                    McpError::invalid_params(
                        format!("unknown tasks/list cursor: {c}"),
                        Some(json!({"hint": "pass the nextCursor of the previous page, or none for the first page"})),
                    )
                })?
                + 1
        }
    };
    let page: Vec<&TaskRecord> = records.iter().skip(start).take(PAGE).collect();
    let mut tasks = Vec::with_capacity(page.len());
    for record in &page {
        tasks.push(get(ctx, call, record).await?);
    }
    let mut out = json!({"tasks": tasks});
    if start + page.len() < records.len()
        && let Some(last) = page.last()
    {
        out["nextCursor"] = json!(last.task_id);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{Task, TaskStatus};

    fn detailed(payload: TaskPayload) -> DetailedTask {
        let task = Task::new(
            "task-1".to_string(),
            TaskStatus::Working,
            "2026-01-01T00:00:00Z".to_string(),
            "2026-01-01T00:00:01Z".to_string(),
        )
        .with_poll_interval_ms(2000)
        .with_status_message("run-x is running");
        DetailedTask::new(task, payload)
    }

    #[test]
    fn tasks_take_2025_11_25s_shape_and_meaning_of_is_error() {
        let working = task_json(&detailed(TaskPayload::Working));
        assert_eq!(
            working,
            json!({"taskId": "task-1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
                "lastUpdatedAt": "2026-01-01T00:00:01Z", "ttl": null, "pollInterval": 2000,
                "statusMessage": "run-x is running"})
        );
        let ok = json!({"content": [], "isError": false});
        let failed = json!({"content": [], "isError": true});
        let status = |result: Value| {
            task_json(&detailed(TaskPayload::Completed {
                result: result.as_object().unwrap().clone(),
            }))["status"]
                .clone()
        };
        assert_eq!(status(ok), "completed");
        assert_eq!(status(failed), "failed");
        assert_eq!(
            task_json(&detailed(TaskPayload::Cancelled))["status"],
            "cancelled"
        );
    }

    fn record(target: Target, receipt: Option<Value>) -> TaskRecord {
        TaskRecord {
            task_id: "task-1".into(),
            target,
            id: "run-1".into(),
            owner: "stdio".into(),
            tool: "start_analysis".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            receipt,
        }
    }

    #[test]
    fn a_starts_result_is_its_receipt_completed_by_the_runs_result() {
        let receipt = json!({"started": true, "validation_id": "val-1", "plan_sha256": "ab",
            "run_id": "run-1", "state": "queued", "next_action": "poll"});
        let now = CallToolResult::structured(json!({"run_id": "run-1", "state": "succeeded",
            "terminal": true, "result": {"reported": {"r2": 0.5}}, "next_action": "done"}));
        let run = completed(&record(Target::Run, Some(receipt.clone())), now.clone());
        let s = run.structured_content.unwrap();
        assert_eq!(s["started"], true);
        assert_eq!(s["validation_id"], "val-1");
        assert_eq!(s["state"], "succeeded");
        assert_eq!(s["result"]["reported"]["r2"], 0.5);
        let campaign = completed(&record(Target::Campaign, Some(receipt)), now.clone());
        let s = campaign.structured_content.unwrap();
        assert_eq!(s["state"], "queued");
        assert_eq!(s["campaign_result"]["state"], "succeeded");
        // Without a receipt (a task-augmented get_run_result), the reading tool's answer.
        let plain = completed(&record(Target::Run, None), now.clone());
        assert_eq!(plain.structured_content, now.structured_content);
    }

    #[test]
    fn only_the_renamed_methods_parse() {
        assert!(matches!(
            Method::parse("scimcp/tasks-2025-11-25/result"),
            Some(Method::Result)
        ));
        assert!(Method::parse("tasks/result").is_none());
        assert!(Method::parse("scimcp/tasks-2025-11-25/update").is_none());
    }
}
