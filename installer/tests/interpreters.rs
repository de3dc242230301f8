//! Finding a Python within an adapter's range (`python = ">=3.9, <3.10"`), through the real
//! `scimcp-setup` binary, with stand-in interpreters and a stand-in `uv`: pyenv's versions,
//! `uv python find`, `uv python install` when nothing fits; the one chosen and why in the
//! output and in state.json; when nothing fits, the range and the one command that gets one.

#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};

use common::adapter::{Demo, executable, fake_python, write_adapter};
use common::{setup_cmd, unicode_tempdir};
use scimcp_core::install_state::InstallState;

struct Case {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    data: PathBuf,
    demo: String,
    /// PATH: a folder with `python3` (3.11.7), then /usr/bin:/bin.
    path: PathBuf,
}

fn case() -> Case {
    let dir = unicode_tempdir();
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    fs_err::create_dir_all(&home).unwrap();
    let tools = root.join("outils");
    executable(&tools.join("python3"), &fake_python("3.11.7"));
    let demo = write_adapter(&root.join("adaptateur"), &Demo::default())
        .display()
        .to_string();
    Case {
        path: PathBuf::from(format!("{}:/usr/bin:/bin", tools.display())),
        data: root.join("Données scimcp"),
        _dir: dir,
        root,
        home,
        demo,
    }
}

impl Case {
    fn install(&self, path: &Path, env: &[(&str, &Path)]) -> std::process::Output {
        let mut cmd = setup_cmd(
            &self.home,
            &self.data,
            path,
            &["install", "--client", "generic", "--adapter", &self.demo],
        );
        cmd.env("FAKE_LOG", self.root.join("pip.log"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    fn base(&self) -> scimcp_core::install_state::BaseInterpreter {
        InstallState::load(&self.data).unwrap().unwrap().runtimes["demo"]
            .base
            .clone()
            .unwrap()
    }
}

fn stdout(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn pyenv_s_newest_version_within_the_range() {
    let c = case();
    let pyenv = c.root.join("pyenv racine");
    for v in ["3.9.7", "3.9.18", "3.12.1"] {
        executable(
            &pyenv.join("versions").join(v).join("bin/python3"),
            &fake_python(v),
        );
    }
    fs_err::create_dir_all(pyenv.join("versions/miniconda3-latest/bin")).unwrap();
    let said = stdout(&c.install(&c.path, &[("PYENV_ROOT", &pyenv)]));
    assert!(said.contains("Python 3.9.18"), "{said}");
    let base = c.base();
    assert_eq!(base.found_by, "pyenv");
    assert_eq!(base.version, "3.9.18");
    assert_eq!(base.path, pyenv.join("versions/3.9.18/bin/python3"));
    assert!(
        base.reason.contains("pyenv's 3.9.18") && base.reason.contains("python3 ("),
        "{}",
        base.reason
    );
}

/// A stand-in `uv`: `uv python find` prints `$UV_FOUND` when that file exists (else fails as
/// uv does); `uv python install` creates it, a Python 3.9.18, unless `$UV_INSTALL_FAILS`;
/// `uv venv` and `uv pip install` do what the stand-in Python's `-m venv` and pip do.
const UV: &str = r#"#!/bin/sh
echo "uv $*" >> "$UV_LOG"
if [ "$1 $2" = "python find" ]; then
  if [ -x "$UV_FOUND" ]; then echo "$UV_FOUND"; exit 0; fi
  echo "error: No interpreter found for Python $3 in managed installations or search path" >&2; exit 2
fi
if [ "$1 $2" = "python install" ]; then
  if [ -n "$UV_INSTALL_FAILS" ]; then echo "error: Failed to download (network unreachable)" >&2; exit 1; fi
  mkdir -p "$(dirname "$UV_FOUND")" && cp "$UV_PYTHON_TEMPLATE" "$UV_FOUND" && chmod +x "$UV_FOUND"; exit 0
fi
# `uv venv --quiet --python PY DIR` and `uv pip install …`, as the runtime is made.
if [ "$1" = venv ]; then mkdir -p "$5/bin" && cp "$4" "$5/bin/python"; exit 0; fi
if [ "$1" = pip ]; then exit 0; fi
exit 3
"#;

struct Uv {
    path: PathBuf,
    found: PathBuf,
    log: PathBuf,
    template: PathBuf,
}

fn uv(c: &Case) -> Uv {
    let dir = c.root.join("uv bin");
    executable(&dir.join("uv"), UV);
    let template = c.root.join("cpython-3.9.18");
    executable(&template, &fake_python("3.9.18"));
    Uv {
        path: PathBuf::from(format!("{}:{}", dir.display(), c.path.display())),
        found: c
            .home
            .join(".local/share/uv/python/cpython-3.9.18-linux/bin/python3.9"),
        log: c.root.join("uv.log"),
        template,
    }
}

#[test]
fn uv_python_find_then_uv_python_install() {
    let c = case();
    let u = uv(&c);
    // Nothing fits yet: uv installs a Python within the range, then finds it.
    let said = stdout(&c.install(
        &u.path,
        &[
            ("UV_FOUND", &u.found),
            ("UV_LOG", &u.log),
            ("UV_PYTHON_TEMPLATE", &u.template),
        ],
    ));
    let log = fs_err::read_to_string(&u.log).unwrap();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        [
            "uv python find >=3.9, <3.10",
            "uv python install >=3.9, <3.10",
            "uv python find >=3.9, <3.10",
            // The runtime is made with uv too.
            log.lines().nth(3).unwrap(),
            log.lines().nth(4).unwrap(),
        ],
        "{log}"
    );
    assert!(log.lines().nth(3).unwrap().starts_with("uv venv"), "{log}");
    let base = c.base();
    assert_eq!(base.found_by, "uv python install", "{said}");
    assert_eq!(base.path, u.found);

    // Next time uv finds it straight away.
    fs_err::remove_dir_all(&c.data).unwrap();
    fs_err::write(&u.log, "").unwrap();
    stdout(&c.install(
        &u.path,
        &[
            ("UV_FOUND", &u.found),
            ("UV_LOG", &u.log),
            ("UV_PYTHON_TEMPLATE", &u.template),
        ],
    ));
    assert_eq!(c.base().found_by, "uv python find");
    assert!(
        !fs_err::read_to_string(&u.log)
            .unwrap()
            .contains("python install")
    );
}

#[test]
fn when_nothing_fits_the_error_names_the_range_and_the_command_that_gets_one() {
    let c = case();
    // uv is there but cannot download: the error says so, and names uv's command.
    let u = uv(&c);
    let offline = c.root.join("offline");
    let out = c.install(
        &u.path,
        &[
            ("UV_FOUND", &u.found),
            ("UV_LOG", &u.log),
            ("UV_PYTHON_TEMPLATE", &u.template),
            ("UV_INSTALL_FAILS", &offline),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no Python >=3.9, <3.10 for demo on this computer"),
        "{err}"
    );
    assert!(
        err.contains("uv python install >=3.9, <3.10: failed (error: Failed to download"),
        "{err}"
    );
    assert!(
        err.contains("Get one with `uv python install 3.9`"),
        "{err}"
    );

    // pyenv without a 3.9: pyenv's own command.
    let pyenv = c.root.join("pyenv");
    executable(
        &pyenv.join("versions/3.12.1/bin/python3"),
        &fake_python("3.12.1"),
    );
    let out = c.install(&c.path, &[("PYENV_ROOT", &pyenv)]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("Get one with `pyenv install 3.9`"), "{err}");
    assert!(err.contains("python3 ("), "{err}");
    assert!(!c.data.join("state.json").exists());
}
