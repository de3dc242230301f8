//! A bounded load test, loopback only, ignored by default (`bench/http-load.sh` runs it):
//! `SCIMCP_LOAD_CLIENTS` (default 50) MCP clients at once over Streamable HTTP, each doing
//! what an AI client does for one short refsci analysis — initialize, get_capabilities,
//! validate_analysis, start_analysis, get_run_result until the end. The server's limits
//! (max_pending_runs 4, max_concurrent_runs 2) answer surplus starts with `too_many_runs`;
//! a client then waits (0.5 s doubling to 4 s) and tries again, as the error's next_action
//! says.
//!
//! Every run must succeed, none may be lost (exactly one run per client, all `succeeded`),
//! and the server's peak resident memory must stay under a bound. The figures (wall time,
//! per-call latencies, refusals, peak RSS) are printed and written to
//! `target/http-load.json` for docs/BENCHMARKS.md.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use scimcp_e2e::http_client::{self, HttpTarget};
use scimcp_e2e::http_server::{HttpServer, TestRoot};
use serde_json::{Value, json};

/// The server's peak RSS may not exceed this (it idles near 20 MiB).
const RSS_BOUND_KIB: u64 = 256 * 1024;

#[derive(Debug, Default)]
struct ClientReport {
    run_id: String,
    state: String,
    /// Seconds per call, by tool (`initialize` for the handshake).
    calls: Vec<(&'static str, f64)>,
    refused_starts: u32,
    total_s: f64,
    /// The run's own duration (CLI start to end), from its result.
    run_s: f64,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

async fn one_client(target: HttpTarget, n: usize) -> anyhow::Result<ClientReport> {
    let begun = Instant::now();
    let mut report = ClientReport::default();
    let t = Instant::now();
    let client = ().serve(http_client::transport(&target, None, &[])).await?;
    report.calls.push(("initialize", t.elapsed().as_secs_f64()));
    let analysis = json!({"workflow": "regression", "dataset": "data/diabetes.csv",
                          "parameters": {"target": "target", "seed": n}});
    let timed = |name: &'static str, args: Value| {
        let client = &client;
        async move {
            let t = Instant::now();
            let r = http_client::call_tool(client, name, args).await?;
            Ok::<_, anyhow::Error>((r, t.elapsed().as_secs_f64()))
        }
    };
    let (_, s) = timed("get_capabilities", json!({})).await?;
    report.calls.push(("get_capabilities", s));
    let (validated, s) = timed("validate_analysis", analysis.clone()).await?;
    report.calls.push(("validate_analysis", s));
    let validated = validated.structured_content.unwrap_or_default();
    let mut start = analysis.clone();
    start["validation_id"] = validated["validation_id"].clone();
    let mut pause = Duration::from_millis(500);
    let run_id = loop {
        let (r, s) = timed("start_analysis", start.clone()).await?;
        let body = r.structured_content.unwrap_or_default();
        if r.is_error != Some(true) {
            report.calls.push(("start_analysis (started)", s));
            break body["run_id"].as_str().unwrap_or_default().to_string();
        }
        report.calls.push(("start_analysis (too_many_runs)", s));
        anyhow::ensure!(
            body["error"]["code"] == "too_many_runs",
            "client {n}: start refused: {body}"
        );
        report.refused_starts += 1;
        // Back off as a client would: doubling from half a second to 4 s, spread so that
        // retries do not align.
        let jitter = Duration::from_millis((n as u64 * 37) % 250);
        tokio::time::sleep(pause + jitter).await;
        pause = (pause * 2).min(Duration::from_secs(4));
    };
    report.run_id = run_id.clone();
    loop {
        let result = http_client::call_tool(
            &client,
            "get_run_result",
            json!({"run_id": run_id, "wait_s": 300}),
        )
        .await?;
        let body = result.structured_content.unwrap_or_default();
        if body["terminal"] == true {
            report.state = body["state"].as_str().unwrap_or_default().to_string();
            report.run_s = body["result"]["duration_ms"].as_f64().unwrap_or(0.0) / 1e3;
            break;
        }
    }
    let (_, s) = timed("list_runs", json!({"limit": 5})).await?;
    report.calls.push(("list_runs", s));
    client.cancel().await?;
    report.total_s = begun.elapsed().as_secs_f64();
    Ok(report)
}

// The figures are this test's output: printed for the person running the benchmark.
#[allow(clippy::print_stdout)]
#[test]
#[ignore = "a load test: bench/http-load.sh runs it"]
fn fifty_clients_each_run_an_analysis_to_the_end() {
    let clients: usize = std::env::var("SCIMCP_LOAD_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let root = TestRoot::new().unwrap();
    let server = HttpServer::start(&root, &["--listen", "127.0.0.1:0"], &[]).unwrap();
    let pid = server.child.id();
    let idle_rss = server.peak_rss_kib().unwrap_or(0);
    // Sample the server's RSS throughout (VmHWM gives the peak; the samples show the end).
    let done = Arc::new(AtomicBool::new(false));
    let last_rss = Arc::new(AtomicU64::new(0));
    let sampler = {
        let done = Arc::clone(&done);
        let last_rss = Arc::clone(&last_rss);
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                if let Ok(status) = fs_err::read_to_string(format!("/proc/{pid}/status"))
                    && let Some(kib) = status
                        .lines()
                        .find_map(|l| l.strip_prefix("VmRSS:"))
                        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                {
                    last_rss.store(kib, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let target = HttpTarget {
        connect: std::net::SocketAddr::from(([127, 0, 0, 1], server.port)),
        authority: format!("127.0.0.1:{}", server.port),
        tls: None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let begun = Instant::now();
    let reports: Vec<ClientReport> = runtime.block_on(async {
        let tasks: Vec<_> = (0..clients)
            .map(|n| tokio::spawn(one_client(target.clone(), n)))
            .collect();
        let mut reports = Vec::new();
        for (n, task) in tasks.into_iter().enumerate() {
            reports.push(
                task.await
                    .unwrap()
                    .unwrap_or_else(|e| panic!("client {n}: {e:#}\n{}", server.log())),
            );
        }
        reports
    });
    let wall_s = begun.elapsed().as_secs_f64();
    done.store(true, Ordering::SeqCst);
    sampler.join().unwrap();
    let peak_rss = server.peak_rss_kib().unwrap_or(0);
    let end_rss = last_rss.load(Ordering::SeqCst);

    // None lost: one run per client, every one succeeded, and the server knows no other.
    let mut run_ids: Vec<&str> = reports.iter().map(|r| r.run_id.as_str()).collect();
    run_ids.sort();
    run_ids.dedup();
    assert_eq!(run_ids.len(), clients, "runs were shared or lost");
    let failed: Vec<_> = reports.iter().filter(|r| r.state != "succeeded").collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(root.run_dirs().len(), clients, "run directories != clients");
    for run in root.run_dirs() {
        let status: Value = serde_json::from_slice(
            &fs_err::read(root.runs_dir().join(&run).join("status.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(status["state"], "succeeded", "{run}: {status:#}");
    }
    assert!(
        peak_rss < RSS_BOUND_KIB,
        "server peak RSS {peak_rss} KiB over the {RSS_BOUND_KIB} KiB bound"
    );

    let mut by_call: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    for r in &reports {
        for (name, s) in &r.calls {
            by_call.entry(name).or_default().push(*s);
        }
    }
    let mut latencies = serde_json::Map::new();
    println!("| call | count | p50 (ms) | p95 (ms) | max (ms) |");
    println!("|---|---:|---:|---:|---:|");
    for (name, mut v) in by_call {
        v.sort_by(|a, b| a.total_cmp(b));
        let (p50, p95, max) = (
            percentile(&v, 0.5) * 1e3,
            percentile(&v, 0.95) * 1e3,
            v.last().copied().unwrap_or(0.0) * 1e3,
        );
        println!("| {name} | {} | {p50:.0} | {p95:.0} | {max:.0} |", v.len());
        latencies.insert(
            name.to_string(),
            json!({"count": v.len(), "p50_ms": p50, "p95_ms": p95, "max_ms": max}),
        );
    }
    let mut totals: Vec<f64> = reports.iter().map(|r| r.total_s).collect();
    totals.sort_by(|a, b| a.total_cmp(b));
    let refused: u32 = reports.iter().map(|r| r.refused_starts).sum();
    let mut runs: Vec<f64> = reports.iter().map(|r| r.run_s).collect();
    runs.sort_by(|a, b| a.total_cmp(b));
    let summary = json!({
        "clients": clients,
        "runs_succeeded": reports.len() - failed.len(),
        "wall_s": wall_s,
        "per_client_s": {"p50": percentile(&totals, 0.5), "p95": percentile(&totals, 0.95), "max": totals.last()},
        "run_duration_s": {"p50": percentile(&runs, 0.5), "p95": percentile(&runs, 0.95), "max": runs.last()},
        "refused_starts_too_many_runs": refused,
        "server_rss_kib": {"idle_peak": idle_rss, "peak": peak_rss, "at_end": end_rss},
        "latencies": latencies,
    });
    println!("{summary:#}");
    let out = scimcp_e2e::workspace_root().join("target/http-load.json");
    let _ = fs_err::write(&out, format!("{summary:#}\n"));
}
