//! The heavy end-to-end tests: real runtimes from PyPI, minutes each. Ignored by the normal
//! suite; run them with
//!
//! ```text
//! cargo build --workspace --bins
//! cargo nextest run --workspace --run-ignored only -E 'package(scimcp-installer) & test(/^heavy::/)'
//! ```
//!
//! (`.config/nextest.toml` runs them one at a time, in the `heavy` test group). The adapters'
//! wheels are downloaded once into `target/tmp/wheels-<adapter>` and installed with
//! `--find-links` (PyPI still reachable), so a second run downloads nothing. They need PyPI,
//! a CPython 3.9 from pyenv (`pyenv install 3.9`; GeochemistryPi 0.8.2 declares 3.9 only) and
//! a CPython 3.10–3.13 on PATH (refsci), and print how long each part took.

#![cfg(unix)]
#![allow(clippy::print_stderr)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use common::adapter::{Demo, range_of, real_python, write_adapter};
use common::{fingerprint, ok, unicode_tempdir};
use scimcp_client::McpSession;
use scimcp_core::install_state::InstallState;
use scimcp_testkit::doctor::{assert_healthy, verdict};
use serde_json::{Value, json};

/// pip's cache for these tests, kept across runs.
fn pip_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pip-cache")
}

/// A wheelhouse of `adapter`'s pins for `python` under target/tmp, downloaded from PyPI once
/// (again only when the pins change). pip's own HTTP cache does not always keep wheels (a
/// proxy may mark them uncacheable); this folder does, so a second run downloads nothing.
/// The installs still have PyPI (`--find-links`, not `--no-index`).
fn wheelhouse(adapter: &str, python: &Path) -> PathBuf {
    let manifest = scimcp_core::manifest::load_embedded(adapter)
        .unwrap()
        .unwrap()
        .manifest;
    let pins = manifest.runtime.requirements.join("\n") + "\n";
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("wheels-{adapter}"));
    fs_err::create_dir_all(&dir).unwrap();
    let lock = fs_err::File::create(dir.join(".lock")).unwrap();
    // Another test process may be building the same thing; a build never takes this long.
    scimcp_core::lock::lock_exclusive(&lock, std::time::Duration::from_secs(1800), || {})
        .expect("the template lock is free within 30 minutes");
    let stamp = dir.join(".pins");
    if fs_err::read_to_string(&stamp).ok().as_deref() == Some(pins.as_str()) {
        return dir;
    }
    let requirements = dir.join(".requirements.txt");
    fs_err::write(&requirements, &pins).unwrap();
    let start = Instant::now();
    let status = Command::new(python)
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--only-binary",
            ":all:",
            "--dest",
        ])
        .arg(&dir)
        .arg("-r")
        .arg(&requirements)
        .env("PIP_CACHE_DIR", pip_cache())
        .env_remove("PIP_FIND_LINKS")
        .status()
        .unwrap();
    assert!(status.success(), "pip download of {adapter}'s pins failed");
    fs_err::write(&stamp, &pins).unwrap();
    eprintln!(
        "downloaded {adapter}'s wheels into {} in {:?}",
        dir.display(),
        start.elapsed()
    );
    dir
}

/// pyenv's newest CPython 3.9.
fn pyenv_python39() -> PathBuf {
    let mut found: Vec<(semver::Version, PathBuf)> =
        fs_err::read_dir(pyenv_root().join("versions"))
            .expect("pyenv's versions (pyenv install 3.9)")
            .flatten()
            .filter_map(|e| {
                let v = semver::Version::parse(&e.file_name().to_string_lossy()).ok()?;
                (v.major == 3 && v.minor == 9).then(|| (v, e.path().join("bin/python3.9")))
            })
            .collect();
    found.sort();
    found
        .pop()
        .expect("a CPython 3.9 in pyenv (pyenv install 3.9)")
        .1
}

/// pyenv's root (where CPython 3.9 is looked for).
fn pyenv_root() -> PathBuf {
    std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".pyenv"))
}

/// A fake home with a few clients, a data root, and a PATH holding only a Python 3.10–3.13
/// (no 3.9: GeochemistryPi's interpreter must be found through pyenv).
struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    data: PathBuf,
    path: PathBuf,
}

fn home() -> Home {
    let dir = unicode_tempdir();
    let root = dir.path().to_path_buf();
    let home = root.join("home de Jürgen");
    for d in [".cursor", ".codex", ".config/zed", ".config/Claude"] {
        fs_err::create_dir_all(home.join(d)).unwrap();
    }
    fs_err::write(
        home.join(".config/zed/settings.json"),
        "{\n  // Zed settings Jürgen wrote\n  \"theme\": \"One Dark\",\n}\n",
    )
    .unwrap();
    fs_err::write(
        home.join(".config/Claude/claude_desktop_config.json"),
        "{\n  \"globalShortcut\": \"Ctrl+Space\"\n}\n",
    )
    .unwrap();
    let tools = root.join("outils");
    fs_err::create_dir_all(&tools).unwrap();
    let (python, version) = real_python();
    assert!(
        !version.starts_with("3.9."),
        "the PATH Python must not be 3.9"
    );
    fs_err::os::unix::fs::symlink(&python, tools.join("python3")).unwrap();
    Home {
        data: root.join("Données scimcp"),
        path: PathBuf::from(format!("{}:/usr/bin:/bin", tools.display())),
        _dir: dir,
        root,
        home,
    }
}

impl Home {
    /// A binary of the suite with this home: the caller's environment (pip's certificates,
    /// proxies), a fake home and data root, pyenv's root, pip's cache under target/.
    fn cmd(&self, program: &str, args: &[&str]) -> Command {
        let mut cmd =
            Command::new(PathBuf::from(env!("CARGO_BIN_EXE_scimcp-setup")).with_file_name(program));
        cmd.args(args)
            .env("HOME", &self.home)
            .env("SCIMCP_HOME", &self.data)
            .env("PATH", &self.path)
            .env("PYENV_ROOT", pyenv_root())
            .env("PIP_CACHE_DIR", pip_cache())
            .env("NO_COLOR", "1")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("SCIMCP_PYTHON")
            .env_remove("VIRTUAL_ENV")
            .env_remove("PIP_FIND_LINKS")
            .current_dir(&self.home);
        cmd
    }

    fn setup(&self, args: &[&str]) -> Output {
        ok(self.cmd("scimcp-setup", args).output().unwrap())
    }

    fn doctor(&self, args: &[&str]) -> (Value, i32) {
        let out = self
            .cmd("scimcp-doctor", &[&["--json"], args].concat())
            .output()
            .unwrap();
        let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{e}\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (report, out.status.code().unwrap_or(-1))
    }

    fn state(&self) -> InstallState {
        InstallState::load(&self.data).unwrap().unwrap()
    }

    fn client_files(&self) -> Vec<PathBuf> {
        vec![
            self.home.join(".cursor/mcp.json"),
            self.home.join(".codex/config.toml"),
            self.home.join(".config/zed/settings.json"),
            self.home.join(".config/Claude/claude_desktop_config.json"),
            self.data.join("clients/mcp.json"),
        ]
    }
}

const CLIENTS: &[&str] = &[
    "--client",
    "claude-desktop",
    "--client",
    "cursor",
    "--client",
    "codex",
    "--client",
    "zed",
];

/// Run the built-in Isolation Forest analysis through the command Claude Desktop would run.
async fn analysis(h: &Home) -> Value {
    let config: Value = serde_json::from_slice(
        &fs_err::read(h.home.join(".config/Claude/claude_desktop_config.json")).unwrap(),
    )
    .unwrap();
    let entry = &config["mcpServers"]["scimcp-geochemistrypi"];
    let command = PathBuf::from(entry["command"].as_str().unwrap());
    let args: Vec<String> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let envs = vec![
        ("HOME".to_string(), h.home.display().to_string()),
        ("SCIMCP_HOME".to_string(), h.data.display().to_string()),
        ("SCIMCP_LOG".to_string(), "warn".to_string()),
    ];
    let session = McpSession::spawn(&command, &args, &envs, &h.home)
        .await
        .unwrap();
    let call = |tool: &'static str, args: Value| {
        let session = &session;
        async move {
            session
                .call(tool, args)
                .await
                .unwrap()
                .ok()
                .unwrap_or_else(|e| panic!("{tool}: {e:#}\n{}", session.stderr()))
        }
    };
    let request = json!({
        "workflow": "anomaly_isolation_forest",
        "dataset": "builtin:anomaly_detection",
        "parameters": {"n_estimators": 50, "seed": 7},
    });
    let validation = call("validate_analysis", request.clone()).await;
    assert_eq!(validation["ready"], true, "{validation:#}");
    let mut start = request;
    start["validation_id"] = validation["validation_id"].clone();
    let run = call("start_analysis", start).await;
    let run_id = run["run_id"].as_str().unwrap().to_string();
    let result = loop {
        let out = call("get_run_result", json!({"run_id": run_id, "wait_s": 60})).await;
        if out["terminal"] == true {
            break out["result"].clone();
        }
    };
    session.close().await.unwrap();
    result
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "heavy: GeochemistryPi from PyPI (about 1.4 GB) and a real analysis; run with --run-ignored only"]
async fn geochemistrypi_beside_refsci_from_install_to_uninstall() {
    let h = home();
    let clock = Instant::now();
    let mut times: Vec<(&str, std::time::Duration)> = Vec::new();
    let mut lap = |what: &'static str, since: &mut Instant| {
        times.push((what, since.elapsed()));
        *since = Instant::now();
    };
    let mut since = Instant::now();

    let (python, _) = real_python();
    let refsci_wheels = wheelhouse("refsci", &python).display().to_string();
    let geopi_wheels = wheelhouse("geochemistrypi", &pyenv_python39())
        .display()
        .to_string();
    lap("wheelhouses (downloads on a first run only)", &mut since);

    // refsci first, as an earlier install would have left it.
    h.setup(&[&["install", "--find-links", &refsci_wheels], CLIENTS].concat());
    lap("install refsci", &mut since);
    let refsci_files: Vec<Option<Vec<u8>>> = h
        .client_files()
        .iter()
        .map(|f| fs_err::read(f).ok())
        .collect();
    let refsci_entry = |file: &Path| -> Value {
        let text = fs_err::read_to_string(file).unwrap();
        serde_json::from_str::<Value>(&text)
            .map_or(Value::Null, |v| v["mcpServers"]["scimcp-refsci"].clone())
    };
    let cursor_refsci = refsci_entry(&h.home.join(".cursor/mcp.json"));

    // GeochemistryPi: CPython 3.9 found through pyenv, a runtime from wheels only, one more
    // entry in every client beside refsci's.
    let out = h.setup(
        &[
            &[
                "install",
                "--adapter",
                "geochemistrypi",
                "--find-links",
                &geopi_wheels,
            ],
            CLIENTS,
        ]
        .concat(),
    );
    lap("install geochemistrypi", &mut since);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("Python 3.9."), "{said}");
    let state = h.state();
    let runtime = &state.runtimes["geochemistrypi"];
    let base = runtime.base.as_ref().unwrap();
    assert_eq!(base.found_by, "pyenv", "{base:?}");
    assert!(base.version.starts_with("3.9."), "{base:?}");
    assert_eq!(runtime.versions["geochemistrypi"].as_deref(), Some("0.8.2"));
    assert_eq!(
        state.adapters["geochemistrypi"].packages.find_links,
        vec![PathBuf::from(&geopi_wheels)]
    );
    assert_eq!(state.adapters.len(), 2);
    for file in h.client_files() {
        let text = fs_err::read_to_string(&file).unwrap();
        assert!(
            text.contains("scimcp-geochemistrypi") && text.contains("scimcp-refsci"),
            "{}:\n{text}",
            file.display()
        );
    }
    assert_eq!(
        refsci_entry(&h.home.join(".cursor/mcp.json")),
        cursor_refsci
    );
    assert!(
        fs_err::read_to_string(h.home.join(".config/zed/settings.json"))
            .unwrap()
            .contains("// Zed settings Jürgen wrote")
    );

    // The registered command runs a GeochemistryPi analysis through MCP.
    let result = analysis(&h).await;
    lap("Isolation Forest through MCP", &mut since);
    assert_eq!(result["state"], "succeeded", "{result:#}");
    assert!(
        result["artifacts"]["total"].as_u64().unwrap() > 5,
        "{result:#}"
    );

    // The doctor: all ok for both adapters.
    let (report, code) = h.doctor(&[]);
    lap("doctor (both adapters)", &mut since);
    assert_healthy(&report, code, &h.data);
    assert_eq!(report["adapters"], json!(["geochemistrypi", "refsci"]));
    let import = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "runtime.import" && c["adapter"] == "geochemistrypi")
        .unwrap()
        .clone();
    eprintln!("geochemistrypi runtime.import: {}", import["finding"]);

    // A package file of the GeochemistryPi runtime deleted: found, and --fix repairs it.
    let site = scimcp_installer::site_packages(&runtime.dir).unwrap();
    let victim = site.join("geochemistrypi/data_mining/data/dataset/Data_Regression.xlsx");
    assert!(victim.is_file(), "{}", victim.display());
    fs_err::remove_file(&victim).unwrap();
    let (report, code) = h.doctor(&["--fast", "--adapter", "geochemistrypi"]);
    assert_eq!(code, 2);
    let bad = verdict(&report, &h.data).problems;
    assert!(
        bad.iter().any(|b| b.contains("runtime.packages")
            && b.contains("geochemistrypi: geochemistrypi/data_mining/data/dataset/Data_Regression.xlsx (missing)")),
        "{bad:#?}"
    );
    since = Instant::now();
    let (report, code) = h.doctor(&["--fix"]);
    lap("doctor --fix (rebuilds the runtime)", &mut since);
    assert_healthy(&report, code, &h.data);
    assert!(victim.is_file());

    // Uninstall GeochemistryPi: refsci keeps working, its client files are byte-identical.
    h.setup(&["uninstall", "--adapter", "geochemistrypi"]);
    let now: Vec<Option<Vec<u8>>> = h
        .client_files()
        .iter()
        .map(|f| fs_err::read(f).ok())
        .collect();
    for ((file, before), after) in h.client_files().iter().zip(&refsci_files).zip(&now) {
        assert_eq!(before, after, "{} changed", file.display());
    }
    let (report, code) = h.doctor(&[]);
    assert_healthy(&report, code, &h.data);
    assert_eq!(report["adapters"], json!(["refsci"]));
    lap("uninstall geochemistrypi, doctor refsci", &mut since);
    for (what, took) in &times {
        eprintln!("{what:<40} {took:.1?}");
    }
    eprintln!("{:<40} {:.1?}", "total", clock.elapsed());
}

#[test]
#[ignore = "network: PyPI; run with --run-ignored only"]
fn pypi_a_requirement_with_only_a_source_distribution_is_named_and_nothing_changes() {
    let h = home();
    // What is there already: refsci registered (no runtime needed for this test).
    h.setup(&[&["install", "--skip-runtime"], CLIENTS].concat());
    let (_, version) = real_python();
    // docopt 0.6.2 is published as a source distribution only.
    let adapter = write_adapter(
        &h.root.join("sans roue"),
        &Demo {
            name: "sdistonly",
            python: &range_of(&version),
            requirements: &["docopt==0.6.2"],
            package: "docopt",
            binary_only: true,
            import_check: &["docopt"],
        },
    );
    let tree = |h: &Home| {
        [&h.home, &h.data]
            .iter()
            .map(|d| {
                fingerprint(d)
                    .into_iter()
                    .filter(|(k, _)| !k.starts_with(".tmp"))
                    .collect::<std::collections::BTreeMap<_, _>>()
            })
            .collect::<Vec<_>>()
    };
    let before = tree(&h);
    let out = h
        .cmd(
            "scimcp-setup",
            &["install", "--adapter", &adapter.display().to_string()],
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "docopt==0.6.2 cannot be installed for sdistonly: there is no wheel of it for CPython"
        ),
        "{err}"
    );
    assert!(
        err.contains("on PyPI") && err.contains("installs from wheels only"),
        "{err}"
    );
    assert_eq!(tree(&h), before);
}

#[test]
#[ignore = "network: PyPI; run with --run-ignored only"]
fn pypi_a_wheelhouse_downloaded_once_installs_with_no_index_reachable() {
    let h = home();
    let (python, version) = real_python();
    let wheels = h.root.join("roues téléchargées");
    // Prepare the wheelhouse while PyPI is reachable.
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--only-binary",
            ":all:",
            "--dest",
        ])
        .arg(&wheels)
        .args(["six==1.16.0", "packaging==24.1"])
        .env("PIP_CACHE_DIR", pip_cache())
        .status()
        .unwrap();
    assert!(status.success());
    let adapter = write_adapter(
        &h.root.join("hors ligne"),
        &Demo {
            name: "offline",
            python: &range_of(&version),
            requirements: &["six==1.16.0", "packaging==24.1"],
            package: "six",
            binary_only: true,
            import_check: &["six", "packaging"],
        },
    );
    // Now no index answers.
    let mut cmd = h.cmd(
        "scimcp-setup",
        &[
            &[
                "install",
                "--adapter",
                &adapter.display().to_string(),
                "--find-links",
                &wheels.display().to_string(),
                "--no-index",
            ],
            CLIENTS,
        ]
        .concat(),
    );
    cmd.env("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
        .env("PIP_NO_CACHE_DIR", "1");
    ok(cmd.output().unwrap());
    let state = h.state();
    assert_eq!(
        state.runtimes["offline"].versions["packaging"].as_deref(),
        Some("24.1")
    );
    let (report, code) = h.doctor(&["--adapter", "offline"]);
    assert_healthy(&report, code, &h.data);
}
