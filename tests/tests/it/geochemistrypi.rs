//! GeochemistryPi 0.8.2, a real scientific CLI not written for scimcp, through the real
//! `scimcp serve` as an MCP client drives it: every workflow of adapters/geochemistrypi.toml
//! on its built-in `.xlsx` tables, with artifacts checked against the files, metrics checked
//! against the direct-CLI evidence of the parity gate, and nothing written outside the run.
//!
//! Needs the runtime of scripts/geochemistrypi-env.sh (`.venv-geochemistrypi`, CPython 3.9).
//! Without it these tests print why and pass, unless `SCIMCP_REQUIRE_GEOCHEMISTRYPI=1` (set by
//! `.ci/run`), which turns the missing runtime into a failure.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use scimcp_e2e::harness::{Harness, Options};
use serde_json::{Value, json};

fn runtime() -> Option<PathBuf> {
    let python = std::env::var_os("SCIMCP_TEST_GEOCHEMISTRYPI_PYTHON")
        .map(PathBuf::from)
        .or_else(|| {
            let root = scimcp_e2e::workspace_root();
            [
                root.join(".venv-geochemistrypi/bin/python"),
                root.join(".venv-geochemistrypi/Scripts/python.exe"),
            ]
            .into_iter()
            .find(|p| p.is_file())
        });
    if python.is_none() {
        assert!(
            std::env::var_os("SCIMCP_REQUIRE_GEOCHEMISTRYPI").is_none(),
            "SCIMCP_REQUIRE_GEOCHEMISTRYPI is set but there is no GeochemistryPi runtime: run scripts/geochemistrypi-env.sh"
        );
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "SKIPPED: no GeochemistryPi runtime (.venv-geochemistrypi); scripts/geochemistrypi-env.sh creates it"
            );
        }
    }
    python
}

/// A server on the embedded GeochemistryPi adapter whose own `HOME` and `TMPDIR` are empty
/// directories the test watches (the CLI must write only inside its run).
struct Geo {
    h: Harness,
    watched: tempfile::TempDir,
}

async fn start(python: &Path) -> Geo {
    let watched = tempfile::Builder::new()
        .prefix("scimcp geopi watched ")
        .tempdir()
        .unwrap();
    for d in ["home", "tmp"] {
        fs_err::create_dir_all(watched.path().join(d)).unwrap();
    }
    let h = Harness::start_opts(Options {
        adapter: "geochemistrypi".into(),
        python: false,
        datasets: false,
        extra_args: vec!["--python".into(), python.display().to_string()],
        env: vec![
            (
                "HOME".into(),
                watched.path().join("home").display().to_string(),
            ),
            (
                "TMPDIR".into(),
                watched.path().join("tmp").display().to_string(),
            ),
        ],
        ..Options::default()
    })
    .await
    .unwrap();
    Geo { h, watched }
}

/// Every path below `dir`, relative and `/`-separated, without descending into `skip`.
fn listing(dir: &Path, skip: Option<&Path>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            out.insert(
                path.strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && skip != Some(path.as_path()) {
                stack.push(path);
            }
        }
    }
    out
}

/// Files of the runtime that are not byte-code caches: a run must not change its
/// interpreter's environment.
fn runtime_files(python: &Path) -> BTreeSet<String> {
    let venv = python.parent().and_then(Path::parent).unwrap();
    listing(venv, None)
        .into_iter()
        .filter(|p| !p.contains("__pycache__"))
        .collect()
}

async fn run(geo: &Geo, workflow: &str, dataset: &str, parameters: Value) -> (String, Value) {
    let request = json!({"workflow": workflow, "dataset": dataset, "parameters": parameters});
    let validated = geo.h.ok("validate_analysis", request.clone()).await;
    let mut start = request;
    start["validation_id"] = validated["validation_id"].clone();
    let started = geo.h.ok("start_analysis", start).await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    loop {
        let r = geo
            .h
            .ok(
                "get_run_result",
                json!({"run_id": run_id, "wait_s": 300, "detail": "full"}),
            )
            .await;
        if r["terminal"] == true {
            return (run_id, r);
        }
    }
}

/// The direct CLI's metrics, as the parity gate recorded them (its `metrics_file`).
fn direct_metrics(workflow: &str) -> Value {
    let snap = scimcp_e2e::workspace_root().join(format!(
        "parity/snapshots/parity__geochemistrypi_{workflow}.snap"
    ));
    let text = fs_err::read_to_string(&snap).unwrap();
    // An insta snapshot: a front matter between two `---` lines, then the JSON body.
    let body = text.splitn(3, "---\n").nth(2).unwrap();
    let evidence: Value = serde_json::from_str(body).unwrap();
    evidence["metrics"].clone()
}

/// Every metric the server reported equals the direct CLI's (to 1e-9 relative).
fn assert_reported_equal(reported: &Value, direct: &Value) {
    let reported = reported.as_object().expect("reported metrics");
    assert!(!reported.is_empty());
    for (name, value) in reported {
        assert_close(value, &direct[name], name);
    }
}

fn assert_close(mcp: &Value, direct: &Value, at: &str) {
    match (mcp, direct) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1e-3),
                "{at}: MCP {a} vs direct {b}"
            );
        }
        (Value::Object(a), Value::Object(b)) => {
            assert_eq!(
                a.keys().collect::<Vec<_>>(),
                b.keys().collect::<Vec<_>>(),
                "{at}"
            );
            for (k, v) in a {
                assert_close(v, &b[k], &format!("{at}/{k}"));
            }
        }
        _ => assert_eq!(mcp, direct, "{at}"),
    }
}

/// One workflow on its built-in table: succeeds, every artifact's recorded hash is the file's,
/// the reported score equals the direct CLI's, and nothing outside the run changed.
async fn workflow_end_to_end(workflow: &str, dataset: &str, scored: bool) {
    let Some(python) = runtime() else { return };
    let geo = start(&python).await;
    let venv_before = runtime_files(&python);
    let (run_id, r) = run(&geo, workflow, dataset, json!({})).await;
    assert_eq!(
        r["state"],
        "succeeded",
        "{r:#}\nserver stderr:\n{}",
        geo.h.session.stderr()
    );
    let result = &r["result"];
    let run_dir = geo.h.runs_dir().join(&run_id);

    // Artifacts: indexed with hashes that are the files' own, tables, diagrams, the model and
    // the attestation among them.
    let items = result["artifacts"]["items"].as_array().unwrap();
    assert!(
        result["artifacts"]["total"].as_u64().unwrap() >= 10,
        "{result:#}"
    );
    for a in items {
        let base = if a["base"] == "work" {
            run_dir.join("work")
        } else {
            run_dir.join("work/output")
        };
        let file = base.join(a["path"].as_str().unwrap());
        let (sha, size) = scimcp_core::hash::sha256_file(&file).unwrap();
        assert_eq!(a["sha256"], sha, "{}", file.display());
        assert_eq!(a["size_bytes"], size, "{}", file.display());
    }
    let paths: Vec<&str> = items.iter().filter_map(|a| a["path"].as_str()).collect();
    for kind in [
        ".xlsx",
        ".png",
        ".pkl",
        "Scientific Execution Attestation.json",
    ] {
        assert!(
            paths.iter().any(|p| p.ends_with(kind)) || result["artifacts"]["truncated"] == true,
            "no {kind} artifact in {paths:?}"
        );
    }
    assert!(
        result["problems"]["total"] == 0 || result["problems"].is_null(),
        "{result:#}"
    );

    // Metrics: GeochemistryPi's verdict, its attestation, and the score the direct CLI gave.
    let reported = &result["reported"];
    assert_eq!(reported["events"]["status"], "completed", "{reported:#}");
    assert_eq!(
        reported["attestation"]["verification_status"], "matched",
        "{reported:#}"
    );
    // (Anomaly detection writes no score; its tables are compared by the parity gate.)
    if scored {
        assert_reported_equal(&reported["score"], &direct_metrics(workflow));
    }

    // Nothing outside the run: the server's start directory, the scientist's home and
    // temporary directory, the state directory beyond the run's own directory and lock
    // files, and the runtime.
    assert_eq!(
        listing(&geo.h.cwd, None),
        BTreeSet::from(["data".to_string()])
    );
    assert!(
        listing(geo.watched.path(), None)
            == BTreeSet::from(["home".to_string(), "tmp".to_string()]),
        "{:?}",
        listing(geo.watched.path(), None)
    );
    // The server's run index (runs/.index, its cache of the run directories) is its own
    // bookkeeping, like the start lock.
    let outside: BTreeSet<String> = listing(&geo.h.home, Some(&run_dir))
        .into_iter()
        .filter(|p| p != "runs/.index" && !p.starts_with("runs/.index/"))
        .collect();
    let allowed: BTreeSet<String> = [
        "runs",
        "runs/.start.lock",
        &format!("runs/{run_id}"),
        "state",
        "state/geochemistrypi",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert!(
        outside.is_subset(&allowed),
        "written outside the run directory: {:?}",
        outside.difference(&allowed).collect::<Vec<_>>()
    );
    assert_eq!(
        runtime_files(&python),
        venv_before,
        "the run changed its runtime"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn anomaly_isolation_forest_end_to_end() {
    workflow_end_to_end(
        "anomaly_isolation_forest",
        "builtin:anomaly_detection",
        false,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn regression_random_forest_end_to_end() {
    workflow_end_to_end("regression_random_forest", "builtin:regression", true).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn classification_random_forest_end_to_end() {
    workflow_end_to_end(
        "classification_random_forest",
        "builtin:classification",
        true,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn clustering_kmeans_end_to_end() {
    workflow_end_to_end("clustering_kmeans", "builtin:clustering", true).await;
}

/// Columns that would make GeochemistryPi ask unplanned questions mid-run (missing values) or
/// that do not exist are refused by `validate_analysis`, naming the column, before any run.
#[tokio::test(flavor = "multi_thread")]
async fn columns_with_missing_values_or_absent_are_refused_before_any_run() {
    let Some(python) = runtime() else { return };
    let geo = start(&python).await;
    let cases = [
        // Data_Regression.xlsx: CR2O3(WT%) has 11 empty cells.
        (
            json!({"features": ["SIO2(WT%)", "CR2O3(WT%)"], "target": "NA2O(WT%)"}),
            "CR2O3(WT%)",
        ),
        (
            json!({"features": ["SIO2(WT%)", "TIO2(WT%)"], "target": "NOPE(WT%)"}),
            "NOPE(WT%)",
        ),
        (
            json!({"features": ["SIO2(WT%)", "SAMPLE NAME"]}),
            "SAMPLE NAME",
        ),
    ];
    for (parameters, column) in cases {
        let e = geo
            .h
            .err(
                "validate_analysis",
                json!({"workflow": "regression_random_forest", "dataset": "builtin:regression", "parameters": parameters}),
            )
            .await;
        let text = e.to_string();
        assert!(text.contains(column), "{column} not named: {e:#}");
        assert_eq!(e["code"], "invalid_parameters", "{e:#}");
    }
    // Classification: a label with more than two classes.
    let e = geo
        .h
        .err(
            "validate_analysis",
            json!({"workflow": "classification_random_forest", "dataset": "builtin:classification", "parameters": {"target": "SAMPLE NAME"}}),
        )
        .await;
    assert!(e.to_string().contains("SAMPLE NAME"), "{e:#}");
    assert!(
        // Run directories only: the server's start lock and run index are its bookkeeping.
        !geo.h.runs_dir().exists()
            || listing(&geo.h.runs_dir(), None)
                .iter()
                .all(|p| p == ".start.lock" || p == ".index" || p.starts_with(".index/")),
        "a refused request created {:?}",
        listing(&geo.h.runs_dir(), None)
    );
}

/// GeochemistryPi exits 1 and records `status: failed` with its error in events.json: the run
/// reads failed with that error, not just an exit status.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_geochemistrypi_reports_failed_reads_failed_with_its_error() {
    let Some(python) = runtime() else { return };
    let geo = start(&python).await;
    // Two rows of the built-in clustering table: valid columns, but fewer samples than the
    // three clusters asked for.
    let table = geo.h.cwd.join("two rows.xlsx");
    let out = std::process::Command::new(&python)
        .args([
            "-c",
            "import sys, pandas as pd, geochemistrypi, os\n\
             d = os.path.join(os.path.dirname(geochemistrypi.__file__), 'data_mining/data/dataset/Data_Clustering.xlsx')\n\
             pd.read_excel(d).head(2).to_excel(sys.argv[1], index=False)",
        ])
        .arg(&table)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let (_, r) = run(&geo, "clustering_kmeans", "two rows.xlsx", json!({})).await;
    assert_eq!(r["state"], "failed", "{r:#}");
    let message = r["result"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("ValueError: n_samples=2 should be >= n_clusters=3."),
        "{r:#}"
    );
    // The events file that said so is kept as an artifact.
    let items = r["result"]["artifacts"]["items"].as_array().unwrap();
    assert!(items.iter().any(|a| a["path"] == "events.json"), "{r:#}");
}

/// `inspect_dataset` on GeochemistryPi's own `.xlsx` (built in, and a copy in the start
/// directory): its sheets and columns with pandas' names, types and missing counts.
#[tokio::test(flavor = "multi_thread")]
async fn inspect_dataset_reads_geochemistrypi_spreadsheets() {
    let Some(python) = runtime() else { return };
    let geo = start(&python).await;
    let listed = geo.h.ok("list_datasets", json!({})).await;
    let text = listed.to_string();
    for id in [
        "builtin:regression",
        "builtin:classification",
        "builtin:clustering",
        "builtin:anomaly_detection",
    ] {
        assert!(text.contains(id), "{id} not listed: {listed:#}");
    }
    let built_in = geo
        .h
        .ok(
            "inspect_dataset",
            json!({"dataset": "builtin:regression", "sample_rows": 2}),
        )
        .await;
    assert_eq!(built_in["sheets"][0]["name"], "Sheet1", "{built_in:#}");
    assert_eq!(built_in["row_count"], built_in["sheets"][0]["rows"]);
    let columns = built_in["columns"]["items"].as_array().unwrap();
    let cr2o3 = columns
        .iter()
        .find(|c| c["name"] == "CR2O3(WT%)")
        .unwrap_or_else(|| panic!("{built_in:#}"));
    assert_eq!(cr2o3["inferred_type"], "number");
    assert_eq!(cr2o3["missing"], 11);
    // The copy a scientist has in their folder reads the same.
    let package = PathBuf::from(built_in["dataset"]["path"].as_str().unwrap());
    fs_err::copy(&package, geo.h.cwd.join("Data_Regression.xlsx")).unwrap();
    let local = geo
        .h
        .ok(
            "inspect_dataset",
            json!({"dataset": "Data_Regression.xlsx", "sample_rows": 2}),
        )
        .await;
    assert_eq!(local["columns"], built_in["columns"]);
    assert_eq!(local["sheets"], built_in["sheets"]);
    assert_eq!(local["dataset"]["sha256"], built_in["dataset"]["sha256"]);
}
