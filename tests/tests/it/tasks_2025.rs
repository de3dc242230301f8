//! Protocol 2025-11-25's experimental tasks, with the official TypeScript SDK as the client
//! (tests/sdk-ts/driver.mjs on `@modelcontextprotocol/sdk` 1.32.2, whose `initialize`
//! negotiates 2025-11-25) against the real `scimcp` over stdio: the server offers
//! `capabilities.tasks` and marks the task tools `execution.taskSupport`; the SDK's
//! `callToolStream` turns `start_analysis` into a task, whose end the server also announces
//! (`notifications/tasks/status`); after the server is killed, a new
//! server process answers `tasks/get`, `tasks/result` (the run's result) and `tasks/list`;
//! `tasks/cancel` ends the CLI's whole process tree and answers the cancelled task; a call
//! that starts nothing (a preview) is a task ended at once, its result the preview. The
//! same flow runs over Streamable HTTP.
//!
//! The SDK lives in `target/sdk-ts` (scripts/sdk-harness.sh; `SCIMCP_SDK_TS` overrides).
//! Without it, or without `node`, these tests print why and pass, unless
//! `SCIMCP_REQUIRE_SDK_HARNESS=1` (set by .ci/run, which provisions it).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::tasks::{Driver, Setup, analysis, gone_within};

/// The directory holding the SDK's node_modules, or `None` (after saying why) when it is
/// not provisioned.
fn sdk_ts() -> Option<PathBuf> {
    let dir = std::env::var_os("SCIMCP_SDK_TS")
        .map(PathBuf::from)
        .unwrap_or_else(|| scimcp_e2e::workspace_root().join("target/sdk-ts"));
    let sdk = dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !(sdk.is_file() && node) {
        assert!(
            std::env::var_os("SCIMCP_REQUIRE_SDK_HARNESS").is_none(),
            "SCIMCP_REQUIRE_SDK_HARNESS is set but there is no MCP TypeScript SDK at {} (or no node on PATH): run scripts/sdk-harness.sh",
            sdk.display()
        );
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "skipped: no MCP TypeScript SDK at {} or no node (run scripts/sdk-harness.sh)",
                dir.display()
            );
        }
        return None;
    }
    Some(dir)
}

/// The node driver (tasks.rs's [`Driver`] on tests/sdk-ts/driver.mjs) and what a
/// 2025-11-25 client checks of the server.
struct TsDriver(Driver);

impl std::ops::Deref for TsDriver {
    type Target = Driver;
    fn deref(&self) -> &Driver {
        &self.0
    }
}

impl std::ops::DerefMut for TsDriver {
    fn deref_mut(&mut self) -> &mut Driver {
        &mut self.0
    }
}

impl TsDriver {
    fn start(sdk: &PathBuf) -> TsDriver {
        let mut cmd = Command::new("node");
        cmd.arg(scimcp_e2e::workspace_root().join("tests/sdk-ts/driver.mjs"))
            .env("SCIMCP_SDK_TS", sdk);
        TsDriver(Driver::spawn(cmd))
    }

    /// Connect (a new server process); the SDK must negotiate 2025-11-25 and see the
    /// server's 2025-11-25 tasks capability.
    fn connect(&mut self, setup: &Setup) {
        self.connect_with(json!({"op": "connect", "server": setup.server}));
    }

    /// [`Self::connect`] with this command (`url` for Streamable HTTP).
    fn connect_with(&mut self, cmd: Value) {
        let r = self.send(cmd);
        assert_eq!(r["protocol_version"], "2025-11-25", "{r:#}");
        assert_eq!(
            r["capabilities"]["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            "{r:#}"
        );
    }

    /// `tools/list` through the SDK (which caches the task tools), then a task-augmented
    /// `start_analysis` through `callToolStream`: its first message, the created task.
    fn start_task(&mut self, args: Value) -> Value {
        let tools = self.send(json!({"op": "tools"}));
        for name in ["start_analysis", "start_campaign", "get_run_result"] {
            assert_eq!(
                tools["tools"][name],
                json!({"taskSupport": "optional"}),
                "{name}: {tools:#}"
            );
        }
        assert!(tools["tools"]["list_runs"].is_null(), "{tools:#}");
        let created = self.send(json!({"op": "start", "tool": "start_analysis", "args": args}));
        assert_eq!(created["kind"], "taskCreated", "{created:#}");
        let task = created["task"].clone();
        let id = task["taskId"].as_str().unwrap();
        assert!(id.starts_with("task-") && id.len() == 37, "{task:#}");
        assert_eq!(task["status"], "working", "{task:#}");
        assert!(
            task["ttl"].is_null(),
            "a task lasts as long as its run: {task:#}"
        );
        assert_eq!(task["pollInterval"], 2000, "{task:#}");
        task
    }
}

fn kill(pid: u32) {
    let status = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -KILL {pid}: {status}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_2025_11_25_task_survives_a_killed_server_and_yields_the_runs_result() {
    let Some(sdk) = sdk_ts() else { return };
    let setup = Setup::new(&[]);
    let mut d = TsDriver::start(&sdk);
    d.connect(&setup);

    // The SDK's whole flow on one call: the task, its states, then tasks/result. The SDK
    // asks for a task only for a tool tools/list marked (read first).
    d.send(json!({"op": "tools"}));
    let stream = d.send(json!({"op": "stream", "tool": "start_analysis",
        "args": analysis(json!({"seed": 1}))}));
    let messages = stream["messages"].as_array().unwrap();
    assert_eq!(messages[0]["kind"], "taskCreated", "{stream:#}");
    let last = messages.last().unwrap();
    assert_eq!(last["kind"], "result", "{stream:#}");
    assert_eq!(
        last["result"]["structuredContent"]["state"], "succeeded",
        "{stream:#}"
    );
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        messages[0]["task"]["taskId"],
        "{stream:#}"
    );

    let task = d.start_task(analysis(json!({"seed": 3})));
    let task_id = task["taskId"].as_str().unwrap().to_string();
    let first = d.until_terminal(&task_id, Duration::from_secs(120));
    assert_eq!(first["status"], "completed", "{first:#}");
    // The server also said so unasked (within its one-second watch).
    let begun = Instant::now();
    let told = loop {
        let statuses = d.send(json!({"op": "statuses"}));
        let mine: Vec<Value> = statuses["statuses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["taskId"] == task_id.as_str())
            .cloned()
            .collect();
        if !mine.is_empty() || begun.elapsed() > Duration::from_secs(15) {
            break mine;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(
        told.last().map(|n| n["status"].clone()),
        Some(json!("completed")),
        "{told:#?}"
    );

    // Killed, not closed: nothing of the task lives in the server process.
    let old = d.server_pid();
    kill(old);
    assert!(
        gone_within(old, Duration::from_secs(15)),
        "server {old} still alive"
    );
    d.connect(&setup);
    assert_ne!(d.server_pid(), old);
    let after = d.send(json!({"op": "get", "taskId": task_id}));
    assert_eq!(after["status"], "completed", "{after:#}");
    assert_eq!(after["createdAt"], task["createdAt"], "{after:#}");
    let result = d.send(json!({"op": "result", "taskId": task_id}));
    let s = &result["structuredContent"];
    assert_eq!(s["state"], "succeeded", "{result:#}");
    let run_id = s["run_id"].as_str().unwrap();
    assert!(
        !task_id.contains(&run_id[4..]),
        "the task id is not the run id"
    );
    assert!(
        s["result"]["reported"]
            .as_object()
            .is_some_and(|r| !r.is_empty()),
        "the run's metrics: {result:#}"
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task_id.as_str()
    );
    assert!(
        setup
            .home
            .join(format!("runs/{run_id}/result.json"))
            .is_file(),
        "the result is the run's own"
    );

    // tasks/list: both tasks this caller created, newest first.
    let listed = d.send(json!({"op": "list"}));
    let ids: Vec<&str> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{listed:#}");
    assert_eq!(ids[0], task_id, "{listed:#}");
    assert!(listed.get("nextCursor").is_none(), "{listed:#}");
    let bad_cursor = d.send(json!({"op": "list", "cursor": "task-x"}));
    assert_eq!(bad_cursor["error"]["code"], -32602, "{bad_cursor:#}");

    let unknown = d.send(json!({"op": "get", "taskId": "task-00000000000000000000000000000000"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown:#}");
}

#[cfg(target_os = "linux")]
#[test]
fn cancelling_a_2025_11_25_task_ends_the_clis_process_tree() {
    let Some(sdk) = sdk_ts() else { return };
    let setup = Setup::new(&[]);
    let mut d = TsDriver::start(&sdk);
    d.connect(&setup);
    let task = d.start_task(analysis(json!({"sleep_s": 120})));
    let task_id = task["taskId"].as_str().unwrap().to_string();

    let cli = d.cli_when_running(&task_id);

    // 2025-11-25's tasks/cancel answers the task once it reads cancelled.
    let cancelled = d.send(json!({"op": "cancel", "taskId": task_id}));
    assert_eq!(cancelled["status"], "cancelled", "{cancelled:#}");
    assert_eq!(cancelled["taskId"], task_id.as_str());
    for pid in cli {
        assert!(
            gone_within(pid, Duration::from_secs(15)),
            "CLI process {pid} survived the cancel"
        );
    }
    let after = d.send(json!({"op": "get", "taskId": task_id}));
    assert_eq!(after["status"], "cancelled", "{after:#}");
    let result = d.send(json!({"op": "result", "taskId": task_id}));
    assert_eq!(
        result["structuredContent"]["state"], "cancelled",
        "{result:#}"
    );
    // An ended task cannot be cancelled again.
    let again = d.send(json!({"op": "cancel", "taskId": task_id}));
    assert_eq!(again["error"]["code"], -32602, "{again:#}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_2025_11_25_task_runs_and_is_cancelled_over_http() {
    let Some(sdk) = sdk_ts() else { return };
    let root = scimcp_e2e::http_server::TestRoot::new().unwrap();
    let server = scimcp_e2e::http_server::HttpServer::start(
        &root,
        &["--listen", "127.0.0.1:0", "--adapter", "refsci"],
        &[],
    )
    .unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let mut d = TsDriver::start(&sdk);
    d.connect_with(json!({"op": "connect", "url": url}));

    d.send(json!({"op": "tools"}));
    let stream = d.send(json!({"op": "stream", "tool": "start_analysis",
        "args": analysis(json!({"seed": 2}))}));
    let messages = stream["messages"].as_array().unwrap();
    assert_eq!(messages[0]["kind"], "taskCreated", "{stream:#}");
    let last = messages.last().unwrap();
    assert_eq!(
        last["result"]["structuredContent"]["state"], "succeeded",
        "{stream:#}"
    );

    let task = d.start_task(analysis(json!({"sleep_s": 120})));
    let task_id = task["taskId"].as_str().unwrap().to_string();
    let listed = d.send(json!({"op": "list"}));
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 2, "{listed:#}");
    let cancelled = d.send(json!({"op": "cancel", "taskId": task_id}));
    assert_eq!(cancelled["status"], "cancelled", "{cancelled:#}");
    let result = d.send(json!({"op": "result", "taskId": task_id}));
    assert_eq!(
        result["structuredContent"]["state"], "cancelled",
        "{result:#}"
    );
    assert_eq!(root.run_dirs().len(), 2);
    d.send(json!({"op": "close"}));
}

#[cfg(target_os = "linux")]
#[test]
fn a_2025_11_25_task_call_that_starts_nothing_is_an_ended_task_holding_the_preview() {
    let Some(sdk) = sdk_ts() else { return };
    // Confirmation required and no elicitation declared: start_analysis answers a preview.
    let setup = Setup::new(&["--confirm", "required"]);
    let mut d = TsDriver::start(&sdk);
    d.connect(&setup);
    d.send(json!({"op": "tools"}));
    let stream = d.send(json!({"op": "stream", "tool": "start_analysis",
        "args": analysis(json!({}))}));
    let messages = stream["messages"].as_array().unwrap();
    assert_eq!(messages[0]["kind"], "taskCreated", "{stream:#}");
    assert_eq!(messages[0]["task"]["status"], "completed", "{stream:#}");
    let last = messages.last().unwrap();
    assert_eq!(last["kind"], "result", "{stream:#}");
    let preview = &last["result"]["structuredContent"];
    assert_eq!(preview["started"], false, "{stream:#}");
    assert!(preview["validation_id"].is_string(), "{stream:#}");
    assert!(setup.run_dirs().is_empty(), "a preview started a run");
    let task_id = messages[0]["task"]["taskId"].as_str().unwrap();
    let cancel = d.send(json!({"op": "cancel", "taskId": task_id}));
    assert_eq!(cancel["error"]["code"], -32602, "{cancel:#}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_2025_11_25_task_start_asks_the_person_first() {
    let Some(sdk) = sdk_ts() else { return };
    let setup = Setup::new(&["--confirm", "required"]);
    let mut d = TsDriver::start(&sdk);
    d.connect_with(json!({"op": "connect", "server": setup.server, "elicit": "accept"}));

    // Accepted during the task-augmented call: the task follows the started run.
    let task = d.start_task(analysis(json!({})));
    let forms = d.send(json!({"op": "forms"}));
    let asked = forms["forms"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{forms:#}");
    assert!(
        asked[0].as_str().unwrap().contains("-m refsci regress"),
        "{forms:#}"
    );
    let end = d.until_terminal(task["taskId"].as_str().unwrap(), Duration::from_secs(120));
    assert_eq!(end["status"], "completed", "{end:#}");
    assert_eq!(setup.run_dirs().len(), 1);

    // Declined: an ended task holding the preview that says so; nothing starts.
    d.send(json!({"op": "answer", "elicit": "decline"}));
    let declined = d.send(json!({"op": "start", "tool": "start_analysis",
        "args": analysis(json!({"seed": 9}))}));
    assert_eq!(declined["kind"], "taskCreated", "{declined:#}");
    assert_eq!(declined["task"]["status"], "completed", "{declined:#}");
    let result = d.send(json!({"op": "result", "taskId": declined["task"]["taskId"]}));
    let s = &result["structuredContent"];
    assert_eq!(s["started"], false, "{result:#}");
    assert!(
        s["next_action"]
            .as_str()
            .unwrap()
            .contains("the person declined"),
        "{result:#}"
    );
    assert_eq!(
        d.send(json!({"op": "forms"}))["forms"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(setup.run_dirs().len(), 1, "a decline started a run");
}
