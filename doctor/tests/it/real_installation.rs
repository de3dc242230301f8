//! Every check in each state it can reach, on a real installation (a provisioned refsci
//! runtime) broken on purpose in a private copy: see `common` for how one provisioning is
//! shared by all tests. States no real breakage can produce on a test machine (a full disk,
//! a missing native library, permissions as root) are covered by unit tests next to the
//! checks.

#![cfg(unix)]
#![allow(clippy::print_stderr)]

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{Install, check, status, tree_digest};
use scimcp_testkit::doctor::assert_healthy;
use serde_json::{Value, json};

fn assert_status(report: &Value, id: &str, want: &str, finding_has: &str) {
    let (got, finding) = status(report, id);
    assert_eq!(got, want, "{id}: {finding}\n{:#}", check(report, id));
    assert!(
        finding.contains(finding_has),
        "{id}: {finding:?} lacks {finding_has:?}"
    );
}

fn set_mode(path: &Path, mode: u32) {
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn the_test_harness_reads_free_space_with_the_doctors_thresholds() {
    // scimcp_testkit accepts a free-space warning only when it measures the same shortage.
    assert_eq!(
        scimcp_testkit::doctor::DISK_WARN_BYTES,
        scimcp_doctor::DISK_WARN_BYTES
    );
    assert_eq!(
        scimcp_testkit::doctor::FREE_WARN_PERCENT,
        scimcp_doctor::FREE_WARN_PERCENT
    );
}

#[test]
fn a_healthy_installation_is_all_ok_and_validates_against_the_schema() {
    // runtime.sandbox warns, rightly, on a kernel without the sandbox's baseline.
    if !scimcp_process::sandbox::probe().is_complete() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: this kernel lacks the sandbox's baseline (runtime.sandbox warns)");
        }
        return;
    }
    let install = Install::new();
    let (report, code) = install.report(&[]);
    assert_healthy(&report, code, &install.data);
    assert_eq!(report["exit_code"], code);
    let ids: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "install.layout",
            "runtime.interpreter",
            "runtime.packages",
            "runtime.import",
            "runtime.native",
            "runtime.identity",
            "runtime.sandbox",
            "client.generic",
            "server.handshake",
            "state.permissions",
            "state.disk",
            "state.history",
            "state.data_dirs",
            "paths.encoding"
        ]
    );
    assert_status(&report, "runtime.native", "ok", "none declared for linux");
    assert_status(&report, "server.handshake", "ok", "tools/list (15 tools)");
    validate(&report);
}

/// The published schema accepts the report.
fn validate(report: &Value) {
    let schema: Value = serde_json::from_slice(
        &fs_err::read(common::repo_root().join("docs/doctor-report.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{report:#}");
}

#[test]
fn the_doctor_changes_nothing_without_fix() {
    let install = Install::new();
    // Break something, so the remedies are computed too (they must stay advice).
    let package = install.package_dir();
    fs_err::write(package.join("__init__.py"), "this is not python(\n").unwrap();
    let root = install.home.parent().unwrap();
    let before = tree_digest(root);
    let (report, code) = install.report(&[]);
    assert_eq!(code, 2);
    let out = install.doctor(&[]);
    assert_eq!(out.status.code(), Some(2));
    let _ = install.doctor(&["--check", "paths.encoding"]);
    assert_eq!(
        before,
        tree_digest(root),
        "the doctor changed the installation"
    );
    validate(&report);
}

#[test]
fn install_layout_fails_on_a_deleted_binary_and_warns_on_a_stray_version() {
    let install = Install::new();
    let (report, _) = install.report(&["--check", "install.layout"]);
    assert_status(&report, "install.layout", "ok", "bin/scimcp");

    // A version directory on disk that the receipt does not know: a warning.
    fs_err::create_dir_all(install.data.join("versions/9.9.9")).unwrap();
    let (report, code) = install.report(&["--check", "install.layout"]);
    assert_status(
        &report,
        "install.layout",
        "warn",
        "versions/9.9.9 is on disk but not in state.json",
    );
    assert_eq!(code, 1);

    fs_err::remove_file(install.data.join("versions/0.1.0/bin/scimcp")).unwrap();
    let (report, code) = install.report(&["--fast"]);
    assert_eq!(code, 2);
    assert_status(
        &report,
        "install.layout",
        "fail",
        "versions/0.1.0/bin/scimcp is missing",
    );
    let layout = check(&report, "install.layout");
    assert_eq!(layout["remedy"], "scimcp-setup repair");
    assert_eq!(layout["fixable"], true);
    assert_status(&report, "client.generic", "fail", "does not exist");
}

#[test]
fn install_layout_fails_without_a_readable_receipt() {
    let install = Install::new();
    fs_err::write(install.data.join("state.json"), "{ \"schema_version\": 1,").unwrap();
    let (report, code) = install.report(&["--fast"]);
    assert_eq!(code, 2);
    assert_status(
        &report,
        "install.layout",
        "fail",
        "not a valid scimcp state file",
    );
    let remedy = check(&report, "install.layout")["remedy"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        remedy.starts_with("mv ") && remedy.ends_with("&& scimcp-setup repair"),
        "{remedy}"
    );
    assert_status(
        &report,
        "runtime.packages",
        "skipped",
        "state.json cannot be read",
    );

    let empty = install.home.join("nothing here");
    let out = common::command(&common::bin("scimcp-doctor"), &install.home, &empty)
        .args(["--json", "--fast"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_status(&report, "install.layout", "fail", "scimcp is not installed");
    assert_eq!(
        check(&report, "install.layout")["remedy"],
        "scimcp-setup install"
    );
    assert!(!empty.exists(), "the doctor created the data root");
}

#[test]
fn runtime_packages_lists_a_downgraded_pin() {
    let install = Install::new();
    install.pip(&["install", "six==1.15.0"]);
    let (report, code) = install.report(&["--fast"]);
    assert_eq!(code, 2);
    assert_status(
        &report,
        "runtime.packages",
        "fail",
        "1 of 20 pins differ: six 1.15.0 (pinned 1.16.0)",
    );
    assert_status(
        &report,
        "runtime.interpreter",
        "ok",
        "satisfies >=3.10, <3.14",
    );
}

#[test]
fn runtime_interpreter_fails_when_missing_and_warns_when_it_changed() {
    let install = Install::new();
    let mut state = install.state();
    state["runtimes"]["refsci"]["python_version"] = json!("3.10.0");
    install.set_state(&state);
    let (report, code) = install.report(&["--check", "runtime.interpreter"]);
    assert_eq!(code, 1);
    assert_status(
        &report,
        "runtime.interpreter",
        "warn",
        "setup recorded 3.10.0",
    );

    fs_err::remove_file(install.runtime_dir().join("bin/python")).unwrap();
    let (report, _) = install.report(&["--fast"]);
    assert_status(&report, "runtime.interpreter", "fail", "does not exist");
    assert_status(
        &report,
        "runtime.packages",
        "skipped",
        "interpreter does not run",
    );
    assert_status(
        &report,
        "runtime.identity",
        "skipped",
        "interpreter does not run",
    );
}

#[test]
fn runtime_identity_names_a_replaced_file_and_warns_without_a_record() {
    let install = Install::new();
    let file = install.package_dir().join("cli.py");
    assert!(
        file.is_file(),
        "refsci has no cli.py any more: adjust the test"
    );
    let mut text = fs_err::read_to_string(&file).unwrap();
    text.push_str("\n# replaced by hand\n");
    fs_err::write(&file, text).unwrap();
    let (report, code) = install.report(&["--check", "runtime.identity"]);
    assert_eq!(code, 2);
    assert_status(
        &report,
        "runtime.identity",
        "fail",
        "refsci changed since setup: cli.py (modified)",
    );

    let mut state = install.state();
    state["runtimes"]["refsci"]["package"]["sha256"] = Value::Null;
    install.set_state(&state);
    let (report, code) = install.report(&["--check", "runtime.identity"]);
    assert_eq!(code, 1);
    assert_status(
        &report,
        "runtime.identity",
        "warn",
        "setup recorded no identity",
    );
}

#[test]
fn runtime_import_names_the_failing_module_and_its_error() {
    let install = Install::new();
    fs_err::write(
        install.package_dir().join("__init__.py"),
        "raise ImportError('refsci was damaged on purpose')\n",
    )
    .unwrap();
    let (report, code) = install.report(&["--check", "runtime.import"]);
    assert_eq!(code, 2);
    assert_status(
        &report,
        "runtime.import",
        "fail",
        "`import refsci` fails: ImportError: refsci was damaged on purpose",
    );
}

#[test]
fn client_checks_report_a_corrupt_file_a_stale_entry_and_a_changed_entry() {
    let install = Install::new();
    let path = install.generic_file();
    let good = fs_err::read_to_string(&path).unwrap();
    let entry = |command: &str, args: Value| {
        json!({"mcpServers": {"scimcp-refsci": {"command": command, "args": args}}}).to_string()
    };

    // Works, but is not what scimcp writes: a warning.
    let current = install
        .data
        .join("current/bin/scimcp")
        .display()
        .to_string();
    fs_err::write(
        &path,
        entry(
            &current,
            json!(["serve", "--adapter", "refsci", "--transport", "stdio"]),
        ),
    )
    .unwrap();
    let (report, code) = install.report(&["--check", "client.generic"]);
    assert_eq!(code, 1);
    assert_status(
        &report,
        "client.generic",
        "warn",
        "differs from what scimcp writes",
    );

    // Points into a version that was removed.
    let stale = install
        .data
        .join("versions/0.0.9/bin/scimcp")
        .display()
        .to_string();
    fs_err::write(
        &path,
        entry(&stale, json!(["serve", "--adapter", "refsci"])),
    )
    .unwrap();
    let (report, _) = install.report(&["--check", "client.generic"]);
    assert_status(&report, "client.generic", "fail", "stale entry: it runs");
    assert!(
        status(&report, "client.generic")
            .1
            .contains("removed version 0.0.9")
    );
    assert_eq!(
        check(&report, "client.generic")["remedy"],
        "scimcp-setup repair --adapter refsci --client generic"
    );

    // An adapter the server does not know.
    fs_err::write(
        &path,
        entry(&current, json!(["serve", "--adapter", "nosuch"])),
    )
    .unwrap();
    let (report, _) = install.report(&["--check", "client.generic"]);
    assert_status(
        &report,
        "client.generic",
        "fail",
        "unknown adapter \"nosuch\"",
    );

    // The entry was removed by hand, though setup registered it.
    fs_err::write(&path, "{\"mcpServers\": {}}").unwrap();
    let (report, _) = install.report(&["--check", "client.generic"]);
    assert_status(
        &report,
        "client.generic",
        "fail",
        "has no `scimcp-refsci` entry",
    );

    // A file that does not parse: the installer will not touch it, so it is not fixable.
    fs_err::write(&path, &good[..good.len() / 2]).unwrap();
    let (report, _) = install.report(&["--check", "client.generic"]);
    assert_status(&report, "client.generic", "fail", "does not parse");
    assert_eq!(check(&report, "client.generic")["fixable"], false);
}

#[test]
fn server_handshake_fails_with_the_server_stderr() {
    let install = Install::new();
    let mut state = install.state();
    state["adapters"]["refsci"]["server"]["args"] = json!(["serve", "--adapter", "nosuch"]);
    install.set_state(&state);
    let (report, code) = install.report(&["--check", "server.handshake"]);
    assert_eq!(code, 2);
    let handshake = check(&report, "server.handshake");
    assert_eq!(handshake["status"], "fail", "{handshake:#}");
    let details = handshake["details"].as_array().expect("stderr lines");
    assert!(
        details
            .iter()
            .any(|d| d.as_str().unwrap().contains("nosuch")),
        "{handshake:#}"
    );
}

#[test]
fn state_permissions_warn_on_open_directories_and_fail_when_unwritable() {
    let install = Install::new();
    set_mode(&install.data, 0o755);
    let (report, code) = install.report(&["--check", "state.permissions"]);
    assert_eq!(code, 1);
    assert_status(
        &report,
        "state.permissions",
        "warn",
        "is 755: other users can read it",
    );
    assert!(
        check(&report, "state.permissions")["remedy"]
            .as_str()
            .unwrap()
            .starts_with("chmod 700 ")
    );
    set_mode(&install.data, 0o700);

    // State made unwritable for every user, root included: a file where the runs directory
    // belongs (ENOTDIR binds root, mode bits do not).
    let runs = install.data.join("runs");
    let aside = install.data.join("runs.aside");
    if runs.exists() {
        fs_err::rename(&runs, &aside).unwrap();
    }
    fs_err::write(&runs, "not a directory").unwrap();
    let (report, code) = install.report(&["--check", "state.permissions"]);
    fs_err::remove_file(&runs).unwrap();
    if aside.exists() {
        fs_err::rename(&aside, &runs).unwrap();
    }
    assert_eq!(code, 2);
    assert_status(
        &report,
        "state.permissions",
        "fail",
        "runs exists but is not a directory",
    );

    // Mode bits: root writes through them, so this case runs only as another user.
    if is_root() {
        eprintln!(
            "skipping the unwritable-directory case: running as root, where permissions do not bind"
        );
        return;
    }
    set_mode(&install.data, 0o500);
    let (report, code) = install.report(&["--fast"]);
    set_mode(&install.data, 0o700);
    assert_eq!(code, 2);
    assert_status(&report, "state.permissions", "fail", "is not writable");
    assert_status(&report, "paths.encoding", "fail", "cannot create it");
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[test]
fn check_runs_one_check_and_refuses_an_unknown_id() {
    let install = Install::new();
    let (report, code) = install.report(&["--check", "state.disk"]);
    assert_eq!(report["checks"].as_array().unwrap().len(), 1);
    assert_healthy(&report, code, &install.data);
    assert!(
        status(&report, "state.disk")
            .1
            .contains("free on the volume of"),
        "{report:#}"
    );
    let out = install.doctor(&["--check", "no.such"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error: there is no check \"no.such\"")
            && err.contains("hint: the checks here are:")
            && err.contains("client.generic"),
        "{err}"
    );
}

#[test]
fn fast_report_skips_the_import_and_the_handshake() {
    let install = Install::new();
    let (report, code) = install.report(&["--fast"]);
    let verdict = scimcp_testkit::doctor::verdict(&report, &install.data);
    assert_eq!(code, verdict.expected_exit(), "{report:#}");
    assert_status(&report, "runtime.import", "skipped", "--fast");
    assert_status(&report, "server.handshake", "skipped", "--fast");
    // How fast it is belongs to the benchmark (`scimcp-bench run --only doctor`, the
    // "doctor `--fast`" row of docs/BENCHMARKS.md), not to a timed test on a shared machine:
    // a loaded two-core runner measured 1.1 s here.
    assert!(report["duration_ms"].as_u64().is_some(), "{report:#}");
}

#[test]
fn fix_turns_a_broken_installation_into_an_all_ok_report() {
    let install = Install::new();
    fs_err::remove_file(install.data.join("versions/0.1.0/bin/scimcp")).unwrap();
    let stale = install
        .data
        .join("versions/0.0.9/bin/scimcp")
        .display()
        .to_string();
    fs_err::write(
        install.generic_file(),
        json!({"mcpServers": {"scimcp-refsci": {"command": stale, "args": ["serve", "--adapter", "refsci"]}}})
            .to_string(),
    )
    .unwrap();
    install.pip(&["install", "six==1.15.0"]);

    let py = common::base_python().display().to_string();
    let (report, code) = install.report(&["--fix", "--python", &py]);
    let fix = &report["fix"];
    assert_eq!(fix["repaired"], true, "{report:#}");
    let before: Vec<(&str, &str)> = fix["before"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "ok")
        .map(|c| (c["id"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    for id in [
        "install.layout",
        "runtime.packages",
        "client.generic",
        "server.handshake",
    ] {
        assert!(
            before.contains(&(id, "fail")),
            "{id} did not fail before: {before:?}"
        );
    }
    if !scimcp_testkit::doctor::verdict(&report, &install.data)
        .problems
        .is_empty()
    {
        eprintln!("still broken after --fix; what it did: {fix:#}");
    }
    assert_healthy(&report, code, &install.data);
    validate(&report);
}

#[cfg(target_os = "linux")]
#[test]
fn paths_encoding_warns_on_a_data_root_that_is_not_unicode() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    // Latin-1 "café": a valid Linux file name, but not UTF-8.
    let root = dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    fs_err::create_dir_all(&root).unwrap();
    let out = common::command(&common::bin("scimcp-doctor"), dir.path(), &root)
        .args(["--json", "--check", "paths.encoding"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_status(&report, "paths.encoding", "warn", "is not valid Unicode");
    assert_eq!(
        fs_err::read_dir(&root).unwrap().count(),
        0,
        "the probe file was left behind"
    );
}

/// A project entry (`install --project P`) is checked in `P/.mcp.json`, where the receipt
/// says it was written, without `--project` (issue 26: a dead project entry went unseen).
#[test]
fn a_project_entry_is_checked_where_the_receipt_says_it_is() {
    let install = Install::new();
    let project = install.home.join("Mon projet");
    fs_err::create_dir_all(&project).unwrap();
    let out = common::command(&common::bin("scimcp-setup"), &install.home, &install.data)
        .args(["install", "--client", "claude-code-project", "--project"])
        .arg(&project)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mcp = project.join(".mcp.json");
    let (report, _) = install.report(&["--check", "client.claude-code-project"]);
    assert_status(
        &report,
        "client.claude-code-project",
        "ok",
        &mcp.display().to_string(),
    );
    fs_err::remove_file(&mcp).unwrap();
    let (report, _) = install.report(&["--check", "client.claude-code-project"]);
    assert_status(
        &report,
        "client.claude-code-project",
        "fail",
        "scimcp registered itself there",
    );
}
