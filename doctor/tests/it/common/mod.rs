//! A real installation to break: one is provisioned (venv + pip, about a minute) into a
//! template under the target directory, guarded by a file lock so concurrent test processes
//! build it once, and reused while the runtime's inputs are unchanged. Each test gets a
//! private copy under a path with spaces and non-ASCII letters, with the absolute paths in
//! the receipt and client files rewritten, and the suite binaries hard-linked from this
//! build (so a copy always runs the code under test).
//!
//! Needs the workspace binaries (`cargo build --workspace --bins`) and a Python 3.10–3.13
//! (the dev `.venv`'s, or `python3`).

#![allow(dead_code, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub const DATA: &str = "Données scimcp";

pub fn repo_root() -> PathBuf {
    scimcp_testkit::workspace_root()
}

/// A workspace binary built next to the doctor (refused when older than its sources).
pub fn bin(name: &str) -> PathBuf {
    scimcp_testkit::binary(name)
}

pub fn base_python() -> PathBuf {
    let venv = repo_root().join(".venv/bin/python");
    if venv.is_file() {
        return venv;
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("python3"))
        .find(|p| p.is_file())
        .expect("a python3 on PATH")
}

fn pip_cache() -> PathBuf {
    std::env::var_os("PIP_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/pip")
        })
}

/// A command with a fake home and data root: the caller's environment (pip's index and
/// proxy settings) otherwise, a PATH without any MCP client programs, and no colour.
pub fn command(program: &Path, home: &Path, data: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env("HOME", home)
        .env("SCIMCP_HOME", data)
        .env("PATH", "/usr/bin:/bin")
        .env("PIP_CACHE_DIR", pip_cache())
        .env("NO_COLOR", "1")
        .env("LC_ALL", "C.UTF-8")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SCIMCP_PYTHON")
        // runtime.sandbox reads the server's mode from it.
        .env_remove("SCIMCP_SANDBOX")
        .env_remove("VIRTUAL_ENV")
        .current_dir(home);
    cmd
}

fn ok(out: Output, what: &str) -> Output {
    assert!(
        out.status.success(),
        "{what} failed ({})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// What the template's runtime depends on: the adapter, the package source, the Python and
/// the installer binary. A change rebuilds it.
fn template_key() -> String {
    let mut parts = vec![
        fs_err::read_to_string(repo_root().join("adapters/refsci.toml")).unwrap(),
        base_python().display().to_string(),
    ];
    let setup = fs_err::metadata(bin("scimcp-setup")).unwrap();
    parts.push(format!("{:?} {}", setup.modified().ok(), setup.len()));
    let mut stack = vec![repo_root().join("refsci/src/refsci")];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in fs_err::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                if !p.ends_with("__pycache__") {
                    stack.push(p);
                }
            } else {
                files.push(format!(
                    "{} {}",
                    p.display(),
                    scimcp_core::hash::sha256_file(&p).unwrap().0
                ));
            }
        }
    }
    files.sort();
    parts.extend(files);
    scimcp_core::hash::sha256_hex(parts.join("\n").as_bytes())
}

/// The template installation (`<dir>/home`, `<dir>/Données scimcp`), built once.
pub fn template() -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("doctor-template");
    fs_err::create_dir_all(&base).unwrap();
    let lock = fs_err::File::create(base.join(".lock")).unwrap();
    // Another test process may be building the same thing; a build never takes this long.
    scimcp_core::lock::lock_exclusive(&lock, std::time::Duration::from_secs(1800), || {})
        .expect("the template lock is free within 30 minutes");
    let dir = base.join("Jürgen Müller");
    let key = template_key();
    let key_file = base.join("key");
    if fs_err::read_to_string(&key_file).ok().as_deref() == Some(key.as_str()) && dir.is_dir() {
        return dir;
    }
    let _ = fs_err::remove_file(&key_file);
    if dir.exists() {
        fs_err::remove_dir_all(&dir).unwrap();
    }
    let home = dir.join("home");
    let data = dir.join(DATA);
    fs_err::create_dir_all(&home).unwrap();
    let start = std::time::Instant::now();
    let py = base_python();
    ok(
        command(&bin("scimcp-setup"), &home, &data)
            .args(["install", "--client", "generic", "--python"])
            .arg(&py)
            .output()
            .unwrap(),
        "scimcp-setup install",
    );
    // A client has started the server once: it creates its private runs/ directory on its
    // first start, which is the server's doing, not the doctor's.
    ok(
        command(&bin("scimcp-doctor"), &home, &data)
            .args(["--check", "server.handshake"])
            .output()
            .unwrap(),
        "the first server start",
    );
    eprintln!(
        "provisioned the template installation in {:?}",
        start.elapsed()
    );
    fs_err::write(&key_file, &key).unwrap();
    dir
}

/// A private copy of the template installation.
pub struct Install {
    _tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub data: PathBuf,
}

impl Install {
    pub fn new() -> Install {
        let template = template();
        let base = std::env::temp_dir().join("Jürgen Müller");
        fs_err::create_dir_all(&base).unwrap();
        let tmp = tempfile::Builder::new()
            .prefix("Doctor ")
            .tempdir_in(base)
            .unwrap();
        copy_tree(&template, tmp.path());
        let install = Install {
            home: tmp.path().join("home"),
            data: tmp.path().join(DATA),
            _tmp: tmp,
        };
        let from = template.join(DATA).display().to_string();
        let to = install.data.display().to_string();
        let mut texts = vec![
            install.data.join("state.json"),
            install.data.join("clients/mcp.json"),
        ];
        for rt in fs_err::read_dir(install.data.join("runtimes"))
            .unwrap()
            .flatten()
        {
            texts.push(rt.path().join(".scimcp-runtime.json"));
        }
        // The default data folder is in the home (`~/scimcp`): the copy's, not the template's.
        let (home_from, home_to) = (
            template.join("home").display().to_string(),
            install.home.display().to_string(),
        );
        for file in texts {
            let text = fs_err::read_to_string(&file).unwrap();
            let text = text.replace(&from, &to).replace(&home_from, &home_to);
            fs_err::write(&file, text).unwrap();
        }
        install
    }

    /// `scimcp-doctor ARGS` against this installation.
    pub fn doctor(&self, args: &[&str]) -> Output {
        command(&bin("scimcp-doctor"), &self.home, &self.data)
            .args(args)
            .output()
            .unwrap()
    }

    /// The JSON report of `scimcp-doctor --json ARGS`, and the exit code.
    pub fn report(&self, args: &[&str]) -> (Value, i32) {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.doctor(&all);
        let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}\nstderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (json, out.status.code().unwrap_or(-1))
    }

    pub fn state(&self) -> Value {
        serde_json::from_slice(&fs_err::read(self.data.join("state.json")).unwrap()).unwrap()
    }

    pub fn set_state(&self, state: &Value) {
        fs_err::write(
            self.data.join("state.json"),
            serde_json::to_vec_pretty(state).unwrap(),
        )
        .unwrap();
    }

    /// The provisioned runtime's directory.
    pub fn runtime_dir(&self) -> PathBuf {
        PathBuf::from(self.state()["runtimes"]["refsci"]["dir"].as_str().unwrap())
    }

    /// The installed `refsci` package directory in the runtime.
    pub fn package_dir(&self) -> PathBuf {
        let lib = self.runtime_dir().join("lib");
        fs_err::read_dir(&lib)
            .unwrap()
            .flatten()
            .map(|e| e.path().join("site-packages/refsci"))
            .find(|p| p.is_dir())
            .unwrap()
    }

    /// `python -m pip ARGS` in the runtime.
    pub fn pip(&self, args: &[&str]) {
        let python = self.runtime_dir().join("bin/python");
        ok(
            command(&python, &self.home, &self.data)
                .args([
                    "-m",
                    "pip",
                    "--disable-pip-version-check",
                    "--no-input",
                    "--quiet",
                ])
                .args(args)
                .output()
                .unwrap(),
            "pip",
        );
    }

    pub fn generic_file(&self) -> PathBuf {
        self.data.join("clients/mcp.json")
    }
}

/// One check of a report, by id.
pub fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {report:#}"))
}

/// `(status, finding)` of a check.
pub fn status(report: &Value, id: &str) -> (String, String) {
    let c = check(report, id);
    (
        c["status"].as_str().unwrap().to_string(),
        c["finding"].as_str().unwrap().to_string(),
    )
}

/// Copy a tree: directories, symlinks as symlinks, files with their modes; the suite
/// binaries under `versions/*/bin/` are hard-linked from this build instead.
fn copy_tree(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs_err::create_dir_all(to).unwrap();
    fs_err::set_permissions(
        to,
        std::fs::Permissions::from_mode(
            fs_err::metadata(from).unwrap().permissions().mode() & 0o7777,
        ),
    )
    .unwrap();
    for entry in fs_err::read_dir(from).unwrap().flatten() {
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let meta = fs_err::symlink_metadata(&src).unwrap();
        if meta.file_type().is_symlink() {
            fs_err::os::unix::fs::symlink(fs_err::read_link(&src).unwrap(), &dst).unwrap();
        } else if meta.is_dir() {
            copy_tree(&src, &dst);
        } else if src.parent().is_some_and(|p| p.ends_with("bin"))
            && src
                .parent()
                .and_then(Path::parent)
                .and_then(Path::parent)
                .is_some_and(|p| p.ends_with("versions"))
        {
            let fresh = bin(&entry.file_name().to_string_lossy());
            if fs_err::hard_link(&fresh, &dst).is_err() {
                fs_err::copy(&fresh, &dst).unwrap();
            }
        } else if linkable(&src) {
            fs_err::hard_link(&src, &dst)
                .or_else(|_| fs_err::copy(&src, &dst).map(drop))
                .unwrap();
        } else {
            fs_err::copy(&src, &dst).unwrap();
        }
    }
}

/// Files of the runtime no test writes in place: hard-linked, so a copy costs no disk and
/// little time. A test that breaks a runtime file replaces it (unlink, then write: see
/// [`replace_file`]), and pip replaces files the same way, so the template never changes.
/// The adapter package and the runtime's record are copied, as tests edit them.
fn linkable(path: &Path) -> bool {
    let text = path.to_string_lossy();
    text.contains("/runtimes/")
        && !text.contains("/site-packages/refsci/")
        && !text.ends_with(".scimcp-runtime.json")
}

/// Write `text` to `path` as a new file (never through a hard link into the template).
pub fn replace_file(path: &Path, text: &str) {
    let _ = fs_err::remove_file(path);
    fs_err::write(path, text).unwrap();
}

/// A digest of everything under `dir`: every path, its kind, mode, symlink target and file
/// content. Two equal digests mean nothing was created, removed or changed.
pub fn tree_digest(dir: &Path) -> scimcp_testkit::Fingerprint {
    // Left out: the run index (`runs/.index`), the server's cache of its run directories.
    // The server the doctor's handshake starts may seal it (one journal line recording the
    // runs directory's fingerprint); it is never trusted over the run directories, which
    // are compared.
    scimcp_testkit::fingerprint(dir, &[".index"])
}
