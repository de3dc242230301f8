//! `tools/list` over stdio is answered from the embedded catalog text once a session is set
//! up, and by rmcp otherwise (a cursor, `_meta`, before `initialize` is answered, a
//! 2025-11-25 session whose lists the tasks layer marks). Both must say the same thing to
//! every protocol version a client may ask for.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// One stdio session of the real binary, read line by line on a thread.
struct Session {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    answers: std::sync::mpsc::Receiver<Value>,
    _home: tempfile::TempDir,
}

impl Session {
    fn start() -> Session {
        let home = tempfile::tempdir().unwrap();
        let mut child = Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap())
            .args(["serve"])
            .env("SCIMCP_HOME", home.path())
            .env("SCIMCP_LOG", "error")
            .current_dir(home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not one JSON message per line ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Session {
            child,
            stdin,
            answers,
            _home: home,
        }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The answer to request `id` (answers may come in any order; the others are kept).
    fn answer(&mut self, id: &Value, kept: &mut Vec<Value>) -> Value {
        if let Some(i) = kept.iter().position(|a| &a["id"] == id) {
            return kept.remove(i);
        }
        loop {
            let a = self
                .answers
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no answer to {id}"));
            if &a["id"] == id {
                return a;
            }
            kept.push(a);
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
        let mut s = Session::start();
        let mut kept = Vec::new();
        // Before the handshake is answered: rmcp's path, whatever it says.
        s.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "tools-list-test", "version": "1"}}}),
        );
        let init = s.answer(&json!(1), &mut kept);
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
        let answers: Vec<Value> = (2..=5).map(|id| s.answer(&json!(id), &mut kept)).collect();
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
