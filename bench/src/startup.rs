//! Cold start: spawning the server → `initialize` answered → `tools/list` answered, and
//! the idle resident set size after that; scimcp and the Python SDK peer interleaved.
//! Then where scimcp's start-up time goes, phase by phase, each timed in a fresh process.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, ensure};
use serde::Serialize;
use serde_json::{Value, json};

use crate::fixture::Fixture;
use crate::rpc::{ServerSpec, StdioClient, initialize_params, rss_mib};
use crate::stats::{Summary, ms};

/// The start-up phase that reads the runs directory (recovery).
const CONTEXT_OPEN: &str = "context open: data directories, run recovery";

/// How long a server idles after `tools/list` before its RSS is read: past the run index's
/// background load (it starts 50 ms after opening and takes about 250 ms with 100,000 runs
/// here), so a long history's RSS is read with its index in memory.
const IDLE: Duration = Duration::from_millis(600);

/// One cold start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    pub initialize_ms: f64,
    pub tools_list_ms: f64,
    pub rss_mib: f64,
    peak_rss_mib: f64,
    anon_mib: f64,
    file_mib: f64,
}

/// One server's cold starts, summarized.
#[derive(Debug, Serialize)]
pub struct ColdStart {
    pub server: String,
    pub initialize_ms: Summary,
    pub tools_list_ms: Summary,
    pub idle_rss_mib: Summary,
    pub peak_rss_mib: Summary,
    /// The idle RSS split: private memory, and pages mapped from the executable's and
    /// libraries' files.
    pub idle_anon_mib: Summary,
    pub idle_file_mib: Summary,
}

/// Everything this module measures.
#[derive(Debug, Serialize)]
pub struct Startup {
    pub rounds: usize,
    /// Empty runs history: scimcp and the peer, interleaved.
    pub scimcp: ColdStart,
    pub peer: ColdStart,
    /// scimcp again, with 2,000 runs in its history (start-up recovery reads them).
    pub scimcp_with_history: ColdStart,
    /// `scimcp --version`: executing the binary, no server.
    pub exec_version_ms: Summary,
    /// In-process phases, each the median over fresh processes (milliseconds).
    pub phases: Vec<Phase>,
    pub tools_list_bytes: usize,
}

/// One start-up phase.
#[derive(Debug, Serialize)]
pub struct Phase {
    pub phase: String,
    pub ms: Summary,
}

pub(crate) fn cold_start(spec: &ServerSpec, tool_count: usize) -> anyhow::Result<Sample> {
    let t0 = Instant::now();
    let mut client = StdioClient::spawn(spec)?;
    // Each clock stops when the answer's line has arrived, before it is parsed.
    let (_, initialized) = client.request_received("initialize", initialize_params())?;
    let initialized = initialized - t0;
    client.notify("notifications/initialized")?;
    let (tools, listed) = client.request_received("tools/list", json!({}))?;
    let listed = listed - t0;
    ensure!(
        tools["tools"].as_array().map(Vec::len) == Some(tool_count),
        "{}: tools/list did not list scimcp's {tool_count} tools",
        spec.label
    );
    std::thread::sleep(IDLE);
    let rss = rss_mib(client.child.id()).context("cannot read the server's RSS")?;
    client.close(Duration::from_secs(10))?;
    Ok(Sample {
        initialize_ms: ms(initialized),
        tools_list_ms: ms(listed),
        rss_mib: rss.rss,
        peak_rss_mib: rss.peak,
        anon_mib: rss.anon,
        file_mib: rss.file,
    })
}

fn summarize(server: &str, samples: &[Sample]) -> ColdStart {
    let pick = |f: fn(&Sample) -> f64| Summary::of(&samples.iter().map(f).collect::<Vec<_>>());
    ColdStart {
        server: server.to_string(),
        initialize_ms: pick(|s| s.initialize_ms),
        tools_list_ms: pick(|s| s.tools_list_ms),
        idle_rss_mib: pick(|s| s.rss_mib),
        peak_rss_mib: pick(|s| s.peak_rss_mib),
        idle_anon_mib: pick(|s| s.anon_mib),
        idle_file_mib: pick(|s| s.file_mib),
    }
}

/// Measure `rounds` cold starts of each server, alternating which goes first.
pub fn run(fx: &Fixture, rounds: usize, history_home: &Path) -> anyhow::Result<Startup> {
    let home = fx.dir("home-startup")?;
    let cwd = fx.start_dir("start-startup")?;
    let scimcp = fx.scimcp("refsci", &home, &cwd, &[]);
    let scimcp_history = fx.scimcp("refsci", history_home, &cwd, &[]);
    let peer = fx.peer(&home, &cwd, &[]);
    // Warm-up: page cache, Python bytecode, the data directory's first creation.
    cold_start(&scimcp, fx.tool_count)?;
    cold_start(&scimcp_history, fx.tool_count)?;
    cold_start(&peer, fx.tool_count)?;
    let (mut ours, mut theirs, mut with_history) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        eprint!("\r  cold start {}/{rounds}", round + 1);
        if round % 2 == 0 {
            ours.push(cold_start(&scimcp, fx.tool_count)?);
            theirs.push(cold_start(&peer, fx.tool_count)?);
        } else {
            theirs.push(cold_start(&peer, fx.tool_count)?);
            ours.push(cold_start(&scimcp, fx.tool_count)?);
        }
        with_history.push(cold_start(&scimcp_history, fx.tool_count)?);
    }
    eprintln!();
    let mut version = Vec::new();
    for _ in 0..rounds {
        let t0 = Instant::now();
        let status = Command::new(fx.exe("scimcp")).arg("--version").output()?;
        version.push(t0.elapsed());
        ensure!(status.status.success(), "scimcp --version failed");
    }
    let tools_list_bytes = serde_json::to_vec(&scimcp_server::tool_catalog())?.len();
    Ok(Startup {
        rounds,
        scimcp: summarize("scimcp", &ours),
        peer: summarize("python-sdk", &theirs),
        scimcp_with_history: summarize("scimcp, 2,000 runs in history", &with_history),
        exec_version_ms: Summary::ms(&version),
        phases: phases(fx, rounds.min(15), &home, history_home)?,
        tools_list_bytes,
    })
}

/// Run `scimcp-bench startup-phases` in fresh processes and take the medians.
fn phases(fx: &Fixture, rounds: usize, home: &Path, history: &Path) -> anyhow::Result<Vec<Phase>> {
    let mut all: Vec<(String, Vec<f64>)> = Vec::new();
    for (label, h) in [("", home), (" (2,000 runs)", history)] {
        for _ in 0..rounds {
            let out = Command::new(fx.exe("scimcp-bench"))
                .args(["startup-phases", "--python"])
                .arg(&fx.dev_python)
                .env("SCIMCP_HOME", h)
                .current_dir(fx.work.join("start-startup"))
                .output()?;
            ensure!(
                out.status.success(),
                "startup-phases failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let timings: Vec<(String, f64)> = serde_json::from_slice(&out.stdout)?;
            for (phase, t) in timings {
                // Only the phase that reads the runs directory differs between the homes.
                if !label.is_empty() && phase != CONTEXT_OPEN {
                    continue;
                }
                let name = format!("{phase}{label}");
                match all.iter_mut().find(|(p, _)| *p == name) {
                    Some((_, v)) => v.push(t),
                    None => all.push((name, vec![t])),
                }
            }
        }
    }
    Ok(all
        .into_iter()
        .map(|(phase, v)| Phase {
            phase,
            ms: Summary::of(&v),
        })
        .collect())
}

/// The hidden `startup-phases` command: time `scimcp serve`'s start-up steps once each,
/// in this fresh process, in the order the server takes them; print JSON on stdout.
pub fn phases_in_this_process(python: &Path) -> anyhow::Result<Value> {
    let mut out: Vec<(String, f64)> = Vec::new();
    let mut time = |name: &str, t0: Instant| out.push((name.to_string(), ms(t0.elapsed())));
    let t0 = Instant::now();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    time("async runtime", t0);
    let t0 = Instant::now();
    let settings = scimcp_server::ServerSettings::resolve(
        "refsci",
        Some(python.to_path_buf()),
        Vec::new(),
        &[],
    )?;
    time("settings: adapter manifest load and check (first)", t0);
    let t0 = Instant::now();
    let adapter = scimcp_core::manifest::resolve("refsci").map_err(|e| anyhow::anyhow!("{e}"))?;
    time("adapter manifest load and check (again)", t0);
    let t0 = Instant::now();
    for wf in &adapter.manifest.workflows {
        jsonschema::validator_for(&wf.parameters_schema)
            .map_err(|e| anyhow::anyhow!("{}: {e}", wf.id))?;
    }
    time(
        "parameter validators compile (not at start: on each workflow's first request)",
        t0,
    );
    let t0 = Instant::now();
    let context = runtime.block_on(scimcp_server::ServerContext::open(settings))?;
    time(CONTEXT_OPEN, t0);
    drop(context);
    let t0 = Instant::now();
    let catalog = serde_json::to_vec(&scimcp_server::tool_catalog())?;
    time("tools/list: tool catalog built and serialized (first)", t0);
    let t0 = Instant::now();
    let again = serde_json::to_vec(&scimcp_server::tool_catalog())?;
    time(
        "tools/list: cached catalog serialized (every later call)",
        t0,
    );
    ensure!(catalog == again, "the catalog is not deterministic");
    Ok(serde_json::to_value(out)?)
}
