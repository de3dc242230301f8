//! The installer's first install and no-op re-run, and the doctor with and without its two
//! slow checks (`runtime.import`, `server.handshake`), each in a fake home.
//!
//! Client registration is timed in homes where every client's file already holds a comment
//! and another server (under a path with spaces and non-ASCII letters), for all 21 client
//! targets, from a small bundle (no runtime): what `bench/installer.sh` used to time. Then
//! one real install provisions the refsci runtime (python -m venv and pip, from pip's
//! cache), and its no-op re-run and the doctor are timed against it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use anyhow::{Context as _, ensure};
use serde::Serialize;

use crate::fixture::Fixture;
use crate::stats::{Summary, ms};

/// Installer timings.
#[derive(Debug, Serialize)]
pub struct Installer {
    pub clients: usize,
    pub rounds: usize,
    /// Registration in every client, from a small bundle, no runtime.
    pub first_install_ms: Summary,
    /// The same command again: nothing to do, nothing written.
    pub noop_rerun_ms: Summary,
    /// One install that provisions the refsci runtime (venv + pip from pip's cache).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_install_with_runtime_ms: Option<f64>,
    /// Its re-run: the runtime is found by its requirements hash and reused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noop_rerun_with_runtime_ms: Option<Summary>,
    /// What the re-run starts before it reuses the runtime, each timed alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rerun_steps: Vec<(String, Summary)>,
}

/// Doctor timings against the installation with a runtime.
#[derive(Debug, Serialize)]
pub struct Doctor {
    pub rounds: usize,
    /// Every check, including the import of the runtime's modules and the MCP handshake.
    pub full_ms: Summary,
    /// `--fast`: without `runtime.import` and `server.handshake`.
    pub fast_ms: Summary,
    pub full_status: String,
}

fn seed(home: &Path) -> anyhow::Result<()> {
    let json = "{\n  // mine\n  \"mcpServers\": { \"other\": { \"command\": \"x\" } }\n}\n";
    for f in [
        ".cursor/mcp.json",
        ".gemini/settings.json",
        ".codeium/windsurf/mcp_config.json",
        ".lmstudio/mcp.json",
        ".kiro/settings/mcp.json",
        ".aws/amazonq/mcp.json",
        ".config/Claude/claude_desktop_config.json",
        ".claude.json",
        ".cline/data/settings/cline_mcp_settings.json",
    ] {
        let path = home.join(f);
        fs_err::create_dir_all(path.parent().context("no parent")?)?;
        fs_err::write(path, json)?;
    }
    for (f, text) in [
        (
            ".config/Code/User/mcp.json",
            "{\n  // mine\n  \"servers\": { \"other\": { \"command\": \"x\" } }\n}\n",
        ),
        (
            ".config/zed/settings.json",
            "{\n  // mine\n  \"context_servers\": { \"other\": { \"command\": \"x\" } }\n}\n",
        ),
        (
            ".codex/config.toml",
            "# mine\n[mcp_servers.other]\ncommand = \"x\"\n",
        ),
        (
            ".config/goose/config.yaml",
            "# mine\nextensions:\n  other:\n    cmd: x\n",
        ),
    ] {
        let path = home.join(f);
        fs_err::create_dir_all(path.parent().context("no parent")?)?;
        fs_err::write(path, text)?;
    }
    fs_err::create_dir_all(home.join(".continue"))?;
    fs_err::create_dir_all(home.join("projet"))?;
    Ok(())
}

/// `scimcp-setup ARGS` with a fake home and data root; the wall time.
fn setup(fx: &Fixture, home: &Path, data: &Path, args: &[String]) -> anyhow::Result<(f64, Output)> {
    let mut cmd = Command::new(fx.exe("scimcp-setup"));
    cmd.args(args)
        .env("HOME", home)
        .env("SCIMCP_HOME", data)
        .env("PATH", "/usr/bin:/bin")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME");
    if let Some(cache) = pip_cache() {
        cmd.env("PIP_CACHE_DIR", cache);
    }
    let t0 = Instant::now();
    let out = cmd.output()?;
    let t = ms(t0.elapsed());
    ensure!(
        out.status.success(),
        "scimcp-setup {} failed:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((t, out))
}

/// pip's cache of the real home (dev-env.sh filled it with the same pinned wheels).
fn pip_cache() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PIP_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")?;
    let dir = Path::new(&home).join(".cache/pip");
    dir.is_dir().then_some(dir)
}

/// Client registration from a small bundle, `rounds` fresh homes.
pub fn installer(fx: &Fixture, rounds: usize, with_runtime: bool) -> anyhow::Result<Installer> {
    let work = fx.dir("installer Jürgen Müller")?;
    let bundle = work.join("scimcp-0.1.0");
    fs_err::create_dir_all(bundle.join("bin"))?;
    fs_err::create_dir_all(bundle.join("adapters"))?;
    fs_err::create_dir_all(bundle.join("refsci"))?;
    fs_err::write(bundle.join("bin/scimcp"), "#!/bin/sh\necho scimcp\n")?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(
            bundle.join("bin/scimcp"),
            std::fs::Permissions::from_mode(0o755),
        )?;
    }
    // The manifest and the files it names (its parameter schemas under adapters/refsci/).
    fs_err::copy(
        fx.repo.join("adapters/refsci.toml"),
        bundle.join("adapters/refsci.toml"),
    )?;
    crate::copy_tree(
        &fx.repo.join("adapters/refsci"),
        &bundle.join("adapters/refsci"),
    )?;
    let listed = Command::new(fx.exe("scimcp-setup"))
        .args(["clients", "--json"])
        .env("HOME", &work)
        .output()?;
    let clients: serde_json::Value = serde_json::from_slice(&listed.stdout)?;
    let ids: Vec<String> = clients["clients"]
        .as_array()
        .context("no clients")?
        .iter()
        .filter_map(|c| c["id"].as_str().map(String::from))
        .collect();
    let (mut first, mut again) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        eprint!("\r  installer {}/{rounds}", round + 1);
        let home = work.join(format!("home {round}"));
        let data = work.join(format!("Données {round}"));
        seed(&home)?;
        let mut args = vec![
            "--project".to_string(),
            home.join("projet").display().to_string(),
        ];
        for id in &ids {
            args.extend(["--client".to_string(), id.clone()]);
        }
        args.extend([
            "install".into(),
            "--skip-runtime".into(),
            "--allow-unsigned".into(),
            "--from".into(),
            bundle.display().to_string(),
        ]);
        first.push(setup(fx, &home, &data, &args)?.0);
        again.push(setup(fx, &home, &data, &args)?.0);
    }
    eprintln!();
    let mut out = Installer {
        clients: ids.len(),
        rounds,
        first_install_ms: Summary::of(&first),
        noop_rerun_ms: Summary::of(&again),
        first_install_with_runtime_ms: None,
        noop_rerun_with_runtime_ms: None,
        rerun_steps: Vec::new(),
    };
    if with_runtime {
        let (home, data) = runtime_home(fx)?;
        let args = runtime_args(fx)?;
        eprintln!("  installer: first install with the runtime (python -m venv + pip)…");
        out.first_install_with_runtime_ms = Some(setup(fx, &home, &data, &args)?.0);
        let mut v = Vec::new();
        for _ in 0..rounds.min(5) {
            v.push(setup(fx, &home, &data, &args)?.0);
        }
        out.noop_rerun_with_runtime_ms = Some(Summary::of(&v));
        out.rerun_steps = rerun_steps(fx, &data, rounds)?;
    }
    Ok(out)
}

/// The Python processes a re-run may start (the base interpreter's query, the runtime's
/// probe of its pins and package, its import check, which a no-op `install` skips while the
/// runtime's import stamp holds and `repair` always runs), each timed alone.
fn rerun_steps(fx: &Fixture, data: &Path, rounds: usize) -> anyhow::Result<Vec<(String, Summary)>> {
    let runtime = fs_err::read_dir(data.join("runtimes"))?
        .flatten()
        .map(|e| e.path().join("bin/python"))
        .find(|p| p.is_file())
        .context("no provisioned runtime")?;
    let adapter = scimcp_core::manifest::resolve("refsci").map_err(|e| anyhow::anyhow!("{e}"))?;
    let rt = &adapter.manifest.runtime;
    let base = fs_err::canonicalize(&fx.dev_python)?;
    let probe_args: Vec<String> = [
        "-I".to_string(),
        "-c".into(),
        scimcp_core::runtime_probe::RUNTIME_PROBE_SCRIPT.into(),
        rt.package.clone().unwrap_or_default(),
    ]
    .into_iter()
    .chain(scimcp_core::runtime_probe::requirement_names(
        &rt.requirements,
    ))
    .collect();
    let imports = format!("import {}", rt.import_check.join(", "));
    let steps: Vec<(&str, &Path, Vec<String>)> = vec![
        (
            "base interpreter: version query",
            &base,
            vec![
                "-I".into(),
                "-c".into(),
                "import sys; print(sys.version)".into(),
            ],
        ),
        (
            "runtime: probe of the pins and the package",
            &runtime,
            probe_args,
        ),
        (
            "runtime: import check (sklearn, pandas, refsci; a re-run skips it while the import stamp holds, repair always runs it)",
            &runtime,
            vec!["-I".into(), "-c".into(), imports],
        ),
    ];
    let mut out = Vec::new();
    for (name, program, args) in steps {
        let mut v = Vec::new();
        for _ in 0..rounds.clamp(1, 5) {
            let t0 = Instant::now();
            let status = Command::new(program).args(&args).output()?;
            v.push(ms(t0.elapsed()));
            ensure!(status.status.success(), "{name} failed");
        }
        out.push((name.to_string(), Summary::of(&v)));
    }
    Ok(out)
}

fn runtime_home(fx: &Fixture) -> anyhow::Result<(PathBuf, PathBuf)> {
    let base = fx.work.join("installed");
    Ok((base.join("home"), base.join("data")))
}

/// `install` from the running (release) binaries, with the runtime built from the base
/// interpreter of the development virtualenv, registered in the generic client only.
fn runtime_args(fx: &Fixture) -> anyhow::Result<Vec<String>> {
    let base_python = fs_err::canonicalize(&fx.dev_python)?;
    Ok(vec![
        "--client".into(),
        "generic".into(),
        "install".into(),
        "--python".into(),
        base_python.display().to_string(),
    ])
}

/// The doctor against the installation with the runtime, `rounds` times each way.
pub fn doctor(fx: &Fixture, rounds: usize) -> anyhow::Result<Doctor> {
    let (home, data) = runtime_home(fx)?;
    ensure!(
        data.join("state.json").is_file(),
        "the doctor needs the installation with a runtime (the installer step)"
    );
    let run = |fast: bool| -> anyhow::Result<(f64, String)> {
        let mut cmd = Command::new(fx.exe("scimcp-doctor"));
        cmd.arg("--json")
            .env("HOME", &home)
            .env("SCIMCP_HOME", &data)
            .env("PATH", "/usr/bin:/bin")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME");
        if fast {
            cmd.arg("--fast");
        }
        let t0 = Instant::now();
        let out = cmd.output()?;
        let t = ms(t0.elapsed());
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .with_context(|| format!("doctor: {}", String::from_utf8_lossy(&out.stderr)))?;
        Ok((t, report["status"].as_str().unwrap_or_default().to_string()))
    };
    run(false)?;
    let (mut full, mut fast, mut status) = (Vec::new(), Vec::new(), String::new());
    for round in 0..rounds {
        eprint!("\r  doctor {}/{rounds}", round + 1);
        let (t, s) = run(false)?;
        full.push(t);
        status = s;
        fast.push(run(true)?.0);
    }
    eprintln!();
    Ok(Doctor {
        rounds,
        full_ms: Summary::of(&full),
        fast_ms: Summary::of(&fast),
        full_status: status,
    })
}
