//! `tools/list` over stdio is answered from the embedded catalog text once a session is set
//! up, and by rmcp otherwise (a cursor, `_meta`, before `initialize` is answered, a
//! 2025-11-25 session whose lists the tasks layer marks). Both must say the same thing to
//! every protocol version a client may ask for.

use scimcp_e2e::raw_stdio::RawSession;
use serde_json::{Value, json};

fn list(id: u64, params: Option<Value>) -> Value {
    let mut m = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
    if let Some(p) = params {
        m["params"] = p;
    }
    m
}

#[test]
fn every_protocol_version_gets_the_same_tool_list_by_either_path() {
    for version in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let mut s = RawSession::start().unwrap();
        // Before the handshake is answered: rmcp's path, whatever it says.
        s.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "tools-list-test", "version": "1"}}}),
        );
        let init = s.answer(&json!(1));
        assert!(
            init["result"]["serverInfo"].is_object(),
            "{version}: {init:#}"
        );
        // 2026-07-28 has no `initialize`: asked for it, the server offers 2025-11-25.
        let negotiated = init["result"]["protocolVersion"]
            .as_str()
            .unwrap()
            .to_string();
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s.send(&list(2, None));
        s.send(&list(3, Some(json!({}))));
        // A cursor and a `_meta` go to rmcp.
        s.send(&list(4, Some(json!({"cursor": "from-rmcp"}))));
        s.send(&list(5, Some(json!({"_meta": {"note": "from rmcp"}}))));
        let answers: Vec<Value> = (2..=5).map(|id| s.answer(&json!(id))).collect();
        let tools = answers[0]["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{version}: {:#}", answers[0]));
        assert!(tools.len() >= 10, "{version}: {} tools", tools.len());
        for (i, a) in answers.iter().enumerate().skip(1) {
            assert_eq!(
                a["result"],
                answers[0]["result"],
                "{version}: request {} answered otherwise than request 2",
                i + 2
            );
        }
        let result = &answers[0]["result"];
        assert_eq!(result["ttlMs"], 3_600_000, "{version}");
        assert_eq!(result["cacheScope"], "public", "{version}");
        assert_eq!(
            result.get("resultType").is_some(),
            negotiated.as_str() >= "2026-07-28",
            "{version}: resultType {:?}",
            result.get("resultType")
        );
        let marked = tools
            .iter()
            .any(|t| t.pointer("/execution/taskSupport").is_some());
        assert_eq!(
            marked,
            negotiated == "2025-11-25",
            "{version}: task tools marked"
        );
    }
}
