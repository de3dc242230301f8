//! Real runtimes (`python -m venv` + pip) built from a local wheelhouse with no package index
//! reachable (`PIP_INDEX_URL` points at a closed port), for an adapter given as a manifest
//! file, through the real binaries in a home under `Jürgen Müller/Données …`:
//! - the install succeeds offline, the wheelhouse is recorded, the doctor is all ok for the
//!   adapter; a deleted package file is found by the doctor and `--fix` rebuilds the runtime
//!   from the recorded wheelhouse;
//! - a binary-only requirement with only a source distribution fails naming it, and a
//!   runtime whose import hangs is stopped at the step's time limit naming the step; both
//!   leave every file of the home and the data root exactly as it was.
//!
//! Needs the workspace binaries (`cargo build --workspace --bins`) and a CPython with venv
//! (the dev `.venv`'s base interpreter, or `python3`); no network.

#![cfg(unix)]
#![allow(clippy::print_stderr)]

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::adapter::{Demo, demo_wheel, range_of, real_python, wheel, write_adapter};
use common::{fingerprint, ok, run_bounded, setup_cmd, unicode_tempdir};
use scimcp_core::install_state::InstallState;
use scimcp_testkit::doctor::{assert_healthy, verdict};
use serde_json::Value;

/// An index no request can reach.
const NO_INDEX: &str = "http://127.0.0.1:9/simple";

struct Real {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    data: PathBuf,
    /// PATH: only a folder with `python3.X`, the real interpreter.
    path: PathBuf,
    range: String,
    wheels: PathBuf,
}

fn real() -> Real {
    let (python, version) = real_python();
    let dir = unicode_tempdir();
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    fs_err::create_dir_all(&home).unwrap();
    let tools = root.join("Python de Jürgen");
    fs_err::create_dir_all(&tools).unwrap();
    let minor = version.split('.').nth(1).unwrap();
    fs_err::os::unix::fs::symlink(&python, tools.join(format!("python3.{minor}"))).unwrap();
    let wheels = root.join("roues hors ligne");
    demo_wheel(
        &wheels,
        "1.0",
        "import os, time\nif os.environ.get('DEMO_HANG'):\n    time.sleep(600)\nVALUE = 1\n",
    );
    wheel(
        &wheels,
        "helper-pkg",
        "2.0",
        &[("helper_pkg/__init__.py", "HELP = 2\n")],
    );
    Real {
        data: root.join("Données scimcp"),
        _dir: dir,
        root,
        home,
        path: tools,
        range: range_of(&version),
        wheels,
    }
}

impl Real {
    fn adapter(&self, name: &str, requirements: &[&str], imports: &[&str]) -> String {
        write_adapter(
            &self.root.join(format!("adaptateur {name}")),
            &Demo {
                name,
                python: &self.range,
                requirements,
                import_check: imports,
                ..Demo::default()
            },
        )
        .display()
        .to_string()
    }

    fn setup(&self, args: &[&str]) -> Command {
        let mut cmd = setup_cmd(&self.home, &self.data, &self.path, args);
        cmd.env("PIP_INDEX_URL", NO_INDEX);
        cmd
    }

    fn doctor(&self, args: &[&str]) -> (Value, Output) {
        let doctor =
            PathBuf::from(env!("CARGO_BIN_EXE_scimcp-setup")).with_file_name("scimcp-doctor");
        let out = Command::new(doctor)
            .args(["--json"])
            .args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("SCIMCP_HOME", &self.data)
            .env("PATH", &self.path)
            .env("PIP_INDEX_URL", NO_INDEX)
            .env("LC_ALL", "C.UTF-8")
            .current_dir(&self.home)
            .output()
            .unwrap();
        let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{e}: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (report, out)
    }

    fn tree(&self) -> Vec<std::collections::BTreeMap<String, String>> {
        [&self.home, &self.data]
            .iter()
            .map(|d| {
                fingerprint(d)
                    .into_iter()
                    .filter(|(k, _)| !k.starts_with(".tmp"))
                    .collect()
            })
            .collect()
    }
}

#[test]
fn a_wheelhouse_installs_with_no_index_and_fix_rebuilds_a_damaged_runtime_from_it() {
    let r = real();
    let demo = r.adapter(
        "demo",
        &["demo-pkg==1.0", "helper-pkg==2.0"],
        &["demo_pkg", "helper_pkg"],
    );
    let wheels = r.wheels.display().to_string();
    let start = Instant::now();
    let out = ok(r
        .setup(&[
            "install",
            "--client",
            "generic",
            "--adapter",
            &demo,
            "--find-links",
            &wheels,
            "--no-index",
        ])
        .output()
        .unwrap());
    let took = start.elapsed();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("on PATH"), "{said}");
    let state = InstallState::load(&r.data).unwrap().unwrap();
    assert_eq!(
        state.adapters["demo"].packages.find_links,
        vec![r.wheels.clone()]
    );
    assert!(state.adapters["demo"].packages.no_index);
    let runtime = &state.runtimes["demo"];
    assert_eq!(runtime.versions["demo-pkg"].as_deref(), Some("1.0"));
    assert_eq!(runtime.versions["helper-pkg"].as_deref(), Some("2.0"));

    // The doctor: every check of the adapter ok, each naming it; the server starts.
    let (report, out) = r.doctor(&[]);
    assert_healthy(&report, out.status.code().unwrap_or(-1), &r.data);
    assert_eq!(report["adapters"], serde_json::json!(["demo"]));
    let handshake = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "server.handshake")
        .unwrap();
    assert_eq!(handshake["adapter"], "demo");

    // A package file deleted by hand: found (named), and --fix rebuilds from the wheelhouse.
    let site = scimcp_installer::site_packages(&runtime.dir).unwrap();
    fs_err::remove_file(site.join("demo_pkg/data/table.csv")).unwrap();
    let (report, _) = r.doctor(&["--fast"]);
    let bad = verdict(&report, &r.data).problems;
    assert!(
        bad.iter().any(|b| b.contains("runtime.packages")
            && b.contains("demo-pkg: demo_pkg/data/table.csv (missing)")),
        "{bad:#?}"
    );
    assert!(
        bad.iter()
            .any(|b| b.contains("runtime.identity") && b.contains("data/table.csv (removed)")),
        "{bad:#?}"
    );
    let start = Instant::now();
    let (report, out) = r.doctor(&["--fix"]);
    assert_healthy(&report, out.status.code().unwrap_or(-1), &r.data);
    assert!(site.join("demo_pkg/data/table.csv").is_file());
    eprintln!(
        "offline install from the wheelhouse {took:?}; doctor --fix rebuilt the damaged runtime in {:?}",
        start.elapsed()
    );
}

#[test]
fn a_missing_wheel_and_a_hanging_import_fail_naming_what_and_change_nothing() {
    let r = real();
    let wheels = r.wheels.display().to_string();
    let demo = r.adapter("demo", &["demo-pkg==1.0"], &["demo_pkg"]);
    ok(r.setup(&[
        "install",
        "--client",
        "generic",
        "--adapter",
        &demo,
        "--find-links",
        &wheels,
        "--no-index",
    ])
    .output()
    .unwrap());
    let before = r.tree();

    // Only a source distribution of `nowheel` in the wheelhouse, and the adapter installs
    // from wheels only.
    let sdists = r.root.join("sources seulement");
    fs_err::create_dir_all(&sdists).unwrap();
    fs_err::write(sdists.join("nowheel-1.0.tar.gz"), b"not unpacked").unwrap();
    let nowheel = r.adapter("nowheel", &["nowheel==1.0"], &["nowheel"]);
    let out = r
        .setup(&[
            "install",
            "--client",
            "generic",
            "--adapter",
            &nowheel,
            "--find-links",
            &sdists.display().to_string(),
            "--no-index",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    for needle in [
        "nowheel==1.0 cannot be installed for nowheel: there is no wheel of it for CPython",
        "in the wheelhouse",
        "installs from wheels only",
        "Nothing was installed",
    ] {
        assert!(err.contains(needle), "{needle:?} not in:\n{err}");
    }
    assert_eq!(r.tree(), before, "the failed install changed files");

    // A runtime whose import never finishes: the import check is stopped at its limit.
    let limit = 30;
    let hang = r.adapter("hang", &["demo-pkg==1.0"], &["demo_pkg"]);
    let mut cmd = r.setup(&[
        "install",
        "--client",
        "generic",
        "--adapter",
        &hang,
        "--find-links",
        &wheels,
        "--no-index",
    ]);
    cmd.env("DEMO_HANG", "1")
        .env(scimcp_installer::testing::TIMEOUT_ENV, limit.to_string());
    let (out, took) = run_bounded(&mut cmd, Duration::from_secs(limit * 4));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "the import check took longer than {limit} s and was stopped"
        )),
        "{err}"
    );
    assert_eq!(r.tree(), before, "the stopped install changed files");
    eprintln!("the hanging import was stopped; the whole command took {took:?}");
}
