//! MCP tasks and confirmation by the person, with the official Python SDK as the client
//! (tests/sdk/driver.py on `mcp` 2.3.0, protocol 2026-07-28) against the real `scimcp` over
//! stdio: a task-augmented `start_analysis` returns a task; the task still answers, with the
//! run's result, from a new server process after the first one exited; `tasks/cancel` ends
//! the run's whole process tree; where confirmation is required, a form the person accepts
//! starts the run and a decline starts nothing.
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

/// The directories of one server under test, and how to start it.
struct Setup {
    _root: tempfile::TempDir,
    home: PathBuf,
    server: Value,
}

impl Setup {
    fn new(extra: &[&str]) -> Setup {
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

    fn run_dirs(&self) -> Vec<String> {
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

/// The Python driver: one JSON command a line in, one JSON answer a line out.
struct Driver {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Driver {
    fn start(python: &Path) -> Driver {
        let script = scimcp_e2e::workspace_root().join("tests/sdk/driver.py");
        let mut child = Command::new(python)
            .arg(script)
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

    fn send(&mut self, cmd: Value) -> Value {
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

    /// The server process this driver's client runs (a direct child of the driver).
    fn server_pid(&self) -> u32 {
        let ours = scimcp_e2e::http_server::descendants(self.child.id());
        *ours
            .iter()
            .find(|pid| {
                fs_err::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|c| c.trim() == "scimcp")
            })
            .expect("a scimcp server under the driver")
    }

    /// Poll `tasks/get` until the task is terminal.
    fn until_terminal(&mut self, task_id: &str, limit: Duration) -> Value {
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

fn analysis(extra: Value) -> Value {
    let mut parameters = json!({"target": "target"});
    for (k, v) in extra.as_object().unwrap() {
        parameters[k] = v.clone();
    }
    json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": parameters})
}

fn gone_within(pid: u32, limit: Duration) -> bool {
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
    let server = d.server_pid();

    // Wait until the CLI runs: a process under the server whose working directory is the
    // run's work directory.
    let begun = Instant::now();
    let cli: Vec<u32> = loop {
        let t = d.send(json!({"op": "get", "taskId": task_id}));
        assert_eq!(t["status"], "working", "{t:#}");
        let message = t["statusMessage"].as_str().unwrap_or_default().to_string();
        let found: Vec<u32> = scimcp_e2e::http_server::descendants(server)
            .into_iter()
            .filter(|pid| {
                fs_err::read_link(format!("/proc/{pid}/cwd"))
                    .is_ok_and(|p| p.to_string_lossy().contains("/runs/run-"))
            })
            .collect();
        if !found.is_empty() && message.contains("running") {
            break found;
        }
        assert!(
            begun.elapsed() < Duration::from_secs(60),
            "no CLI process: {t:#}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };

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
