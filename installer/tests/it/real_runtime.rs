//! End to end, for real: install from the built binaries into a home under
//! `Jürgen Müller/Données …`, provision the refsci runtime with venv + pip, then start the
//! registered command exactly as a client would and ask it `get_environment`. The package
//! identity the server reports must be the one the installer recorded.
//!
//! Needs the workspace binaries (`cargo build --workspace --bins`, which scripts/test.sh
//! runs) and a Python 3.10–3.13 (the dev `.venv`'s, or `python3`); pip fetches the pins from
//! its cache or the index.

// The figures (where the kills landed, how long installs took) are the evidence this test
// exists for: print them.
#![allow(clippy::print_stderr)]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{bytes, ok, repo_root, unicode_tempdir};
use scimcp_client::McpSession;

fn base_python() -> PathBuf {
    let venv = repo_root().join(".venv/bin/python");
    if venv.is_file() {
        return venv;
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("python3"))
        .find(|p| p.is_file())
        .expect("a python3 on PATH")
}

/// `scimcp-setup` with the caller's environment (pip's index and cache settings), but a
/// fake home, data root and client search path.
fn setup(home: &Path, data: &Path, args: &[&str]) -> std::process::Output {
    let real_cache = std::env::var_os("PIP_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/pip")
        });
    std::process::Command::new(env!("CARGO_BIN_EXE_scimcp-setup"))
        .args(args)
        .env("HOME", home)
        .env("SCIMCP_HOME", data)
        .env("PIP_CACHE_DIR", real_cache)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SCIMCP_PYTHON")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn provisioned_runtime_serves_get_environment_through_the_registered_command() {
    let binaries = PathBuf::from(env!("CARGO_BIN_EXE_scimcp-setup"));
    assert!(
        binaries.with_file_name("scimcp").is_file(),
        "build the workspace binaries first: cargo build --workspace --bins"
    );
    let dir = unicode_tempdir();
    let home = dir.path().join("home");
    let data = dir.path().join("Données scimcp");
    fs_err::create_dir_all(&home).unwrap();
    let python = base_python();
    let py = python.display().to_string();

    let start = Instant::now();
    ok(setup(
        &home,
        &data,
        &["install", "--client", "generic", "--python", &py],
    ));
    let first = start.elapsed();
    // Each phase says when it ended, so a run killed for its time shows how far it got.
    eprintln!("first install {first:?}");

    let state = scimcp_core::install_state::InstallState::load(&data)
        .unwrap()
        .unwrap();
    // The developer path (no --from) needs no override: it is recorded as a local build.
    let active = state.active.as_deref().unwrap();
    let signature = state.versions[active].signature.as_ref().unwrap();
    assert_eq!(
        signature.status,
        scimcp_core::install_state::SignatureStatus::LocalBuild,
        "{signature:?}"
    );
    let runtime = &state.runtimes["refsci"];
    assert!(
        runtime.interpreter.starts_with(data.join("runtimes")),
        "{runtime:?}"
    );
    assert_eq!(runtime.provisioner, "venv+pip");
    let interpreter = scimcp_core::install_state::recorded_interpreter(&data, "refsci")
        .unwrap()
        .unwrap();
    assert_eq!(interpreter, runtime.interpreter);
    let recorded = runtime.package.as_ref().unwrap().sha256.clone().unwrap();

    // The registered entry, read back from the generic client file.
    let generic: serde_json::Value =
        serde_json::from_slice(&bytes(&data.join("clients/mcp.json")).unwrap()).unwrap();
    let entry = &generic["mcpServers"]["scimcp-refsci"];
    let command = PathBuf::from(entry["command"].as_str().unwrap());
    assert_eq!(command, data.join("current/bin/scimcp"));
    let args: Vec<String> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    // The registered command names no interpreter: the server finds the provisioned
    // runtime in state.json, exactly as a client launching it would.
    assert!(
        std::env::var_os("SCIMCP_PYTHON").is_none(),
        "the test must not leak SCIMCP_PYTHON"
    );
    let envs = vec![
        ("SCIMCP_HOME".to_string(), data.display().to_string()),
        ("SCIMCP_LOG".to_string(), "warn".to_string()),
    ];
    let cwd = dir.path().join("Mon projet");
    fs_err::create_dir_all(&cwd).unwrap();
    let session = McpSession::spawn(&command, &args, &envs, &cwd)
        .await
        .unwrap();
    let asked = Instant::now();
    let env = tokio::time::timeout(
        Duration::from_secs(120),
        session.call("get_environment", serde_json::json!({})),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "get_environment gave no answer in 120 s; the server's stderr:\n{}",
            session.stderr()
        )
    })
    .unwrap()
    .ok()
    .unwrap_or_else(|e| panic!("{e:#}\n{}", session.stderr()));
    eprintln!("get_environment answered in {:?}", asked.elapsed());
    assert_eq!(env["requirements_satisfied"], true, "{env:#}");
    assert_eq!(
        env["probe"]["package"]["sha256"],
        recorded.as_str(),
        "{env:#}"
    );
    assert_eq!(
        env["probe"]["executable"],
        interpreter.display().to_string()
    );
    session.close().await.unwrap();

    // A second install reuses the runtime and changes no byte.
    let before = (
        bytes(&data.join("clients/mcp.json")),
        bytes(&data.join("state.json")),
    );
    let start = Instant::now();
    ok(setup(
        &home,
        &data,
        &["install", "--client", "generic", "--python", &py],
    ));
    let second = start.elapsed();
    assert_eq!(
        before,
        (
            bytes(&data.join("clients/mcp.json")),
            bytes(&data.join("state.json"))
        )
    );
    eprintln!("repeat install {second:?}");

    ok(setup(&home, &data, &["uninstall"]));
    assert!(!data.join("runtimes").exists());
}
