//! The gate: load adapters and scenarios, check coverage, run the selected scenarios both
//! ways, compare, and hold the result against the snapshots (`check`, `review`) or record
//! it (`run`).
//!
//! Scenarios run one after the other, direct side first: the report's wall times compare
//! the two paths, and running them side by side on a small CI machine would make each slow
//! the other down.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use futures::StreamExt as _;

use scimcp_core::Adapter;
use scimcp_core::manifest::load_file;

use crate::cli::{Mode, Settings};
use crate::compare::{EvidenceComparison, against_recorded, same_run};
use crate::direct::{self, DirectPaths};
use crate::error::{Error, SideError};
use crate::evidence::{EVIDENCE_FORMAT, Evidence};
use crate::machine::{self, Machine};
use crate::mcp::{self, McpPaths};
use crate::report::{
    AdapterCoverage, Coverage, Difference, Report, ScenarioReport, ShardInfo, Timing,
    TimingSummary, WorkflowCoverage, render_scenario, render_summary,
};
use crate::scenario::{self, Expect, Scenario};
use crate::snapshot;

/// A loaded adapter and the manifest file it came from.
struct LoadedAdapter {
    path: PathBuf,
    adapter: Adapter,
}

/// Every `*.toml` in `dir`, loaded and validated with the same loader the server uses.
fn load_adapters(dir: &Path) -> Result<Vec<LoadedAdapter>, Error> {
    let mut paths = Vec::new();
    for entry in fs_err::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            paths.push(path);
        }
    }
    if paths.is_empty() {
        return Err(Error::NoAdapters {
            dir: dir.to_path_buf(),
        });
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| match load_file(&path) {
            Ok(adapter) => Ok(LoadedAdapter { path, adapter }),
            Err(errors) => Err(Error::Adapter { path, errors }),
        })
        .collect()
}

/// Is scenario number `index` (in name order) in the selected shard?
fn in_shard(index: usize, shard: Option<(usize, usize)>) -> bool {
    shard.is_none_or(|(i, n)| index % n == i - 1)
}

/// The scenarios to consider: all of them, or with `quick` one per workflow — the first by
/// name that expects success (else the first by name), so a quick run exercises every
/// workflow once on its ordinary path.
fn quick_set(scenarios: &[Scenario], quick: bool) -> Vec<&Scenario> {
    if !quick {
        return scenarios.iter().collect();
    }
    let mut chosen: BTreeMap<(&str, &str), &Scenario> = BTreeMap::new();
    for s in scenarios {
        let key = (s.adapter.as_str(), s.workflow.as_str());
        let better = match chosen.get(&key) {
            None => true,
            Some(c) => c.expect != Expect::Succeeded && s.expect == Expect::Succeeded,
        };
        if better {
            chosen.insert(key, s);
        }
    }
    scenarios
        .iter()
        .filter(|s| chosen.values().any(|c| std::ptr::eq(*c, *s)))
        .collect()
}

/// Run the gate and print the human report; returns whether it passed.
pub fn run(settings: &Settings) -> Result<bool, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    runtime.block_on(run_async(settings))
}

async fn run_async(settings: &Settings) -> Result<bool, Error> {
    let started = Instant::now();
    let adapters = load_adapters(&settings.adapters_dir)?;
    let scenarios = scenario::load_dir(&settings.scenarios_dir)?;

    // Every scenario must name a workflow that exists, whatever is selected to run.
    for s in &scenarios {
        let Some(a) = adapters
            .iter()
            .find(|a| a.adapter.manifest.name == s.adapter)
        else {
            return Err(Error::invalid(
                &s.path,
                "adapter",
                format!(
                    "names adapter {:?}, which no manifest in {} declares",
                    s.adapter,
                    settings.adapters_dir.display()
                ),
            ));
        };
        for (id, input) in &s.inputs {
            for rel in input.paths() {
                if !settings.adapters_dir.join(rel).is_file() {
                    return Err(Error::invalid(
                        &s.path,
                        format!("request.inputs.{id}"),
                        format!(
                            "{rel:?} is not a file below {}; input paths are relative to the adapters directory",
                            settings.adapters_dir.display()
                        ),
                    ));
                }
            }
        }
        if a.adapter.workflow(&s.workflow).is_none() {
            return Err(Error::invalid(
                &s.path,
                "workflow",
                format!(
                    "names workflow {:?}, which adapter {} does not declare (it has: {})",
                    s.workflow,
                    s.adapter,
                    a.adapter.workflow_ids().join(", ")
                ),
            ));
        }
    }
    let coverage = coverage(&adapters, &scenarios);

    let selected: Vec<&Scenario> = quick_set(&scenarios, settings.quick)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| in_shard(*i, settings.shard))
        .filter(|(_, s)| settings.filter.as_ref().is_none_or(|f| f.is_match(&s.name)))
        .map(|(_, s)| s)
        .collect();
    // A filter that matches nothing is a typo, not a passing gate (an empty shard is fine:
    // a CI matrix may have more shards than scenarios).
    if let Some(filter) = &settings.filter
        && !scenarios.iter().any(|s| filter.is_match(&s.name))
    {
        return Err(Error::usage(
            format!(
                "--scenario {} matches no scenario in {}",
                settings.filters.join(" --scenario "),
                settings.scenarios_dir.display(),
            ),
            format!(
                "the scenarios are: {}",
                scenarios
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let whole_set = settings.filter.is_none() && settings.shard.is_none() && !settings.quick;
    let mut orphans = Vec::new();
    if settings.filter.is_none() {
        for name in snapshot::recorded_names(&settings.snapshots_dir)? {
            if !scenarios.iter().any(|s| s.name == name) {
                orphans.push(name);
            }
        }
    }
    if settings.mode == Mode::Run && whole_set {
        for name in std::mem::take(&mut orphans) {
            let path = snapshot::path_for(&settings.snapshots_dir, &name);
            fs_err::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            say(&format!("removed orphan snapshot {}", path.display()));
        }
    }

    let mut machine = Machine::this();
    machine.numeric_libraries = machine::numeric_libraries(
        &settings.python,
        &direct::environment_of_gate(&settings.extra_env),
    )
    .await;
    say(&format!(
        "scimcp-parity {}: {} of {} scenarios{}{}{}; scimcp {}; python {}\non: {}{}",
        settings.mode.as_str(),
        selected.len(),
        scenarios.len(),
        if settings.quick {
            " (quick: one per workflow, not release evidence)"
        } else {
            ""
        },
        settings
            .shard
            .map(|(i, n)| format!(" (shard {i}/{n})"))
            .unwrap_or_default(),
        if settings.jobs > 1 {
            format!(", {} at a time", settings.jobs)
        } else {
            String::new()
        },
        settings.scimcp.display(),
        std::iter::once(settings.python.display().to_string())
            .chain(
                settings
                    .adapter_pythons
                    .iter()
                    .map(|(adapter, py)| format!("{adapter}: {}", py.display())),
            )
            .collect::<Vec<_>>()
            .join(", "),
        machine.summary(),
        if settings.extra_env.is_empty() {
            String::new()
        } else {
            format!(
                "; --env {}",
                settings
                    .extra_env
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
    ));

    let exports = tempfile::Builder::new()
        .prefix("scimcp-parity datasets ")
        .tempdir()
        .map_err(Error::TempDir)?;
    let mut exported: BTreeMap<String, PathBuf> = BTreeMap::new();

    // Every adapter's datasets are exported before any scenario starts, so scenarios that run
    // side by side (`--jobs`) share the copies instead of racing to make them.
    let mut runs = Vec::with_capacity(selected.len());
    for s in &selected {
        let adapter = adapters
            .iter()
            .find(|a| a.adapter.manifest.name == s.adapter)
            .expect("checked above");
        if !exported.contains_key(&s.adapter) {
            let dir = exports.path().join(&s.adapter);
            export_datasets(&adapter.adapter, settings.python_for(&s.adapter), &dir).await?;
            exported.insert(s.adapter.clone(), dir);
        }
        runs.push((*s, adapter, exported[&s.adapter].clone()));
    }
    // `buffered` keeps the scenarios' order: each block is printed when it and every one before
    // it are done, so the report reads the same whatever `--jobs` is.
    let mut finished = futures::stream::iter(
        runs.iter()
            .map(|(s, adapter, datasets)| run_scenario(settings, s, adapter, datasets, &machine)),
    )
    .buffered(settings.jobs.max(1));
    let mut reports = Vec::with_capacity(selected.len());
    while let Some(report) = finished.next().await {
        say(&render_scenario(&report));
        reports.push(report);
    }

    let mut timing = TimingSummary::default();
    for r in &reports {
        if let (Some(d), Some(m), Some(ms)) =
            (r.timing.direct_s, r.timing.mcp_s, r.timing.mcp_session_s)
        {
            timing.direct_s += d;
            timing.mcp_s += m;
            timing.mcp_session_s += ms;
        }
    }
    timing.ratio = (timing.direct_s > 0.0).then(|| timing.mcp_s / timing.direct_s);
    let passed = coverage.missing.is_empty()
        && orphans.is_empty()
        && reports.iter().all(|r| r.status != "fail");
    let report = Report {
        schema_version: crate::report::REPORT_SCHEMA_VERSION,
        tool: "scimcp-parity",
        version: env!("CARGO_PKG_VERSION"),
        mode: settings.mode.as_str(),
        passed,
        shard: settings
            .shard
            .map(|(index, count)| ShardInfo { index, count }),
        quick: settings.quick,
        jobs: settings.jobs,
        filters: settings.filters.clone(),
        scenarios_total: scenarios.len(),
        scenarios_selected: selected.len(),
        machine: machine.clone(),
        env: settings.extra_env.clone(),
        coverage,
        orphan_snapshots: orphans,
        scenarios: reports,
        wall_time_s: round3(started.elapsed().as_secs_f64()),
        timing: TimingSummary {
            direct_s: round3(timing.direct_s),
            mcp_s: round3(timing.mcp_s),
            mcp_session_s: round3(timing.mcp_session_s),
            ratio: timing.ratio.map(round3),
        },
    };
    say(&render_summary(&report));
    if let Some(path) = &settings.json {
        let mut bytes = serde_json::to_vec_pretty(&report).expect("report serializes");
        bytes.push(b'\n');
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs_err::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        scimcp_core::fs::write_atomic(path, &bytes, scimcp_core::fs::Privacy::KeepExisting)
            .map_err(|source| Error::Write {
                path: path.clone(),
                source,
            })?;
    }
    Ok(passed)
}

/// Print one block of the human report on stdout (a closed pipe is not an error).
fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn coverage(adapters: &[LoadedAdapter], scenarios: &[Scenario]) -> Coverage {
    let mut missing = Vec::new();
    let adapters = adapters
        .iter()
        .map(|a| {
            let name = &a.adapter.manifest.name;
            let workflows = a
                .adapter
                .workflow_ids()
                .into_iter()
                .map(|id| {
                    let names: Vec<String> = scenarios
                        .iter()
                        .filter(|s| &s.adapter == name && s.workflow == id)
                        .map(|s| s.name.clone())
                        .collect();
                    if names.is_empty() {
                        missing.push(format!("{name}/{id}"));
                    }
                    WorkflowCoverage {
                        id: id.to_string(),
                        scenarios: names,
                    }
                })
                .collect();
            AdapterCoverage {
                name: name.clone(),
                manifest: a.path.display().to_string(),
                sha256: a.adapter.sha256().to_string(),
                workflows,
            }
        })
        .collect();
    Coverage { adapters, missing }
}

/// The built-in datasets an adapter ships inside its runtime's package: find the package
/// with the runtime probe, copy the declared files (or every data file) into `dir`.
async fn copy_package_datasets(
    adapter: &Adapter,
    python: &Path,
    rel: &str,
    dir: &Path,
) -> Result<(), Error> {
    let package = adapter.manifest.runtime.package.clone().unwrap_or_default();
    let mut cmd = scimcp_process::python_command(python);
    cmd.args([
        "-c",
        scimcp_core::runtime_probe::RUNTIME_PROBE_SCRIPT,
        &package,
    ]);
    let step = scimcp_process::Step::new("the runtime probe", cmd)
        .timeout(std::time::Duration::from_secs(120));
    let out = tokio::task::spawn_blocking(move || scimcp_process::run(step))
        .await
        .map_err(Error::Task)?
        .and_then(scimcp_process::Captured::check)
        .map_err(|e| {
            Error::usage(
                e.to_string(),
                format!("is the runtime at {} complete?", python.display()),
            )
        })?;
    let probe: scimcp_core::runtime_probe::RuntimeProbe =
        serde_json::from_str(out.stdout.trim()).map_err(Error::ProbeOutput)?;
    let Some(root) = probe.package.and_then(|p| p.path) else {
        return Err(Error::NotInstalled {
            package: package.to_string(),
            python: python.to_path_buf(),
        });
    };
    let source = Path::new(&root).join(rel);
    let spec = adapter
        .manifest
        .datasets
        .as_ref()
        .expect("called for an adapter with datasets");
    let names: Vec<String> = if spec.files.is_empty() {
        fs_err::read_dir(&source)
            .map_err(|e| Error::io(&source, e))?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    } else {
        spec.files.values().cloned().collect()
    };
    for name in names {
        let from = source.join(&name);
        if from.is_file() {
            fs_err::copy(&from, dir.join(&name)).map_err(|e| Error::io(&from, e))?;
        }
    }
    Ok(())
}

/// Write the adapter's built-in datasets into `dir` with its own export command (from the
/// manifest's `[datasets] export`), once per invocation. An adapter without built-in
/// datasets gets an empty directory.
async fn export_datasets(adapter: &Adapter, python: &Path, dir: &Path) -> Result<(), Error> {
    fs_err::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let Some(spec) = &adapter.manifest.datasets else {
        return Ok(());
    };
    let runtime = &adapter.manifest.runtime;
    if let Some(rel) = &spec.package_dir {
        return copy_package_datasets(adapter, python, rel, dir).await;
    }
    let program = match runtime.kind {
        scimcp_core::RuntimeKind::Python => python.to_path_buf(),
        scimcp_core::RuntimeKind::Executable => {
            PathBuf::from(runtime.executable.clone().unwrap_or_default())
        }
    };
    let dir_text = dir.display().to_string();
    let args: Vec<String> = runtime
        .launch
        .iter()
        .cloned()
        .chain(
            spec.export
                .iter()
                .map(|a| a.replace("{output_dir}", &dir_text)),
        )
        .collect();
    let mut cmd = std::process::Command::new(&program);
    cmd.args(&args)
        .envs(direct::environment_of_gate(&BTreeMap::new()));
    let step = scimcp_process::Step::new(
        format!("exporting the {} datasets", adapter.manifest.name),
        cmd,
    )
    .timeout(std::time::Duration::from_secs(600));
    tokio::task::spawn_blocking(move || scimcp_process::run(step))
        .await
        .map_err(Error::Task)?
        .and_then(scimcp_process::Captured::check)
        .map_err(|e| {
            Error::usage(
                e.to_string(),
                format!(
                    "is the runtime at {} complete? (scripts/dev-env.sh)",
                    python.display()
                ),
            )
        })?;
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    fs_err::create_dir_all(to)?;
    for entry in fs_err::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs_err::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

async fn run_scenario(
    settings: &Settings,
    s: &Scenario,
    adapter: &LoadedAdapter,
    exported: &Path,
    machine: &Machine,
) -> ScenarioReport {
    let mut report = ScenarioReport {
        name: s.name.clone(),
        adapter: s.adapter.clone(),
        workflow: s.workflow.clone(),
        expect: s.expect.as_str(),
        status: "fail",
        parity: "not_compared",
        snapshot: "not_compared",
        snapshot_set: None,
        recorded_on: None,
        tolerance: s.tolerance.clone(),
        tolerated: Vec::new(),
        same_run_tolerated: Vec::new(),
        tolerated_total: 0,
        max_rel_err: None,
        skipped: None,
        differences: Vec::new(),
        timing: Timing::default(),
        direct_command: std::iter::once(s.direct.program.clone())
            .chain(s.direct.argv.iter().cloned())
            .collect(),
        request: s.request(),
        evidence: None,
    };
    if !s.runs_on(&machine.os) {
        report.status = "skipped";
        report.snapshot = "skipped";
        report.skipped = Some(format!(
            "runs only on {} (the scenario's `platforms`), not on {}",
            s.platforms.join(", "),
            machine.os
        ));
        return report;
    }
    let (direct, mcp) = match both_sides(settings, s, adapter, exported).await {
        Ok(v) => v,
        Err(e) => {
            report.differences.push(Difference::Error {
                side: "setup",
                message: e.chain_text(),
            });
            return report;
        }
    };
    let diffs = &mut report.differences;
    let direct_ev = match direct {
        Ok((run, ev)) => {
            report.timing.direct_s = Some(round3(run.wall.as_secs_f64()));
            match ev {
                Ok(ev) => Some(ev),
                Err(e) => {
                    diffs.push(Difference::Error {
                        side: "direct",
                        message: e.chain_text(),
                    });
                    None
                }
            }
        }
        Err(e) => {
            diffs.push(Difference::Error {
                side: "direct",
                message: e.chain_text(),
            });
            None
        }
    };
    let mut plan_env = None;
    let mcp_ev = match mcp {
        Ok((run, ev)) => {
            report.timing.mcp_s = Some(round3(run.wall.as_secs_f64()));
            report.timing.mcp_session_s = Some(round3(run.session_wall.as_secs_f64()));
            plan_env = Some(run.plan_env.clone());
            match ev {
                Ok((mut ev, index_problems)) => {
                    diffs.extend(
                        index_problems
                            .into_iter()
                            .map(|message| Difference::Index { message }),
                    );
                    ev.recorded_on = Some(machine.clone().with_runtime(&run.environment));
                    Some(ev)
                }
                Err(e) => {
                    diffs.push(Difference::Error {
                        side: "mcp",
                        message: e.chain_text(),
                    });
                    None
                }
            }
        }
        Err(e) => {
            diffs.push(Difference::Error {
                side: "mcp",
                message: e.chain_text(),
            });
            None
        }
    };
    if let (Some(d), Some(m)) = (report.timing.direct_s, report.timing.mcp_s) {
        report.timing.ratio = (d > 0.0).then(|| round3(m / d));
    }
    for (side, ev) in [("direct", &direct_ev), ("mcp", &mcp_ev)] {
        if let Some(ev) = ev
            && ev.state != s.expect.as_str()
        {
            let mut actual = ev.state.clone();
            if let Some(code) = ev.exit_code {
                actual.push_str(&format!(" (exit {code})"));
            }
            if let Some(line) = &ev.error_line {
                actual.push_str(&format!(": {line}"));
            }
            diffs.push(Difference::Expectation {
                side,
                expected: s.expect.as_str().to_string(),
                actual,
            });
        }
        if let Some(ev) = ev
            && ev.process_tree_ended == Some(false)
        {
            diffs.push(Difference::Expectation {
                side,
                expected: "no process of the run left alive".into(),
                actual: format!(
                    "processes of its group still ran {} s after it ended",
                    crate::process::TREE_GRACE.as_secs()
                ),
            });
        }
    }
    if let (Some(d), Some(m)) = (&direct_ev, &mcp_ev) {
        let (mut parity, tolerated) = same_run(s, d, m);
        report.same_run_tolerated = tolerated;
        if let Some(plan_env) = &plan_env {
            parity.extend(thread_env_differences(
                &direct::environment(s, &settings.extra_env, is_python(adapter)),
                plan_env,
            ));
        }
        report.parity = if parity.is_empty() { "agree" } else { "differ" };
        diffs.extend(parity.into_iter().map(|f| Difference::Parity {
            field: f.field,
            direct: f.left,
            mcp: f.right,
        }));
    }
    if let Some(current) = &mcp_ev {
        let clean = report.differences.is_empty();
        snapshot_step(settings, s, current, clean, machine, &mut report);
    }
    report.evidence = mcp_ev;
    if report.differences.is_empty() {
        report.status = "pass";
    }
    report
}

type DirectSide = Result<(direct::DirectRun, Result<Evidence, SideError>), SideError>;
type McpSide = Result<(mcp::McpRun, Result<(Evidence, Vec<String>), SideError>), SideError>;

/// Run the direct side, then the MCP side, each in its own temporary directory.
async fn both_sides(
    settings: &Settings,
    s: &Scenario,
    adapter: &LoadedAdapter,
    exported: &Path,
) -> Result<(DirectSide, McpSide), SideError> {
    // Spaces and non-ASCII letters in every path: the way real home directories look.
    let root = tempfile::Builder::new()
        .prefix(&format!("scimcp-parity {} ", s.name))
        .tempdir()?;
    let name = &adapter.adapter.manifest.name;

    let direct_root = root.path().join("direct côté");
    let paths = DirectPaths {
        python: settings.python_for(&s.adapter).to_path_buf(),
        datasets: direct_root.join("datasets"),
        work: direct_root.join("work"),
        adapters: settings.adapters_dir.clone(),
        python_runtime: is_python(adapter),
        extra_env: settings.extra_env.clone(),
    };
    copy_dir(exported, &paths.datasets)?;
    let direct_side: DirectSide = async {
        let run = direct::run(s, &paths).await?;
        if settings.perturb.as_deref() == Some(s.name.as_str())
            && let Some(path) = direct::perturb_first_artifact(&run.out_dir)?
        {
            say(&format!(
                "      test hook {}: flipped one byte of the direct side's {path}",
                crate::cli::PERTURB_ENV
            ));
        }
        let globs = adapter
            .adapter
            .workflow(&s.workflow)
            .map(crate::evidence::work_globs)
            .unwrap_or_default();
        let ev = direct::evidence(s, &run, name, &globs);
        Ok((run, ev))
    }
    .await;

    let mcp_root = root.path().join("mcp côté");
    let mpaths = McpPaths {
        scimcp: settings.scimcp.clone(),
        python: settings.python_for(&s.adapter).to_path_buf(),
        manifest: std::path::absolute(&adapter.path).unwrap_or_else(|_| adapter.path.clone()),
        home: mcp_root.join("home"),
        start: mcp_root.join("start"),
        extra_env: settings.extra_env.clone(),
    };
    copy_dir(exported, &mpaths.start.join("data"))?;
    // The request names each input by its path below the adapters directory; the server
    // resolves it below its start directory, where the same path holds a copy.
    for input in s.inputs.values() {
        for rel in input.paths() {
            let target = mpaths.start.join(rel);
            if let Some(parent) = target.parent() {
                fs_err::create_dir_all(parent)?;
            }
            fs_err::copy(settings.adapters_dir.join(rel), &target)?;
        }
    }
    let mcp_side: McpSide = async {
        let run = mcp::run(s, &mpaths).await?;
        let globs = adapter
            .adapter
            .workflow(&s.workflow)
            .map(crate::evidence::work_globs)
            .unwrap_or_default();
        let reads_text = adapter
            .adapter
            .workflow(&s.workflow)
            .is_some_and(|w| !w.metrics.is_empty());
        let ev = mcp::evidence(s, &run, name, &globs, reads_text);
        Ok((run, ev))
    }
    .await;
    Ok((direct_side, mcp_side))
}

/// Does the adapter run a Python interpreter (whose direct side gets [`direct::DIRECT_ENV`])?
fn is_python(adapter: &LoadedAdapter) -> bool {
    adapter.adapter.manifest.runtime.kind == scimcp_core::RuntimeKind::Python
}

/// The numerical threading variables must be the same on both paths (unset on both is the
/// same): a reduction split over another number of threads rounds differently, and the
/// evidence would then depend on which path ran.
fn thread_env_differences(
    direct: &BTreeMap<String, String>,
    plan: &BTreeMap<String, String>,
) -> Vec<crate::diff::FieldDiff> {
    scimcp_core::run_env::NUMERIC_THREAD_VARS
        .iter()
        .filter(|name| direct.get(**name) != plan.get(**name))
        .map(|name| crate::diff::FieldDiff {
            field: format!("env.{name}"),
            left: direct.get(*name).cloned().unwrap_or_else(|| "unset".into()),
            right: plan.get(*name).cloned().unwrap_or_else(|| "unset".into()),
            numeric: None,
        })
        .collect()
}

/// A snapshot file read back as evidence.
enum Recorded {
    Missing,
    Unreadable(String),
    Evidence(Box<Evidence>),
}

fn read_recorded(path: &Path) -> Recorded {
    match snapshot::read_contents(path) {
        Ok(None) => Recorded::Missing,
        Err(e) => Recorded::Unreadable(e.to_string()),
        Ok(Some(text)) => match serde_json::from_str::<Evidence>(&text) {
            Ok(ev) => Recorded::Evidence(Box::new(ev)),
            Err(e) => Recorded::Unreadable(format!(
                "{} is not parity evidence JSON ({e}); record it again with `scimcp-parity run`",
                path.display()
            )),
        },
    }
}

/// Record (`run`) or verify (`check`, `review`) the scenario's snapshot, filling in the
/// report's evidence fields. `clean` says both paths agreed and met the expectation: only
/// then is evidence worth recording.
///
/// The shared snapshot (`parity__<name>.snap`) holds for every platform unless a platform
/// has its own (`<os>-<arch>/parity__<name>.snap`), which is allowed only where that
/// platform's results differ beyond tolerance from the shared one.
fn snapshot_step(
    settings: &Settings,
    s: &Scenario,
    current: &Evidence,
    clean: bool,
    machine: &Machine,
    report: &mut ScenarioReport,
) {
    let shared = snapshot::path_for(&settings.snapshots_dir, &s.name);
    let platform_dir = settings.snapshots_dir.join(machine.platform());
    let own = snapshot::path_for(&platform_dir, &s.name);
    if settings.mode == Mode::Run {
        report.snapshot = record(settings, s, current, clean, &shared, &own, machine, report);
        return;
    }
    let (path, set) = if own.is_file() {
        (own.clone(), Some(machine.platform()))
    } else {
        (shared.clone(), None)
    };
    report.snapshot_set = set.clone();
    let recorded = match read_recorded(&path) {
        Recorded::Missing => {
            report.differences.push(Difference::Snapshot {
                field: "(whole snapshot)".into(),
                snapshot: format!("missing: {}", path.display()),
                current: "evidence to record with `scimcp-parity run`".into(),
                numeric: None,
            });
            if settings.mode == Mode::Review {
                review_output(settings, s, &path, "", current, None);
            }
            report.snapshot = "missing";
            return;
        }
        Recorded::Unreadable(message) => {
            report.differences.push(Difference::Error {
                side: "snapshot",
                message,
            });
            return;
        }
        Recorded::Evidence(ev) => ev,
    };
    if set.is_some()
        && let Recorded::Evidence(shared_ev) = read_recorded(&shared)
        && against_recorded(s, &shared_ev, current).drift.is_empty()
    {
        report.differences.push(Difference::Error {
            side: "snapshot",
            message: format!(
                "{} is not needed: the shared snapshot {} holds on {} within tolerance; delete the platform snapshot",
                own.display(),
                shared.display(),
                machine.platform()
            ),
        });
    }
    report.recorded_on = recorded.recorded_on.clone();
    let comparison = against_recorded(s, &recorded, current);
    fill_tolerated(report, &comparison);
    report.snapshot = if comparison.exact() {
        "matched"
    } else if comparison.drift.is_empty() {
        "within_tolerance"
    } else {
        "drifted"
    };
    if settings.mode == Mode::Review && !comparison.exact() {
        review_output(
            settings,
            s,
            &path,
            &snapshot::evidence_text(&recorded),
            current,
            Some(&comparison),
        );
    }
    report
        .differences
        .extend(comparison.drift.into_iter().map(|f| Difference::Snapshot {
            field: f.field,
            snapshot: f.left,
            current: f.right,
            numeric: f.numeric,
        }));
}

fn fill_tolerated(report: &mut ScenarioReport, comparison: &EvidenceComparison) {
    report.tolerated = comparison.tolerated.clone();
    report.tolerated_total = comparison.tolerated.len() + comparison.tolerated_more;
    report.max_rel_err = comparison
        .tolerated
        .iter()
        .map(|n| n.rel_err)
        .reduce(f64::max);
}

/// `run`: write the evidence unless the file already holds evidence this run matches
/// within tolerance (so re-recording on another machine changes nothing). With
/// `--platform`, write this platform's own snapshot, which only results that differ beyond
/// tolerance from the shared snapshot may have.
#[allow(clippy::too_many_arguments)]
fn record(
    settings: &Settings,
    s: &Scenario,
    current: &Evidence,
    clean: bool,
    shared: &Path,
    own: &Path,
    machine: &Machine,
    report: &mut ScenarioReport,
) -> &'static str {
    if !clean {
        return "not_recorded";
    }
    let target = if settings.platform_snapshot {
        if let Recorded::Evidence(shared_ev) = read_recorded(shared) {
            let comparison = against_recorded(s, &shared_ev, current);
            if comparison.drift.is_empty() {
                fill_tolerated(report, &comparison);
                report.differences.push(Difference::Error {
                    side: "snapshot",
                    message: format!(
                        "not recording a {} snapshot: the shared snapshot {} holds here within tolerance",
                        machine.platform(),
                        shared.display()
                    ),
                });
                return "not_recorded";
            }
        }
        report.snapshot_set = Some(machine.platform());
        own
    } else {
        shared
    };
    let pending =
        snapshot::pending_path_for(target.parent().unwrap_or(&settings.snapshots_dir), &s.name);
    if pending.is_file() {
        let _ = fs_err::remove_file(&pending);
    }
    if let Recorded::Evidence(old) = read_recorded(target)
        && old.format == EVIDENCE_FORMAT
    {
        let comparison = against_recorded(s, &old, current);
        if comparison.drift.is_empty() {
            fill_tolerated(report, &comparison);
            report.recorded_on = old.recorded_on.clone();
            return "unchanged";
        }
    }
    let header = snapshot::Header {
        source: source_name(settings, &s.path),
        description: s.description.clone(),
    };
    match snapshot::write(
        target,
        &snapshot::render(&header, &snapshot::evidence_text(current)),
    ) {
        Ok(()) => "recorded",
        Err(e) => {
            report.differences.push(Difference::Error {
                side: "snapshot",
                message: e.to_string(),
            });
            "not_recorded"
        }
    }
}

/// `review`: every float that moved (inside or beyond its tolerance, with its absolute and
/// relative error), the drift as a unified diff, and a pending `.snap.new` beside the
/// snapshot for it.
fn review_output(
    settings: &Settings,
    s: &Scenario,
    path: &Path,
    recorded: &str,
    current: &Evidence,
    comparison: Option<&EvidenceComparison>,
) {
    let current_text = snapshot::evidence_text(current);
    if let Some(c) = comparison {
        for n in &c.tolerated {
            say(&format!("      {n}"));
        }
        if c.tolerated_more > 0 {
            say(&format!(
                "      … and {} more floats inside tolerance",
                c.tolerated_more
            ));
        }
        for d in c.drift.iter().filter_map(|d| d.numeric.as_ref()) {
            say(&format!("      {d}"));
        }
    }
    say(&snapshot::unified_diff(
        &path.display().to_string(),
        &format!("{}\n", recorded.trim_end()),
        &format!("{}\n", current_text.trim_end()),
    ));
    let pending =
        snapshot::pending_path_for(path.parent().unwrap_or(&settings.snapshots_dir), &s.name);
    let header = snapshot::Header {
        source: source_name(settings, &s.path),
        description: s.description.clone(),
    };
    match snapshot::write(&pending, &snapshot::render(&header, &current_text)) {
        Ok(()) => say(&format!(
            "      pending snapshot written: {}",
            pending.display()
        )),
        Err(e) => say(&format!("      cannot write the pending snapshot: {e}")),
    }
}

/// The scenario file as the snapshot header names it: relative to the workspace root when
/// inside it, so snapshots do not record anyone's home directory.
fn source_name(settings: &Settings, path: &Path) -> String {
    settings
        .workspace_root
        .as_deref()
        .and_then(|root| path.strip_prefix(root).ok())
        .map_or_else(
            || {
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            },
            |rel| rel.to_string_lossy().replace('\\', "/"),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_picks_one_ordinary_scenario_per_workflow() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, workflow: &str, expect: &str| {
            let extra = if expect == "cancelled" {
                "[cancel]\nwhen_stdout_contains = \"x\"\n"
            } else {
                ""
            };
            let text = format!(
                "description = \"d\"\nadapter = \"refsci\"\nworkflow = \"{workflow}\"\nexpect = \"{expect}\"\n[request]\ndataset = \"x.csv\"\n[direct]\nargv = [\"-m\", \"refsci\"]\n{extra}"
            );
            fs_err::write(dir.path().join(format!("{name}.toml")), text).unwrap();
        };
        write("a_cancelled", "regression", "cancelled");
        write("b_linear", "regression", "succeeded");
        write("c_ridge", "regression", "succeeded");
        write("d_bad", "classification", "failed");
        let all = scenario::load_dir(dir.path()).unwrap();
        let names = |v: Vec<&Scenario>| v.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(quick_set(&all, true)), ["b_linear", "d_bad"]);
        assert_eq!(quick_set(&all, false).len(), 4);
    }

    #[test]
    fn shards_partition_the_scenarios() {
        let n = 3;
        let mut seen = vec![0; 10];
        for shard in 1..=n {
            for (k, count) in seen.iter_mut().enumerate() {
                if in_shard(k, Some((shard, n))) {
                    *count += 1;
                }
            }
        }
        assert!(seen.iter().all(|c| *c == 1), "{seen:?}");
        assert!((0..10).all(|k| in_shard(k, None)));
    }
}
