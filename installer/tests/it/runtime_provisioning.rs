//! Runtime provisioning without the network: a stand-in Python (a shell script that answers
//! the installer's version query, creates a "venv" by copying itself, logs pip installs and
//! prints a runtime probe) and a stand-in `uv`. This checks the orchestration that the real
//! end-to-end test cannot afford to repeat: reuse by hash, a deleted runtime and a killed
//! provisioning (no completion marker) rebuilt by `repair`, uv preferred when on PATH, a new
//! package source getting a runtime of its own, and rollback restoring the old runtime.

#![cfg(unix)]

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{ok, repo_root, run_setup, unicode_tempdir};
use scimcp_core::install_state::InstallState;

pub const FAKE_PYTHON: &str = r#"#!/bin/sh
# A stand-in interpreter for scimcp-setup's provisioning steps.
log="$(dirname "$0")/../../../python.log"
[ -f "$FAKE_LOG" ] && log="$FAKE_LOG"
# venv and pip run isolated: `-I -B -m MODULE …`.
if [ "$1 $2 $3" = "-I -B -m" ]; then shift 2; fi
case "$1" in
  -c) echo 3.11.7; echo "$0"; exit 0 ;;
  -m)
    if [ "$2" = venv ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0; fi
    if [ "$2" = pip ]; then echo "pip $*" >> "$FAKE_LOG"; exit 0; fi ;;
  -I)
    # `-I -B -c CODE [PACKAGE NAMES…]`: the import check, or the runtime probe.
    case "$4" in import*) exit 0 ;; esac
    pkg="$5"; shift 5
    versions=""
    for n in "$@"; do versions="$versions${versions:+, }\"$n\": \"1.0\""; done
    printf '{"python": "3.11.7", "executable": "%s", "implementation": "cpython", "versions": {%s}, "package": {"name": "%s", "version": "0.1.0", "files": 1, "sha256": "feed"}}\n' "$0" "$versions" "$pkg"
    exit 0 ;;
esac
echo "unexpected: $*" >&2
exit 3
"#;

const FAKE_UV: &str = r#"#!/bin/sh
# A stand-in uv: `uv venv --quiet --python PY DIR` and `uv pip install --quiet --python PY …`.
echo "uv $*" >> "$FAKE_LOG"
if [ "$1" = venv ]; then mkdir -p "$5/bin" && cp "$4" "$5/bin/python"; fi
exit 0
"#;

fn executable(path: &Path, text: &str) {
    fs_err::write(path, text).unwrap();
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A bundle with the real adapters (one tiny pin instead of the scientific stack) and a
/// package source whose content is `source`.
fn bundle(parent: &Path, name: &str, version: &str, source: &str) -> PathBuf {
    let dir = common::fake_bundle(parent, name, Some(version));
    let adapters = dir.join("adapters");
    fs_err::remove_dir_all(&adapters).unwrap();
    scimcp_installer::testing::copy_tree(&repo_root().join("adapters"), &adapters).unwrap();
    let manifest = adapters.join("refsci.toml");
    let text = fs_err::read_to_string(&manifest).unwrap();
    let start = text.find("requirements = [").unwrap();
    let end = start + text[start..].find(']').unwrap() + 1;
    let text = format!(
        "{}requirements = [\"demo==1.0\"]{}",
        &text[..start],
        &text[end..]
    );
    fs_err::write(&manifest, text).unwrap();
    fs_err::write(dir.join("refsci/module.py"), source).unwrap();
    dir
}

fn pip_calls(log: &Path) -> usize {
    fs_err::read_to_string(log).map_or(0, |t| t.lines().count())
}

#[test]
fn runtimes_are_reused_rebuilt_and_follow_rollback() {
    let dir = unicode_tempdir();
    let root = dir.path();
    let home = root.join("home");
    let data = root.join("Données scimcp");
    let tools = root.join("outils");
    let uv_dir = root.join("avec uv");
    fs_err::create_dir_all(&home).unwrap();
    fs_err::create_dir_all(&tools).unwrap();
    fs_err::create_dir_all(&uv_dir).unwrap();
    let python = tools.join("python3");
    executable(&python, FAKE_PYTHON);
    executable(&uv_dir.join("uv"), FAKE_UV);
    let log = root.join("calls.log");
    fs_err::write(&log, "").unwrap();
    let path = PathBuf::from("/usr/bin:/bin");
    let with_uv = PathBuf::from(format!("{}:/usr/bin:/bin", uv_dir.display()));
    let py = python.display().to_string();
    let v1 = bundle(root, "b1", "0.1.0", "VALUE = 1\n")
        .display()
        .to_string();
    let v2 = bundle(root, "scimcp-0.2.0", "0.2.0", "VALUE = 2\n");
    let mirror = root.join("mirror");
    fs_err::create_dir_all(&mirror).unwrap();
    fs_err::rename(&v2, mirror.join("scimcp-0.2.0")).unwrap();
    let run = |path: &Path, args: &[&str]| {
        let mut cmd = common::setup_cmd(&home, &data, path, args);
        cmd.env("FAKE_LOG", &log);
        ok(cmd.output().unwrap())
    };
    let state = || InstallState::load(&data).unwrap().unwrap();

    // First install: venv + pip (no uv on PATH), the pins then the package, then the probe.
    run(
        &path,
        &[
            "install",
            "--client",
            "generic",
            "--python",
            &py,
            "--allow-unsigned",
            "--from",
            &v1,
        ],
    );
    let first = state().runtimes["refsci"].clone();
    assert_eq!(first.provisioner, "venv+pip");
    assert!(
        first.dir.starts_with(data.join("runtimes"))
            && first.dir.join(".scimcp-runtime.json").is_file()
    );
    assert_eq!(first.interpreter, first.dir.join("bin/python"));
    assert_eq!(first.versions["demo"].as_deref(), Some("1.0"));
    assert_eq!(
        first.package.as_ref().unwrap().sha256.as_deref(),
        Some("feed")
    );
    let calls = fs_err::read_to_string(&log).unwrap();
    assert_eq!(calls.lines().count(), 2, "{calls}");
    assert!(
        calls.lines().next().unwrap().ends_with(" demo==1.0"),
        "{calls}"
    );
    assert!(
        calls.lines().nth(1).unwrap().contains("--no-deps"),
        "{calls}"
    );
    assert_eq!(
        scimcp_core::install_state::recorded_interpreter(&data, "refsci").unwrap(),
        Some(first.interpreter.clone())
    );

    // Again: the runtime is reused, nothing is installed, the receipt is unchanged.
    let receipt = fs_err::read(data.join("state.json")).unwrap();
    run(
        &path,
        &[
            "install",
            "--client",
            "generic",
            "--python",
            &py,
            "--allow-unsigned",
            "--from",
            &v1,
        ],
    );
    assert_eq!(pip_calls(&log), 2);
    assert_eq!(fs_err::read(data.join("state.json")).unwrap(), receipt);

    // A deleted runtime, then a provisioning killed before its marker: repair rebuilds both.
    fs_err::remove_dir_all(&first.dir).unwrap();
    let status = run(&path, &["status"]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("(missing: run repair)"));
    run(&path, &["repair", "--python", &py]);
    assert_eq!(pip_calls(&log), 4);
    assert!(first.interpreter.is_file());
    fs_err::remove_file(first.dir.join(".scimcp-runtime.json")).unwrap();
    run(&path, &["repair", "--python", &py]);
    assert_eq!(pip_calls(&log), 6);
    assert_eq!(state().runtimes["refsci"], first);

    // An upgrade whose package source changed gets a runtime of its own, made with uv.
    let mirror_arg = mirror.display().to_string();
    run(
        &with_uv,
        &[
            "upgrade",
            "--python",
            &py,
            "--allow-unsigned",
            "--from",
            &mirror_arg,
        ],
    );
    let second = state().runtimes["refsci"].clone();
    assert_ne!(second.dir, first.dir);
    assert_eq!(second.provisioner, "uv");
    let calls = fs_err::read_to_string(&log).unwrap();
    assert!(
        calls
            .lines()
            .any(|l| l.starts_with("uv venv --quiet --python")),
        "{calls}"
    );
    assert!(
        calls
            .lines()
            .any(|l| l.starts_with("uv pip install --quiet --python")),
        "{calls}"
    );

    // Rollback switches back to the first runtime without rebuilding anything.
    let before = pip_calls(&log);
    run(&path, &["rollback"]);
    assert_eq!(state().runtimes["refsci"], first);
    assert_eq!(pip_calls(&log), before);
    // …and an unsuitable interpreter is refused with the requirement named.
    let old = tools.join("python2");
    executable(&old, &FAKE_PYTHON.replace("echo 3.11.7;", "echo 2.7.18;"));
    let out = run_setup(
        &home,
        &data,
        &path,
        &["repair", "--python", &old.display().to_string()],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("is Python 2.7.18, but refsci needs Python >=3.10, <3.14"),
        "{out:?}"
    );
}

/// A no-op `install` re-run does not import the scientific modules again when not one file
/// of the runtime changed since its import check passed (the import stamp); a changed file
/// makes it import again, and `repair` always imports (it is what fixes a broken runtime).
#[test]
fn a_no_op_install_skips_the_import_check_only_while_the_runtime_is_untouched() {
    let dir = unicode_tempdir();
    let root = dir.path();
    let home = root.join("home");
    let data = root.join("Données scimcp");
    let tools = root.join("outils");
    fs_err::create_dir_all(&home).unwrap();
    fs_err::create_dir_all(&tools).unwrap();
    let python = tools.join("python3");
    // The stand-in logs every import check it answers.
    let logging = FAKE_PYTHON.replace(
        "case \"$4\" in import*) exit 0 ;; esac",
        "case \"$4\" in import*) echo \"import $4\" >> \"$FAKE_LOG\"; exit 0 ;; esac",
    );
    assert_ne!(logging, FAKE_PYTHON);
    executable(&python, &logging);
    let log = root.join("calls.log");
    fs_err::write(&log, "").unwrap();
    let py = python.display().to_string();
    let bundle = bundle(root, "b1", "0.1.0", "VALUE = 1\n")
        .display()
        .to_string();
    let run = |command: &str| {
        let mut args = vec![command, "--client", "generic", "--python", &py];
        if command == "install" {
            args.extend(["--allow-unsigned", "--from", &bundle]);
        }
        let mut cmd = common::setup_cmd(&home, &data, Path::new("/usr/bin:/bin"), &args);
        cmd.env("FAKE_LOG", &log);
        ok(cmd.output().unwrap());
    };
    let imports = || {
        fs_err::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("import "))
            .count()
    };
    run("install");
    assert_eq!(imports(), 1, "the first install checks the imports");
    run("install");
    run("install");
    assert_eq!(imports(), 1, "an untouched runtime is not imported again");
    let runtime = InstallState::load(&data).unwrap().unwrap().runtimes["refsci"]
        .dir
        .clone();
    fs_err::write(runtime.join("bin/added-by-hand.py"), "").unwrap();
    run("install");
    assert_eq!(imports(), 2, "a changed runtime is imported again");
    run("install");
    assert_eq!(imports(), 2);
    run("repair");
    assert_eq!(imports(), 3, "repair always imports");
}
