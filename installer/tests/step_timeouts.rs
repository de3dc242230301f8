//! Every helper program the installer runs has a time limit. A stand-in Python (and a
//! stand-in `claude`) that hangs at one step — the interpreter query, the venv, `pip
//! install`, the runtime probe, the import check, `claude mcp add-json` — makes the command
//! fail within the (shortened) limit, naming the step, with the hanging program and its
//! children ended, and the runtime in use and every client file exactly as they were.

#![cfg(unix)]
#![allow(clippy::print_stderr)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{fingerprint, ok, repo_root, run_bounded, setup_cmd, unicode_tempdir};

/// A stand-in interpreter that answers like `FAKE_PYTHON` in `runtime_provisioning.rs`, except
/// that it reports Python `$FAKE_VERSION` (3.11.7 by default) and, at the step named by
/// `$HANG_AT`, starts a child that would outlive it and sleeps.
const PYTHON: &str = r#"#!/bin/sh
hang() { if [ "$HANG_AT" = "$1" ]; then sleep 300 & sleep 300; fi; }
case "$1" in
  -c) hang query; echo "${FAKE_VERSION:-3.11.7}"; echo "$0"; exit 0 ;;
  -m)
    if [ "$2" = venv ]; then hang venv; mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0; fi
    if [ "$2" = pip ]; then hang pip; exit 0; fi ;;
  -I)
    case "$4" in import*) hang import; exit 0 ;; esac
    hang probe
    pkg="$5"; shift 5
    versions=""
    for n in "$@"; do versions="$versions${versions:+, }\"$n\": \"1.0\""; done
    printf '{"python": "3.11.7", "executable": "%s", "implementation": "cpython", "versions": {%s}, "package": {"name": "%s", "version": "0.1.0", "files": 1, "sha256": "feed"}}\n' "$0" "$versions" "$pkg"
    exit 0 ;;
esac
exit 3
"#;

const CLAUDE: &str = "#!/bin/sh\nsleep 300 & sleep 300\n";

fn executable(path: &Path, text: &str) {
    fs_err::write(path, text).unwrap();
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A bundle whose adapter pins one tiny package, as in `runtime_provisioning.rs`.
fn bundle(parent: &Path) -> PathBuf {
    let dir = common::fake_bundle(parent, "b1", Some("0.1.0"));
    let adapters = dir.join("adapters");
    fs_err::remove_dir_all(&adapters).unwrap();
    scimcp_installer::bundle::copy_tree(&repo_root().join("adapters"), &adapters).unwrap();
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
    dir
}

/// Everything under `dir` except what a failed run may legitimately touch: the setup lock
/// and the scratch directory `.tmp/`.
fn state_of(dir: &Path) -> std::collections::BTreeMap<String, String> {
    fingerprint(dir)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".tmp"))
        .collect()
}

#[test]
fn a_hanging_step_fails_within_its_limit_naming_it_and_changes_nothing() {
    let dir = unicode_tempdir();
    let root = dir.path();
    let home = root.join("home");
    let data = root.join("Données scimcp");
    let tools = root.join("outils");
    fs_err::create_dir_all(home.join(".cursor")).unwrap();
    fs_err::create_dir_all(&tools).unwrap();
    fs_err::write(home.join(".cursor/mcp.json"), "{\"theme\": \"dark\"}\n").unwrap();
    let python = tools.join("python3");
    executable(&python, PYTHON);
    let py = python.display().to_string();
    let path = PathBuf::from("/usr/bin:/bin");
    let from = bundle(root).display().to_string();
    // The runtime in use: provisioned with Python 3.11.7.
    ok(setup_cmd(
        &home,
        &data,
        &path,
        &[
            "install",
            "--client",
            "cursor",
            "--python",
            &py,
            "--allow-unsigned",
            "--from",
            &from,
        ],
    )
    .output()
    .unwrap());
    let limit_s = 2;
    let steps = [
        ("query", "the interpreter query"),
        ("venv", "creating the virtual environment"),
        ("pip", "pip install"),
        ("probe", "the runtime probe"),
        ("import", "the import check"),
    ];
    let mut slowest = Duration::ZERO;
    for (hang_at, name) in steps {
        let before = (state_of(&home), state_of(&data));
        // Python 3.12 needs a runtime of its own: the one in use must survive the failure.
        let mut cmd = setup_cmd(&home, &data, &path, &["repair", "--python", &py]);
        cmd.env("HANG_AT", hang_at)
            .env("FAKE_VERSION", "3.12.1")
            .env(scimcp_installer::steps::TIMEOUT_ENV, limit_s.to_string());
        let (out, took) = run_bounded(&mut cmd, Duration::from_secs(30));
        slowest = slowest.max(took);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{hang_at}: {err}");
        assert!(
            err.contains(&format!(
                "{name} took longer than {limit_s} s and was stopped"
            )),
            "{hang_at}: {err}"
        );
        assert!(
            took < Duration::from_secs(limit_s + 10),
            "{hang_at}: {took:?}"
        );
        assert_eq!(
            (state_of(&home), state_of(&data)),
            before,
            "{hang_at}: something changed"
        );
    }

    // A client's own CLI that hangs: that client fails, naming the step; its file is as it was.
    let claude_dir = root.join("claude bin");
    fs_err::create_dir_all(&claude_dir).unwrap();
    executable(&claude_dir.join("claude"), CLAUDE);
    let with_claude = PathBuf::from(format!("{}:/usr/bin:/bin", claude_dir.display()));
    let before = state_of(&home);
    let mut cmd = setup_cmd(
        &home,
        &data,
        &with_claude,
        &[
            "install",
            "--client",
            "claude-code",
            "--skip-runtime",
            "--allow-unsigned",
            "--from",
            &from,
        ],
    );
    cmd.env(scimcp_installer::steps::TIMEOUT_ENV, limit_s.to_string());
    let (out, took) = run_bounded(&mut cmd, Duration::from_secs(30));
    slowest = slowest.max(took);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "`claude mcp add-json` took longer than {limit_s} s and was stopped"
        )),
        "{said}"
    );
    assert_eq!(state_of(&home), before);
    eprintln!(
        "6 hanging steps stopped at their {limit_s} s limit, each named, nothing changed; the slowest command took {slowest:?}"
    );
}
