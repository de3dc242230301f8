//! The wrapper's own cost per run, with one long-lived server: the same analysis through
//! MCP (`validate_analysis` → `start_analysis` → `get_run_result`) and as its command line
//! run directly, interleaved; where the difference goes, from the run's own timestamps and
//! from the server's steps re-timed in-process on the same files; and whether a run with a
//! 256 MiB dataset stalls other tool calls.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, ensure};
use scimcp_core::manifest::ArtifactSpec;
use serde::Serialize;
use serde_json::{Value, json};

use crate::calls::ping_floor;
use crate::fixture::{Fixture, write_large_csv};
use crate::rpc::{ServerSpec, StdioClient};
use crate::stats::{Summary, ms};

/// The analysis the overhead is expressed against (the "2-second analysis").
pub const REFERENCE_ANALYSIS_MS: f64 = 2000.0;

/// One CLI's runs through MCP and directly.
#[derive(Debug, Serialize)]
pub struct RunCost {
    pub cli: String,
    pub history: usize,
    pub runs: usize,
    pub direct_ms: Summary,
    pub mcp_ms: Summary,
    /// MCP minus direct, paired run by run.
    pub overhead_ms: Summary,
    /// Median overhead as a share of a 2-second analysis, in percent.
    pub overhead_pct_of_2s: f64,
    /// Median MCP / median direct.
    pub ratio: f64,
    /// The MCP path from the client's clock and the run's recorded timestamps.
    pub timeline: Vec<Step>,
    /// The server's own steps, re-timed in-process on this run's files.
    pub phases: Vec<Step>,
}

/// One step and its time.
#[derive(Debug, Serialize)]
pub struct Step {
    pub step: String,
    pub ms: Summary,
    /// Times per run (phases only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_run: Option<f64>,
}

fn step(name: &str, v: &[f64]) -> Step {
    Step {
        step: name.into(),
        ms: Summary::of(v),
        per_run: None,
    }
}

/// One MCP run: client-side marks and the run's recorded timestamps (ms after t0).
struct McpRun {
    total: f64,
    validate: f64,
    start: f64,
    created: f64,
    started: f64,
    ended: f64,
    run_dir: PathBuf,
    plan: Value,
}

fn at_ms(status: &Value, field: &str, t0: SystemTime) -> anyhow::Result<f64> {
    let ts: jiff::Timestamp = status[field]
        .as_str()
        .with_context(|| format!("status.json has no {field}"))?
        .parse()?;
    let t0 = jiff::Timestamp::try_from(t0)?;
    Ok(ts.duration_since(t0).as_secs_f64() * 1000.0)
}

fn mcp_run(client: &mut StdioClient, args: &Value, runs_dir: &Path) -> anyhow::Result<McpRun> {
    let (w0, t0) = (SystemTime::now(), Instant::now());
    let v = client.call("validate_analysis", args.clone())?;
    let t1 = t0.elapsed();
    let mut start = args.clone();
    start["validation_id"] = v["validation_id"].clone();
    let s = client.call("start_analysis", start)?;
    let t2 = t0.elapsed();
    let run_id = s["run_id"].as_str().context("no run_id")?.to_string();
    let r = client.call("get_run_result", json!({"run_id": run_id, "wait_s": 300}))?;
    let t3 = t0.elapsed();
    ensure!(
        r["state"] == "succeeded",
        "run {run_id} did not succeed: {r}"
    );
    let run_dir = runs_dir.join(&run_id);
    let status: Value = serde_json::from_slice(&fs_err::read(run_dir.join("status.json"))?)?;
    Ok(McpRun {
        total: ms(t3),
        validate: ms(t1),
        start: ms(t2 - t1),
        created: at_ms(&status, "created_at", w0)?,
        started: at_ms(&status, "started_at", w0)?,
        ended: at_ms(&status, "ended_at", w0)?,
        run_dir,
        plan: v["plan"].clone(),
    })
}

/// The plan's command line, run directly in `dir` (which holds `inputs/<dataset>`), with
/// the plan's environment and its own process group, as the server would; output discarded.
fn direct_run(plan: &Value, dir: &Path) -> anyhow::Result<f64> {
    let program = PathBuf::from(plan["program"].as_str().context("no program")?);
    let args: Vec<String> = serde_json::from_value(plan["args"].clone())?;
    let env: BTreeMap<String, String> = serde_json::from_value(plan["env"].clone())?;
    let mut cmd = scimcp_server::isolated_std_command(&program, &args, dir, &env);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let t0 = Instant::now();
    let status = cmd.spawn()?.wait()?;
    let t = ms(t0.elapsed());
    ensure!(status.success(), "the direct run failed: {status}");
    Ok(t)
}

/// A fresh directory for one direct run, holding the dataset where the plan expects it.
fn direct_dir(base: &Path, i: usize, plan: &Value, dataset: &Path) -> anyhow::Result<PathBuf> {
    let dir = base.join(format!("direct-{i}"));
    let rel = plan["dataset"]["run_path"]
        .as_str()
        .context("no run_path")?;
    fs_err::create_dir_all(dir.join(rel).parent().context("run_path has no parent")?)?;
    fs_err::copy(dataset, dir.join(rel))?;
    Ok(dir)
}

/// Measure `runs` runs of `args` through `spec`'s server and directly, interleaved.
#[allow(clippy::too_many_arguments)]
pub fn cost(
    fx: &Fixture,
    label: &str,
    spec: &ServerSpec,
    home: &Path,
    history: usize,
    args: &Value,
    runs: usize,
) -> anyhow::Result<RunCost> {
    let dataset = spec
        .cwd
        .join(args["dataset"].as_str().context("no dataset")?);
    let tag = format!("{}-{history}", label.replace(' ', "-"));
    let scratch = fx.dir(&format!("direct-{tag}"))?;
    let runs_dir = home.join("runs");
    let mut client = StdioClient::connect(spec)?;
    // Warm-up: the runtime probe, page cache, the first run directory.
    let warm = mcp_run(&mut client, args, &runs_dir)?;
    direct_run(&warm.plan, &direct_dir(&scratch, 0, &warm.plan, &dataset)?)?;
    let (mut mcp, mut direct) = (Vec::new(), Vec::new());
    for i in 1..=runs {
        eprint!("\r  {label}: run {i}/{runs}");
        let dir = direct_dir(&scratch, i, &warm.plan, &dataset)?;
        if i % 2 == 0 {
            mcp.push(mcp_run(&mut client, args, &runs_dir)?);
            direct.push(direct_run(&warm.plan, &dir)?);
        } else {
            direct.push(direct_run(&warm.plan, &dir)?);
            mcp.push(mcp_run(&mut client, args, &runs_dir)?);
        }
    }
    eprintln!();
    let ping = ping_floor(&mut client, 50)?;
    client.close(Duration::from_secs(20))?;
    let overhead: Vec<f64> = mcp.iter().zip(&direct).map(|(m, d)| m.total - d).collect();
    let mcp_total: Vec<f64> = mcp.iter().map(|m| m.total).collect();
    let (mcp_s, direct_s, overhead_s) = (
        Summary::of(&mcp_total),
        Summary::of(&direct),
        Summary::of(&overhead),
    );
    let col = |f: fn(&McpRun) -> f64| mcp.iter().map(f).collect::<Vec<_>>();
    let timeline = vec![
        step("validate_analysis answered (client)", &col(|m| m.validate)),
        step("start_analysis answered (client)", &col(|m| m.start)),
        step(
            "created → running: dataset copy and hash, logs, guard and CLI spawned",
            &col(|m| m.started - m.created),
        ),
        step(
            "running → ended: the CLI, log drain, artifact indexing, input re-hash",
            &col(|m| m.ended - m.started),
        ),
        step(
            "ended → result received: result, manifest and status written, get_run_result",
            &col(|m| m.total - m.ended),
        ),
        step("ping round trip (protocol floor)", &[ping]),
    ];
    let last = mcp.last().context("no runs")?;
    let validate = Summary::of(&col(|m| m.validate)).median;
    let phases = phases(
        fx, &tag, last, validate, &warm.plan, &dataset, &runs_dir, ping,
    )?;
    Ok(RunCost {
        cli: label.into(),
        history,
        runs,
        overhead_pct_of_2s: overhead_s.median / REFERENCE_ANALYSIS_MS * 100.0,
        ratio: mcp_s.median / direct_s.median,
        direct_ms: direct_s,
        mcp_ms: mcp_s,
        overhead_ms: overhead_s,
        timeline,
        phases,
    })
}

/// Time `f` `n` times (after one warm-up); milliseconds.
fn repeat(n: usize, mut f: impl FnMut(usize) -> anyhow::Result<()>) -> anyhow::Result<Vec<f64>> {
    f(usize::MAX)?;
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        let t0 = Instant::now();
        f(i)?;
        v.push(ms(t0.elapsed()));
    }
    Ok(v)
}

/// The server's own steps for one run, re-timed in-process with the server's library
/// code on this run's real files.
#[allow(clippy::too_many_arguments)]
fn phases(
    fx: &Fixture,
    tag: &str,
    run: &McpRun,
    validate_ms: f64,
    plan: &Value,
    dataset: &Path,
    runs_dir: &Path,
    ping: f64,
) -> anyhow::Result<Vec<Step>> {
    const N: usize = 20;
    let scratch = fx.dir(&format!("phases-{tag}"))?;
    let mut out = Vec::new();
    let mut add = |name: &str, v: Vec<f64>, per_run: f64| {
        let s = Summary::of(&v);
        out.push(Step {
            step: name.into(),
            per_run: Some(per_run),
            ms: s,
        });
    };
    // Validation, twice per run (validate_analysis, and start_analysis validates afresh):
    // the call's round trip less the protocol's.
    add(
        "validation (validate_analysis round trip less a ping), twice per run",
        vec![(validate_ms - ping).max(0.0)],
        2.0,
    );
    add(
        "protocol round trips (ping), three per run",
        vec![ping],
        3.0,
    );
    // Counting pending runs across servers at each start: the runs directory is listed, and
    // only runs not yet seen terminal have their status.json read (the server remembers the
    // terminal ones; the first, untimed, call here fills that set as recovery does).
    let mut settled = std::collections::HashSet::new();
    add(
        "pending-runs count at start (lists the runs; reads only those not yet seen terminal)",
        repeat(N, |_| {
            let mut pending = 0usize;
            for entry in fs_err::read_dir(runs_dir)?.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if !scimcp_server::is_run_id(&name) || settled.contains(&name) {
                    continue;
                }
                let Ok(bytes) = fs_err::read(entry.path().join("status.json")) else {
                    continue;
                };
                let status: scimcp_server::RunStatus = serde_json::from_slice(&bytes)?;
                if status.state.is_terminal() {
                    settled.insert(name);
                } else {
                    pending += 1;
                }
            }
            std::hint::black_box(pending);
            Ok(())
        })?,
        1.0,
    );
    // The record writes, in the server's order and with its flushes: request, plan and
    // validation (file flushed, directory not), status `queued` (file and directory),
    // status `running` (file only), then result (publish-once, file and directory),
    // manifest (file only) and the terminal status (file and directory): 11 flushes.
    let records: Vec<(&str, bool, Vec<u8>)> = [
        ("request.json", false),
        ("plan.json", false),
        ("validation.json", false),
        ("status.json", true),
        ("status.json", false),
    ]
    .iter()
    .map(|(n, dir)| Ok((*n, *dir, fs_err::read(run.run_dir.join(n))?)))
    .collect::<anyhow::Result<_>>()?;
    let ending: Vec<(&str, bool, Vec<u8>)> = [("manifest.json", false), ("status.json", true)]
        .iter()
        .map(|(n, dir)| Ok((*n, *dir, fs_err::read(run.run_dir.join(n))?)))
        .collect::<anyhow::Result<_>>()?;
    let result = fs_err::read(run.run_dir.join("result.json"))?;
    let writes = scratch.join("writes");
    fs_err::create_dir_all(&writes)?;
    let write = |name: &str, flush_dir: bool, bytes: &[u8]| -> anyhow::Result<()> {
        let path = writes.join(name);
        let private = scimcp_core::fs::Privacy::Private;
        if flush_dir {
            scimcp_core::fs::write_atomic(&path, bytes, private)?;
        } else {
            scimcp_core::fs::write_atomic_batched(&path, bytes, private)?;
        }
        Ok(())
    };
    add(
        "record writes (7 atomic writes and 1 publish-once: 11 disk flushes)",
        repeat(N, |i| {
            for (name, flush_dir, bytes) in &records {
                write(name, *flush_dir, bytes)?;
            }
            let target = writes.join(format!("result-{i}.json"));
            let _ = fs_err::remove_file(&target);
            scimcp_core::fs::publish_once(&target, &result)?;
            for (name, flush_dir, bytes) in &ending {
                write(name, *flush_dir, bytes)?;
            }
            Ok(())
        })?,
        1.0,
    );
    // Copying the dataset into the run directory through the validated handle, hashing it.
    let resolved = scimcp_server::ResolvedDataset {
        reference: "data".into(),
        source: scimcp_server::DatasetSource::File,
        path: dataset.to_path_buf(),
        file_name: "data.csv".into(),
        size_bytes: fs_err::metadata(dataset)?.len(),
        sha256: String::new(),
        root: dataset
            .parent()
            .context("dataset has no parent")?
            .to_path_buf(),
        relative: PathBuf::from(dataset.file_name().context("dataset has no name")?),
    };
    let max = scimcp_core::Limits::DEFAULT.max_dataset_bytes;
    add(
        "dataset copy and hash into the run directory",
        repeat(N, |i| {
            let to = scratch.join(format!("copy-{i}.csv"));
            let _ = fs_err::remove_file(&to);
            resolved
                .reopen(max)
                .and_then(|mut o| o.copy_to(&to, "data", max))
                .map_err(|e| anyhow::anyhow!("{}", e.message))?;
            Ok(())
        })?,
        1.0,
    );
    add(
        "dataset re-hash when validating (validate and start)",
        repeat(N, |_| {
            resolved
                .reopen(max)
                .and_then(|mut o| o.sha256("data", max))
                .map_err(|e| anyhow::anyhow!("{}", e.message))?;
            Ok(())
        })?,
        2.0,
    );
    // The run guard: the trivial CLI started under `scimcp __guard`, less the trivial CLI
    // alone (whatever the CLI measured here: a Python start would drown the difference).
    let program = fx.exe("scimcp-bench-cli");
    let args: Vec<String> = ["--data", "inputs/data.csv", "--out", "output"]
        .map(String::from)
        .to_vec();
    let env: BTreeMap<String, String> = serde_json::from_value(plan["env"].clone())?;
    let guard_dir = direct_dir(&scratch, 0, plan, dataset)?;
    let trivial_plan = json!({"program": program, "args": args, "env": env});
    let (mut guarded, mut alone) = (Vec::new(), Vec::new());
    for i in 0..N.min(10) {
        let status_file = guard_dir.join(format!("cli-status-{i}.json"));
        let (guard, argv) = scimcp_server::guard_wrap(&program, &args, &status_file)
            .context("no run guard on this platform")?;
        // wrap() names this benchmark as the guard program: run the real scimcp instead.
        let _ = guard;
        let mut cmd = scimcp_server::isolated_std_command(&fx.exe("scimcp"), &[], &guard_dir, &env);
        cmd.args(argv)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let t0 = Instant::now();
        ensure!(cmd.spawn()?.wait()?.success(), "the guarded CLI failed");
        guarded.push(ms(t0.elapsed()));
        alone.push(direct_run(&trivial_plan, &guard_dir)?);
    }
    let extra: Vec<f64> = guarded.iter().zip(&alone).map(|(g, a)| g - a).collect();
    add(
        "run guard (scimcp __guard around a trivial CLI)",
        extra,
        1.0,
    );
    // Indexing the output directory and re-hashing the run's input copy at the end.
    let work = run
        .run_dir
        .join(plan["working_dir"].as_str().unwrap_or("work"));
    let output_rel = plan["output_dir"].as_str().unwrap_or("output").to_string();
    let specs: Vec<ArtifactSpec> = serde_json::from_value(plan["artifacts"].clone())?;
    add(
        "artifact indexing (walk, hash, json_keys)",
        repeat(N, |_| {
            let c = scimcp_server::collect_artifacts(
                &work,
                &output_rel,
                &specs,
                &scimcp_core::Limits::DEFAULT,
            );
            std::hint::black_box(c.artifacts.len());
            Ok(())
        })?,
        1.0,
    );
    let input_copy = run
        .run_dir
        .join("work")
        .join(plan["dataset"]["run_path"].as_str().unwrap_or_default());
    add(
        "input copy re-hash at the end",
        repeat(N, |_| {
            scimcp_core::hash::sha256_file(&input_copy)?;
            Ok(())
        })?,
        1.0,
    );
    Ok(out)
}

/// Latency of `get_run_status` in one window of the stall test.
#[derive(Debug, Serialize)]
pub struct Window {
    pub window: String,
    pub duration_ms: f64,
    pub probes: usize,
    pub median_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// The stall test's result.
#[derive(Debug, Serialize)]
pub struct Stall {
    /// The server's async worker threads as set by `TOKIO_WORKER_THREADS`; absent: the
    /// server's own choice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers: Option<usize>,
    pub dataset_bytes: u64,
    pub artifacts: usize,
    pub windows: Vec<Window>,
    /// Largest probe latency while the run was validated, started or running.
    pub worst_ms: f64,
    pub baseline_p99_ms: f64,
}

impl Stall {
    /// The worker setting, in words.
    pub fn workers_text(&self) -> String {
        match self.workers {
            None => "the server's own async worker count".into(),
            Some(1) => "one async worker".into(),
            Some(n) => format!("{n} async workers"),
        }
    }

    /// The worker setting, for a target id.
    pub fn workers_id(&self) -> String {
        match self.workers {
            None => "own_workers".into(),
            Some(1) => "one_worker".into(),
            Some(n) => format!("{n}_workers"),
        }
    }
}

/// `get_run_status` every few milliseconds over the same stdio session while a run with
/// a 256 MiB dataset and 512 artifacts is validated, started, runs and is published.
/// `workers`: the server's async worker threads (`TOKIO_WORKER_THREADS`), or its own choice.
pub fn stall(
    fx: &Fixture,
    home: &Path,
    adapter: &Path,
    probe_run: &str,
    workers: Option<usize>,
) -> anyhow::Result<Stall> {
    const BYTES: u64 = 256 * 1024 * 1024;
    let cwd = fx.dir("start-stall")?;
    let dataset = cwd.join("big.csv");
    if !dataset.is_file() {
        write_large_csv(&dataset, BYTES)?;
    }
    let mut spec = fx.scimcp(&adapter.display().to_string(), home, &cwd, &[]);
    if let Some(n) = workers {
        spec.env
            .push(("TOKIO_WORKER_THREADS".into(), n.to_string()));
    }
    let client = StdioClient::connect(&spec)?.pipelined();
    let client = Arc::new(client);
    let probes: Arc<Mutex<Vec<(f64, f64)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let (w0, probe_run) = (SystemTime::now(), probe_run.to_string());
    let prober = {
        let (client, probes, stop) = (client.clone(), probes.clone(), stop.clone());
        std::thread::spawn(move || -> anyhow::Result<()> {
            while !stop.load(Ordering::SeqCst) {
                let f = client.start(
                    "tools/call",
                    json!({"name": "get_run_status", "arguments": {"run_id": probe_run}}),
                )?;
                let sent = f.sent;
                let (at, _) = f.wait()?;
                probes
                    .lock()
                    .expect("probes lock")
                    .push((ms(sent - t0), ms(at - sent)));
                std::thread::sleep(Duration::from_millis(2));
            }
            Ok(())
        })
    };
    let args = json!({"workflow": "touch", "dataset": "big.csv", "parameters": {"files": 511}});
    let mark = || ms(t0.elapsed());
    std::thread::sleep(Duration::from_millis(500));
    let m0 = mark();
    let v = client.call("validate_analysis", args.clone())?;
    let m1 = mark();
    let mut start = args.clone();
    start["validation_id"] = v["validation_id"].clone();
    let s = client.call("start_analysis", start)?;
    let m2 = mark();
    let run_id = s["run_id"].as_str().context("no run_id")?.to_string();
    let r = client.call("get_run_result", json!({"run_id": run_id, "wait_s": 300}))?;
    let m3 = mark();
    ensure!(
        r["state"] == "succeeded",
        "the stall run did not succeed: {r}"
    );
    std::thread::sleep(Duration::from_millis(500));
    let m4 = mark();
    stop.store(true, Ordering::SeqCst);
    prober.join().expect("prober thread")?;
    let artifacts = r["result"]["artifacts"]["total"].as_u64().unwrap_or(0) as usize;
    let status: Value = serde_json::from_slice(&fs_err::read(
        home.join("runs").join(&run_id).join("status.json"),
    )?)?;
    let (created, started, ended) = (
        at_ms(&status, "created_at", w0)?,
        at_ms(&status, "started_at", w0)?,
        at_ms(&status, "ended_at", w0)?,
    );
    Arc::try_unwrap(client)
        .ok()
        .context("client still shared")?
        .close(Duration::from_secs(20))?;
    let probes = probes.lock().expect("probes lock").clone();
    let window = |name: &str, from: f64, to: f64| {
        let v: Vec<f64> = probes
            .iter()
            .filter(|(at, _)| *at >= from && *at < to)
            .map(|(_, rtt)| *rtt)
            .collect();
        let s = Summary::of(&v);
        Window {
            window: name.into(),
            duration_ms: to - from,
            probes: v.len(),
            median_ms: s.median,
            p99_ms: s.p99,
            max_ms: s.max,
        }
    };
    let windows = vec![
        window("idle (before)", 0.0, m0),
        window("validate_analysis (hashes 256 MiB)", m0, m1),
        window(
            "start_analysis (hashes again, records)",
            m1,
            created.max(m1),
        ),
        window(
            "queued → running (copy and hash, spawn)",
            created.max(m1),
            started,
        ),
        window(
            "running → ended (CLI, 512 artifacts indexed, input re-hashed)",
            started,
            ended,
        ),
        window("ended → result received (records written)", ended, m3),
        window("idle (after)", m3, m4),
    ];
    let _ = m2;
    let worst = windows[1..windows.len() - 1]
        .iter()
        .map(|w| w.max_ms)
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    Ok(Stall {
        workers,
        dataset_bytes: BYTES,
        artifacts,
        baseline_p99_ms: windows[0].p99_ms,
        worst_ms: worst,
        windows,
    })
}
