//! Confirmation by the person, through the client's UI: where this server requires
//! confirmation and a 2026-07-28 request declares form elicitation, `start_analysis` and
//! `cancel_run` answer with an `InputRequiredResult` (multi-round-trip requests) carrying an
//! `elicitation/create` form that shows what would happen, and act only when the retried
//! request carries the person's `accept`. A decline or cancel starts (or stops) nothing.
//!
//! A session on an initialize-handshake protocol with elicitation (2025-06-18 to 2025-11-25)
//! whose client declared form elicitation at `initialize` is asked the same form the older
//! way: an `elicitation/create` request to the client while the tool call waits (over HTTP,
//! rmcp sends it on that call's SSE stream). Its answer goes through the same checks.
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
    CallToolRequestParams, CallToolResult, ElicitRequestParams, ElicitResult, ElicitationAction,
    InputRequest, InputRequests, InputRequiredResult, JsonObject, ProtocolVersion,
};
use rmcp::service::{ElicitationMode, RequestContext};
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

/// True when this session negotiated an initialize-handshake protocol that has
/// `elicitation/create` (2025-06-18 up to 2025-11-25) and its client declared form
/// elicitation at `initialize`: the person is asked with a server-to-client request.
fn live_form(context: &RequestContext<RoleServer>) -> bool {
    !super::version::modern(context)
        && context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2025_06_18.as_str())
        && context
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
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
    if !matches!(tool, "start_analysis" | "cancel_run") || ctx.confirm != ConfirmMode::Required {
        return None;
    }
    let live = live_form(context);
    if !live && !declares_form(context) {
        return None;
    }
    let args = request.arguments.clone().unwrap_or_default();
    // `confirm: false` asks for a preview only; nothing to confirm.
    if args.get("confirm") == Some(&Value::Bool(false)) {
        return None;
    }
    if live {
        return Some(ask_live(ctx, call, tool, args, context).await);
    }
    if let Some(state) = &request.request_state {
        let reply = reply_of(request.input_responses.as_ref());
        return Some(match answered(tool, args, state, reply) {
            Outcome::Declined(args, action) => declined(ctx, call, tool, args, action).await,
            other => other,
        });
    }
    Some(match question(ctx, call, tool, args).await {
        Ok((message, state)) => Outcome::Ask(form(message, state)),
        Err(answer) => Outcome::Answer(answer),
    })
}

/// What the person is asked (the form's message) and the state the answer binds to, from
/// the tool's own preview; `Err` is the answer when there is nothing to confirm (a preview
/// that cannot start, a run that already ended, an error).
async fn question(
    ctx: &Arc<ServerContext>,
    call: &Call,
    tool: &str,
    mut args: JsonObject,
) -> Result<(String, String), CallToolResult> {
    args.remove("confirm");
    args.remove("validation_id");
    let Some(preview) = crate::tools::dispatch(ctx, call, tool, Some(args)).await else {
        return Err(CallToolResult::error(vec![]));
    };
    if preview.is_error == Some(true) {
        return Err(preview);
    }
    let s = preview.structured_content.clone().unwrap_or(Value::Null);
    match tool {
        "start_analysis" => {
            if s["preview"]["ready"] != true {
                return Err(preview);
            }
            let Some(id) = s["validation_id"].as_str() else {
                return Err(preview);
            };
            Ok((start_message(&s), id.to_string()))
        }
        _ => {
            if s["status"].is_null() || s["state"].as_str().is_none() || terminal(&s) {
                return Err(preview);
            }
            let Some(run_id) = s["run_id"].as_str() else {
                return Err(preview);
            };
            Ok((cancel_message(&s), format!("cancel:{run_id}")))
        }
    }
}

/// An initialize-handshake session: ask the person now, with `elicitation/create` to the
/// client, and go on with their answer within this same tool call.
async fn ask_live(
    ctx: &Arc<ServerContext>,
    call: &Call,
    tool: &str,
    args: JsonObject,
    context: &RequestContext<RoleServer>,
) -> Outcome {
    let (message, state) = match question(ctx, call, tool, args.clone()).await {
        Ok(q) => q,
        Err(answer) => return Outcome::Answer(answer),
    };
    let params: ElicitRequestParams =
        serde_json::from_value(form_params(message)).expect("a form elicitation parses");
    // The person may take their time: no timeout of ours, but a client that cancels the
    // tool call stops the wait (and nothing starts).
    let reply = tokio::select! {
        r = context.peer.create_elicitation(params) => r,
        _ = context.ct.cancelled() => return Outcome::Answer(refusal(
            tool,
            "the client cancelled the call while the person was being asked",
            "call the tool again to be asked again",
        )),
    };
    let reply = match reply {
        Ok(reply) => reply,
        Err(e) => {
            return Outcome::Answer(refusal(
                tool,
                &format!("the client did not answer the confirmation form: {e}"),
                "call the tool again to be asked again, or use a client that shows elicitation forms",
            ));
        }
    };
    match answered(tool, args, &state, Some(reply)) {
        Outcome::Declined(args, action) => declined(ctx, call, tool, args, action).await,
        other => other,
    }
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
        "params": form_params(message),
    }))
    .expect("a form elicitation request parses");
    let mut requests = InputRequests::new();
    requests.insert(KEY.to_string(), request);
    InputRequiredResult::new(Some(requests), Some(state))
}

/// The `elicitation/create` params of the form, the same for both protocol generations.
fn form_params(message: String) -> Value {
    json!({
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
    })
}

/// The person's answer among a retried request's input responses.
fn reply_of(responses: Option<&rmcp::model::InputResponses>) -> Option<ElicitResult> {
    responses
        .and_then(|r| r.get(KEY))
        .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
}

/// The retry: the person's answer, and what the state says it answers.
fn answered(tool: &str, mut args: JsonObject, state: &str, reply: Option<ElicitResult>) -> Outcome {
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

    fn responses(action: &str, approve: Option<bool>) -> Option<ElicitResult> {
        let mut reply = json!({"action": action});
        if let Some(a) = approve {
            reply["content"] = json!({"approve": a});
        }
        let responses: rmcp::model::InputResponses =
            [(KEY.to_string(), reply)].into_iter().collect();
        reply_of(Some(&responses))
    }

    #[test]
    fn only_an_accept_that_approves_proceeds_and_then_with_the_granted_id() {
        let args: JsonObject = serde_json::from_value(json!({"workflow": "w"})).unwrap();
        let id = "val-0123";
        match answered(
            "start_analysis",
            args.clone(),
            id,
            responses("accept", None),
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
                responses(action, approve),
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
                responses("accept", None)
            ),
            Outcome::Answer(_)
        ));
        let cancel: JsonObject = serde_json::from_value(json!({"run_id": "run-2"})).unwrap();
        assert!(matches!(
            answered(
                "cancel_run",
                cancel,
                "cancel:run-1",
                responses("accept", None)
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
