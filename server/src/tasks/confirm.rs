//! Confirmation by the person, through the client's UI: where this server requires
//! confirmation and a 2026-07-28 request declares form elicitation, `start_analysis` and
//! `cancel_run` answer with an `InputRequiredResult` (multi-round-trip requests) carrying an
//! `elicitation/create` form that shows what would happen, and act only when the retried
//! request carries the person's `accept`. A decline or cancel starts (or stops) nothing.
//!
//! The `requestState` of a start is the preview's `validation_id`: not data the server
//! trusts from the client, but a handle to the one-time grant this process holds, bound to
//! this session and to the plan's content (request, dataset bytes, plan hash). A forged or
//! replayed state names no usable grant and is refused by the same check as a model's
//! `confirm: true`. This module must not start or cancel anything itself: an accepted
//! confirmation becomes the ordinary confirmed tool call.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ElicitResult, ElicitationAction, InputRequest,
    InputRequests, InputRequiredResult, JsonObject,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::context::{ConfirmMode, ServerContext};
use crate::tools::Call;

/// The key of the one input request a confirmation asks.
const KEY: &str = "confirm";

/// What the tool call does next.
pub enum Outcome {
    /// Ask the person: answer with this `InputRequiredResult`.
    Ask(InputRequiredResult),
    /// Answer with this (a preview that cannot start, a decline, an error).
    Answer(CallToolResult),
    /// The person accepted: run the tool with these (confirmed) arguments.
    Proceed(JsonObject),
    /// The person declined or dismissed the form (the word says which): answer with the
    /// preview again (the tool's own answer shape), saying so.
    Declined(JsonObject, &'static str),
}

/// True when this request declared form elicitation in its own 2026-07-28 capabilities
/// (an empty `elicitation: {}` means form).
fn declares_form(context: &RequestContext<RoleServer>) -> bool {
    super::version::modern(context)
        && context
            .meta
            .client_capabilities()
            .and_then(|caps| caps.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Whether `tool`'s call goes through the person's confirmation; `None` leaves it to the
/// ordinary path (`confirm: true` from the model).
pub async fn intercept(
    ctx: &Arc<ServerContext>,
    call: &Call,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Option<Outcome> {
    let tool = request.name.as_ref();
    if !matches!(tool, "start_analysis" | "cancel_run")
        || ctx.confirm != ConfirmMode::Required
        || !declares_form(context)
    {
        return None;
    }
    let args = request.arguments.clone().unwrap_or_default();
    // `confirm: false` asks for a preview only; nothing to confirm.
    if args.get("confirm") == Some(&Value::Bool(false)) {
        return None;
    }
    if let Some(state) = &request.request_state {
        return Some(
            match answered(tool, args, state, request.input_responses.as_ref()) {
                Outcome::Declined(args, action) => declined(ctx, call, tool, args, action).await,
                other => other,
            },
        );
    }
    Some(ask(ctx, call, tool, args).await)
}

/// The first round: the preview, shown to the person as a form.
async fn ask(ctx: &Arc<ServerContext>, call: &Call, tool: &str, mut args: JsonObject) -> Outcome {
    args.remove("confirm");
    args.remove("validation_id");
    let Some(preview) = crate::tools::dispatch(ctx, call, tool, Some(args)).await else {
        return Outcome::Answer(CallToolResult::error(vec![]));
    };
    if preview.is_error == Some(true) {
        return Outcome::Answer(preview);
    }
    let s = preview.structured_content.clone().unwrap_or(Value::Null);
    let (message, state) = match tool {
        "start_analysis" => {
            if s["preview"]["ready"] != true {
                return Outcome::Answer(preview);
            }
            let Some(id) = s["validation_id"].as_str() else {
                return Outcome::Answer(preview);
            };
            (start_message(&s), id.to_string())
        }
        _ => {
            if s["status"].is_null() || s["state"].as_str().is_none() || terminal(&s) {
                return Outcome::Answer(preview);
            }
            let Some(run_id) = s["run_id"].as_str() else {
                return Outcome::Answer(preview);
            };
            (cancel_message(&s), format!("cancel:{run_id}"))
        }
    };
    Outcome::Ask(form(message, state))
}

fn terminal(s: &Value) -> bool {
    matches!(
        s["state"].as_str(),
        Some("succeeded" | "partial_failure" | "failed" | "cancelled")
    )
}

/// The form: one yes/no the person answers in the client's UI.
fn form(message: String, state: String) -> InputRequiredResult {
    let request: InputRequest = serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "approve": {
                        "type": "boolean",
                        "title": "Go ahead",
                        "description": "Accept to go ahead exactly as shown; decline to do nothing.",
                        "default": true
                    }
                },
                "required": ["approve"]
            }
        }
    }))
    .expect("a form elicitation request parses");
    let mut requests = InputRequests::new();
    requests.insert(KEY.to_string(), request);
    InputRequiredResult::new(Some(requests), Some(state))
}

/// The retry: the person's answer, and what the state says it answers.
fn answered(
    tool: &str,
    mut args: JsonObject,
    state: &str,
    responses: Option<&rmcp::model::InputResponses>,
) -> Outcome {
    let reply = responses
        .and_then(|r| r.get(KEY))
        .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
    let Some(reply) = reply else {
        return Outcome::Answer(refusal(
            tool,
            "the retried request carries no answer to the confirmation form",
            "call the tool again without request_state to be asked again",
        ));
    };
    let approved = reply.action == ElicitationAction::Accept
        && reply
            .content
            .as_ref()
            .and_then(|c| c.get("approve"))
            .and_then(Value::as_bool)
            .unwrap_or(true);
    let binds = match tool {
        "start_analysis" => state.starts_with("val-"),
        _ => state.strip_prefix("cancel:") == args.get("run_id").and_then(Value::as_str),
    };
    if !binds {
        return Outcome::Answer(refusal(
            tool,
            "the request_state does not belong to this call",
            "call the tool again without request_state to be asked again",
        ));
    }
    if !approved {
        let action = match reply.action {
            ElicitationAction::Decline => "declined",
            ElicitationAction::Cancel => "dismissed",
            _ => "did not approve",
        };
        return Outcome::Declined(args, action);
    }
    args.insert("confirm".into(), true.into());
    if tool == "start_analysis" {
        args.insert("validation_id".into(), state.into());
    }
    Outcome::Proceed(args)
}

/// The answer to a decline: the tool's own preview (nothing started or cancelled), its
/// next action saying the person said no.
async fn declined(
    ctx: &Arc<ServerContext>,
    call: &Call,
    tool: &str,
    mut args: JsonObject,
    action: &'static str,
) -> Outcome {
    tracing::info!(tool, "the person {action} the confirmation");
    args.remove("confirm");
    args.remove("validation_id");
    let Some(mut preview) = crate::tools::dispatch(ctx, call, tool, Some(args)).await else {
        return Outcome::Answer(CallToolResult::error(vec![]));
    };
    let what = match tool {
        "start_analysis" => "nothing was started",
        _ => "nothing was cancelled",
    };
    let said = format!(
        "the person {action} the confirmation, so {what}: ask them what to change; do not retry with confirm: true"
    );
    if preview.is_error != Some(true)
        && let Some(s) = preview.structured_content.as_mut()
    {
        let field = if tool == "start_analysis" {
            "next_action"
        } else {
            "message"
        };
        s[field] = said.clone().into();
        preview.content = vec![
            rmcp::model::ContentBlock::text(said.clone()),
            rmcp::model::ContentBlock::text(s.to_string()),
        ];
    }
    Outcome::Answer(preview)
}

fn refusal(tool: &str, what: &str, next: &str) -> CallToolResult {
    CallToolResult::structured_error(json!({
        "error": {
            "code": "confirmation_required",
            "message": format!("{tool}: {what}"),
            "next_action": next,
        }
    }))
}

/// What a start would do, for the person to read: the command, the inputs with their
/// hashes, the expected artifacts and the resources.
fn start_message(s: &Value) -> String {
    let p = &s["preview"];
    let mut lines = vec![
        format!(
            "Start the analysis '{}'?",
            p["workflow"].as_str().unwrap_or("?")
        ),
        format!("Command: {}", p["command_line"].as_str().unwrap_or("?")),
    ];
    if let Some(d) = p["plan"]["dataset"].as_object() {
        lines.push(format!(
            "Dataset: {} ({} bytes, sha256 {})",
            d.get("reference").and_then(Value::as_str).unwrap_or("?"),
            d.get("size_bytes").and_then(Value::as_u64).unwrap_or(0),
            d.get("sha256").and_then(Value::as_str).unwrap_or("?"),
        ));
    }
    for input in p["plan"]["inputs"].as_array().into_iter().flatten() {
        for f in input["files"].as_array().into_iter().flatten() {
            lines.push(format!(
                "Input {}: {} ({} bytes, sha256 {})",
                input["id"].as_str().unwrap_or("?"),
                f["reference"].as_str().unwrap_or("?"),
                f["size_bytes"].as_u64().unwrap_or(0),
                f["sha256"].as_str().unwrap_or("?"),
            ));
        }
    }
    let artifacts: Vec<String> = p["expected_artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            format!(
                "{}{}",
                a["path"].as_str().unwrap_or("?"),
                if a["required"] == true {
                    ""
                } else {
                    " (optional)"
                }
            )
        })
        .collect();
    if !artifacts.is_empty() {
        lines.push(format!("Expected artifacts: {}", artifacts.join(", ")));
    }
    let r = &p["estimated_resources"];
    lines.push(format!(
        "Resources: stopped after {} s; {} runs pending now (at most {} at once)",
        r["timeout_s"], r["runs_pending_now"], r["max_concurrent_runs"]
    ));
    lines.push(format!(
        "Plan sha256 {}; validation {}",
        s["plan_sha256"].as_str().unwrap_or("?"),
        s["validation_id"].as_str().unwrap_or("?")
    ));
    // Each line is cleaned on its own: the line breaks are ours, for the person to read.
    lines
        .iter()
        .map(|l| scimcp_core::manifest::safe_text(l))
        .collect::<Vec<_>>()
        .join("\n")
}

fn cancel_message(s: &Value) -> String {
    scimcp_core::manifest::safe_text(&format!(
        "Cancel run {}? {}",
        s["run_id"].as_str().unwrap_or("?"),
        s["message"].as_str().unwrap_or("")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn responses(action: &str, approve: Option<bool>) -> rmcp::model::InputResponses {
        let mut reply = json!({"action": action});
        if let Some(a) = approve {
            reply["content"] = json!({"approve": a});
        }
        [(KEY.to_string(), reply)].into_iter().collect()
    }

    #[test]
    fn only_an_accept_that_approves_proceeds_and_then_with_the_granted_id() {
        let args: JsonObject = serde_json::from_value(json!({"workflow": "w"})).unwrap();
        let id = "val-0123";
        match answered(
            "start_analysis",
            args.clone(),
            id,
            Some(&responses("accept", None)),
        ) {
            Outcome::Proceed(a) => {
                assert_eq!(a["confirm"], true);
                assert_eq!(a["validation_id"], id);
            }
            _ => panic!("an accept proceeds"),
        }
        for (action, approve) in [("accept", Some(false)), ("decline", None), ("cancel", None)] {
            match answered(
                "start_analysis",
                args.clone(),
                id,
                Some(&responses(action, approve)),
            ) {
                Outcome::Declined(a, _) => assert!(a.get("confirm").is_none(), "{action}"),
                _ => panic!("{action} must not proceed"),
            }
        }
        assert!(matches!(
            answered("start_analysis", args.clone(), id, None),
            Outcome::Answer(_)
        ));
        // A state that is no validation id, or a cancel state for another run, is refused.
        assert!(matches!(
            answered(
                "start_analysis",
                args,
                "cancel:run-1",
                Some(&responses("accept", None))
            ),
            Outcome::Answer(_)
        ));
        let cancel: JsonObject = serde_json::from_value(json!({"run_id": "run-2"})).unwrap();
        assert!(matches!(
            answered(
                "cancel_run",
                cancel,
                "cancel:run-1",
                Some(&responses("accept", None))
            ),
            Outcome::Answer(_)
        ));
    }

    #[test]
    fn the_form_is_one_boolean_under_a_fixed_key() {
        let r = serde_json::to_value(form("m".into(), "val-1".into())).unwrap();
        assert_eq!(r["resultType"], "input_required");
        assert_eq!(r["requestState"], "val-1");
        assert_eq!(r["inputRequests"][KEY]["method"], "elicitation/create");
        assert_eq!(
            r["inputRequests"][KEY]["params"]["requestedSchema"]["properties"]["approve"]["type"],
            "boolean"
        );
    }
}
