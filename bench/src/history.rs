//! A lab server with years of history (issue #31): cold start to `tools/list` and the
//! `list_runs` pages with 100,000 runs in the data directory, against an empty one.
//!
//! The history is one real finished run of the trivial CLI cloned with fresh run ids and
//! timestamps (every tenth clone recorded as failed, so a filter by state has something to
//! select), its files written directly. Writing 100,000 run directories takes a while, so the
//! history is kept under `target/bench/history-N/` (outside the work directory every run
//! wipes) and reused while its stamp matches [`FIXTURE_VERSION`]. The server may add its own
//! files to that home (an index of the runs); it is its job to keep them right.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, ensure};
use serde::Serialize;
use serde_json::{Value, json};

use crate::fixture::Fixture;
use crate::rpc::{StdioClient, tool_content};
use crate::startup::cold_start;
use crate::stats::{Summary, ms};

/// Runs in the large history.
pub const RUNS: usize = 100_000;

/// Bump when the clones' layout changes: a cached history with another stamp is rebuilt.
const FIXTURE_VERSION: u32 = 1;

/// One in this many clones is recorded as failed.
const FAILED_EVERY: usize = 10;

/// How long the `list_runs` calls of one server may take in all before the rounds stop
/// early (a server that reads every run on each call would otherwise take many minutes).
const CALL_BUDGET: Duration = Duration::from_secs(30);

/// Everything this module measures.
#[derive(Debug, Serialize)]
pub struct History {
    pub runs: usize,
    /// Seconds spent writing the history in this run (0 when the cached one was reused).
    pub fixture_s: f64,
    pub fixture_reused: bool,
    pub rounds: usize,
    /// Cold start to `tools/list` answered, empty history / this history / the peer (empty).
    pub empty_tools_list_ms: Summary,
    pub full_tools_list_ms: Summary,
    pub peer_tools_list_ms: Summary,
    pub empty_idle_rss_mib: Summary,
    pub full_idle_rss_mib: Summary,
    pub peer_idle_rss_mib: Summary,
    /// `list_runs` first page (default arguments) on a warm server with this history.
    pub list_first_page_ms: Summary,
    /// The peer's, on the same history (it reads every run's status on each call).
    pub peer_list_first_page_ms: Summary,
    /// The filter used for the filtered page, as JSON arguments; `None` when this
    /// scimcp's `list_runs` takes no filter.
    pub filter: Option<Value>,
    pub list_filtered_ms: Option<Summary>,
    /// Runs the filtered page's `total` counted.
    pub filtered_total: Option<u64>,
    /// `--baseline`: another scimcp binary's empty-history figures, interleaved with these.
    pub baseline: Option<Baseline>,
}

/// The `--baseline` binary's empty-history cold starts, measured in the same rounds.
#[derive(Debug, Serialize)]
pub struct Baseline {
    pub binary: String,
    pub tools_list_ms: Summary,
    pub idle_rss_mib: Summary,
}

/// Measure with `rounds` cold starts and `calls` `list_runs` calls.
pub fn run(
    fx: &Fixture,
    rounds: usize,
    calls: usize,
    baseline: Option<&Path>,
) -> anyhow::Result<History> {
    let (home, fixture_s, reused) = cached_history(fx, RUNS)?;
    let empty = fx.dir("home-history-empty")?;
    let cwd = fx.start_dir("start-history")?;
    let ours_empty = fx.scimcp("refsci", &empty, &cwd, &[]);
    let ours_full = fx.scimcp("refsci", &home, &cwd, &[]);
    let peer = fx.peer(&empty, &cwd, &[]);
    // The baseline gets its own empty home: another build may lay its state out otherwise.
    let base = match baseline {
        Some(binary) => {
            let mut spec = fx.scimcp("refsci", &fx.dir("home-history-baseline")?, &cwd, &[]);
            // The server starts in its own directory: a relative path would name nothing.
            spec.program = std::path::absolute(binary)?;
            // It may list fewer tools than this build.
            let tools = StdioClient::list_tools(&spec)?.len();
            Some((spec, tools))
        }
        None => None,
    };
    // Warm-up: the page cache, and whatever the server writes on its first start with this
    // history (an index it builds once).
    eprintln!("  first start with {RUNS} runs (warm-up)");
    let first = Instant::now();
    cold_start(&ours_full, fx.tool_count)?;
    eprintln!("  … took {:.0} ms", ms(first.elapsed()));
    cold_start(&ours_empty, fx.tool_count)?;
    cold_start(&peer, fx.tool_count)?;
    if let Some((spec, tools)) = &base {
        cold_start(spec, *tools)?;
    }
    let (mut e, mut f, mut p, mut b) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        eprint!("\r  cold start {}/{rounds}", round + 1);
        // Alternate the order so neither side always follows the other's page-cache work.
        if round % 2 == 0 {
            e.push(cold_start(&ours_empty, fx.tool_count)?);
            if let Some((spec, tools)) = &base {
                b.push(cold_start(spec, *tools)?);
            }
            f.push(cold_start(&ours_full, fx.tool_count)?);
        } else {
            f.push(cold_start(&ours_full, fx.tool_count)?);
            if let Some((spec, tools)) = &base {
                b.push(cold_start(spec, *tools)?);
            }
            e.push(cold_start(&ours_empty, fx.tool_count)?);
        }
        p.push(cold_start(&peer, fx.tool_count)?);
    }
    eprintln!();
    let pick = |v: &[crate::startup::Sample], g: fn(&crate::startup::Sample) -> f64| {
        Summary::of(&v.iter().map(g).collect::<Vec<_>>())
    };

    let mut client = StdioClient::connect(&ours_full)?;
    let schema = list_runs_schema(&mut client)?;
    let filter = choose_filter(&schema);
    let first_page = json!({});
    let page = client.call("list_runs", first_page.clone())?;
    ensure!(
        page["runs"]["total"] == RUNS,
        "list_runs counted {} runs, not {RUNS}",
        page["runs"]["total"]
    );
    eprintln!("  list_runs first page");
    let list_first_page_ms = time_calls(&mut client, &first_page, calls)?;
    let (list_filtered_ms, filtered_total) = match &filter {
        Some(args) => {
            let page = client.call("list_runs", args.clone())?;
            let total = page["runs"]["total"].as_u64();
            eprintln!("  list_runs filtered by {args}: {total:?} runs");
            (Some(time_calls(&mut client, args, calls)?), total)
        }
        None => (None, None),
    };
    client.close(Duration::from_secs(10))?;

    eprintln!("  the peer's list_runs on the same history");
    let mut theirs = StdioClient::connect(&fx.peer(&home, &cwd, &[]))?;
    let peer_list_first_page_ms = time_calls(&mut theirs, &first_page, calls.min(5))?;
    theirs.close(Duration::from_secs(10))?;

    Ok(History {
        runs: RUNS,
        fixture_s: crate::stats::round(fixture_s, 1),
        fixture_reused: reused,
        rounds,
        empty_tools_list_ms: pick(&e, |s| s.tools_list_ms),
        full_tools_list_ms: pick(&f, |s| s.tools_list_ms),
        peer_tools_list_ms: pick(&p, |s| s.tools_list_ms),
        empty_idle_rss_mib: pick(&e, |s| s.rss_mib),
        full_idle_rss_mib: pick(&f, |s| s.rss_mib),
        peer_idle_rss_mib: pick(&p, |s| s.rss_mib),
        list_first_page_ms,
        peer_list_first_page_ms,
        filter,
        list_filtered_ms,
        filtered_total,
        baseline: base.map(|(spec, _)| Baseline {
            binary: spec.program.display().to_string(),
            tools_list_ms: pick(&b, |s| s.tools_list_ms),
            idle_rss_mib: pick(&b, |s| s.rss_mib),
        }),
    })
}

/// `list_runs`' input schema, from `tools/list`.
fn list_runs_schema(client: &mut StdioClient) -> anyhow::Result<Value> {
    let listed = client.request("tools/list", json!({}))?;
    listed["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == "list_runs"))
        .map(|t| t["inputSchema"].clone())
        .context("tools/list has no list_runs")
}

/// A filter a lab would use, among those this `list_runs` takes: the failed runs when it
/// filters by state, else one workflow's runs.
fn choose_filter(schema: &Value) -> Option<Value> {
    let props = schema["properties"].as_object()?;
    if props.contains_key("state") {
        let state = &props["state"];
        // A list of states or one state, whichever the schema asks for.
        let array = state["type"] == "array"
            || state["anyOf"]
                .as_array()
                .is_some_and(|v| v.iter().any(|s| s["type"] == "array"));
        return Some(if array {
            json!({"state": ["failed"]})
        } else {
            json!({"state": "failed"})
        });
    }
    props
        .contains_key("workflow")
        .then(|| json!({"workflow": "touch"}))
}

/// Time `list_runs` with `args` up to `n` times (fewer when [`CALL_BUDGET`] runs out;
/// at least 3).
fn time_calls(client: &mut StdioClient, args: &Value, n: usize) -> anyhow::Result<Summary> {
    let call = json!({"name": "list_runs", "arguments": args});
    // Warm-up.
    tool_content("list_runs", client.request("tools/call", call.clone())?)?;
    let t0 = Instant::now();
    let mut v = Vec::with_capacity(n);
    while v.len() < n && (v.len() < 3 || t0.elapsed() < CALL_BUDGET) {
        let sent = Instant::now();
        let (result, at) = client.request_received("tools/call", call.clone())?;
        v.push(ms(at - sent));
        tool_content("list_runs", result)?;
    }
    Ok(Summary::of(&v))
}

/// The history home of `count` runs under `target/bench/history-COUNT/home`, written when
/// missing or stale: (home, seconds spent writing it, whether it was reused).
pub fn cached_history(fx: &Fixture, count: usize) -> anyhow::Result<(PathBuf, f64, bool)> {
    let root = fx.repo.join(format!("target/bench/history-{count}"));
    let home = root.join("home");
    let stamp = root.join("stamp");
    let want = format!("{FIXTURE_VERSION} {count}\n");
    if fs_err::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) && home.is_dir() {
        eprintln!(
            "  reusing the history of {count} runs in {}",
            root.display()
        );
        return Ok((home, 0.0, true));
    }
    if root.exists() {
        fs_err::remove_dir_all(&root)?;
    }
    fs_err::create_dir_all(&home)?;
    eprintln!("  writing a history of {count} runs in {}", root.display());
    let t0 = Instant::now();
    // One real run of the trivial CLI is the template.
    fx.seed_history(&home, 1)?;
    clone_runs(&home, count - 1)?;
    let took = t0.elapsed().as_secs_f64();
    eprintln!("  … {took:.1} s");
    fs_err::write(&stamp, want)?;
    Ok((home, took, false))
}

/// A record file of the template run: its path below the run directory, and its bytes.
type Record = (PathBuf, Vec<u8>);

/// Clone the one run in `home/runs` `n` times, on a few threads (the work is file creation).
fn clone_runs(home: &Path, n: usize) -> anyhow::Result<()> {
    let runs = home.join("runs");
    let template = fs_err::read_dir(&runs)?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("run-"))
        .context("the seed run is missing")?
        .path();
    let mut records: Vec<Record> = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    collect(&template, Path::new(""), &mut records, &mut dirs)?;
    let status: Value = serde_json::from_slice(
        &records
            .iter()
            .find(|(p, _)| p == Path::new("status.json"))
            .context("the seed run has no status.json")?
            .1,
    )?;
    let now = jiff::Timestamp::now();
    let threads = 4;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (runs, records, dirs, status, template) =
                    (&runs, &records, &dirs, &status, &template);
                scope.spawn(move || -> anyhow::Result<()> {
                    // The file each dataset copy is linked to: the template's until it has
                    // as many links as the file system allows (65,000 on ext4), then a copy.
                    let mut sources: std::collections::HashMap<&Path, PathBuf> =
                        std::collections::HashMap::new();
                    for i in (1..=n).filter(|i| i % threads == t) {
                        let id = format!("run-{:016x}", 0x5eed_0000_0000_0000u64 + i as u64);
                        let dir = runs.join(&id);
                        fs_err::create_dir_all(&dir)?;
                        for d in dirs {
                            fs_err::create_dir_all(dir.join(d))?;
                        }
                        let at = (now - jiff::SignedDuration::from_secs(i as i64)).to_string();
                        for (path, bytes) in records {
                            if path == Path::new("status.json") {
                                let mut s = status.clone();
                                s["run_id"] = json!(id);
                                s["created_at"] = json!(at);
                                s["started_at"] = json!(at);
                                s["ended_at"] = json!(at);
                                if i % FAILED_EVERY == 0 {
                                    s["state"] = json!("failed");
                                    s["reason"] = json!("exit_code");
                                    s["exit_code"] = json!(1);
                                    s["message"] = json!("the CLI exited with status 1");
                                }
                                fs_err::write(dir.join(path), serde_json::to_vec_pretty(&s)?)?;
                            } else if path.starts_with("work/inputs") {
                                // The run's copy of its dataset: the same bytes in every
                                // clone, never read by start-up or listing, so one inode
                                // shared by hard links (100,000 copies would be 4 GiB and
                                // minutes of writing).
                                let source =
                                    sources.entry(path).or_insert_with(|| template.join(path));
                                let target = dir.join(path);
                                match fs_err::hard_link(&*source, &target) {
                                    Err(e) if e.kind() == std::io::ErrorKind::TooManyLinks => {
                                        fs_err::copy(&*source, &target)?;
                                        *source = target;
                                    }
                                    linked => linked?,
                                }
                            } else {
                                fs_err::write(dir.join(path), bytes)?;
                            }
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("a clone thread panicked"))
    })
}

/// Every file and directory below `root/rel` (paths relative to `root`).
fn collect(
    root: &Path,
    rel: &Path,
    records: &mut Vec<Record>,
    dirs: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    for entry in fs_err::read_dir(root.join(rel))?.flatten() {
        let path = rel.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            dirs.push(path.clone());
            collect(root, &path, records, dirs)?;
        } else if kind.is_file() {
            records.push((path.clone(), fs_err::read(root.join(&path))?));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_follows_the_schema() {
        let states = json!({"properties": {"state": {"type": "array", "items": {}}}});
        assert_eq!(choose_filter(&states), Some(json!({"state": ["failed"]})));
        let one = json!({"properties": {"state": {"type": "string"}}});
        assert_eq!(choose_filter(&one), Some(json!({"state": "failed"})));
        let workflow = json!({"properties": {"workflow": {"type": "string"}}});
        assert_eq!(choose_filter(&workflow), Some(json!({"workflow": "touch"})));
        let none = json!({"properties": {"offset": {"type": "integer"}}});
        assert_eq!(choose_filter(&none), None);
    }
}
