//! Campaigns interrupted by a server stop: the next server on the same `SCIMCP_HOME` resumes
//! them. A local campaign of three slow refsci items, one at a time, is interrupted while its
//! first item runs, by SIGKILL and by a clean stop (SIGTERM, or the client hanging up); the
//! restarted server starts the two items that never became runs, and the campaign ends with
//! every item's run terminal.
//! An item whose dataset changed while no server ran is not started: it ends naming the
//! change. A campaign whose owner is alive on another server is left to it.

use std::path::Path;
use std::time::{Duration, Instant};

use scimcp_e2e::harness::{Harness, ok_on};
use serde_json::{Value, json};

/// Seconds each item's CLI sleeps: long enough to stop the server while the first runs.
const SLEEP_S: u64 = 4;

fn items(dataset: &str, n: usize) -> Vec<Value> {
    (0..n)
        .map(|seed| {
            json!({"dataset": dataset, "parameters": {"target": "target", "seed": seed, "sleep_s": SLEEP_S}})
        })
        .collect()
}

async fn start(h: &Harness, dataset: &str, n: usize) -> String {
    let started = h
        .ok(
            "start_campaign",
            json!({"workflow": "regression", "items": items(dataset, n), "max_concurrent": 1}),
        )
        .await;
    assert_eq!(started["started"], true, "{started:#}");
    started["campaign_id"].as_str().unwrap().to_string()
}

async fn status(h: &Harness, campaign_id: &str) -> Value {
    h.ok(
        "get_campaign_status",
        json!({"campaign_id": campaign_id, "limit": 100}),
    )
    .await
}

/// Wait until the campaign's first item runs (and the others wait behind the bound).
async fn wait_first_running(h: &Harness, campaign_id: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = status(h, campaign_id).await;
        if s["counts"]["running"] == 1 {
            assert_eq!(s["items"]["items"][0]["state"], "running", "{s:#}");
            return;
        }
        assert!(Instant::now() < deadline, "the first item never ran: {s:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn record(h: &Harness, campaign_id: &str) -> Value {
    let path = h
        .home
        .join("campaigns/refsci")
        .join(campaign_id)
        .join("campaign.json");
    serde_json::from_str(&fs_err::read_to_string(path).unwrap()).unwrap()
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

async fn wait_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while scimcp_e2e::process_alive(pid) {
        assert!(Instant::now() < deadline, "server {pid} did not stop");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How the server stops.
#[derive(Clone, Copy)]
enum Stop {
    Kill,
    /// A clean stop on a signal.
    Term,
    /// A clean stop: the client closes the session.
    HangUp,
}

/// Stop the server, check what it left, start another.
async fn stop_and_restart(h: &mut Harness, campaign_id: &str, stop: Stop) {
    let pid = h.session.pid().expect("the server's pid");
    match stop {
        Stop::Kill => signal(pid, "-KILL"),
        Stop::Term => signal(pid, "-TERM"),
        Stop::HangUp => {
            // A stand-in session, so the quitting one can be closed; it starts while the
            // first server still owns the campaign, and leaves it alone.
            let stand_in = h.another_server().await.unwrap();
            let quitting = std::mem::replace(&mut h.session, stand_in);
            quitting.close().await.unwrap();
        }
    }
    wait_gone(pid).await;
    let left = record(h, campaign_id);
    let items = left["items"].as_array().unwrap();
    assert!(items[0]["run_id"].is_string(), "{left:#}");
    assert!(
        items[1..].iter().all(|i| i.get("run_id").is_none()),
        "only the first item had become a run: {left:#}"
    );
    h.restart().await.unwrap();
}

/// Wait for the campaign to end on the current server; its last result.
async fn final_result(h: &Harness, campaign_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let r = h
            .ok(
                "get_campaign_result",
                json!({"campaign_id": campaign_id, "wait_s": 20}),
            )
            .await;
        if r["terminal"] == true {
            return r;
        }
        assert!(Instant::now() < deadline, "the campaign never ended: {r:#}");
    }
}

async fn resumes_after(stop: Stop) {
    let mut h = Harness::start().await.unwrap();
    let campaign_id = start(&h, "data/diabetes.csv", 3).await;
    wait_first_running(&h, &campaign_id).await;
    stop_and_restart(&mut h, &campaign_id, stop).await;

    let result = final_result(&h, &campaign_id).await;
    assert_eq!(result["state"], "completed_with_failures", "{result:#}");
    let s = status(&h, &campaign_id).await;
    let items = s["items"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    // Every item became a run, and every run ended.
    for item in items {
        let run_id = item["run_id"].as_str().unwrap_or_else(|| panic!("{s:#}"));
        let run = h.ok("get_run_status", json!({"run_id": run_id})).await;
        assert!(
            ["succeeded", "failed"].contains(&run["state"].as_str().unwrap()),
            "{run:#}"
        );
        assert_eq!(run["state"], item["state"], "{s:#}");
    }
    // The item the stop interrupted reads as its run does; the others ran on the new server.
    assert_eq!(items[0]["state"], "failed", "{s:#}");
    assert_eq!(items[0]["reason"], "interrupted", "{s:#}");
    assert_eq!(items[1]["state"], "succeeded", "{s:#}");
    assert_eq!(items[2]["state"], "succeeded", "{s:#}");
    assert_eq!(s["counts"]["succeeded"], 2, "{s:#}");
    assert_eq!(s["counts"]["waiting"], 0, "{s:#}");
    let left = record(&h, &campaign_id);
    assert!(
        left["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i.get("resume").is_none()),
        "a started item keeps no resume record: {left:#}"
    );
}

#[tokio::test]
async fn a_campaign_resumes_after_its_server_is_killed() {
    resumes_after(Stop::Kill).await;
}

#[tokio::test]
async fn a_campaign_resumes_after_a_clean_stop_on_sigterm() {
    resumes_after(Stop::Term).await;
}

#[tokio::test]
async fn a_campaign_resumes_after_its_client_hung_up() {
    resumes_after(Stop::HangUp).await;
}

#[tokio::test]
async fn an_item_whose_dataset_changed_while_no_server_ran_is_not_started() {
    let mut h = Harness::start().await.unwrap();
    let data = h.cwd.join("data");
    fs_err::copy(data.join("diabetes.csv"), data.join("changing.csv")).unwrap();
    let campaign_id = start(&h, "data/changing.csv", 3).await;
    wait_first_running(&h, &campaign_id).await;
    let pid = h.session.pid().unwrap();
    signal(pid, "-KILL");
    wait_gone(pid).await;
    append_row(&data.join("changing.csv"));
    h.restart().await.unwrap();

    let result = final_result(&h, &campaign_id).await;
    assert_eq!(result["state"], "completed_with_failures", "{result:#}");
    let s = status(&h, &campaign_id).await;
    let items = s["items"]["items"].as_array().unwrap();
    assert_eq!(items[0]["reason"], "interrupted", "{s:#}");
    for item in &items[1..] {
        assert_eq!(item["state"], "failed", "{s:#}");
        assert_eq!(item["reason"], "not_started", "{s:#}");
        assert!(item.get("run_id").is_none(), "{s:#}");
        let message = item["message"].as_str().unwrap();
        assert!(
            message.contains("dataset 'data/changing.csv' changed")
                && message.contains("start a campaign for this item again"),
            "{message}"
        );
    }
    let runs = h.ok("list_runs", json!({})).await;
    assert_eq!(
        runs["runs"]["total"], 1,
        "no run for a changed item: {runs:#}"
    );
}

/// A second row: the file's bytes (and so its hash) change, its shape stays valid.
fn append_row(path: &Path) {
    let text = fs_err::read_to_string(path).unwrap();
    let last = text.trim_end().lines().last().unwrap().to_string();
    fs_err::write(path, format!("{}\n{last}\n", text.trim_end())).unwrap();
}

#[tokio::test]
async fn a_campaign_whose_owner_is_alive_is_left_to_it() {
    let h = Harness::start().await.unwrap();
    let campaign_id = start(&h, "data/diabetes.csv", 2).await;
    wait_first_running(&h, &campaign_id).await;
    // A second server on the same state directory starts while the first schedules.
    let other = h.another_server().await.unwrap();
    let seen = ok_on(
        &other,
        "get_campaign_status",
        json!({"campaign_id": campaign_id}),
    )
    .await;
    assert_eq!(seen["counts"]["waiting"], 1, "{seen:#}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let runs = ok_on(&other, "list_runs", json!({})).await;
    assert_eq!(
        runs["runs"]["total"], 1,
        "the second server started an item of a campaign it does not own: {runs:#}"
    );
    // The owner carries on to the end; the other server saw it all without acting.
    let result = final_result(&h, &campaign_id).await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let runs = ok_on(&other, "list_runs", json!({})).await;
    assert_eq!(runs["runs"]["total"], 2, "{runs:#}");
    other.close().await.unwrap();
}
