//! MCP tasks and confirmation by the person, with the official Python SDK as the client
//! (tests/sdk/driver.py on `mcp` 2.3.0, protocol 2026-07-28) against the real `scimcp` over
//! stdio: a task-augmented `start_analysis` returns a task; the task still answers, with the
//! run's result, from a new server process after the first one exited; `tasks/cancel` ends
//! the run's whole process tree; where confirmation is required, a form the person accepts
//! starts the run and a decline starts nothing.
//!
//! The same SDK's initialize handshake negotiates 2025-11-25. There mcp 2.3.0 has no tasks
//! client (its 2025-11-25 task types are never sent or dispatched), so a 2025-11-25 session
//! is shown to get today's answer instead of a task, and to be asked the person's
//! confirmation with a live `elicitation/create` during the call, over stdio and over HTTP.
//! 2025-11-25's own tasks are tested with the TypeScript SDK, which has a client for them
//! (tasks_2025.rs).
//!
//! The SDK lives in `target/sdk-venv` (scripts/sdk-harness.sh; `SCIMCP_SDK_PYTHON` overrides).
//! Without it these tests print why and pass, unless `SCIMCP_REQUIRE_SDK_HARNESS=1` (set by
//! .ci/run, which provisions it).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The SDK's interpreter, or `None` (after saying why) when it is not provisioned.
fn sdk_python() -> Option<PathBuf> {
    let python = std::env::var_os("SCIMCP_SDK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| scimcp_e2e::workspace_root().join("target/sdk-venv/bin/python"));
    let ok = python.is_file()
        && Command::new(&python)
            .args(["-c", "import mcp"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("SCIMCP_REQUIRE_SDK_HARNESS").is_none(),
            "SCIMCP_REQUIRE_SDK_HARNESS is set but {} has no `mcp` SDK: run scripts/sdk-harness.sh",
            python.display()
        );
        // The skip notice goes to stderr, as the other lanes' skips do.
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "skipped: no MCP Python SDK at {} (run scripts/sdk-harness.sh)",
                python.display()
            );
        }
        return None;
    }
    Some(python)
}

/// The directories of one server under test, and how to start it (tasks_2025.rs too).
pub(super) struct Setup {
    _root: tempfile::TempDir,
    pub(super) home: PathBuf,
    pub(super) server: Value,
}

impl Setup {
    pub(super) fn new(extra: &[&str]) -> Setup {
        let root = tempfile::Builder::new()
            .prefix("scimcp tasks ")
            .tempdir()
            .unwrap();
        let cwd = root.path().join("start");
        let home = root.path().join("home");
        fs_err::create_dir_all(cwd.join("data")).unwrap();
        fs_err::create_dir_all(&home).unwrap();
        let python = scimcp_e2e::dev_python().unwrap();
        scimcp_e2e::export_datasets(&python, &cwd.join("data")).unwrap();
        let mut args = vec![
            "serve".to_string(),
            "--adapter".into(),
            "refsci".into(),
            "--python".into(),
            python.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let server = json!({
            "command": scimcp_e2e::sibling_binary("scimcp").unwrap(),
            "args": args,
            "env": {
                "SCIMCP_HOME": home,
                "SCIMCP_LOG": "warn",
                "PATH": std::env::var("PATH").unwrap_or_default(),
            },
            "cwd": cwd,
        });
        Setup {
            _root: root,
            home,
            server,
        }
    }

    pub(super) fn run_dirs(&self) -> Vec<String> {
        let Ok(entries) = fs_err::read_dir(self.home.join("runs")) else {
            return Vec::new();
        };
        entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("run-"))
            .collect()
    }
}

/// An SDK driver process (tests/sdk/driver.py here, tests/sdk-ts/driver.mjs in
/// tasks_2025.rs): one JSON command a line in, one JSON answer a line out.
pub(super) struct Driver {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Driver {
    fn start(python: &Path) -> Driver {
        let mut cmd = Command::new(python);
        cmd.arg(scimcp_e2e::workspace_root().join("tests/sdk/driver.py"));
        Driver::spawn(cmd)
    }

    /// Start `cmd` as a driver, its stdin and stdout the command and answer lines.
    pub(super) fn spawn(mut cmd: Command) -> Driver {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Driver {
            child,
            stdin,
            stdout,
        }
    }

    pub(super) fn send(&mut self, cmd: Value) -> Value {
        writeln!(self.stdin, "{cmd}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the driver exited on {cmd}");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    fn connect(&mut self, setup: &Setup, tasks: bool, elicit: Option<&str>) {
        let r = self.send(
            json!({"op": "connect", "server": setup.server, "tasks": tasks, "elicit": elicit}),
        );
        assert_eq!(r["protocol_version"], "2026-07-28", "{r:#}");
    }

    /// Connect with the SDK's initialize handshake, which must negotiate 2025-11-25; `url`
    /// for Streamable HTTP, else the setup's server over stdio.
    fn connect_legacy(&mut self, setup: &Setup, url: Option<&str>, elicit: Option<&str>) {
        let mut cmd = json!({"op": "connect", "mode": "legacy", "tasks": true, "elicit": elicit});
        match url {
            Some(url) => cmd["url"] = url.into(),
            None => cmd["server"] = setup.server.clone(),
        }
        let r = self.send(cmd);
        assert_eq!(r["protocol_version"], "2025-11-25", "{r:#}");
    }

    /// The server process this driver's client runs (a direct child of the driver).
    pub(super) fn server_pid(&self) -> u32 {
        let ours = scimcp_e2e::http_server::descendants(self.child.id());
        *ours
            .iter()
            .find(|pid| {
                fs_err::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|c| c.trim() == "scimcp")
            })
            .expect("a scimcp server under the driver")
    }

    /// The processes of the task's CLI once it runs (processes under the server whose working
    /// directory is the run's, while `tasks/get` says the run is running).
    pub(super) fn cli_when_running(&mut self, task_id: &str) -> Vec<u32> {
        let server = self.server_pid();
        let begun = Instant::now();
        loop {
            let t = self.send(json!({"op": "get", "taskId": task_id}));
            assert_eq!(t["status"], "working", "{t:#}");
            let message = t["statusMessage"].as_str().unwrap_or_default();
            let found: Vec<u32> = scimcp_e2e::http_server::descendants(server)
                .into_iter()
                .filter(|pid| {
                    fs_err::read_link(format!("/proc/{pid}/cwd"))
                        .is_ok_and(|p| p.to_string_lossy().contains("/runs/run-"))
                })
                .collect();
            if !found.is_empty() && message.contains("running") {
                return found;
            }
            assert!(
                begun.elapsed() < Duration::from_secs(60),
                "no CLI process: {t:#}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Poll `tasks/get` until the task is terminal (no task of this server asks for input,
    /// so every other status is `working`).
    pub(super) fn until_terminal(&mut self, task_id: &str, limit: Duration) -> Value {
        let begun = Instant::now();
        loop {
            let t = self.send(json!({"op": "get", "taskId": task_id}));
            assert!(t.get("error").is_none(), "{t:#}");
            if matches!(
                t["status"].as_str(),
                Some("completed" | "failed" | "cancelled")
            ) {
                return t;
            }
            assert_eq!(t["status"], "working", "{t:#}");
            assert!(begun.elapsed() < limit, "task still {t:#}");
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({"op": "quit"}));
        let _ = self.stdin.flush();
        let begun = Instant::now();
        while begun.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn analysis(extra: Value) -> Value {
    let mut parameters = json!({"target": "target"});
    for (k, v) in extra.as_object().unwrap() {
        parameters[k] = v.clone();
    }
    json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": parameters})
}

pub(super) fn gone_within(pid: u32, limit: Duration) -> bool {
    let begun = Instant::now();
    while begun.elapsed() < limit {
        if !scimcp_e2e::process_alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

#[cfg(target_os = "linux")]
#[test]
fn a_task_survives_a_server_restart_and_yields_the_run_result() {
    let Some(python) = sdk_python() else { return };
    let setup = Setup::new(&[]);
    let mut d = Driver::start(&python);

    // A client without the extension gets today's answer, no task.
    d.connect(&setup, false, None);
    let plain =
        d.send(json!({"op": "call", "tool": "start_analysis", "args": analysis(json!({}))}));
    assert_eq!(plain["kind"], "result", "{plain:#}");
    assert_eq!(plain["result"]["structuredContent"]["started"], true);

    d.connect(&setup, true, None);
    let created = d.send(
        json!({"op": "call", "tool": "start_analysis", "args": analysis(json!({"seed": 3}))}),
    );
    assert_eq!(created["kind"], "task", "{created:#}");
    let task = &created["task"];
    let task_id = task["taskId"].as_str().unwrap().to_string();
    assert!(
        task_id.starts_with("task-") && task_id.len() == 37,
        "{task_id}"
    );
    assert_eq!(task["status"], "working");
    assert!(
        task["ttlMs"].is_null(),
        "a task never expires while its run lives: {task:#}"
    );
    // The first server sees the run end.
    let first = d.until_terminal(&task_id, Duration::from_secs(120));
    assert_eq!(first["status"], "completed", "{first:#}");
    let run_id = first["result"]["structuredContent"]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        !task_id.contains(&run_id[4..]),
        "the task id is not the run id"
    );

    // The server exits with its client; a new process on the same state answers the task.
    let old = d.server_pid();
    d.send(json!({"op": "close"}));
    assert!(
        gone_within(old, Duration::from_secs(15)),
        "server {old} still alive"
    );
    d.connect(&setup, true, None);
    assert_ne!(d.server_pid(), old);
    let after = d.send(json!({"op": "get", "taskId": task_id}));
    assert_eq!(after["status"], "completed", "{after:#}");
    assert_eq!(after["resultType"], "complete");
    let result = &after["result"]["structuredContent"];
    assert_eq!(result["run_id"], run_id.as_str(), "{after:#}");
    assert_eq!(result["state"], "succeeded");
    assert!(
        result["result"]["reported"]
            .as_object()
            .is_some_and(|r| !r.is_empty()),
        "the run's metrics: {result:#}"
    );

    // A made-up task id is unknown (-32602), and so is tasks/* for a client without the
    // extension (-32021).
    let unknown = d.send(json!({"op": "get", "taskId": "task-00000000000000000000000000000000"}));
    assert_eq!(unknown["code"], -32602, "{unknown:#}");
    d.connect(&setup, false, None);
    let undeclared = d.send(json!({"op": "get", "taskId": task_id}));
    assert_eq!(undeclared["code"], -32021, "{undeclared:#}");
}

#[cfg(target_os = "linux")]
#[test]
fn cancelling_a_task_ends_the_runs_process_tree() {
    let Some(python) = sdk_python() else { return };
    let setup = Setup::new(&[]);
    let mut d = Driver::start(&python);
    d.connect(&setup, true, None);
    let created = d.send(
        json!({"op": "call", "tool": "start_analysis", "args": analysis(json!({"sleep_s": 120}))}),
    );
    assert_eq!(created["kind"], "task", "{created:#}");
    let task_id = created["task"]["taskId"].as_str().unwrap().to_string();

    let cli = d.cli_when_running(&task_id);

    let ack = d.send(json!({"op": "cancel", "taskId": task_id}));
    assert!(ack.get("error").is_none(), "{ack:#}");
    let end = d.until_terminal(&task_id, Duration::from_secs(60));
    assert_eq!(end["status"], "cancelled", "{end:#}");
    for pid in cli {
        assert!(
            gone_within(pid, Duration::from_secs(15)),
            "CLI process {pid} survived the cancel"
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_person_confirms_a_start_in_a_form_and_a_decline_starts_nothing() {
    let Some(python) = sdk_python() else { return };
    let setup = Setup::new(&["--confirm", "required"]);
    let mut d = Driver::start(&python);

    d.connect(&setup, false, Some("decline"));
    let declined =
        d.send(json!({"op": "call", "tool": "start_analysis", "args": analysis(json!({}))}));
    assert_eq!(declined["kind"], "result", "{declined:#}");
    let s = &declined["result"]["structuredContent"];
    assert_eq!(s["started"], false, "{declined:#}");
    assert!(
        s["next_action"]
            .as_str()
            .unwrap()
            .contains("the person declined"),
        "{declined:#}"
    );
    let forms = declined["elicitations"].as_array().unwrap();
    assert_eq!(forms.len(), 1, "{declined:#}");
    let message = forms[0]["message"].as_str().unwrap();
    for shown in [
        "Command: ",
        "-m refsci regress",
        "Dataset: data/diabetes.csv",
        "sha256 ",
        "Expected artifacts: metrics.json",
        "Resources: ",
    ] {
        assert!(
            message.contains(shown),
            "{shown:?} missing from the form: {message}"
        );
    }
    assert_eq!(
        forms[0]["requestedSchema"]["properties"]["approve"]["type"],
        "boolean"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(setup.run_dirs().is_empty(), "a decline created a run");

    // A client that cannot show the form is answered with the preview, as before.
    d.connect(&setup, false, None);
    let preview =
        d.send(json!({"op": "call", "tool": "start_analysis", "args": analysis(json!({}))}));
    assert_eq!(
        preview["result"]["structuredContent"]["started"], false,
        "{preview:#}"
    );
    assert!(preview["elicitations"].as_array().unwrap().is_empty());
    assert!(setup.run_dirs().is_empty());

    // Accepted: the run starts (and, for a client with the tasks extension, as a task).
    d.connect(&setup, false, Some("accept"));
    let accepted =
        d.send(json!({"op": "call", "tool": "start_analysis", "args": analysis(json!({}))}));
    assert_eq!(
        accepted["result"]["structuredContent"]["started"], true,
        "{accepted:#}"
    );
    assert_eq!(accepted["elicitations"].as_array().unwrap().len(), 1);
    assert_eq!(setup.run_dirs().len(), 1);

    d.connect(&setup, true, Some("accept"));
    let task = d.send(
        json!({"op": "call", "tool": "start_analysis", "args": analysis(json!({"seed": 5}))}),
    );
    assert_eq!(task["kind"], "task", "{task:#}");
    assert_eq!(task["elicitations"].as_array().unwrap().len(), 1);
    let done = d.until_terminal(
        task["task"]["taskId"].as_str().unwrap(),
        Duration::from_secs(120),
    );
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["result"]["structuredContent"]["state"], "succeeded");
    assert_eq!(setup.run_dirs().len(), 2);
}

/// One 2025-11-25 session's confirmations, on a server with `--confirm required`: a decline
/// starts nothing, an accept starts the run (no task: the SDK asks for none at this
/// version), a `cancel_run` is asked too and cancels only on accept. `runs` lists the run
/// directories now.
fn confirm_in_a_2025_11_25_session(d: &mut Driver, runs: &dyn Fn() -> Vec<String>) {
    d.send(json!({"op": "answer", "elicit": "decline"}));
    let declined =
        d.send(json!({"op": "call", "tool": "start_analysis", "args": analysis(json!({}))}));
    assert_eq!(declined["kind"], "result", "{declined:#}");
    let s = &declined["result"]["structuredContent"];
    assert_eq!(s["started"], false, "{declined:#}");
    assert!(
        s["next_action"]
            .as_str()
            .unwrap()
            .contains("the person declined"),
        "{declined:#}"
    );
    let forms = declined["elicitations"].as_array().unwrap();
    assert_eq!(forms.len(), 1, "{declined:#}");
    assert_eq!(forms[0]["mode"], "form", "{declined:#}");
    let message = forms[0]["message"].as_str().unwrap();
    for shown in [
        "Command: ",
        "-m refsci regress",
        "Dataset: data/diabetes.csv",
        "sha256 ",
        "Expected artifacts: metrics.json",
        "Resources: ",
    ] {
        assert!(
            message.contains(shown),
            "{shown:?} missing from the form: {message}"
        );
    }
    assert_eq!(
        forms[0]["requestedSchema"]["properties"]["approve"]["type"],
        "boolean"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(runs().is_empty(), "a decline created a run");

    // The model's confirm: true does not bypass the person either.
    let validation = s["validation_id"].as_str().unwrap().to_string();
    let forced = d.send(json!({"op": "call", "tool": "start_analysis",
        "args": {"confirm": true, "validation_id": validation,
                 "workflow": "regression", "dataset": "data/diabetes.csv",
                 "parameters": {"target": "target"}}}));
    assert_eq!(
        forced["result"]["structuredContent"]["started"], false,
        "{forced:#}"
    );
    assert_eq!(forced["elicitations"].as_array().unwrap().len(), 1);
    assert!(runs().is_empty(), "confirm: true went past a decline");

    d.send(json!({"op": "answer", "elicit": "accept"}));
    let accepted = d.send(json!({"op": "call", "tool": "start_analysis",
        "args": analysis(json!({"sleep_s": 120}))}));
    assert_eq!(
        accepted["kind"], "result",
        "no task at 2025-11-25: {accepted:#}"
    );
    let started = &accepted["result"]["structuredContent"];
    assert_eq!(started["started"], true, "{accepted:#}");
    assert_eq!(accepted["elicitations"].as_array().unwrap().len(), 1);
    assert_eq!(runs().len(), 1);
    let run_id = started["run_id"].as_str().unwrap().to_string();

    // Cancelling is asked too: declined, the run goes on; accepted, it ends.
    d.send(json!({"op": "answer", "elicit": "decline"}));
    let kept = d.send(json!({"op": "call", "tool": "cancel_run", "args": {"run_id": run_id}}));
    let forms = kept["elicitations"].as_array().unwrap();
    assert_eq!(forms.len(), 1, "{kept:#}");
    assert!(
        forms[0]["message"].as_str().unwrap().contains(&run_id),
        "{kept:#}"
    );
    let status =
        d.send(json!({"op": "call", "tool": "get_run_status", "args": {"run_id": run_id}}));
    let state = status["result"]["structuredContent"]["state"].clone();
    assert!(
        matches!(state.as_str(), Some("queued" | "preparing" | "running")),
        "a declined cancel stopped the run: {status:#}"
    );
    d.send(json!({"op": "answer", "elicit": "accept"}));
    let cancelled = d.send(json!({"op": "call", "tool": "cancel_run", "args": {"run_id": run_id}}));
    assert_eq!(cancelled["elicitations"].as_array().unwrap().len(), 1);
    assert_ne!(cancelled["result"]["isError"], true, "{cancelled:#}");
    assert_eq!(
        cancelled["result"]["structuredContent"]["changed"], true,
        "{cancelled:#}"
    );
    let end = d.send(json!({"op": "call", "tool": "get_run_result",
        "args": {"run_id": run_id, "wait_s": 30}}));
    assert_eq!(
        end["result"]["structuredContent"]["state"], "cancelled",
        "{end:#}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_2025_11_25_client_gets_no_task_and_is_asked_during_the_call_over_stdio() {
    let Some(python) = sdk_python() else { return };
    let plain = Setup::new(&[]);
    let mut d = Driver::start(&python);
    // The SDK declares its tasks extension only where it is active (2026-07-28), so this
    // session gets today's answer, and tasks/* are refused.
    d.connect_legacy(&plain, None, None);
    let r = d.send(json!({"op": "call", "tool": "start_analysis", "args": analysis(json!({}))}));
    assert_eq!(r["kind"], "result", "{r:#}");
    assert_eq!(r["result"]["structuredContent"]["started"], true, "{r:#}");
    let get = d.send(json!({"op": "get", "taskId": "task-00000000000000000000000000000000"}));
    assert!(get["code"].is_i64(), "tasks/get must fail here: {get:#}");

    let setup = Setup::new(&["--confirm", "required"]);
    // A 2025-11-25 client without elicitation keeps the confirm: true flow.
    d.connect_legacy(&setup, None, None);
    let preview =
        d.send(json!({"op": "call", "tool": "start_analysis", "args": analysis(json!({}))}));
    assert_eq!(
        preview["result"]["structuredContent"]["started"], false,
        "{preview:#}"
    );
    assert!(preview["elicitations"].as_array().unwrap().is_empty());
    assert!(setup.run_dirs().is_empty());

    d.connect_legacy(&setup, None, Some("decline"));
    confirm_in_a_2025_11_25_session(&mut d, &|| setup.run_dirs());
}

#[cfg(target_os = "linux")]
#[test]
fn a_2025_11_25_client_is_asked_during_the_call_over_http() {
    let Some(python) = sdk_python() else { return };
    let root = scimcp_e2e::http_server::TestRoot::new().unwrap();
    let server = scimcp_e2e::http_server::HttpServer::start(
        &root,
        &[
            "--listen",
            "127.0.0.1:0",
            "--adapter",
            "refsci",
            "--confirm",
            "required",
        ],
        &[],
    )
    .unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let setup = Setup::new(&[]);
    let mut d = Driver::start(&python);
    d.connect_legacy(&setup, Some(&url), Some("decline"));
    confirm_in_a_2025_11_25_session(&mut d, &|| root.run_dirs());
    d.send(json!({"op": "close"}));
}
