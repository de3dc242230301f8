//! Named file inputs through the real `scimcp serve`, as an MCP client drives it: a test
//! adapter whose program is coreutils' `cp` (no shell) takes FASTA files by name. Two inputs
//! run and are bound by hash; changing either file's bytes changes the request hash and the
//! validation id; an artifact of one run is an input of the next, with its recorded hash;
//! a wrong format, a path outside the allowed directories and a missing dataset for a table
//! workflow are refused with the field named.

use std::path::{Path, PathBuf};

use scimcp_client::McpSession;
use serde_json::{Value, json};

const MANIFEST: &str = r#"schema_version = 1
name = "copier"
version = "0.1.0"
summary = "Copies FASTA files with coreutils cp: a CLI that takes files by name."

[runtime]
kind = "executable"
executable = "cp"

[[workflow]]
id = "pair"
summary = "Copy two FASTA files into the output directory."
parameters = "params.json"
argv = ["{input.first}", "{input.second}", "{output_dir}"]

[[workflow.input]]
id = "first"
summary = "A FASTA file"
formats = ["fasta", "fa"]

[[workflow.input]]
id = "second"
summary = "Another FASTA file"
formats = ["fasta", "fa", "text/x-fasta"]

[[workflow.artifact]]
id = "copies"
path = "*.fa*"
media_type = "text/x-fasta"
min_count = 2

[[workflow]]
id = "one"
summary = "Copy one FASTA file to output/copy.fa."
parameters = "params.json"
argv = ["{input.seq}", "{output_dir}/copy.fa"]

[[workflow.input]]
id = "seq"
summary = "A FASTA file"
formats = ["fa"]

[[workflow.artifact]]
id = "copy"
path = "copy.fa"
media_type = "text/x-fasta"
"#;

const BUNDLE: &str = r#"
[[workflow]]
id = "bundle"
summary = "Copy a list of FASTA files, a directory of them and an optional extra one."
parameters = "params.json"
argv = ["-r", "{input.seqs}", "{input.db}", "{input.extra}", "{output_dir}"]

[[workflow.input]]
id = "seqs"
summary = "FASTA files"
formats = ["fa"]
kind = "files"
max_count = 3

[[workflow.input]]
id = "db"
summary = "A directory of FASTA files"
formats = ["fa"]
kind = "directory"

[[workflow.input]]
id = "extra"
summary = "One more FASTA file"
formats = ["fa"]
required = false

[[workflow.artifact]]
id = "copies"
path = "*.fa"
media_type = "text/x-fasta"
"#;

const PARAMS: &str = r#"{"type": "object", "additionalProperties": false, "properties": {}}"#;

/// A server on `adapter` started in a project directory whose `data/` holds the files.
struct Server {
    root: tempfile::TempDir,
    data: PathBuf,
    session: McpSession,
}

impl Server {
    async fn start(adapter: Option<&str>) -> Server {
        let root = tempfile::Builder::new()
            .prefix("scimcp inputs ")
            .tempdir()
            .unwrap();
        let cwd = root.path().join("project");
        let data = cwd.join("data");
        let home = root.path().join("home");
        fs_err::create_dir_all(&data).unwrap();
        fs_err::create_dir_all(&home).unwrap();
        let manifest_dir = root.path().join("adapter");
        fs_err::create_dir_all(&manifest_dir).unwrap();
        fs_err::write(
            manifest_dir.join("copier.toml"),
            format!("{MANIFEST}{BUNDLE}"),
        )
        .unwrap();
        fs_err::write(manifest_dir.join("params.json"), PARAMS).unwrap();
        let adapter = adapter.map_or_else(
            || manifest_dir.join("copier.toml").display().to_string(),
            String::from,
        );
        let session = McpSession::spawn(
            &scimcp_e2e::sibling_binary("scimcp").unwrap(),
            &["serve".to_string(), "--adapter".into(), adapter],
            &[
                ("SCIMCP_HOME".to_string(), home.display().to_string()),
                ("SCIMCP_LOG".to_string(), "warn".to_string()),
            ],
            &cwd,
        )
        .await
        .unwrap();
        Server {
            root,
            data,
            session,
        }
    }

    /// Write `text` into the data folder as `name`; returns its path.
    fn file(&self, name: &str, text: &str) -> String {
        let path = self.data.join(name);
        fs_err::write(&path, text).unwrap();
        path.display().to_string()
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        scimcp_e2e::harness::ok_on(&self.session, tool, args).await
    }

    async fn err(&self, tool: &str, args: Value) -> Value {
        scimcp_e2e::harness::err_on(&self.session, tool, args).await
    }

    /// Validate, start with the validation id, and wait for the terminal result.
    async fn run(&self, request: Value) -> (Value, Value) {
        scimcp_e2e::harness::run_on(
            &self.session,
            request.clone(),
            std::time::Duration::from_secs(300),
        )
        .await
    }
}

fn sha256(path: &Path) -> String {
    scimcp_core::hash::sha256_file(path).unwrap().0
}

fn pair(first: &str, second: &str) -> Value {
    json!({"workflow": "pair", "inputs": {"first": first, "second": second}})
}

#[tokio::test]
async fn two_inputs_run_and_the_plan_binds_both_by_hash() {
    let s = Server::start(None).await;
    // get_capabilities tells a client which files to pass, and that no table is read.
    let caps = s.ok("get_capabilities", json!({"workflow": "pair"})).await;
    let wf = &caps["workflows"][0];
    assert_eq!(wf["takes_dataset"], false, "{caps:#}");
    assert_eq!(wf["inputs"][1]["id"], "second");
    assert_eq!(
        wf["inputs"][1]["formats"],
        json!(["fasta", "fa", "text/x-fasta"])
    );
    assert_eq!(wf["inputs"][1]["kind"], "file");
    let a = s.file("alpha.fasta", ">a\nACGT\n");
    let b = s.file("beta.fa", ">b\nGGCC\n");
    let (validation, result) = s.run(pair(&a, &b)).await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let planned = validation["plan"]["inputs"].as_array().unwrap();
    assert_eq!(planned.len(), 2, "{planned:#?}");
    for (input, path, name) in [("first", &a, "alpha.fasta"), ("second", &b, "beta.fa")] {
        let entry = planned.iter().find(|i| i["id"] == input).unwrap();
        let file = &entry["files"][0];
        assert_eq!(file["sha256"], sha256(Path::new(path)), "{entry:#}");
        assert_eq!(file["run_path"], format!("inputs/{input}/{name}"));
        assert_eq!(file["reference"], path.as_str());
    }
    // The CLI got the run's copies, relative to its working directory, never the originals.
    let args = validation["plan"]["args"].as_array().unwrap();
    assert_eq!(
        args,
        &vec![
            json!("inputs/first/alpha.fasta"),
            json!("inputs/second/beta.fa"),
            json!("output")
        ]
    );
    assert!(validation["plan"].get("dataset").is_none());
    // The result and the run manifest record both inputs with their hashes.
    let recorded = result["inputs"].as_array().unwrap();
    assert_eq!(recorded.len(), 2, "{result:#}");
    let run_dir = PathBuf::from(result["run_dir"].as_str().unwrap());
    let manifest: Value =
        serde_json::from_slice(&fs_err::read(run_dir.join("manifest.json")).unwrap()).unwrap();
    let inputs = manifest["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), 2, "{manifest:#}");
    for i in inputs {
        assert_eq!(i["validated_sha256"], i["sha256_at_end"], "{i:#}");
    }
    let copies: Vec<&Value> = result["artifacts"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] == "copies")
        .collect();
    assert_eq!(copies.len(), 2, "{result:#}");
}

#[tokio::test]
async fn changing_either_input_changes_the_request_hash_and_the_validation_id() {
    let s = Server::start(None).await;
    let a = s.file("alpha.fasta", ">a\nACGT\n");
    let b = s.file("beta.fa", ">b\nGGCC\n");
    let ids = |v: &Value| {
        (
            v["request_sha256"].as_str().unwrap().to_string(),
            v["validation_id"].as_str().unwrap().to_string(),
            v["plan_sha256"].as_str().unwrap().to_string(),
        )
    };
    let before = ids(&s.ok("validate_analysis", pair(&a, &b)).await);
    assert_eq!(before, ids(&s.ok("validate_analysis", pair(&a, &b)).await));
    s.file("alpha.fasta", ">a\nACGA\n");
    let first_changed = ids(&s.ok("validate_analysis", pair(&a, &b)).await);
    s.file("alpha.fasta", ">a\nACGT\n");
    s.file("beta.fa", ">b\nGGCA\n");
    let second_changed = ids(&s.ok("validate_analysis", pair(&a, &b)).await);
    for changed in [&first_changed, &second_changed] {
        assert_ne!(changed.0, before.0, "request_sha256");
        assert_ne!(changed.1, before.1, "validation_id");
        assert_ne!(changed.2, before.2, "plan_sha256");
    }
    assert_ne!(first_changed, second_changed);
    // A start with the id of the old bytes is refused: what starts is what was validated.
    let mut start = pair(&a, &b);
    start["validation_id"] = json!(before.1);
    let refused = s.err("start_analysis", start).await;
    assert_eq!(refused["code"], "stale_validation", "{refused:#}");
    // The expected hash of a {path, sha256} reference is enforced.
    let wrong = json!({"workflow": "pair", "inputs": {
        "first": {"path": a, "sha256": "0".repeat(64)}, "second": b}});
    let e = s.err("validate_analysis", wrong).await;
    assert_eq!(e["code"], "dataset_changed", "{e:#}");
    assert_eq!(e["field"], "inputs.first");
    let right = json!({"workflow": "pair", "inputs": {
        "first": {"path": a, "sha256": sha256(Path::new(&a))}, "second": b}});
    s.ok("validate_analysis", right).await;
}

#[tokio::test]
async fn an_artifact_of_one_run_is_an_input_of_the_next_with_its_recorded_hash() {
    let s = Server::start(None).await;
    let seq = s.file("seq.fa", ">s\nACGTACGT\n");
    let (_, a) = s
        .run(json!({"workflow": "one", "inputs": {"seq": seq}}))
        .await;
    assert_eq!(a["state"], "succeeded", "{a:#}");
    let run_a = a["run_id"].as_str().unwrap().to_string();
    let artifact = a["artifacts"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "copy")
        .unwrap()
        .clone();
    let chained = json!({"workflow": "one", "inputs": {
        "seq": {"run_id": run_a, "artifact": "copy"}}});
    let (validation, b) = s.run(chained.clone()).await;
    assert_eq!(b["state"], "succeeded", "{b:#}");
    let file = &validation["plan"]["inputs"][0]["files"][0];
    assert_eq!(file["sha256"], artifact["sha256"], "{file:#}");
    assert_eq!(file["from_run"]["run_id"], run_a.as_str());
    assert_eq!(file["from_run"]["artifact"], "copy");
    assert_eq!(file["reference"], format!("{run_a}:copy"));
    assert_eq!(
        b["inputs"][0]["files"][0]["from_run"]["run_id"],
        run_a.as_str()
    );
    // B's output is A's bytes: provenance end to end.
    let b_copy = b["artifacts"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "copy")
        .unwrap()
        .clone();
    assert_eq!(b_copy["sha256"], artifact["sha256"]);
    // An artifact changed after its run recorded it is refused, naming the input.
    let a_copy = PathBuf::from(a["output_dir"].as_str().unwrap()).join("copy.fa");
    fs_err::write(&a_copy, ">s\nTTTT\n").unwrap();
    let e = s.err("validate_analysis", chained).await;
    assert_eq!(e["code"], "dataset_changed", "{e:#}");
    assert_eq!(e["field"], "inputs.seq");
    assert!(e["message"].as_str().unwrap().contains(&run_a), "{e:#}");
    // An artifact id the run did not record, and a run that does not exist.
    let e = s
        .err(
            "validate_analysis",
            json!({"workflow": "one", "inputs": {"seq": {"run_id": run_a, "artifact": "nope"}}}),
        )
        .await;
    assert_eq!(e["field"], "inputs.seq", "{e:#}");
    assert!(
        e["allowed"].as_array().unwrap().contains(&json!("copy")),
        "{e:#}"
    );
    let e = s
        .err(
            "validate_analysis",
            json!({"workflow": "one", "inputs": {"seq": {"run_id": "run-0000000000000000", "artifact": "copy"}}}),
        )
        .await;
    assert_eq!(e["code"], "unknown_run", "{e:#}");
}

#[tokio::test]
async fn wrong_formats_outside_paths_and_missing_inputs_are_refused_by_name() {
    let s = Server::start(None).await;
    let a = s.file("alpha.fasta", ">a\nACGT\n");
    let csv = s.file("table.csv", "a,b\n1,2\n");
    let e = s.err("validate_analysis", pair(&a, &csv)).await;
    assert_eq!(e["field"], "inputs.second", "{e:#}");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("input 'second'") && message.contains("table.csv"),
        "{message}"
    );
    assert!(message.contains("fasta, fa, text/x-fasta"), "{message}");
    // A file outside every allowed directory (beside the project, not in it).
    let outside = s.root.path().join("outside.fa");
    fs_err::write(&outside, ">o\nA\n").unwrap();
    let e = s
        .err(
            "validate_analysis",
            pair(&a, &outside.display().to_string()),
        )
        .await;
    assert_eq!(e["code"], "dataset_outside_roots", "{e:#}");
    assert_eq!(e["field"], "inputs.second");
    let e = s
        .err("validate_analysis", pair(&a, "data/../../outside.fa"))
        .await;
    assert_eq!(e["code"], "dataset_outside_roots", "{e:#}");
    // A link inside the data folder is not followed.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, s.data.join("link.fa")).unwrap();
        let e = s
            .err(
                "validate_analysis",
                pair(&a, &s.data.join("link.fa").display().to_string()),
            )
            .await;
        assert_eq!(e["code"], "dataset_outside_roots", "{e:#}");
    }
    let e = s
        .err(
            "validate_analysis",
            json!({"workflow": "pair", "inputs": {"first": a}}),
        )
        .await;
    assert_eq!(e["field"], "inputs.second", "{e:#}");
    let e = s
        .err(
            "validate_analysis",
            json!({"workflow": "pair", "inputs": {"first": a, "second": a, "third": a}}),
        )
        .await;
    assert_eq!(e["field"], "inputs.third", "{e:#}");
    // A name that would change what the CLI reads, or be replaced by a run path.
    #[cfg(unix)]
    for name in ["two\nlines.fa", "{work_dir}.fa"] {
        let odd = s.file(name, ">o\nA\n");
        let e = s.err("validate_analysis", pair(&a, &odd)).await;
        assert_eq!(e["field"], "inputs.second", "{e:#}");
        assert!(
            e["message"].as_str().unwrap().contains("in its name"),
            "{e:#}"
        );
    }
    // One file per `file` input, and no table for a workflow that reads none.
    let e = s
        .err(
            "validate_analysis",
            json!({"workflow": "pair", "inputs": {"first": [a, a], "second": a}}),
        )
        .await;
    assert_eq!(e["field"], "inputs.first", "{e:#}");
    let e = s
        .err(
            "validate_analysis",
            json!({"workflow": "pair", "dataset": csv, "inputs": {"first": a, "second": a}}),
        )
        .await;
    assert_eq!(e["field"], "dataset", "{e:#}");
}

#[tokio::test]
async fn a_table_workflow_still_requires_its_dataset() {
    let s = Server::start(Some("refsci")).await;
    let caps = s.ok("get_capabilities", json!({})).await;
    for wf in caps["workflows"].as_array().unwrap() {
        assert!(
            wf.get("takes_dataset").is_none() && wf.get("inputs").is_none(),
            "{wf:#}"
        );
    }
    let e = s
        .err(
            "validate_analysis",
            json!({"workflow": "regression", "parameters": {"target": "y"}}),
        )
        .await;
    assert_eq!(e["field"], "dataset", "{e:#}");
    assert!(
        e["message"].as_str().unwrap().contains("reads a table"),
        "{e:#}"
    );
    let e = s
        .err(
            "validate_analysis",
            json!({"workflow": "regression", "dataset": "x.csv", "inputs": {"seq": "a.fa"},
                   "parameters": {"target": "y"}}),
        )
        .await;
    assert_eq!(e["field"], "inputs.seq", "{e:#}");
}

#[tokio::test]
async fn a_list_repeats_its_argument_a_directory_is_copied_whole_and_a_missing_option_vanishes() {
    let s = Server::start(None).await;
    let a = s.file("a.fa", ">a\nA\n");
    let b = s.file("b.fa", ">b\nC\n");
    fs_err::create_dir_all(s.data.join("db/sub")).unwrap();
    s.file("db/x.fa", ">x\nG\n");
    s.file("db/sub/y.fa", ">y\nT\n");
    let db = s.data.join("db").display().to_string();
    let request = json!({"workflow": "bundle", "inputs": {"seqs": [a, b], "db": db}});
    let (validation, result) = s.run(request).await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let plan = &validation["plan"];
    assert_eq!(
        plan["args"],
        json!([
            "-r",
            "inputs/seqs/a.fa",
            "inputs/seqs/b.fa",
            "inputs/db",
            "output"
        ])
    );
    let dir = plan["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "db")
        .unwrap();
    assert_eq!(dir["run_path"], "inputs/db");
    let copied: Vec<&str> = dir["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["run_path"].as_str().unwrap())
        .collect();
    assert_eq!(copied, ["inputs/db/sub/y.fa", "inputs/db/x.fa"]);
    let output = PathBuf::from(result["output_dir"].as_str().unwrap());
    assert!(output.join("db/sub/y.fa").is_file());
    // Changing a file deep in the directory changes the hashes too.
    let before = validation["request_sha256"].clone();
    s.file("db/sub/y.fa", ">y\nTT\n");
    let again = s
        .ok(
            "validate_analysis",
            json!({"workflow": "bundle", "inputs": {"seqs": [a, b], "db": db}}),
        )
        .await;
    assert_ne!(again["request_sha256"], before);
    // A file of another format inside the directory, and too many files in the list.
    s.file("db/notes.txt", "not a sequence");
    let e = s
        .err(
            "validate_analysis",
            json!({"workflow": "bundle", "inputs": {"seqs": [a], "db": db}}),
        )
        .await;
    assert_eq!(e["field"], "inputs.db", "{e:#}");
    assert!(
        e["message"].as_str().unwrap().contains("notes.txt"),
        "{e:#}"
    );
    let e = s
        .err(
            "validate_analysis",
            json!({"workflow": "bundle", "inputs": {"seqs": [a, b, a, b], "db": db}}),
        )
        .await;
    assert_eq!(e["field"], "inputs.seqs", "{e:#}");
    assert!(
        e["message"].as_str().unwrap().contains("1 to 3 files"),
        "{e:#}"
    );
}

#[tokio::test]
async fn a_campaign_grid_varies_an_input_and_each_run_binds_its_file() {
    let s = Server::start(None).await;
    let a = s.file("a.fa", ">a\nA\n");
    let b = s.file("b.fa", ">b\nC\n");
    let c = s.file("c.fa", ">c\nG\n");
    let grid = json!({"workflow": "pair", "max_concurrent": 2,
        "grid": {"inputs": {"first": [a, b], "second": [c]}}});
    let mut preview = grid.clone();
    preview["confirm"] = json!(false);
    let shown = s.ok("start_campaign", preview).await;
    assert_eq!(shown["started"], false, "{shown:#}");
    let items = shown["preview"]["items"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{shown:#}");
    assert_eq!(items[0]["inputs"], json!({"first": a, "second": c}));
    assert_eq!(items[1]["inputs"]["first"], b.as_str());
    assert!(items[0].get("dataset").is_none(), "{shown:#}");
    assert_ne!(items[0]["plan_sha256"], items[1]["plan_sha256"]);
    let started = s.ok("start_campaign", grid).await;
    assert_eq!(started["started"], true, "{started:#}");
    let campaign_id = started["campaign_id"].as_str().unwrap().to_string();
    let done = scimcp_e2e::harness::campaign_result_on(
        &s.session,
        &campaign_id,
        std::time::Duration::from_secs(300),
    )
    .await;
    assert_eq!(done["counts"]["succeeded"], 2, "{done:#}");
    let status = s
        .ok("get_campaign_status", json!({"campaign_id": campaign_id}))
        .await;
    let mut firsts = Vec::new();
    for item in status["items"]["items"].as_array().unwrap() {
        let run_id = item["run_id"].as_str().unwrap();
        let out = s
            .ok("get_run_result", json!({"run_id": run_id, "wait_s": 0}))
            .await;
        let first = out["result"]["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == "first")
            .unwrap()["files"][0]["sha256"]
            .clone();
        firsts.push(first);
    }
    firsts.sort_by_key(|v| v.as_str().unwrap().to_string());
    let mut want = vec![json!(sha256(Path::new(&a))), json!(sha256(Path::new(&b)))];
    want.sort_by_key(|v| v.as_str().unwrap().to_string());
    assert_eq!(firsts, want);
}
