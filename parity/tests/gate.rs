//! The gate bites: a changed byte, a changed model parameter, a workflow without a scenario
//! and a drifted snapshot each fail `scimcp-parity check`, naming the scenario and the
//! difference. Every test works on temporary copies (`--scenarios`, `--snapshots`,
//! `--adapters`), so the checked-in files are never modified.
//!
//! These tests drive the built binaries: run `cargo build --workspace --bins` and
//! `scripts/dev-env.sh` first (scripts/test.sh does both).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("parity/ has a parent")
        .to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    fs_err::create_dir_all(to).unwrap();
    for entry in fs_err::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs_err::copy(entry.path(), &target).unwrap();
        }
    }
}

/// `scimcp-parity ARGS` from the workspace root, with the hook variable set or cleared.
fn parity(args: &[&str], perturb: Option<&str>) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_scimcp-parity"));
    cmd.args(args).current_dir(workspace());
    match perturb {
        Some(name) => cmd.env(scimcp_parity::PERTURB_ENV, name),
        None => cmd.env_remove(scimcp_parity::PERTURB_ENV),
    };
    cmd.output().expect("scimcp-parity runs")
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn assert_refused(out: &Output, needles: &[&str]) {
    let all = text(out);
    assert_eq!(out.status.code(), Some(1), "the gate must refuse:\n{all}");
    for needle in needles {
        assert!(all.contains(needle), "missing {needle:?} in:\n{all}");
    }
}

#[test]
fn one_changed_byte_in_an_artifact_fails_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report.json");
    // Snapshots recorded on this machine, so the assertion below does not depend on whether
    // this platform's floating point reproduces the checked-in evidence.
    let snapshots = tmp.path().join("snapshots");
    let dir = snapshots.to_str().unwrap();
    let out = parity(
        &["run", "--scenario", "regression_linear", "--snapshots", dir],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = parity(
        &[
            "check",
            "--scenario",
            "regression_linear",
            "--snapshots",
            dir,
            "--json",
            report.to_str().unwrap(),
        ],
        Some("regression_linear"),
    );
    // metrics.json is the first artifact by path; the snapshot (MCP side) still matches.
    assert_refused(
        &out,
        &[
            "FAIL  regression_linear",
            "flipped one byte of the direct side's metrics.json",
            "parity: artifacts[metrics.json].sha256: direct",
            "snapshot matched",
        ],
    );
    let report: Value = serde_json::from_slice(&fs_err::read(&report).unwrap()).unwrap();
    assert_eq!(
        report["schema_version"],
        scimcp_parity::REPORT_SCHEMA_VERSION
    );
    assert_eq!(report["passed"], false);
    let s = &report["scenarios"][0];
    assert_eq!(s["name"], "regression_linear");
    assert_eq!(s["parity"], "differ");
    assert_eq!(s["differences"][0]["kind"], "parity");
    assert_eq!(
        s["differences"][0]["field"],
        "artifacts[metrics.json].sha256"
    );
    for key in ["direct_s", "mcp_s", "mcp_session_s", "ratio"] {
        assert!(s["timing"][key].as_f64().unwrap() > 0.0, "{key}: {s:#}");
    }
}

#[test]
fn a_changed_model_parameter_fails_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    let scenarios = tmp.path().join("scénarios");
    copy_dir(&workspace().join("parity/scenarios"), &scenarios);
    // Only the MCP request changes; the direct command line still says alpha 0.5.
    let path = scenarios.join("regression_ridge.toml");
    let original = fs_err::read_to_string(&path).unwrap();
    let changed = original.replace("params = { alpha = 0.5 }", "params = { alpha = 0.7 }");
    assert_ne!(original, changed, "the ridge scenario sets alpha 0.5");
    fs_err::write(&path, changed).unwrap();
    let out = parity(
        &[
            "check",
            "--scenario",
            "regression_ridge",
            "--scenarios",
            scenarios.to_str().unwrap(),
        ],
        None,
    );
    assert_refused(
        &out,
        &[
            "FAIL  regression_ridge",
            "parity: artifacts[model.json].sha256",
            "parity: metrics.r2: direct 0.39",
            "snapshot drift: artifacts[metrics.json].sha256",
        ],
    );
}

#[test]
fn a_workflow_without_a_scenario_or_a_snapshot_without_a_scenario_fails_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    let adapters = tmp.path().join("adapters");
    copy_dir(&workspace().join("adapters"), &adapters);
    let manifest = adapters.join("refsci.toml");
    let mut toml = fs_err::read_to_string(&manifest).unwrap();
    toml.push_str(
        r#"
[[workflow]]
id = "regression_again"
summary = "The regression workflow under a second name, declared without a parity scenario."
parameters = "refsci/schemas/regression.json"
argv = ["regress", "--data", "{dataset}", "--target", "{target}", "--out", "{output_dir}"]

[[workflow.artifact]]
id = "metrics"
path = "metrics.json"
media_type = "application/json"
required = true
"#,
    );
    fs_err::write(&manifest, toml).unwrap();
    let snapshots = tmp.path().join("snapshots");
    copy_dir(&workspace().join("parity/snapshots"), &snapshots);
    fs_err::copy(
        snapshots.join("parity__regression_linear.snap"),
        snapshots.join("parity__retired_scenario.snap"),
    )
    .unwrap();
    // Coverage and orphans do not depend on which scenarios run: shard 100 of 100 holds
    // none of the 18 scenarios, so nothing executes.
    let out = parity(
        &[
            "check",
            "--shard",
            "100/100",
            "--adapters",
            adapters.to_str().unwrap(),
            "--snapshots",
            snapshots.to_str().unwrap(),
        ],
        None,
    );
    assert_refused(
        &out,
        &[
            "workflow refsci/regression_again has no scenario",
            "orphan snapshot: retired_scenario has no scenario",
        ],
    );
    // A --scenario filter that matches nothing cannot pass the gate.
    let out = parity(&["check", "--scenario", "no_such_scenario"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("matches no scenario"), "{}", text(&out));
}

#[test]
fn a_drifted_snapshot_fails_check_review_shows_it_and_run_records_it_again() {
    let tmp = tempfile::tempdir().unwrap();
    let snapshots = tmp.path().join("snapshots");
    let dir = snapshots.to_str().unwrap();
    let args = ["--scenario", "classification_knn", "--snapshots", dir];
    // Record on this machine first (see the test above), then drift one recorded value.
    let out = parity(&[&["run"][..], &args].concat(), None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let path = snapshots.join("parity__classification_knn.snap");
    let original = fs_err::read_to_string(&path).unwrap();
    let drifted = original.replacen("\"n_test\": 54,", "\"n_test\": 55,", 1);
    assert_ne!(original, drifted, "wine has 54 test rows at test_size 0.3");
    fs_err::write(&path, &drifted).unwrap();

    let out = parity(&[&["check"][..], &args].concat(), None);
    assert_refused(
        &out,
        &[
            "FAIL  classification_knn",
            "snapshot drift: metrics.n_test: recorded 55 → now 54",
            "snapshot drifted",
        ],
    );
    assert_eq!(
        fs_err::read_to_string(&path).unwrap(),
        drifted,
        "check never writes"
    );

    let out = parity(&[&["review"][..], &args].concat(), None);
    assert_refused(
        &out,
        &[
            "-    \"n_test\": 55,",
            "+    \"n_test\": 54,",
            "pending snapshot written",
        ],
    );
    let pending = snapshots.join("parity__classification_knn.snap.new");
    assert_eq!(
        fs_err::read_to_string(&pending).unwrap(),
        original,
        "the pending snapshot holds what this run recorded"
    );
    assert!(
        insta::Snapshot::from_file(&pending).is_ok(),
        "insta reads the pending snapshot"
    );

    let out = parity(&[&["run"][..], &args].concat(), None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        fs_err::read_to_string(&path).unwrap(),
        original,
        "recording again gives the same bytes"
    );
    assert!(!pending.exists(), "run clears the pending snapshot");
}
