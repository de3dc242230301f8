//! The `tools/list` answer. rmcp builds it from [`list_result`] (HTTP sessions, a request
//! with a cursor or `_meta`), and for a 2025-11-25 session the tasks layer marks its task
//! tools (tasks/wire.rs); a set-up stdio session gets the same answer spliced from the
//! embedded catalog text ([`answer_line`]): parsing 115 KB of schemas into values and
//! writing them back out again was most of the time from `initialize` to the first
//! `tools/list` answer, and of the idle server's heap.

use rmcp::model::{CacheScope, ListToolsResult, ProtocolVersion};
use serde_json::Value;

use crate::tasks::TASK_TOOLS;
use crate::tasks::wire::VERSION as TASKS_2025;

/// How long a 2026-07-28 client may reuse `tools/list` and `server/discover` (1 hour). Both
/// come from what this binary was built with (the checked-in tool catalog, the capabilities
/// and instructions of server.rs): they change only when the server is upgraded, which restarts
/// it. Their scope is `public`: they vary neither per connection nor per caller (every token
/// sees the same tools, and a tool a caller may not use answers with an error naming why), so
/// a shared cache in front of several users is safe.
pub const LIST_TTL_MS: u64 = 3_600_000;

/// What `tools/list` answers: every tool, with the cache hints.
pub fn list_result() -> ListToolsResult {
    ListToolsResult::with_all_items(super::catalog())
        .with_ttl_ms(LIST_TTL_MS)
        .with_cache_scope(CacheScope::Public)
}

/// True for a `tools/list` request that [`answer_line`] answers as rmcp would: it has an
/// id, no cursor (every tool is on the first page; a cursor goes to rmcp, which says what it
/// says about cursors) and no `_meta` (which may name a protocol version of its own).
pub fn answers(message: &Value) -> bool {
    message.get("method").and_then(Value::as_str) == Some("tools/list")
        && message
            .get("id")
            .is_some_and(|id| id.is_string() || id.is_number())
        && match message.get("params") {
            None | Some(Value::Null) => true,
            Some(Value::Object(params)) => {
                params.get("cursor").is_none_or(Value::is_null) && !params.contains_key("_meta")
            }
            Some(_) => false,
        }
}

/// The JSON-RPC answer line (without its newline) to the `tools/list` request `id` of a
/// session that negotiated protocol `version`: the same JSON as rmcp's answer built
/// from [`list_result`] (tests hold it so, here and end to end), its `tools` the embedded
/// catalog's bytes as they are. rmcp marks a result `resultType: "complete"` for 2026-07-28
/// and later (comparing the dates as text, as here) and drops it for older versions, where it
/// would also drop an output schema that is not an object (no tool has one; a test holds it).
/// A 2025-11-25 session's task tools carry `execution.taskSupport` as the tasks layer marks
/// them.
pub fn answer_line(id: &Value, version: &str) -> String {
    let id = serde_json::to_string(id).expect("a JSON id serializes");
    let tools = if version == TASKS_2025 {
        marked_catalog()
    } else {
        super::CATALOG_JSON
    };
    let result_type = if version >= ProtocolVersion::V_2026_07_28.as_str() {
        ",\"resultType\":\"complete\""
    } else {
        ""
    };
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":{tools},\"ttlMs\":{LIST_TTL_MS},\"cacheScope\":\"public\"{result_type}}}}}"
    )
}

/// The catalog text with `"execution":{"taskSupport":"optional"}` first in each task tool,
/// made once. Each tool is a top-level element of the array and serializes its `name` first,
/// so a task tool's element starts with `{"name":"<tool>",` (a schema's own objects are
/// deeper and never looked at).
fn marked_catalog() -> &'static str {
    static MARKED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MARKED.get_or_init(|| {
        let text = super::CATALOG_JSON;
        let mut out = String::with_capacity(text.len() + 256);
        let mut copied = 0;
        for start in element_starts(text) {
            let element = &text[start..];
            if TASK_TOOLS
                .iter()
                .any(|tool| element.starts_with(&format!("{{\"name\":\"{tool}\",")))
            {
                out.push_str(&text[copied..=start]);
                out.push_str("\"execution\":{\"taskSupport\":\"optional\"},");
                copied = start + 1;
            }
        }
        out.push_str(&text[copied..]);
        out
    })
}

/// Byte offsets of the elements of the top-level JSON array `text` (compact, as
/// serde_json writes it).
fn element_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                if depth == 1 {
                    starts.push(i);
                }
                depth += 1;
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{NumberOrString, ServerJsonRpcMessage, ServerResult};
    use serde_json::json;

    /// What rmcp writes for the answer to request `id` carrying [`list_result`], shaped for
    /// a 2026-07-28 peer or an older one as its server handler shapes every result.
    fn rmcp_answer(id: NumberOrString, current: bool) -> Value {
        let mut result = ServerResult::ListToolsResult(list_result());
        if current {
            result.fill_missing_cache_hints();
        } else {
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
        }
        serde_json::to_value(ServerJsonRpcMessage::response(result, id)).expect("serializes")
    }

    #[test]
    fn the_spliced_answer_is_rmcps_answer_for_every_version() {
        for (version, current) in [
            ("2024-11-05", false),
            ("2025-06-18", false),
            ("2026-07-28", true),
            ("2099-01-01", true),
        ] {
            for (id, rmcp_id) in [
                (json!(7), NumberOrString::Number(7)),
                (json!("a\"b"), NumberOrString::String("a\"b".into())),
            ] {
                let spliced: Value = serde_json::from_str(&answer_line(&id, version))
                    .expect("the spliced line is JSON");
                assert_eq!(spliced, rmcp_answer(rmcp_id, current), "{version}");
            }
        }
    }

    #[test]
    fn a_2025_11_25_answer_marks_the_task_tools_as_the_tasks_layer_does() {
        let wire = crate::tasks::wire::Wire::for_request(TASKS_2025).expect("served version");
        let request = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
        assert!(wire.inbound(&request).is_none());
        let layered = wire
            .outbound(&rmcp_answer(NumberOrString::Number(3), false))
            .expect("the tasks layer marks a 2025-11-25 list");
        let spliced: Value =
            serde_json::from_str(&answer_line(&json!(3), TASKS_2025)).expect("JSON");
        assert_eq!(spliced, layered);
        let marked = spliced["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter(|t| t.pointer("/execution/taskSupport") == Some(&json!("optional")))
            .count();
        assert_eq!(marked, TASK_TOOLS.len());
    }

    #[test]
    fn every_output_schema_is_an_object_so_older_peers_see_the_same_tools() {
        for tool in super::super::catalog() {
            if let Some(schema) = &tool.output_schema {
                assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
            }
        }
    }

    #[test]
    fn the_embedded_catalog_is_what_serde_json_writes() {
        let written = serde_json::to_string(&super::super::catalog()).expect("serializes");
        assert_eq!(written, super::super::CATALOG_JSON);
    }

    #[test]
    fn only_a_first_page_request_with_an_id_is_spliced() {
        let request = |extra: Value| {
            let mut m = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
            m.as_object_mut()
                .expect("object")
                .extend(extra.as_object().expect("object").clone());
            m
        };
        assert!(answers(&request(json!({}))));
        assert!(answers(&request(json!({"params": {}}))));
        assert!(answers(&request(json!({"params": {"cursor": null}}))));
        assert!(!answers(&request(json!({"params": {"_meta": {}}}))));
        assert!(answers(&request(json!({"id": "x"}))));
        assert!(!answers(&request(json!({"params": {"cursor": "abc"}}))));
        assert!(!answers(&request(json!({"params": [1]}))));
        assert!(!answers(&request(json!({"id": null}))));
        assert!(!answers(&request(json!({"method": "tools/call"}))));
        let mut notification = request(json!({}));
        notification.as_object_mut().expect("object").remove("id");
        assert!(!answers(&notification));
    }
}
