//! Campaigns at their limit (issue #31): a refsci `regression` campaign of 1,000 items (a
//! grid over seeds) previewed (every item validated), then started, on a warm stdio server;
//! the server's RSS before and after, status pages and the result table while it runs, and
//! the result table over every item once the campaign is cancelled (all items ended).
//!
//! The items are real runs; the campaign runs one at a time and is cancelled after the
//! measurements, so the benchmark does not wait for 1,000 model fits. When the server's
//! limit is above 1,000, the same is measured at the limit too. Then a campaign of 1,000
//! items of the trivial CLI (a few milliseconds each) runs to its end, and its status pages
//! and table are timed with every item a finished run.

use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use serde::Serialize;
use serde_json::{Value, json};

use crate::fixture::Fixture;
use crate::rpc::{StdioClient, rss_mib, tool_content};
use crate::stats::{Summary, ms};

/// The sizes measured: the 1,000, and the raised limit when this server takes it.
pub const SIZES: [usize; 2] = [1_000, 10_000];

/// One campaign size.
#[derive(Debug, Serialize)]
pub struct CampaignScale {
    pub items: usize,
    /// `start_campaign` with `confirm: false`: every item validated, nothing started.
    pub preview_ms: f64,
    /// `start_campaign` with `confirm: true` and the preview's id: validated again and
    /// submitted (records written, the first items queued).
    pub start_ms: f64,
    /// Server RSS after the start minus before the preview (MiB), and its peak's growth.
    pub rss_growth_mib: f64,
    pub peak_rss_growth_mib: f64,
    /// `get_campaign_status`, first page (50 items) and the last page, while it runs.
    pub status_first_page_ms: Summary,
    pub status_last_page_ms: Summary,
    /// `get_campaign_result` (`wait_s: 0`): the table's first page while it runs.
    pub result_running_ms: Summary,
    /// `cancel_campaign`.
    pub cancel_ms: f64,
    /// `get_campaign_result` once every item has ended: default page, and all rows at once
    /// (`detail: full`, limit 1000).
    pub result_ended_ms: Summary,
    pub result_ended_full_ms: Summary,
    /// Items counted as ended in that table.
    pub ended: u64,
}

/// A campaign of the trivial CLI run to its end: every item a finished run, so the status
/// and the table read every item's run.
#[derive(Debug, Serialize)]
pub struct RunToEnd {
    pub items: usize,
    pub max_concurrent: u32,
    pub start_ms: f64,
    /// From the start's answer to `get_campaign_result` saying every item ended.
    pub wall_s: f64,
    pub succeeded: u64,
    pub status_first_page_ms: Summary,
    pub status_last_page_ms: Summary,
    pub result_ms: Summary,
    pub result_full_ms: Summary,
    pub rss_growth_mib: f64,
}

/// What came of each size: measured, or refused by this server's limit.
#[derive(Debug, Serialize)]
pub struct Campaigns {
    pub rounds: usize,
    pub measured: Vec<CampaignScale>,
    /// Sizes the server refused, with its message (a limit below them).
    pub refused: Vec<(usize, String)>,
    pub run_to_end: Option<RunToEnd>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_to_end_error: Option<String>,
}

/// Items of the campaign run to its end, and how many run at once (the trivial adapter's
/// default queue takes 4 pending runs).
const RUN_TO_END_ITEMS: usize = 1_000;
const RUN_TO_END_CONCURRENT: u32 = 4;

/// Run a campaign of the trivial CLI over [`RUN_TO_END_ITEMS`] seeds to its end, then time
/// its pages.
fn run_to_end(fx: &Fixture, rounds: usize) -> anyhow::Result<RunToEnd> {
    let adapter = fx.trivial_adapter()?;
    let cwd = fx.start_dir("start-campaign-end")?;
    let home = fx.dir("home-campaign-end")?;
    let mut client =
        StdioClient::connect(&fx.scimcp(&adapter.display().to_string(), &home, &cwd, &[]))?;
    let n = RUN_TO_END_ITEMS;
    let args = json!({
        "workflow": "touch",
        "grid": {"datasets": ["data.csv"], "vary": {"seed": (0..n).collect::<Vec<_>>()}},
        "max_concurrent": RUN_TO_END_CONCURRENT,
        "confirm": true
    });
    let before = rss_mib(client.child.id()).context("cannot read the server's RSS")?;
    let (start_ms, started) = timed(&mut client, "start_campaign", args)?;
    let started = started.context("the trivial campaign did not start")?;
    let id = started["campaign_id"]
        .as_str()
        .context("start_campaign gave no campaign_id")?
        .to_string();
    let t0 = Instant::now();
    let result_args = json!({"campaign_id": id, "wait_s": 20});
    let ended = loop {
        let (_, r) = timed(&mut client, "get_campaign_result", result_args.clone())?;
        let r = r?;
        eprint!(
            "\r  run to the end: {} of {n} succeeded",
            r["counts"]["succeeded"]
        );
        if r["terminal"] == true {
            break r;
        }
        ensure!(
            t0.elapsed() < Duration::from_secs(900),
            "the {n}-item campaign had not ended after 15 minutes: {}",
            r["counts"]
        );
    };
    eprintln!();
    let wall_s = t0.elapsed().as_secs_f64();
    let after = rss_mib(client.child.id()).context("cannot read the server's RSS")?;
    let first = json!({"campaign_id": id});
    let last = json!({"campaign_id": id, "offset": n - 50});
    let now = json!({"campaign_id": id, "wait_s": 0});
    let full = json!({"campaign_id": id, "wait_s": 0, "detail": "full", "limit": 1000});
    let out = RunToEnd {
        items: n,
        max_concurrent: RUN_TO_END_CONCURRENT,
        start_ms,
        wall_s: crate::stats::round(wall_s, 1),
        succeeded: ended["counts"]["succeeded"].as_u64().unwrap_or(0),
        status_first_page_ms: repeat(&mut client, "get_campaign_status", &first, rounds)?,
        status_last_page_ms: repeat(&mut client, "get_campaign_status", &last, rounds)?,
        result_ms: repeat(&mut client, "get_campaign_result", &now, rounds)?,
        result_full_ms: repeat(&mut client, "get_campaign_result", &full, rounds)?,
        rss_growth_mib: after.rss - before.rss,
    };
    client.close(Duration::from_secs(30))?;
    Ok(out)
}

/// The grid of `n` items: one dataset, seeds 0..n.
fn request(n: usize, confirm: bool, preview_id: Option<&str>) -> Value {
    let mut args = json!({
        "workflow": "regression",
        "grid": {
            "datasets": ["data.csv"],
            "vary": {"seed": (0..n).collect::<Vec<_>>()},
            "fixed": {"target": "y"}
        },
        "max_concurrent": 1,
        "confirm": confirm
    });
    if let Some(id) = preview_id {
        args["preview_id"] = json!(id);
    }
    args
}

/// A timed `tools/call`: the tool's answer, or its failure's text; milliseconds to the
/// answer's arrival.
fn timed(
    client: &mut StdioClient,
    tool: &str,
    args: Value,
) -> anyhow::Result<(f64, anyhow::Result<Value>)> {
    let sent = Instant::now();
    let (result, at) =
        client.request_received("tools/call", json!({"name": tool, "arguments": args}))?;
    Ok((ms(at - sent), tool_content(tool, result)))
}

fn repeat(client: &mut StdioClient, tool: &str, args: &Value, n: usize) -> anyhow::Result<Summary> {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let (t, out) = timed(client, tool, args.clone())?;
        out?;
        v.push(t);
    }
    Ok(Summary::of(&v))
}

/// Measure every size in [`SIZES`] (`rounds` calls per page timing).
pub fn run(fx: &Fixture, rounds: usize) -> anyhow::Result<Campaigns> {
    let cwd = fx.start_dir("start-campaigns")?;
    let mut out = Campaigns {
        rounds,
        measured: Vec::new(),
        refused: Vec::new(),
        run_to_end: None,
        run_to_end_error: None,
    };
    for n in SIZES {
        let home = fx.dir(&format!("home-campaign-{n}"))?;
        let mut client = StdioClient::connect(&fx.scimcp("refsci", &home, &cwd, &[]))?;
        // Warm: the workflow's validator compiled, the dataset in the page cache.
        let (_, warm) = timed(&mut client, "start_campaign", request(2, false, None))?;
        warm.context("a 2-item preview failed")?;
        let before = rss_mib(client.child.id()).context("cannot read the server's RSS")?;
        eprintln!("  {n} items: preview");
        let (preview_ms, preview) = timed(&mut client, "start_campaign", request(n, false, None))?;
        let preview = match preview {
            Ok(p) => p,
            Err(e) if n > SIZES[0] => {
                eprintln!("  {n} items refused: {e:#}");
                out.refused.push((n, format!("{e:#}")));
                client.close(Duration::from_secs(10))?;
                continue;
            }
            Err(e) => return Err(e.context(format!("the {n}-item preview failed"))),
        };
        ensure!(
            preview["items"] == n,
            "the preview counts {} items, not {n}",
            preview["items"]
        );
        let preview_id = preview["preview_id"]
            .as_str()
            .context("the preview has no preview_id")?
            .to_string();
        eprintln!("  {n} items: start");
        let (start_ms, started) = timed(
            &mut client,
            "start_campaign",
            request(n, true, Some(&preview_id)),
        )?;
        let started = started.with_context(|| format!("the {n}-item campaign did not start"))?;
        let id = started["campaign_id"]
            .as_str()
            .context("start_campaign gave no campaign_id")?
            .to_string();
        let after = rss_mib(client.child.id()).context("cannot read the server's RSS")?;
        let first = json!({"campaign_id": id});
        let last = json!({"campaign_id": id, "offset": n - 50});
        let status_first_page_ms = repeat(&mut client, "get_campaign_status", &first, rounds)?;
        let status_last_page_ms = repeat(&mut client, "get_campaign_status", &last, rounds)?;
        let result_args = json!({"campaign_id": id, "wait_s": 0});
        let result_running_ms = repeat(&mut client, "get_campaign_result", &result_args, rounds)?;
        let (cancel_ms, cancelled) = timed(
            &mut client,
            "cancel_campaign",
            json!({"campaign_id": id, "confirm": true}),
        )?;
        cancelled.context("cancel_campaign failed")?;
        // Every item ends: the queued ones at once, the running one once its CLI is ended.
        let deadline = Instant::now() + Duration::from_secs(120);
        let ended = loop {
            let (_, r) = timed(&mut client, "get_campaign_result", result_args.clone())?;
            let r = r?;
            if r["terminal"] == true {
                break r;
            }
            if Instant::now() > deadline {
                bail!(
                    "the cancelled campaign had not ended after 120 s: {}",
                    r["counts"]
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        let result_ended_ms = repeat(&mut client, "get_campaign_result", &result_args, rounds)?;
        let full = json!({"campaign_id": id, "wait_s": 0, "detail": "full", "limit": 1000});
        let result_ended_full_ms = repeat(&mut client, "get_campaign_result", &full, rounds)?;
        let counted: u64 = ["succeeded", "partial_failure", "failed", "cancelled"]
            .iter()
            .filter_map(|k| ended["counts"][k].as_u64())
            .sum();
        ensure!(
            counted == n as u64,
            "the ended campaign counts {counted} ended items, not {n}: {}",
            ended["counts"]
        );
        client.close(Duration::from_secs(30))?;
        out.measured.push(CampaignScale {
            items: n,
            preview_ms,
            start_ms,
            rss_growth_mib: after.rss - before.rss,
            peak_rss_growth_mib: after.peak - before.peak,
            status_first_page_ms,
            status_last_page_ms,
            result_running_ms,
            cancel_ms,
            result_ended_ms,
            result_ended_full_ms,
            ended: counted,
        });
    }
    eprintln!("  {RUN_TO_END_ITEMS} items of the trivial CLI, run to the end");
    // Its failure is reported, not fatal: the figures of the other groups still get written.
    match run_to_end(fx, rounds) {
        Ok(r) => out.run_to_end = Some(r),
        Err(e) => {
            eprintln!("  the run-to-the-end campaign failed: {e:#}");
            out.run_to_end_error = Some(format!("{e:#}"));
        }
    }
    Ok(out)
}
