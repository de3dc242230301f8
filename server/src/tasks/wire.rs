//! The JSON-RPC layer under rmcp that lets a 2025-11-25 session use that version's
//! experimental tasks, which rmcp 3.11 cannot route: it drops `params.task` from `tools/call`
//! and `capabilities.tasks` from `initialize`, and reads `tasks/get` and `tasks/cancel` as the
//! 2026-07-28 extension's methods (which answer `-32021` without the extension, in another
//! shape). So for a session whose `initialize` answer negotiated 2025-11-25 only:
//! - the `initialize` answer gains `capabilities.tasks`;
//! - `tools/list` answers mark the task tools `execution.taskSupport: "optional"`;
//! - a task-augmented `tools/call` and `tasks/{get,result,list,cancel}` are renamed to
//!   scimcp's own methods ([`LEGACY_PREFIX`]), which rmcp hands to `on_custom_request`
//!   (legacy.rs), unchanged otherwise.
//!
//! Any other message, and every message of any other session, passes byte for byte. Over
//! stdio one [`Wire`] follows the connection (stdio.rs); over HTTP one follows each request,
//! knowing its version from the request's header (http/wire.rs).

use std::collections::HashSet;
use std::sync::Mutex;

use serde_json::{Value, json};

/// The method prefix of the renamed 2025-11-25 requests (legacy.rs answers them).
pub const LEGACY_PREFIX: &str = "scimcp/tasks-2025-11-25/";

/// The protocol version whose experimental tasks this layer serves.
pub const VERSION: &str = "2025-11-25";

/// The state of one connection.
#[derive(Debug, Default)]
pub struct Wire {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The id of the client's `initialize`, until its answer passes.
    initialize: Option<String>,
    /// The session negotiated 2025-11-25.
    legacy: bool,
    /// The `protocolVersion` the `initialize` answer negotiated (rmcp shapes results by it),
    /// once that answer has passed with a result.
    negotiated: Option<String>,
    /// Ids of `tools/list` requests whose answers are still to pass.
    tools_lists: HashSet<String>,
}

fn id_key(message: &Value) -> Option<String> {
    message
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .map(Value::to_string)
}

impl Wire {
    /// The layer for one HTTP request, whose session speaks `version` (its
    /// `MCP-Protocol-Version` header, or the version an `initialize` asks for): over HTTP
    /// each request says its version, so no state outlives the request. `None` for any
    /// other version, whose requests the layer leaves alone unread.
    pub fn for_request(version: &str) -> Option<Wire> {
        (version == VERSION).then(|| Wire {
            state: Mutex::new(State {
                legacy: true,
                ..State::default()
            }),
        })
    }

    /// A client message before rmcp reads it: the message to pass instead, or `None` to
    /// pass it unchanged.
    pub fn inbound(&self, message: &Value) -> Option<Value> {
        let method = message.get("method")?.as_str()?;
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if method == "initialize" {
            state.initialize = id_key(message);
            state.legacy = false;
            state.negotiated = None;
            return None;
        }
        if !state.legacy {
            return None;
        }
        let renamed = match method {
            "tools/list" => {
                if let Some(id) = id_key(message) {
                    state.tools_lists.insert(id);
                }
                return None;
            }
            "tools/call"
                if message
                    .pointer("/params/task")
                    .is_some_and(Value::is_object) =>
            {
                "call"
            }
            "tasks/get" => "get",
            "tasks/result" => "result",
            "tasks/list" => "list",
            "tasks/cancel" => "cancel",
            _ => return None,
        };
        let mut message = message.clone();
        message["method"] = json!(format!("{LEGACY_PREFIX}{renamed}"));
        Some(message)
    }

    /// The protocol version the `initialize` answer negotiated, once it has passed.
    pub fn initialized_version(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.negotiated.clone()
    }

    /// True when some server message may need rewriting, so the others are not parsed.
    pub fn watching(&self) -> bool {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.initialize.is_some() || !state.tools_lists.is_empty()
    }

    /// A server message before the client reads it: the message to send instead, or `None`.
    pub fn outbound(&self, message: &Value) -> Option<Value> {
        let id = id_key(message)?;
        if message.get("method").is_some() {
            return None;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.initialize.as_ref() == Some(&id) {
            state.initialize = None;
            let result = message.get("result")?;
            state.negotiated = result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_string);
            state.legacy = state.negotiated.as_deref() == Some(VERSION);
            if !state.legacy {
                return None;
            }
            let mut message = message.clone();
            message["result"]["capabilities"]["tasks"] = json!({
                "list": {},
                "cancel": {},
                "requests": {"tools": {"call": {}}},
            });
            return Some(message);
        }
        if !state.tools_lists.remove(&id) {
            return None;
        }
        let tools = message.pointer("/result/tools")?.as_array()?;
        let marked: Vec<Value> = tools
            .iter()
            .map(|tool| {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                let mut tool = tool.clone();
                if super::TASK_TOOLS.contains(&name) {
                    tool["execution"] = json!({"taskSupport": "optional"});
                }
                tool
            })
            .collect();
        let mut message = message.clone();
        message["result"]["tools"] = Value::Array(marked);
        Some(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init(wire: &Wire, version: &str) -> Option<Value> {
        assert!(
            wire.inbound(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}))
                .is_none()
        );
        assert!(wire.watching());
        wire.outbound(&json!({"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": version, "capabilities": {"tools": {}}}}))
    }

    #[test]
    fn a_2025_11_25_session_is_offered_tasks_and_its_task_methods_renamed() {
        let wire = Wire::default();
        let answer = init(&wire, "2025-11-25").expect("rewritten");
        assert_eq!(
            answer["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"],
            json!({})
        );
        assert_eq!(answer["result"]["capabilities"]["tools"], json!({}));
        assert!(!wire.watching());

        let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "start_analysis", "arguments": {}, "task": {"ttl": 60000}}});
        let renamed = wire.inbound(&call).unwrap();
        assert_eq!(renamed["method"], "scimcp/tasks-2025-11-25/call");
        assert_eq!(renamed["params"], call["params"]);
        let plain = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "start_analysis"}});
        assert!(wire.inbound(&plain).is_none());
        for (method, ours) in [
            ("tasks/get", "get"),
            ("tasks/result", "result"),
            ("tasks/list", "list"),
            ("tasks/cancel", "cancel"),
        ] {
            let m = wire
                .inbound(&json!({"jsonrpc": "2.0", "id": 5, "method": method}))
                .unwrap();
            assert_eq!(m["method"], format!("{LEGACY_PREFIX}{ours}"));
        }

        assert!(
            wire.inbound(&json!({"jsonrpc": "2.0", "id": "l", "method": "tools/list"}))
                .is_none()
        );
        assert!(wire.watching());
        let tools = wire
            .outbound(&json!({"jsonrpc": "2.0", "id": "l", "result": {"tools": [
                {"name": "start_analysis"}, {"name": "list_runs"}]}}))
            .unwrap();
        assert_eq!(
            tools["result"]["tools"][0]["execution"]["taskSupport"],
            "optional"
        );
        assert!(tools["result"]["tools"][1].get("execution").is_none());
        // Another answer with the same id later is not a tools/list answer.
        assert!(
            wire.outbound(&json!({"jsonrpc": "2.0", "id": "l", "result": {"tools": []}}))
                .is_none()
        );
    }

    #[test]
    fn an_http_request_knows_its_version_from_its_header() {
        let get =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": "t"}});
        let renamed = Wire::for_request("2025-11-25")
            .unwrap()
            .inbound(&get)
            .unwrap();
        assert_eq!(renamed["method"], "scimcp/tasks-2025-11-25/get");
        assert!(Wire::for_request("2026-07-28").is_none());
        assert!(Wire::for_request("2025-06-18").is_none());
        let wire = Wire::for_request("2025-11-25").unwrap();
        assert!(!wire.watching());
        wire.inbound(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        assert!(wire.watching());
    }

    #[test]
    fn other_sessions_pass_untouched() {
        let wire = Wire::default();
        assert!(init(&wire, "2026-07-28").is_none());
        for method in ["tasks/get", "tasks/cancel", "tasks/result", "tools/list"] {
            assert!(
                wire.inbound(&json!({"jsonrpc": "2.0", "id": 1, "method": method}))
                    .is_none()
            );
        }
        assert!(!wire.watching());
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "start_analysis", "task": {}}});
        assert!(wire.inbound(&call).is_none());
        // Before any initialize (inline 2026 lifecycle), nothing is renamed either.
        let fresh = Wire::default();
        assert!(fresh.inbound(&call).is_none());
    }
}
