//! scimcp's one-command benchmarks against its peers (`bench/run.sh` builds what they need
//! and runs `scimcp-bench run`).
//!
//! Every measurement runs interleaved with its peer in the same process run — the Python
//! MCP SDK server in `bench/peers/`, `sha256sum`, sigstore-python's CLI — repeated, and
//! reported as medians and p99 with the machine's load beside them. The results go to
//! `bench/results.json` (with each target of issue #19 and whether it passes) and to the
//! generated block of docs/BENCHMARKS.md. Not a test: nothing here gates CI.

// A benchmark reports progress on stderr and its tables on stdout by design.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// The server's ToolError is what its dataset functions return; boxing it here gains nothing.
#![allow(clippy::result_large_err)]

mod calls;
mod campaign_scale;
mod cli;
mod fixture;
mod history;
mod http_many;
mod install;
mod release;
mod report;
mod rpc;
mod runs;
mod sandbox;
mod startup;
mod stats;

use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::json;

use cli::{Cli, Command as Sub, RunArgs, Section};
use fixture::Fixture;
use report::{Machine, Results, WallTime};

/// Runs in the history of the per-call and per-run measurements.
const HISTORY: usize = 2000;

/// Entry point of the `scimcp-bench` binary.
pub fn main() -> ExitCode {
    let cli = <Cli as clap::Parser>::parse();
    let result = match cli.command {
        Sub::Run(args) => run(&args),
        Sub::StartupPhases { python } => startup::phases_in_this_process(&python).map(|v| {
            println!("{v}");
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The 1-minute load average.
fn load() -> f64 {
    fs_err::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(f64::NAN)
}

/// Samples the load average every 2 s until dropped.
struct LoadSampler {
    stop: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<f64>>>,
}

impl LoadSampler {
    fn start() -> LoadSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let samples: Arc<Mutex<Vec<f64>>> = Arc::default();
        let (s, v) = (stop.clone(), samples.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                v.lock().expect("load samples").push(load());
                std::thread::sleep(Duration::from_secs(2));
            }
        });
        LoadSampler { stop, samples }
    }

    fn finish(self) -> (f64, f64) {
        self.stop.store(true, Ordering::SeqCst);
        let v = self.samples.lock().expect("load samples").clone();
        let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
        (mean, v.iter().copied().fold(0.0, f64::max))
    }
}

fn first_line(program: &Path, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .map(|o| {
            let text = if o.stdout.is_empty() {
                o.stderr
            } else {
                o.stdout
            };
            String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

fn machine(fx: &Fixture, load_start: f64, sampler: LoadSampler) -> Machine {
    let cpuinfo = fs_err::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|s| s.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_default();
    let memory_gib = fs_err::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0 / 1024.0)
        .unwrap_or(f64::NAN);
    let packages = Command::new(&fx.peer_python)
        .args([
            "-c",
            "import importlib.metadata as m\nfor p in ('mcp','jsonschema','pydantic','anyio','uvicorn','sigstore'): print(f'{p} {m.version(p)}')",
        ])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    let (load_mean, load_max) = sampler.finish();
    Machine {
        cpu,
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        memory_gib: stats::round(memory_gib, 1),
        kernel: fs_err::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string(),
        rustc: first_line(Path::new("rustc"), &["--version"]),
        python: first_line(&fx.peer_python, &["--version"]),
        peer_packages: packages,
        load_start: stats::round(load_start, 2),
        load_mean: stats::round(load_mean, 2),
        load_max: stats::round(load_max.max(load_start), 2),
        load_end: stats::round(load(), 2),
    }
}

fn run(args: &RunArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let load_start = load();
    let sampler = LoadSampler::start();
    let fx = Fixture::new(&args.repo, args.scimcp.as_deref())?;
    let mut results = Results {
        schema_version: report::SCHEMA_VERSION,
        generated_at: jiff::Timestamp::now()
            .strftime("%Y-%m-%d %H:%M UTC")
            .to_string(),
        command: "bench/run.sh".into(),
        ..Results::default()
    };
    eprintln!("scimcp-bench: work directory {}", fx.work.display());
    if let Err(e) = measure(&fx, args, &mut results) {
        // What was measured before the failure is kept for the post-mortem.
        let path = fx.repo.join("target/bench/results-partial.json");
        let _ = fs_err::write(&path, serde_json::to_vec_pretty(&results)?);
        eprintln!("measurements so far: {}", path.display());
        return Err(e);
    }
    let measure_s = t0.elapsed().as_secs_f64();
    results.wall_time = Some(WallTime {
        build_s: stats::round(args.build_s, 1),
        provision_s: stats::round(args.provision_s, 1),
        measure_s: stats::round(measure_s, 1),
        total_s: stats::round(args.build_s + args.provision_s + measure_s, 1),
    });
    results.machine = Some(machine(&fx, load_start, sampler));
    results.evaluate();
    let md = results.markdown();
    println!("{md}");
    if args.only.is_empty() && !args.no_write && args.scimcp.is_none() {
        report::write(&fx.repo, &results)?;
        // The peer's committed tool list follows the scimcp these results measured.
        fs_err::copy(&fx.peer_tools, fx.repo.join(fixture::PEER_TOOLS))?;
        eprintln!(
            "wrote bench/results.json, docs/BENCHMARKS.md and {}",
            fixture::PEER_TOOLS
        );
    } else {
        let path = fx.repo.join("target/bench/results-partial.json");
        fs_err::write(&path, serde_json::to_vec_pretty(&results)?)?;
        eprintln!("partial run: wrote {} only", path.display());
    }
    if !args.keep_work {
        let _ = fs_err::remove_dir_all(&fx.work);
    }
    Ok(())
}

/// Every section `args` asks for, each result stored in `results` as soon as it is measured.
fn measure(fx: &Fixture, args: &RunArgs, results: &mut Results) -> anyhow::Result<()> {
    let want = |s: Section| args.only.is_empty() || args.only.contains(&s);
    let r = args.rounds();
    let needs_history = want(Section::Startup)
        || want(Section::Calls)
        || want(Section::Runs)
        || want(Section::Stall);
    let history_home = fx.dir("home-history")?;
    if needs_history {
        eprintln!("  seeding a history of {HISTORY} runs");
        fx.seed_history(&history_home, HISTORY)?;
    }
    if want(Section::Startup) {
        eprintln!("cold start");
        results.startup = Some(startup::run(fx, r.cold_starts, &history_home)?);
    }
    if want(Section::Calls) {
        eprintln!("per-call latency");
        results.calls = calls::run(fx, r.calls, &history_home, HISTORY)?;
    }
    let trivial = fx.trivial_adapter()?;
    if want(Section::Runs) {
        eprintln!("the wrapper's own cost per run");
        let trivial_args = json!({"workflow": "touch", "dataset": "data.csv", "parameters": {}});
        let cwd = fx.start_dir("start-runs")?;
        let adapter = trivial.display().to_string();
        let empty = fx.dir("home-runs")?;
        results.runs.push(runs::cost(
            fx,
            "trivial CLI",
            &fx.scimcp(&adapter, &empty, &cwd, &[]),
            &empty,
            0,
            &trivial_args,
            r.runs,
        )?);
        let history = fx.dir("home-runs-history")?;
        copy_tree(&history_home, &history)?;
        results.runs.push(runs::cost(
            fx,
            "trivial CLI",
            &fx.scimcp(&adapter, &history, &cwd, &[]),
            &history,
            HISTORY,
            &trivial_args,
            r.runs,
        )?);
        let refsci_home = fx.dir("home-refsci")?;
        results.runs.push(runs::cost(
            fx,
            "refsci regression",
            &fx.scimcp("refsci", &refsci_home, &cwd, &[]),
            &refsci_home,
            0,
            &json!({"workflow": "regression", "dataset": "data.csv", "parameters": {"target": "y"}}),
            r.refsci_runs,
        )?);
        eprintln!("the sandbox's cost per run");
        sandbox::report(fx, 10 * r.runs)?;
    }
    if want(Section::Stall) {
        eprintln!("a 256 MiB run against get_run_status");
        let probe = fs_err::read_dir(history_home.join("runs"))?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with("run-"))
            .context("no run in the history")?;
        // The server's own worker count, then one worker (a one-CPU machine or container),
        // where any blocking work on the worker would hold up every other call.
        for workers in [None, Some(1)] {
            results
                .stall
                .push(runs::stall(fx, &history_home, &trivial, &probe, workers)?);
        }
    }
    if want(Section::Hashing) {
        eprintln!("hashing");
        results.hashing = Some(release::hashing(fx, r.hashing)?);
    }
    if want(Section::Bundle) {
        eprintln!("bundles");
        results.bundle = Some(release::bundle(fx, r.bundles)?);
    }
    if want(Section::Verify) {
        eprintln!("verification");
        results.verify = Some(release::verify(fx, r.verify)?);
    }
    if want(Section::Installer) {
        eprintln!("installer");
        results.installer = Some(install::installer(fx, r.installer, want(Section::Doctor))?);
    }
    if want(Section::Doctor) {
        eprintln!("doctor");
        results.doctor = Some(install::doctor(fx, r.doctor)?);
    }
    if want(Section::History) {
        eprintln!("{} runs in history", history::RUNS);
        results.history = Some(history::run(
            fx,
            r.history_cold_starts,
            r.history_calls,
            args.baseline.as_deref(),
        )?);
    }
    if want(Section::Campaigns) {
        eprintln!("campaigns at their limit");
        results.campaigns = Some(campaign_scale::run(fx, r.campaign_calls)?);
    }
    if want(Section::HttpMany) {
        eprintln!("HTTP, {} token holders at once", r.http_holders);
        results.http_many = Some(http_many::run(
            fx,
            r.http_holders,
            Duration::from_secs(r.http_seconds),
        )?);
    }
    Ok(())
}

/// Copy a directory tree (the seeded history, so two measurements start from the same).
pub(crate) fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    fs_err::create_dir_all(to)?;
    for entry in fs_err::read_dir(from)?.flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if entry.file_type()?.is_file() {
            fs_err::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
