//! Several programs, steps and executable identities through the real `scimcp serve`, as an
//! MCP client drives it. The test adapters run coreutils (`cp`, `head`, `sha256sum`), never
//! a shell: a two-step workflow whose second step reads what the first wrote; a first step
//! that fails and ends the run, named; a program that is not installed (not ready, with the
//! remedy from `provided_by`, no run started); the identity of every program in
//! `get_environment`, the plan and the run manifest; and a program that cannot take paths
//! with spaces refused when `SCIMCP_HOME` has one.

use std::path::{Path, PathBuf};

use scimcp_client::McpSession;
use serde_json::{Value, json};

const MANIFEST: &str = r#"schema_version = 1
name = "chain"
version = "0.1.0"
summary = "Coreutils programs in steps: copy a table, then copy the copy."

[runtime]
kind = "executable"
executable = "sha256sum"
version = { args = ["--version"], pattern = 'sha256sum \(GNU coreutils\) (?P<version>\S+)' }
provided_by = { debian = "coreutils", homebrew = "coreutils" }

[programs.copy]
executable = "cp"
provided_by = { debian = "coreutils" }

[programs.head]
executable = "head"
version = { args = ["--version"], pattern = 'head \(GNU coreutils\) (?P<version>\S+)' }
provided_by = { debian = "coreutils" }

[programs.absent]
executable = "scimcp-test-no-such-program"
provided_by = { debian = "scimcp-absent-tool", conda = "conda-forge::absent-tool" }

[programs.spaceless]
executable = "cp"
paths_with_spaces = false

[[workflow]]
id = "hash"
summary = "The table's SHA-256, with the runtime's own program."
parameters = "params.json"
argv = ["{dataset}"]

[[workflow]]
id = "two_steps"
summary = "Stage the table in the working directory, then copy the staged file into the output."
parameters = "params.json"

[[workflow.step]]
id = "stage"
program = "copy"
argv = ["{dataset}", "staged.csv"]

[[workflow.step]]
id = "publish"
program = "copy"
argv = ["staged.csv", "{output_dir}/final.csv"]

[[workflow.step]]
id = "peek"
program = "head"
argv = ["-n", "1", "{output_dir}/final.csv"]

[[workflow.artifact]]
id = "final"
path = "final.csv"
media_type = "text/csv"

[[workflow]]
id = "first_fails"
summary = "A first step that fails: the second must never run."
parameters = "params.json"

[[workflow.step]]
id = "stage"
program = "copy"
argv = ["{dataset}/not-a-directory", "staged.csv"]

[[workflow.step]]
id = "publish"
program = "copy"
argv = ["{dataset}", "{output_dir}/final.csv"]

[[workflow.artifact]]
id = "final"
path = "final.csv"
media_type = "text/csv"

[[workflow]]
id = "needs_absent"
summary = "Runs a program that is not installed."
parameters = "params.json"
program = "absent"
argv = ["{dataset}"]

[[workflow]]
id = "spaceless"
summary = "Runs a program that cannot take paths with spaces."
parameters = "params.json"
program = "spaceless"
argv = ["{dataset}", "{work_dir}/copy.csv"]
"#;

/// An adapter whose runtime program itself is missing.
const MISSING: &str = r#"schema_version = 1
name = "vanished"
version = "0.1.0"
summary = "An executable runtime that is not installed."

[runtime]
kind = "executable"
executable = "scimcp-test-vanished-tool"
provided_by = { debian = "vanished-tool", homebrew = "vanished" }

[[workflow]]
id = "go"
summary = "Would run the missing program."
parameters = "params.json"
argv = ["{dataset}"]
"#;

const PARAMS: &str = r#"{"type": "object", "additionalProperties": false, "properties": {}}"#;

const TABLE: &str = "sample,value\na,1\nb,2\n";

struct Server {
    _root: tempfile::TempDir,
    table: PathBuf,
    session: McpSession,
}

impl Server {
    /// A server on `manifest`, its `SCIMCP_HOME` under a directory named `home_name`.
    async fn start(manifest: &str, home_name: &str) -> Server {
        Self::start_with(manifest, home_name, &[]).await
    }

    /// [`Server::start`] with more `scimcp serve` arguments.
    async fn start_with(manifest: &str, home_name: &str, extra: &[String]) -> Server {
        let root = tempfile::Builder::new()
            .prefix("scimcp-programs-")
            .tempdir()
            .unwrap();
        let cwd = root.path().join("project");
        let home = root.path().join(home_name);
        fs_err::create_dir_all(cwd.join("data")).unwrap();
        fs_err::create_dir_all(&home).unwrap();
        let table = cwd.join("data").join("table.csv");
        fs_err::write(&table, TABLE).unwrap();
        let adapter_dir = root.path().join("adapter");
        fs_err::create_dir_all(&adapter_dir).unwrap();
        fs_err::write(adapter_dir.join("adapter.toml"), manifest).unwrap();
        fs_err::write(adapter_dir.join("params.json"), PARAMS).unwrap();
        let mut args = vec![
            "serve".to_string(),
            "--adapter".into(),
            adapter_dir.join("adapter.toml").display().to_string(),
        ];
        args.extend(extra.iter().cloned());
        let session = McpSession::spawn(
            &scimcp_e2e::sibling_binary("scimcp").unwrap(),
            &args,
            &[
                ("SCIMCP_HOME".to_string(), home.display().to_string()),
                ("SCIMCP_LOG".to_string(), "warn".to_string()),
            ],
            &cwd,
        )
        .await
        .unwrap();
        Server {
            _root: root,
            table,
            session,
        }
    }

    fn request(&self, workflow: &str) -> Value {
        json!({"workflow": workflow, "dataset": self.table.display().to_string()})
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        scimcp_e2e::harness::ok_on(&self.session, tool, args).await
    }

    async fn err(&self, tool: &str, args: Value) -> Value {
        scimcp_e2e::harness::err_on(&self.session, tool, args).await
    }

    /// Validate, start, and wait for the terminal result.
    async fn run(&self, workflow: &str) -> (Value, Value) {
        scimcp_e2e::harness::run_on(
            &self.session,
            self.request(workflow),
            std::time::Duration::from_secs(300),
        )
        .await
    }

    async fn run_count(&self) -> usize {
        let listed = self.ok("list_runs", json!({})).await;
        listed["runs"]["items"].as_array().map_or(0, Vec::len)
    }
}

fn sha256(path: &Path) -> String {
    scimcp_core::hash::sha256_file(path).unwrap().0
}

/// The absolute path `name` resolves to on PATH, links followed as the server does not.
fn on_path(name: &str) -> PathBuf {
    scimcp_core::program_identity::find_executable(name, &[], std::env::var_os("PATH"))
        .unwrap_or_else(|| panic!("{name} is on PATH"))
}

#[tokio::test]
async fn two_steps_run_in_order_in_one_working_directory() {
    let s = Server::start(MANIFEST, "home").await;
    let (validation, result) = s.run("two_steps").await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    assert!(result.get("failed_step").is_none(), "{result:#}");
    let steps = validation["plan"]["steps"].as_array().unwrap();
    let ids: Vec<&str> = steps.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["stage", "publish", "peek"]);
    assert_eq!(steps[0]["program"], on_path("cp").display().to_string());
    assert_eq!(steps[2]["program"], on_path("head").display().to_string());
    assert_eq!(steps[1]["args"], json!(["staged.csv", "output/final.csv"]));
    // The second step read what the first wrote in the same working directory.
    let run_dir = PathBuf::from(result["run_dir"].as_str().unwrap());
    let work = run_dir.join("work");
    assert_eq!(
        fs_err::read_to_string(work.join("staged.csv")).unwrap(),
        TABLE
    );
    let final_csv = &result["artifacts"]["items"][0];
    assert_eq!(final_csv["sha256"], sha256(&s.table), "{result:#}");
    // The third step's stdout (the first line) is in the run's one stdout log.
    let log = fs_err::read_to_string(run_dir.join("stdout.log")).unwrap();
    assert_eq!(log, "sample,value\n");
    // The documented default directories exist before the CLI starts.
    for dir in scimcp_core::run_env::DEFAULT_RUN_DIRS {
        assert!(work.join(dir).is_dir(), "{dir} was not created");
    }
    // Plan and run manifest carry every program's identity.
    let programs = validation["plan"]["programs"].as_array().unwrap();
    let ids: Vec<&str> = programs.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["copy", "head"], "{programs:#?}");
    assert_eq!(programs[0]["sha256"], sha256(&on_path("cp")));
    assert!(
        programs[1]["version"]
            .as_str()
            .is_some_and(|v| v.contains('.')),
        "{programs:#?}"
    );
    let manifest: Value =
        serde_json::from_slice(&fs_err::read(run_dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["runtime"]["programs"],
        json!(programs),
        "{manifest:#}"
    );
}

#[tokio::test]
async fn a_failing_first_step_ends_the_run_and_is_named() {
    let s = Server::start(MANIFEST, "home").await;
    let (_, result) = s.run("first_fails").await;
    assert_eq!(result["state"], "failed", "{result:#}");
    assert_eq!(result["reason"], "exit_code", "{result:#}");
    assert_eq!(result["failed_step"], "stage", "{result:#}");
    let message = result["message"].as_str().unwrap();
    assert!(message.contains("step 'stage'"), "{message}");
    assert!(message.contains("did not run"), "{message}");
    // The second step never ran: its output does not exist.
    let run_dir = PathBuf::from(result["run_dir"].as_str().unwrap());
    assert!(!run_dir.join("work/output/final.csv").exists());
    assert!(
        result["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("not-a-directory"),
        "{result:#}"
    );
}

#[tokio::test]
async fn a_missing_program_is_not_ready_with_its_remedy_and_starts_no_run() {
    let s = Server::start(MANIFEST, "home").await;
    let caps = s.ok("get_capabilities", json!({})).await;
    let wf = |id: &str| {
        caps["workflows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(wf("two_steps")["ready"], true, "{caps:#}");
    let absent = wf("needs_absent");
    assert_eq!(absent["ready"], false, "{caps:#}");
    let problem = absent["problem"].as_str().unwrap();
    for part in [
        "scimcp-test-no-such-program",
        "sudo apt install scimcp-absent-tool",
        "conda install -c conda-forge absent-tool",
    ] {
        assert!(problem.contains(part), "{part} missing from: {problem}");
    }
    assert_eq!(caps["runtime"]["ready"], false, "{caps:#}");
    let validation = s.ok("validate_analysis", s.request("needs_absent")).await;
    assert_eq!(validation["ready"], false, "{validation:#}");
    let blocker = &validation["blockers"][0];
    assert_eq!(blocker["field"], "programs.absent", "{validation:#}");
    assert!(
        blocker["message"]
            .as_str()
            .unwrap()
            .contains("sudo apt install scimcp-absent-tool")
    );
    let mut start = s.request("needs_absent");
    start["validation_id"] = validation["validation_id"].clone();
    let refused = s.err("start_analysis", start).await;
    assert_eq!(refused["code"], "not_ready", "{refused:#}");
    assert_eq!(s.run_count().await, 0);
}

#[tokio::test]
async fn a_missing_runtime_program_blocks_everything_with_its_remedy() {
    let s = Server::start(MISSING, "home").await;
    let caps = s.ok("get_capabilities", json!({})).await;
    assert_eq!(caps["runtime"]["ready"], false, "{caps:#}");
    let problem = caps["runtime"]["problem"].as_str().unwrap();
    assert!(
        problem.contains("`scimcp-test-vanished-tool` is not on PATH"),
        "{problem}"
    );
    assert!(
        problem.contains("sudo apt install vanished-tool"),
        "{problem}"
    );
    assert!(problem.contains("brew install vanished"), "{problem}");
    let validation = s.ok("validate_analysis", s.request("go")).await;
    assert_eq!(validation["ready"], false, "{validation:#}");
    assert_eq!(validation["blockers"][0]["field"], "runtime");
    let mut start = s.request("go");
    start["validation_id"] = validation["validation_id"].clone();
    let refused = s.err("start_analysis", start).await;
    assert_eq!(refused["code"], "not_ready", "{refused:#}");
    assert_eq!(s.run_count().await, 0);
    let env = s.ok("get_environment", json!({})).await;
    assert_eq!(env["requirements_satisfied"], false, "{env:#}");
    assert!(
        env["program_problems"][0]
            .as_str()
            .unwrap()
            .contains("vanished-tool"),
        "{env:#}"
    );
}

#[tokio::test]
async fn get_environment_reports_each_program_path_hash_and_version() {
    let s = Server::start(MANIFEST, "home").await;
    let env = s.ok("get_environment", json!({})).await;
    assert_eq!(env["runtime_kind"], "executable");
    assert!(env.get("probe").is_none(), "{env:#}");
    let programs = env["programs"].as_array().unwrap();
    let find = |id: &str| programs.iter().find(|p| p["id"] == id).cloned().unwrap();
    let runtime = find("runtime");
    let sha256sum = on_path("sha256sum");
    assert_eq!(runtime["executable"], sha256sum.display().to_string());
    assert_eq!(runtime["sha256"], sha256(&sha256sum));
    let version = runtime["version"].as_str().unwrap();
    assert!(
        version.chars().next().unwrap().is_ascii_digit(),
        "{version}"
    );
    assert!(find("head")["version"].is_string(), "{programs:#?}");
    // Declared without a probe: identified by path and hash only.
    assert!(find("copy").get("version").is_none(), "{programs:#?}");
    // The single-program workflow binds the runtime's identity into its plan.
    let v = s.ok("validate_analysis", s.request("hash")).await;
    assert_eq!(v["plan"]["programs"], json!([runtime]), "{v:#}");
    assert_eq!(v["plan"]["program"], sha256sum.display().to_string());
    assert!(v["plan"].get("steps").is_none());
}

#[tokio::test]
async fn a_program_that_cannot_take_spaces_is_refused_when_the_state_path_has_one() {
    let spaced = Server::start(MANIFEST, "Application Support").await;
    let v = spaced
        .ok("validate_analysis", spaced.request("spaceless"))
        .await;
    assert_eq!(v["ready"], false, "{v:#}");
    let message = v["blockers"][0]["message"].as_str().unwrap();
    assert!(message.contains("Application Support"), "{message}");
    assert!(
        message.contains("set SCIMCP_HOME to a directory whose path has no spaces"),
        "{message}"
    );
    // Programs that take spaces are not affected.
    let other = spaced.ok("validate_analysis", spaced.request("hash")).await;
    assert_eq!(other["ready"], true, "{other:#}");
    let plain = Server::start(MANIFEST, "home").await;
    let v = plain
        .ok("validate_analysis", plain.request("spaceless"))
        .await;
    assert_eq!(v["ready"], true, "{v:#}");
}

#[tokio::test]
async fn the_doctor_fails_a_missing_program_with_its_remedy_and_passes_present_ones() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    fs_err::create_dir_all(&home).unwrap();
    let doctor = |manifest: &str, name: &str| {
        let adapter = dir.path().join(format!("{name}.toml"));
        fs_err::write(&adapter, manifest).unwrap();
        fs_err::write(dir.path().join("params.json"), PARAMS).unwrap();
        let out = std::process::Command::new(scimcp_e2e::sibling_binary("scimcp-doctor").unwrap())
            .args([
                "--adapter",
                adapter.to_str().unwrap(),
                "--check",
                "runtime.programs",
                "--json",
            ])
            .env("SCIMCP_HOME", &home)
            .env("HOME", &home)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), report["checks"][0].clone())
    };
    let (code, check) = doctor(MISSING, "vanished");
    assert_eq!(code, Some(2), "{check:#}");
    assert_eq!(check["status"], "fail", "{check:#}");
    assert!(
        check["finding"]
            .as_str()
            .unwrap()
            .contains("scimcp-test-vanished-tool"),
        "{check:#}"
    );
    let remedy = check["remedy"].as_str().unwrap();
    assert!(
        remedy.contains("sudo apt install vanished-tool"),
        "{remedy}"
    );
    assert!(remedy.contains("brew install vanished"), "{remedy}");
    // Every present program is found, hashed and its version read; only `absent` fails.
    let (_, check) = doctor(MANIFEST, "chain");
    let finding = check["finding"].as_str().unwrap();
    assert!(finding.contains("scimcp-test-no-such-program"), "{check:#}");
    assert!(!finding.contains("program 'head'"), "{check:#}");
    let present = MANIFEST.replace(
        "[programs.absent]\nexecutable = \"scimcp-test-no-such-program\"\n",
        "[programs.absent]\nexecutable = \"cat\"\n",
    );
    let (code, check) = doctor(&present, "chain");
    assert_eq!(code, Some(0), "{check:#}");
    let finding = check["finding"].as_str().unwrap();
    assert!(
        finding.contains(&format!("head: {}", on_path("head").display())),
        "{finding}"
    );
}

/// Two steps under a two-second run timeout: the second sleeps past it.
const SLOW: &str = r#"schema_version = 1
name = "slow"
version = "0.1.0"
summary = "A second step that outlives the run's timeout."

[runtime]
kind = "executable"
executable = "cp"

[programs.sleep]
executable = "sleep"

[limits]
run_timeout_s = 2

[[workflow]]
id = "stall"
summary = "Stage the table, then sleep past the timeout."
parameters = "params.json"

[[workflow.step]]
id = "stage"
argv = ["{dataset}", "staged.csv"]

[[workflow.step]]
id = "wait"
program = "sleep"
argv = ["60"]
"#;

#[tokio::test]
async fn the_run_timeout_covers_every_step_and_ends_the_current_one() {
    let s = Server::start(SLOW, "home").await;
    let started = std::time::Instant::now();
    let (_, result) = s.run("stall").await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(result["state"], "failed", "{result:#}");
    assert_eq!(result["reason"], "timeout", "{result:#}");
    assert_eq!(result["failed_step"], "wait", "{result:#}");
    let run_dir = PathBuf::from(result["run_dir"].as_str().unwrap());
    // The first step ran to its end before the second started.
    assert_eq!(
        fs_err::read_to_string(run_dir.join("work/staged.csv")).unwrap(),
        TABLE
    );
    // The run's status names no live process: the sleeping step's group was ended.
    let status = s
        .ok("get_run_status", json!({"run_id": result["run_id"]}))
        .await;
    assert_eq!(status["state"], "failed", "{status:#}");
    if let Some(pid) = status["pid"].as_u64() {
        assert!(
            !scimcp_e2e::process_alive(u32::try_from(pid).unwrap()),
            "{status:#}"
        );
    }
}

/// A python runtime with a console script as a second program.
const PYTHON_SCRIPTS: &str = r#"schema_version = 1
name = "pyscripts"
version = "0.1.0"
summary = "A python runtime whose package also installs a console script."

[runtime]
kind = "python"
python = ">=3.8"
package = "refsci"
launch = ["-m", "refsci"]

[programs.cli]
executable = "refsci"
provided_by = { pip = "refsci" }

[[workflow]]
id = "plain"
summary = "The interpreter with the runtime's launch arguments."
parameters = "params.json"
argv = ["describe", "{dataset}"]

[[workflow]]
id = "script"
summary = "The package's console script, found beside the interpreter."
parameters = "params.json"
program = "cli"
argv = ["describe", "{dataset}"]
"#;

#[tokio::test]
async fn a_python_runtime_finds_a_console_script_beside_its_interpreter_first() {
    let python = scimcp_e2e::dev_python().unwrap();
    let script = python.parent().unwrap().join("refsci");
    assert!(
        script.is_file(),
        "the development runtime installs the refsci console script"
    );
    let s = Server::start_with(
        PYTHON_SCRIPTS,
        "home",
        &["--python".to_string(), python.display().to_string()],
    )
    .await;
    // The interpreter's workflow keeps the python plan shape: no programs, launch first.
    let plain = s.ok("validate_analysis", s.request("plain")).await;
    assert_eq!(plain["ready"], true, "{plain:#}");
    assert!(plain["plan"].get("programs").is_none(), "{plain:#}");
    assert_eq!(plain["plan"]["args"][0], "-m");
    // The console script is the one in the interpreter's scripts directory, with its own
    // (empty) launch arguments, bound by hash.
    let v = s.ok("validate_analysis", s.request("script")).await;
    assert_eq!(v["ready"], true, "{v:#}");
    let resolved = std::path::absolute(&script).unwrap();
    assert_eq!(
        v["plan"]["program"],
        resolved.display().to_string(),
        "{v:#}"
    );
    assert_eq!(v["plan"]["args"], json!(["describe", "inputs/table.csv"]));
    assert_eq!(v["plan"]["programs"][0]["id"], "cli");
    assert_eq!(v["plan"]["programs"][0]["sha256"], sha256(&resolved));
}
