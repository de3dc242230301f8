//! The gate bites: a changed byte, a changed model parameter, a workflow without a scenario,
//! a drifted snapshot, a metric moved by a millionth, a changed label and a changed byte of
//! a CLI's stdout result (MAFFT's alignment) each fail `scimcp-parity check`, naming the
//! scenario and the difference; and the checked-in
//! evidence holds when both paths run another CPU's kernels. Every test works on temporary
//! copies (`--scenarios`, `--snapshots`, `--adapters`), so the checked-in files are never
//! modified.
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
            "parity: metrics: direct {",
            "snapshot drift: metrics.r2: recorded 0.39",
            "BEYOND tolerance",
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
    // none of the 26 scenarios, so nothing executes.
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
    // A --scenario filter that matches nothing cannot pass the gate: a failure, exit 1.
    let out = parity(&["check", "--scenario", "no_such_scenario"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
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
            "recorded on: ",
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

/// Rewrite the evidence of the snapshot at `path` (its header kept) through `edit`.
fn edit_snapshot(path: &Path, original: &str, edit: impl FnOnce(&mut Value)) {
    let (header, body) = original
        .match_indices("---\n")
        .nth(1)
        .map(|(i, _)| original.split_at(i + 4))
        .expect("an insta snapshot has a header between two --- lines");
    let mut evidence: Value = serde_json::from_str(body).unwrap();
    edit(&mut evidence);
    let text = serde_json::to_string_pretty(&evidence).unwrap();
    fs_err::write(path, format!("{header}{text}\n")).unwrap();
}

/// The artifact `name` of snapshot evidence.
fn artifact<'a>(evidence: &'a mut Value, name: &str) -> &'a mut Value {
    evidence["artifacts"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|a| a["path"] == name)
        .unwrap()
}

#[test]
fn a_metric_moved_by_a_millionth_or_a_changed_label_fails_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    let snapshots = tmp.path().join("snapshots");
    let dir = snapshots.to_str().unwrap();
    let args = ["--scenario", "classification_knn", "--snapshots", dir];
    let out = parity(&[&["run"][..], &args].concat(), None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let path = snapshots.join("parity__classification_knn.snap");
    let original = fs_err::read_to_string(&path).unwrap();
    let accuracy: f64 = 37.0 / 54.0;
    assert!(
        original.contains("\"accuracy\": 0.6851851851851852,"),
        "wine, k=7: 37/54"
    );

    // A millionth is beyond any rounding: the field is named with its errors. (The recorded
    // metrics file's hash changes with it, as it would if the file had said so.)
    edit_snapshot(&path, &original, |e| {
        e["metrics"]["accuracy"] = Value::from(accuracy * (1.0 + 1e-6));
        artifact(e, "metrics.json")["sha256"] = Value::from("0".repeat(64));
    });
    let out = parity(&[&["check"][..], &args].concat(), None);
    assert_refused(
        &out,
        &[
            "snapshot drift: metrics.accuracy: recorded 0.6851858703703704 → now 0.6851851851851852",
            "rel 1.000e-6",
            "BEYOND tolerance: rtol 1e-9",
            "snapshot drifted",
        ],
    );

    // A few ULPs are what another CPU gives: inside tolerance, reported, passing.
    edit_snapshot(&path, &original, |e| {
        e["metrics"]["accuracy"] = Value::from(f64::from_bits(accuracy.to_bits() + 3));
        artifact(e, "metrics.json")["sha256"] = Value::from("0".repeat(64));
    });
    let out = parity(&[&["check"][..], &args].concat(), None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("snapshot within_tolerance"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("1 float(s) inside tolerance"),
        "{}",
        text(&out)
    );

    // One predicted label, and one cell's text: compared exactly, whatever the tolerance.
    for (column, value, needle) in [
        (
            2,
            "1",
            "snapshot drift: artifacts[predictions.csv].y_pred[0]: recorded 1 → now 0",
        ),
        (
            1,
            "zero",
            "snapshot drift: artifacts[predictions.csv].y_true[0]: recorded zero → now 0",
        ),
    ] {
        edit_snapshot(&path, &original, |e| {
            let predictions = artifact(e, "predictions.csv");
            let row = &mut predictions["csv"][1];
            assert_eq!(
                row[0], "53",
                "the first test row of wine is row 53, class 0"
            );
            row[column] = Value::from(value);
            predictions["sha256"] = Value::from("0".repeat(64));
        });
        let out = parity(&[&["check"][..], &args].concat(), None);
        assert_refused(&out, &[needle]);
    }
}

/// Another CPU, for real: OpenBLAS picks its kernels per CPU, and OPENBLAS_CORETYPE makes it
/// pick another family's (here Sandy Bridge's, which none of the machines the snapshots
/// come from use). Both paths run them (`--env`), and the checked-in evidence must hold.
/// OpenBLAS with runtime kernel selection is what numpy's Linux x86_64 wheels carry.
/// The three run side by side (`--jobs 3`), which must change neither the evidence nor the
/// report's order.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn the_committed_evidence_holds_on_another_cpus_kernels() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report.json");
    let out = parity(
        &[
            "check",
            "--env",
            "OPENBLAS_CORETYPE=Sandybridge",
            "--scenario",
            "regression_linear",
            "--scenario",
            "decomposition_pca",
            "--scenario",
            "anomaly_elliptic_envelope",
            "--jobs",
            "3",
            "--json",
            report.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("Sandybridge kernels"), "{}", text(&out));
    assert!(text(&out).contains("3 at a time"), "{}", text(&out));
    let report: Value = serde_json::from_slice(&fs_err::read(&report).unwrap()).unwrap();
    assert_eq!(report["env"]["OPENBLAS_CORETYPE"], "Sandybridge");
    assert_eq!(report["jobs"], 3);
    let names: Vec<&str> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "anomaly_elliptic_envelope",
            "decomposition_pca",
            "regression_linear"
        ]
    );
    // The human report prints the blocks in the same order, however the runs finished.
    let printed: Vec<usize> = names
        .iter()
        .map(|n| text(&out).find(&format!("PASS  {n}")).unwrap())
        .collect();
    assert!(printed.is_sorted(), "{}", text(&out));
    for s in report["scenarios"].as_array().unwrap() {
        assert_eq!(s["parity"], "agree", "{s:#}");
        assert!(
            s["snapshot"] == "matched" || s["snapshot"] == "within_tolerance",
            "{s:#}"
        );
        assert!(s["recorded_on"]["cpu"].is_string(), "{s:#}");
    }
}

/// Scenarios that are not there: the gate cannot run, a failure its user can act on, so it
/// exits 1 (STYLE.md; 2 is for bad arguments and bugs), with `error:` naming the directory and
/// a `hint:` naming the flag.
#[test]
fn missing_scenarios_exit_1_with_a_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no scenarios");
    let out = parity(&["check", "--scenarios", missing.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err =
        String::from_utf8_lossy(&out.stderr).replace(&tmp.path().display().to_string(), "[TMP]");
    insta::assert_snapshot!(err, @r"
    error: [TMP]/no scenarios is not a directory
      hint: pass --scenarios DIR
    ");
}

/// Is `program` on PATH? Without it a science-CLI test skips, unless
/// `SCIMCP_REQUIRE_SCIENCE_CLIS` is set (`.ci/run` sets it), which makes that a failure.
fn on_path(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|d| d.join(program).is_file()) {
        return true;
    }
    assert!(
        std::env::var_os("SCIMCP_REQUIRE_SCIENCE_CLIS").is_none(),
        "SCIMCP_REQUIRE_SCIENCE_CLIS is set but {program} is not on PATH (scripts/science-clis.sh)"
    );
    #[allow(clippy::print_stderr)]
    {
        eprintln!("SKIPPED: {program} is not on PATH (scripts/science-clis.sh installs it)");
    }
    false
}

/// A CLI whose result is its stdout: the gate compares the server's stdout artifact with the
/// scientist's redirect byte for byte, so one flipped byte of the direct side's alignment
/// fails the check; and a scenario whose request names an input file that is not there is
/// refused before anything runs.
#[test]
fn a_stdout_alignment_is_compared_byte_for_byte_and_a_missing_input_is_refused() {
    if !on_path("mafft") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let snapshots = tmp.path().join("snapshots");
    copy_dir(&workspace().join("parity/snapshots"), &snapshots);
    let dir = snapshots.to_str().unwrap();
    let out = parity(
        &[
            "check",
            "--scenario",
            "mafft_align_auto",
            "--snapshots",
            dir,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("snapshot matched"), "{}", text(&out));
    let out = parity(
        &[
            "check",
            "--scenario",
            "mafft_align_auto",
            "--snapshots",
            dir,
        ],
        Some("mafft_align_auto"),
    );
    assert_refused(
        &out,
        &[
            "FAIL  mafft_align_auto",
            "flipped one byte of the direct side's alignment.fasta",
            "parity: artifacts[alignment.fasta].sha256: direct",
        ],
    );

    let scenarios = tmp.path().join("scenarios");
    copy_dir(&workspace().join("parity/scenarios"), &scenarios);
    let path = scenarios.join("mafft_align_auto.toml");
    let toml = fs_err::read_to_string(&path).unwrap().replace(
        "mafft/examples/ubiquitin-like.fasta\" }",
        "mafft/examples/gone.fasta\" }",
    );
    fs_err::write(&path, toml).unwrap();
    let out = parity(
        &[
            "check",
            "--scenario",
            "mafft_align_auto",
            "--scenarios",
            scenarios.to_str().unwrap(),
            "--snapshots",
            dir,
        ],
        None,
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("request.inputs.sequences"), "{all}");
    assert!(all.contains("mafft/examples/gone.fasta"), "{all}");
}
