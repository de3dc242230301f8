//! The real `scimcp` binary driven as an MCP client over stdio, on the embedded refsci
//! adapter and the development runtime.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use scimcp_e2e::harness::{Harness, tree_hashes};
#[cfg(unix)]
use scimcp_e2e::process_alive as alive;
use serde_json::{Value, json};

/// Artifact hashes of a finished run, keyed by path.
fn result_hashes(result: &Value) -> BTreeMap<String, String> {
    result["artifacts"]["items"]
        .as_array()
        .expect("artifacts")
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_string(),
                a["sha256"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn run_to_end(h: &Harness, request: Value) -> Value {
    let started = h.ok("start_analysis", request).await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let result = h
        .ok("get_run_result", json!({"run_id": run_id, "wait_s": 120}))
        .await;
    assert_eq!(result["terminal"], true, "{result:#}");
    result
}

#[tokio::test]
async fn handshake_lists_every_tool_with_schemas() {
    let h = Harness::start().await.unwrap();
    let (name, version) = h.session.server_info().unwrap();
    assert_eq!(name, "scimcp");
    assert_eq!(version, scimcp_core::version::SUITE_VERSION);
    let tools = h.session.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, scimcp_server::TOOL_NAMES);
    for t in &tools {
        assert_eq!(
            t.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            t.name
        );
        let output = t
            .output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no output schema", t.name));
        assert_eq!(output.get("type"), Some(&json!("object")), "{}", t.name);
    }
    let caps = h.ok("get_capabilities", json!({})).await;
    assert_eq!(caps["adapter"]["name"], "refsci");
    assert_eq!(caps["runtime"]["ready"], true);
    assert_eq!(caps["workflows"].as_array().unwrap().len(), 8);
    let one = h
        .ok("get_capabilities", json!({"workflow": "clustering"}))
        .await;
    assert_eq!(one["workflows"].as_array().unwrap().len(), 1);
    assert_eq!(
        one["workflows"][0]["parameters_schema"]["additionalProperties"],
        false
    );
}

#[tokio::test]
async fn five_workflows_succeed_with_the_direct_cli_hashes() {
    let h = Harness::start().await.unwrap();
    // (workflow, dataset, MCP parameters, the command line a scientist would type)
    let cases: Vec<(&str, &str, Value, Vec<&str>)> = vec![
        (
            "regression",
            "data/diabetes.csv",
            json!({"target": "target", "model": "ridge", "seed": 3, "params": {"alpha": 0.5}}),
            vec![
                "regress",
                "--data",
                "data/diabetes.csv",
                "--target",
                "target",
                "--model",
                "ridge",
                "--test-size",
                "0.25",
                "--seed",
                "3",
                "--params",
                "{\"alpha\":0.5}",
                "--out",
                "direct/regression",
            ],
        ),
        (
            "classification",
            "data/iris.csv",
            json!({"target": "target", "model": "random_forest", "seed": 1, "params": {"n_estimators": 20}}),
            vec![
                "classify",
                "--data",
                "data/iris.csv",
                "--target",
                "target",
                "--model",
                "random_forest",
                "--seed",
                "1",
                "--params",
                "{\"n_estimators\":20}",
                "--out",
                "direct/classification",
            ],
        ),
        (
            "clustering",
            "data/wine.csv",
            json!({"model": "kmeans", "n_clusters": 3, "exclude": "target", "seed": 0}),
            vec![
                "cluster",
                "--data",
                "data/wine.csv",
                "--model",
                "kmeans",
                "--n-clusters",
                "3",
                "--exclude",
                "target",
                "--seed",
                "0",
                "--out",
                "direct/clustering",
            ],
        ),
        (
            "decomposition",
            "data/breast_cancer.csv",
            json!({"model": "pca", "n_components": 3, "exclude": "target"}),
            vec![
                "decompose",
                "--data",
                "data/breast_cancer.csv",
                "--model",
                "pca",
                "--n-components",
                "3",
                "--exclude",
                "target",
                "--out",
                "direct/decomposition",
            ],
        ),
        (
            "anomaly",
            "data/wine.csv",
            json!({"model": "isolation_forest", "contamination": 0.05, "exclude": "target", "seed": 11}),
            vec![
                "anomaly",
                "--data",
                "data/wine.csv",
                "--model",
                "isolation_forest",
                "--contamination",
                "0.05",
                "--exclude",
                "target",
                "--seed",
                "11",
                "--out",
                "direct/anomaly",
            ],
        ),
    ];
    for (workflow, dataset, parameters, direct_args) in cases {
        let request = json!({"workflow": workflow, "dataset": dataset, "parameters": parameters});
        let validation = h.ok("validate_analysis", request.clone()).await;
        assert_eq!(validation["ready"], true, "{validation:#}");
        let mut start = request.clone();
        start["validation_id"] = validation["validation_id"].clone();
        let result = run_to_end(&h, start).await;
        assert_eq!(result["state"], "succeeded", "{workflow}: {result:#}");
        let r = &result["result"];
        assert_eq!(r["plan_sha256"], validation["plan_sha256"]);
        assert_eq!(r["problems"]["total"], 0, "{r:#}");

        let out = h.direct(&direct_args);
        assert!(
            out.status.success(),
            "{workflow} direct run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let direct = tree_hashes(&h.cwd.join("direct").join(workflow));
        let via_mcp = result_hashes(r);
        assert!(
            via_mcp.contains_key("metrics.json") && via_mcp.contains_key("model.json"),
            "{via_mcp:?}"
        );
        assert_eq!(
            via_mcp, direct,
            "{workflow}: MCP and direct artifacts differ"
        );
    }
}

#[tokio::test]
async fn interactive_run_is_answered_through_stdin() {
    let h = Harness::start().await.unwrap();
    let request = json!({
        "workflow": "regression_interactive",
        "dataset": "data/diabetes.csv",
        "parameters": {"target": "target", "model": "random_forest", "seed": 5},
    });
    let validation = h.ok("validate_analysis", request.clone()).await;
    assert_eq!(
        validation["plan"]["stdin"],
        json!(["inputs/diabetes.csv", "target", "random_forest", "5"])
    );
    let result = run_to_end(&h, request).await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let out = h.direct(&[
        "regress",
        "--data",
        "data/diabetes.csv",
        "--target",
        "target",
        "--model",
        "random_forest",
        "--seed",
        "5",
        "--out",
        "direct/interactive",
    ]);
    assert!(out.status.success());
    assert_eq!(
        result_hashes(&result["result"]),
        tree_hashes(&h.cwd.join("direct/interactive"))
    );
    let log = h
        .ok(
            "get_run_log",
            json!({"run_id": result["run_id"], "stream": "stdout"}),
        )
        .await;
    assert!(
        log["text"].as_str().unwrap().contains("Target column: "),
        "{log:#}"
    );
}

/// Start a regression run that sleeps 60 s in a worker child; once both run: the run id,
/// the CLI's pid and the worker's.
#[cfg(unix)]
async fn start_sleeping_run(h: &Harness) -> (String, u32, u32) {
    let request = json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": {"target": "target", "sleep_s": 60}});
    let started = h.ok("start_analysis", request).await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let pid_file = h.runs_dir().join(&run_id).join("work/output/worker.pid");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pid_file.is_file() {
        assert!(Instant::now() < deadline, "the worker never started");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let worker: u32 = fs_err::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let status = h.ok("get_run_status", json!({"run_id": run_id})).await;
    assert_eq!(status["state"], "running");
    let cli_pid = status["pid"].as_u64().unwrap() as u32;
    assert!(alive(cli_pid) && alive(worker));
    (run_id, cli_pid, worker)
}

#[cfg(unix)]
#[tokio::test]
async fn cancel_ends_the_process_tree_within_its_grace() {
    let h = Harness::start().await.unwrap();
    let (run_id, cli_pid, worker) = start_sleeping_run(&h).await;

    let t0 = Instant::now();
    let cancelled = h.ok("cancel_run", json!({"run_id": run_id})).await;
    assert_eq!(cancelled["state"], "cancelled", "{cancelled:#}");
    assert_eq!(cancelled["changed"], true);
    while alive(cli_pid) || alive(worker) {
        assert!(
            t0.elapsed() < scimcp_testkit::limits::process_tree_gone(),
            "the process tree outlived the cancel by {:?}",
            scimcp_testkit::limits::process_tree_gone()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after = h.ok("get_run_status", json!({"run_id": run_id})).await;
    assert_eq!(after["state"], "cancelled");
    assert_eq!(after["reason"], "cancelled");
    let again = h.ok("cancel_run", json!({"run_id": run_id})).await;
    assert_eq!(again["changed"], false);
    let result = h
        .ok("get_run_result", json!({"run_id": run_id, "wait_s": 0}))
        .await;
    assert_eq!(result["result"]["state"], "cancelled");
}

/// A client that quits mid-run: the server ends the run's whole process tree before it
/// exits and records the run `failed` (`interrupted`) with a published result, instead of
/// leaving the CLI's workers running and the run reading `running`.
#[cfg(unix)]
#[tokio::test]
async fn a_client_hanging_up_ends_live_runs_as_interrupted() {
    let h = Harness::start().await.unwrap();
    let (run_id, cli_pid, worker) = start_sleeping_run(&h).await;

    let (runs, _keep) = h.hang_up().await.unwrap();
    // The server has exited: what it recorded is final.
    let dir = runs.join(&run_id);
    let status: Value =
        serde_json::from_slice(&fs_err::read(dir.join("status.json")).unwrap()).unwrap();
    assert_eq!(status["state"], "failed", "{status:#}");
    assert_eq!(status["reason"], "interrupted", "{status:#}");
    let result: Value =
        serde_json::from_slice(&fs_err::read(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["reason"], "interrupted", "{result:#}");
    let t0 = Instant::now();
    while alive(cli_pid) || alive(worker) {
        assert!(
            t0.elapsed() < scimcp_testkit::limits::process_tree_gone(),
            "the run's processes outlived the server"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn failing_cli_reads_failed_with_the_log_tail() {
    let h = Harness::start().await.unwrap();
    let request = json!({"workflow": "classification", "dataset": "data/iris.csv", "parameters": {"target": "no_such_column"}});
    let result = run_to_end(&h, request).await;
    assert_eq!(result["state"], "failed", "{result:#}");
    let r = &result["result"];
    assert_eq!(r["reason"], "exit_code");
    assert_eq!(r["exit_code"], 3);
    let tail = r["stderr_tail"].as_str().unwrap();
    assert!(
        tail.contains("refsci: error") && tail.contains("no_such_column"),
        "{tail}"
    );
    let log = h
        .ok("get_run_log", json!({"run_id": result["run_id"]}))
        .await;
    assert!(log["text"].as_str().unwrap().contains("no_such_column"));
}

#[tokio::test]
async fn bad_requests_are_refused_naming_the_field_before_any_process() {
    let h = Harness::start().await.unwrap();
    let base = json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": {"target": "target"}});
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = base.clone();
        f(&mut v);
        v
    };
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            with(&|v| v["colour"] = json!("red")),
            "invalid_request",
            "colour",
        ),
        (
            with(&|v| v["parameters"]["colour"] = json!("red")),
            "invalid_parameters",
            "parameters.colour",
        ),
        (
            with(&|v| v["parameters"]["seed"] = json!("seven")),
            "invalid_parameters",
            "parameters.seed",
        ),
        (
            with(&|v| v["parameters"]["model"] = json!("svm")),
            "invalid_parameters",
            "parameters.model",
        ),
        (
            with(&|v| v["parameters"] = json!({})),
            "invalid_parameters",
            "parameters.target",
        ),
        (
            with(&|v| v["workflow"] = json!(42)),
            "invalid_request",
            "workflow",
        ),
        (
            with(&|v| {
                v.as_object_mut().unwrap().remove("dataset");
            }),
            "invalid_request",
            "dataset",
        ),
        (
            with(&|v| v["workflow"] = json!("astrology")),
            "unknown_workflow",
            "workflow",
        ),
        (
            with(&|v| v["dataset"] = json!("data/../data/iris.csv")),
            "dataset_outside_roots",
            "dataset",
        ),
        (
            with(&|v| v["dataset"] = json!("data/missing.csv")),
            "dataset_not_found",
            "dataset",
        ),
    ];
    for tool in ["validate_analysis", "start_analysis"] {
        for (request, code, field) in &cases {
            let e = h.err(tool, request.clone()).await;
            assert_eq!(e["code"], *code, "{tool} {request}: {e:#}");
            assert_eq!(e["field"], *field, "{tool} {request}: {e:#}");
            assert!(!e["next_action"].as_str().unwrap().is_empty());
        }
    }
    let e = h
        .err(
            "start_analysis",
            with(&|v| v["parameters"]["model"] = json!("svm")),
        )
        .await;
    assert_eq!(e["allowed"], json!(["linear", "ridge", "random_forest"]));
    // Nothing was started: no run directory exists and no run is listed.
    let runs = h.ok("list_runs", json!({})).await;
    assert_eq!(runs["runs"]["total"], 0, "{runs:#}");
    // Run directories only: the runs directory also holds the server's run index.
    let dirs = fs_err::read_dir(h.runs_dir())
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("run-"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(dirs, 0);
    let e = h
        .err("get_run_status", json!({"run_id": "../../etc"}))
        .await;
    assert_eq!(e["code"], "unknown_run");
}

#[tokio::test]
async fn without_a_runtime_the_server_says_what_is_missing() {
    let h = Harness::start_with(false, &[]).await.unwrap();
    let caps = h.ok("get_capabilities", json!({})).await;
    assert_eq!(caps["runtime"]["ready"], false);
    assert!(
        caps["runtime"]["problem"]
            .as_str()
            .unwrap()
            .contains("--python PATH or set SCIMCP_PYTHON")
    );
    let request = json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": {"target": "target"}});
    let v = h.ok("validate_analysis", request.clone()).await;
    assert_eq!(v["ready"], false);
    assert_eq!(v["blockers"][0]["field"], "runtime");
    let e = h.err("start_analysis", request).await;
    assert_eq!(e["code"], "not_ready");
    let e = h.err("get_environment", json!({})).await;
    assert_eq!(e["code"], "runtime_unavailable");
}

#[tokio::test]
async fn datasets_are_listed_inspected_and_built_ins_resolve() {
    let h = Harness::start().await.unwrap();
    let listed = h.ok("list_datasets", json!({})).await;
    let refs: Vec<&str> = listed["datasets"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["reference"].as_str().unwrap())
        .collect();
    assert!(
        refs.contains(&"builtin:iris") && refs.contains(&"builtin:diabetes"),
        "{refs:?}"
    );
    let inspected = h
        .ok(
            "inspect_dataset",
            json!({"dataset": "builtin:iris", "sample_rows": 2}),
        )
        .await;
    assert_eq!(inspected["row_count"], 150);
    assert_eq!(inspected["column_count"], 5);
    assert_eq!(inspected["columns"]["items"][4]["name"], "target");
    assert_eq!(inspected["columns"]["items"][4]["inferred_type"], "integer");
    assert_eq!(inspected["sample_rows"].as_array().unwrap().len(), 2);
    let direct = scimcp_core::hash::sha256_file(&h.cwd.join("data/iris.csv"))
        .unwrap()
        .0;
    assert_eq!(
        inspected["dataset"]["sha256"], direct,
        "built-in export equals the direct export"
    );
    let env = h.ok("get_environment", json!({})).await;
    assert_eq!(env["requirements_satisfied"], true, "{env:#}");
    assert_eq!(env["probe"]["package"]["name"], "refsci");
    assert_eq!(
        env["probe"]["package"]["sha256"].as_str().unwrap().len(),
        64
    );
}

/// A server that cannot start exits 1 (STYLE.md: a failure its user can act on) with
/// `error:` and a `hint:` on stderr, and nothing on stdout (which carries MCP frames).
#[test]
fn serve_with_an_unknown_adapter_exits_1_with_a_hint() {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap())
        .args(["serve", "--adapter", "nonexistent"])
        .env("SCIMCP_HOME", home.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let failure = &err[err.find("error:").expect("an error: line")..];
    assert_eq!(
        failure,
        "error: cannot start the scimcp server\n  caused by: invalid adapter: nonexistent: no adapter named 'nonexistent'\n  hint: use one of the shipped adapters (refsci, geochemistrypi, vina, mafft) or give the path of a manifest file\n",
    );
}
