//! Outputs read from text through the real `scimcp serve`, as an MCP client drives it. The
//! test adapters run coreutils (`cat`, `head`), never a shell: a CLI whose only output is
//! its stdout gets it as an artifact with its SHA-256 (and values read from it and from the
//! artifact as a table into `reported`); a requirement that does not hold ends the run
//! `failed`/`success_predicate` with its message; an empty required artifact is
//! `partial_failure` naming it; a stream longer than `max_artifact_bytes` is cut to the
//! bound and reported.

use std::path::PathBuf;

use scimcp_client::McpSession;
use serde_json::{Value, json};

const MANIFEST: &str = r#"schema_version = 1
name = "streams"
version = "0.1.0"
summary = "Coreutils programs whose results are on stdout."

[runtime]
kind = "executable"
executable = "cat"

[programs.head]
executable = "head"

[[workflow]]
id = "show"
summary = "The table on stdout, kept as an artifact and read as a table and as text."
parameters = "params.json"
argv = ["{dataset}"]

[[workflow.artifact]]
id = "copy"
base = "stdout"
path = "copy.csv"
media_type = "text/csv"

[[workflow.metric]]
id = "first_value"
from = "copy"
column = "value"

[[workflow.metric]]
id = "values"
from = "copy"
column = "value"
all = true

[[workflow.metric]]
id = "b_value"
from = "stdout"
pattern = '^b,(?P<value>\d+)$'

[[workflow.require]]
metric = "first_value"
ge = 1.0

[[workflow.require]]
from = "stderr"
absent = 'error'

[[workflow]]
id = "strict"
summary = "The same, held to a requirement the table does not meet."
parameters = "params.json"
argv = ["{dataset}"]

[[workflow.metric]]
id = "b_value"
from = "stdout"
pattern = '^b,(?P<value>\d+)$'

[[workflow.require]]
metric = "b_value"
lt = 0.0
message = "every value must be negative; is this the right table?"

[[workflow]]
id = "two_streams"
summary = "Two steps, each with its stdout as an artifact."
parameters = "params.json"

[[workflow.step]]
id = "peek"
program = "head"
argv = ["-n", "2", "{dataset}"]

[[workflow.step]]
id = "show"
argv = ["{dataset}"]

[[workflow.artifact]]
id = "head"
base = "stdout"
step = "peek"
path = "head.csv"
media_type = "text/csv"

[[workflow.artifact]]
id = "whole"
base = "stdout"
path = "whole.csv"
media_type = "text/csv"

[[workflow.metric]]
id = "b_value"
from = "stdout"
pattern = '^b,(?P<value>\d+)$'

[[workflow]]
id = "nothing"
summary = "Prints nothing: its required stdout artifact is empty."
parameters = "params.json"
program = "head"
argv = ["-c", "0", "{dataset}"]

[[workflow.artifact]]
id = "out"
base = "stdout"
path = "out.txt"
media_type = "text/plain"

[[workflow]]
id = "nothing_allowed"
summary = "Prints nothing, and says an empty output is fine."
parameters = "params.json"
program = "head"
argv = ["-c", "0", "{dataset}"]

[[workflow.artifact]]
id = "out"
base = "stdout"
path = "out.txt"
media_type = "text/plain"
allow_empty = true
"#;

/// A stdout artifact over a 10-byte bound.
const TINY: &str = r#"schema_version = 1
name = "tiny"
version = "0.1.0"
summary = "A stdout artifact longer than its bound."

[runtime]
kind = "executable"
executable = "cat"

[limits]
max_artifact_bytes = 10

[[workflow]]
id = "show"
summary = "The table on stdout."
parameters = "params.json"
argv = ["{dataset}"]

[[workflow.artifact]]
id = "copy"
base = "stdout"
path = "copy.csv"
media_type = "text/csv"
"#;

const PARAMS: &str = r#"{"type": "object", "additionalProperties": false, "properties": {}}"#;

const TABLE: &str = "sample,value\na,1\nb,2\n";

struct Server {
    _root: tempfile::TempDir,
    table: PathBuf,
    session: McpSession,
}

impl Server {
    async fn start(manifest: &str) -> Server {
        let root = tempfile::Builder::new()
            .prefix("scimcp-outputs-")
            .tempdir()
            .unwrap();
        let cwd = root.path().join("project");
        let home = root.path().join("home");
        fs_err::create_dir_all(cwd.join("data")).unwrap();
        fs_err::create_dir_all(&home).unwrap();
        let table = cwd.join("data").join("table.csv");
        fs_err::write(&table, TABLE).unwrap();
        let adapter_dir = root.path().join("adapter");
        fs_err::create_dir_all(&adapter_dir).unwrap();
        fs_err::write(adapter_dir.join("adapter.toml"), manifest).unwrap();
        fs_err::write(adapter_dir.join("params.json"), PARAMS).unwrap();
        let session = McpSession::spawn(
            &scimcp_e2e::sibling_binary("scimcp").unwrap(),
            &[
                "serve".to_string(),
                "--adapter".into(),
                adapter_dir.join("adapter.toml").display().to_string(),
            ],
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

    /// Validate, start, and wait for the terminal result.
    async fn run(&self, workflow: &str) -> (Value, Value) {
        scimcp_e2e::harness::run_on(
            &self.session,
            self.request(workflow),
            std::time::Duration::from_secs(300),
        )
        .await
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    scimcp_core::hash::sha256_hex(bytes)
}

#[tokio::test]
async fn a_stdout_only_cli_has_its_output_as_a_hashed_artifact_and_metrics_in_reported() {
    let s = Server::start(MANIFEST).await;
    let (validation, result) = s.run("show").await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let items = result["artifacts"]["items"].as_array().unwrap();
    let copy = items
        .iter()
        .find(|a| a["id"] == "copy")
        .unwrap_or_else(|| panic!("no stdout artifact in {result:#}"));
    assert_eq!(copy["path"], "copy.csv");
    assert_eq!(copy["sha256"], sha256_hex(TABLE.as_bytes()), "{copy:#}");
    assert_eq!(copy["size_bytes"], TABLE.len());
    let output = PathBuf::from(result["output_dir"].as_str().unwrap());
    assert_eq!(
        fs_err::read_to_string(output.join("copy.csv")).unwrap(),
        TABLE
    );
    assert_eq!(
        result["reported"]["copy"]["first_value"],
        json!(1),
        "{result:#}"
    );
    assert_eq!(result["reported"]["copy"]["values"], json!([1, 2]));
    assert_eq!(result["reported"]["stdout"]["b_value"], json!(2));
    // The plan binds what is read and required, so its hash covers them.
    assert_eq!(validation["plan"]["metrics"].as_array().unwrap().len(), 3);
    assert_eq!(validation["plan"]["requires"].as_array().unwrap().len(), 2);
    // The log still has the stream too.
    let run_dir = PathBuf::from(result["run_dir"].as_str().unwrap());
    assert_eq!(
        fs_err::read_to_string(run_dir.join("stdout.log")).unwrap(),
        TABLE
    );
}

#[tokio::test]
async fn each_step_s_stdout_is_the_artifact_that_names_it() {
    let s = Server::start(MANIFEST).await;
    let (_, result) = s.run("two_streams").await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let by_id = |id: &str| {
        result["artifacts"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no artifact {id} in {result:#}"))
    };
    assert_eq!(by_id("head")["sha256"], sha256_hex(b"sample,value\na,1\n"));
    assert_eq!(by_id("whole")["sha256"], sha256_hex(TABLE.as_bytes()));
    // `stdout` is the last step's stream.
    assert_eq!(
        result["reported"]["stdout"]["b_value"],
        json!(2),
        "{result:#}"
    );
}

#[tokio::test]
async fn a_requirement_that_does_not_hold_fails_the_run_with_its_message() {
    let s = Server::start(MANIFEST).await;
    let (_, result) = s.run("strict").await;
    assert_eq!(result["state"], "failed", "{result:#}");
    assert_eq!(result["reason"], "success_predicate", "{result:#}");
    assert_eq!(result["exit_code"], 0);
    let message = result["message"].as_str().unwrap();
    assert_eq!(
        message,
        "the CLI exited 0 but the requirement 'b_value lt 0' does not hold: the value found \
         is 2 (every value must be negative; is this the right table?)"
    );
    // The value read is still reported, for the scientist to see.
    assert_eq!(result["reported"]["stdout"]["b_value"], json!(2));
}

#[tokio::test]
async fn an_empty_required_artifact_is_a_partial_failure_naming_it() {
    let s = Server::start(MANIFEST).await;
    let (_, result) = s.run("nothing").await;
    assert_eq!(result["state"], "partial_failure", "{result:#}");
    assert_eq!(result["reason"], "missing_artifacts");
    let problem = &result["problems"]["items"][0];
    assert_eq!(problem["id"], "out", "{result:#}");
    assert_eq!(problem["path"], "out.txt");
    assert!(
        problem["problem"]
            .as_str()
            .unwrap()
            .starts_with("empty (0 bytes)"),
        "{problem:#}"
    );
    assert!(
        result["message"]
            .as_str()
            .unwrap()
            .contains("out (out.txt): empty (0 bytes)"),
        "{result:#}"
    );
    let (_, allowed) = s.run("nothing_allowed").await;
    assert_eq!(allowed["state"], "succeeded", "{allowed:#}");
    assert_eq!(allowed["artifacts"]["items"][0]["size_bytes"], 0);
}

#[tokio::test]
async fn a_stream_over_max_artifact_bytes_is_cut_to_the_bound_and_reported() {
    let s = Server::start(TINY).await;
    let (_, result) = s.run("show").await;
    assert_eq!(result["state"], "partial_failure", "{result:#}");
    let copy = &result["artifacts"]["items"][0];
    assert_eq!(copy["size_bytes"], 10, "{result:#}");
    assert_eq!(copy["sha256"], sha256_hex(&TABLE.as_bytes()[..10]));
    let problem = result["problems"]["items"][0]["problem"].as_str().unwrap();
    assert!(
        problem.contains("longer than max_artifact_bytes = 10"),
        "{result:#}"
    );
    assert_eq!(result["problems"]["items"][0]["id"], "copy");
}

/// What a Slurm batch job runs on the compute node, `scimcp __job`, makes the same stream
/// copies as a local run (the server then indexes them from the shared run directory).
#[test]
fn the_slurm_job_runner_copies_a_stdout_artifact_complete() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    let work = run.join("work");
    fs_err::create_dir_all(work.join("output")).unwrap();
    fs_err::write(work.join("table.csv"), TABLE).unwrap();
    let cat = scimcp_core::program_identity::find_executable("cat", &[], std::env::var_os("PATH"))
        .expect("cat is on PATH");
    let plan = json!({
        "adapter": "streams", "adapter_version": "0.1.0", "adapter_sha256": "0",
        "workflow": "show", "program": cat.display().to_string(), "args": ["table.csv"],
        "stdin": [], "input_files": [], "env": {}, "env_passthrough": ["PATH"],
        "working_dir": "work", "output_dir": "output", "timeout_s": 30,
        "artifacts": [
            {"id": "copy", "base": "stdout", "path": "copy.csv", "media_type": "text/csv"}
        ],
    });
    fs_err::write(run.join("plan.json"), serde_json::to_vec(&plan).unwrap()).unwrap();
    let job = |max_artifact_bytes: &str| {
        std::process::Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap())
            .args(["__job", "--run-dir"])
            .arg(&run)
            .arg("--state-dir")
            .arg(root.path().join("state"))
            .args([
                "--max-log-bytes",
                "1000",
                "--max-artifact-bytes",
                max_artifact_bytes,
            ])
            .output()
            .unwrap()
    };
    let out = job("1000");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        fs_err::read_to_string(work.join("output/copy.csv")).unwrap(),
        TABLE
    );
    assert_eq!(
        fs_err::read_to_string(run.join("stdout.log")).unwrap(),
        TABLE
    );
    // Over the bound the node keeps one byte past it (so the server can tell the stream was
    // cut, and cuts it), never more.
    let out = job("5");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        fs_err::read(work.join("output/copy.csv")).unwrap(),
        &TABLE.as_bytes()[..6]
    );
    assert_eq!(
        fs_err::read_to_string(run.join("stdout.log")).unwrap(),
        TABLE
    );
}

/// A campaign's summary table shows the metrics read from text, by default every
/// single-valued one (a workflow without `json_keys`), with their statistics.
#[tokio::test]
async fn a_campaign_table_shows_metrics_read_from_stdout() {
    let s = Server::start(MANIFEST).await;
    let other = s.table.with_file_name("other.csv");
    fs_err::write(&other, "sample,value\na,3\nb,5\n").unwrap();
    let items = json!([
        {"dataset": s.table.display().to_string()},
        {"dataset": other.display().to_string()},
    ]);
    let started = s
        .ok(
            "start_campaign",
            json!({"workflow": "show", "items": items, "max_concurrent": 2, "confirm": true}),
        )
        .await;
    assert_eq!(started["started"], true, "{started:#}");
    let campaign_id = started["campaign_id"].as_str().unwrap().to_string();
    let done = scimcp_e2e::harness::campaign_result_on(
        &s.session,
        &campaign_id,
        std::time::Duration::from_secs(300),
    )
    .await;
    assert_eq!(done["counts"]["succeeded"], 2, "{done:#}");
    let table = &done["table"];
    assert_eq!(
        table["columns"],
        json!(["copy.first_value", "stdout.b_value"]),
        "{done:#}"
    );
    let mut rows: Vec<Value> = table["rows"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["values"].clone())
        .collect();
    rows.sort_by_key(|v| v[0].as_i64());
    assert_eq!(rows, [json!([1, 2]), json!([3, 5])]);
    let b = table["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["column"] == "stdout.b_value")
        .unwrap();
    assert_eq!(
        (b["min"].as_f64(), b["max"].as_f64()),
        (Some(2.0), Some(5.0))
    );
    // A list-valued metric may be asked for by name; an unknown one is refused with the list.
    let refused = scimcp_e2e::harness::err_on(
        &s.session,
        "start_campaign",
        json!({"workflow": "show", "items": [{"dataset": s.table.display().to_string()}],
               "max_concurrent": 1, "metrics": ["stdout.nope"]}),
    )
    .await;
    assert!(refused.to_string().contains("copy.values"), "{refused:#}");
}
