//! Campaigns: one workflow over many items, validated item by item before anything runs, run
//! with a concurrency bound (the local run queue, or one Slurm job array), continuing past
//! failing items, with per-item states, counts and a summary table of the declared metrics.
//!
//! The 60-item campaign (3 datasets × 4 models × 5 seeds, 3 items made to fail) runs on both
//! executors. The Slurm one needs the single-node cluster of `scripts/slurm-cluster.sh`;
//! without it, it prints `SKIPPED: …` and passes, unless `SCIMCP_REQUIRE_SLURM=1`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use scimcp_e2e::harness::{Harness, Options};
use scimcp_e2e::slurm;
use serde_json::{Value, json};

const DATASETS: [&str; 3] = ["data/iris.csv", "data/wine.csv", "data/breast_cancer.csv"];
/// Items whose target column does not exist: valid requests the CLI refuses when it runs.
const FAILING: [usize; 3] = [7, 31, 52];
const BOUND: usize = 3;

fn models() -> Vec<Value> {
    vec![
        json!({"model": "logistic"}),
        json!({"model": "random_forest", "params": {"n_estimators": 10}}),
        json!({"model": "knn"}),
        json!({"model": "knn", "params": {"n_neighbors": 3}}),
    ]
}

/// 3 datasets × 4 models × 5 seeds, in that order.
fn sixty_items() -> Vec<Value> {
    let mut items = Vec::new();
    for dataset in DATASETS {
        for model in models() {
            for seed in 0..5 {
                let mut parameters = model.clone();
                parameters["target"] = json!("target");
                parameters["seed"] = json!(seed);
                parameters["test_size"] = json!(0.3);
                items.push(json!({"dataset": dataset, "parameters": parameters}));
            }
        }
    }
    for i in FAILING {
        items[i]["parameters"]["target"] = json!("no_such_column");
    }
    items
}

/// Wait for the campaign to end, calling `get_campaign_result` until it is terminal, and
/// return every row (paging through them) with the last answer.
async fn final_result(h: &Harness, campaign_id: &str) -> (Value, Vec<Value>) {
    let deadline = Instant::now() + Duration::from_secs(600);
    let first = loop {
        let r = h
            .ok(
                "get_campaign_result",
                json!({"campaign_id": campaign_id, "wait_s": 60, "limit": 25}),
            )
            .await;
        if r["terminal"] == true {
            break r;
        }
        assert!(Instant::now() < deadline, "the campaign never ended: {r:#}");
    };
    let mut rows: Vec<Value> = first["table"]["rows"]["items"].as_array().unwrap().clone();
    let total = first["table"]["rows"]["total"].as_u64().unwrap() as usize;
    while rows.len() < total {
        let page = h
            .ok(
                "get_campaign_result",
                json!({"campaign_id": campaign_id, "wait_s": 0, "offset": rows.len(), "limit": 25}),
            )
            .await;
        rows.extend(
            page["table"]["rows"]["items"]
                .as_array()
                .unwrap()
                .iter()
                .cloned(),
        );
    }
    (first, rows)
}

/// Every Must-show claim about a finished 60-item campaign.
async fn check_sixty(h: &Harness, campaign_id: &str) -> Vec<Value> {
    let (result, rows) = final_result(h, campaign_id).await;
    assert_eq!(result["state"], "completed_with_failures", "{result:#}");
    assert_eq!(result["counts"]["total"], 60);
    assert_eq!(result["counts"]["succeeded"], 57, "{result:#}");
    assert_eq!(result["counts"]["failed"], 3, "{result:#}");
    assert_eq!(rows.len(), 60);
    let columns: Vec<String> = result["table"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        columns,
        [
            "metrics.accuracy",
            "metrics.f1_macro",
            "metrics.precision_macro",
            "metrics.recall_macro",
            "metrics.n_train",
            "metrics.n_test",
            "metrics.classes"
        ]
    );
    let failed: BTreeSet<usize> = rows
        .iter()
        .filter(|r| r["state"] == "failed")
        .map(|r| r["index"].as_u64().unwrap() as usize)
        .collect();
    assert_eq!(failed, FAILING.into_iter().collect());
    let mut run_ids = BTreeSet::new();
    for row in &rows {
        let run_id = row["run_id"].as_str().unwrap().to_string();
        assert!(run_ids.insert(run_id.clone()), "run {run_id} listed twice");
        let run = h
            .ok("get_run_result", json!({"run_id": run_id, "wait_s": 0}))
            .await;
        assert_eq!(run["state"], row["state"], "{row:#}");
        if row["state"] == "failed" {
            // The reason, and the CLI's own words about it.
            assert_eq!(row["reason"], "exit_code", "{row:#}");
            assert!(
                row["error"].as_str().unwrap().contains("no_such_column"),
                "{row:#}"
            );
            assert!(row["values"].as_array().unwrap().iter().all(Value::is_null));
            continue;
        }
        let reported = &run["result"]["reported"]["metrics"];
        for (column, value) in columns.iter().zip(row["values"].as_array().unwrap()) {
            let key = column.strip_prefix("metrics.").unwrap();
            assert_eq!(value, &reported[key], "item {} {column}", row["index"]);
        }
    }
    // The summary's means are the rows' means.
    let accuracy: Vec<f64> = rows
        .iter()
        .filter_map(|r| r["values"][0].as_f64())
        .collect();
    let mean = accuracy.iter().sum::<f64>() / accuracy.len() as f64;
    let summary = &result["table"]["summary"][0];
    assert_eq!(summary["column"], "metrics.accuracy");
    assert_eq!(summary["count"], 57);
    assert!(
        (summary["mean"].as_f64().unwrap() - mean).abs() < 1e-12,
        "{summary:#}"
    );
    rows
}

async fn start_sixty(h: &Harness) -> String {
    let started = h
        .ok(
            "start_campaign",
            json!({"workflow": "classification", "items": sixty_items(), "max_concurrent": BOUND}),
        )
        .await;
    assert_eq!(started["started"], true, "{started:#}");
    assert_eq!(started["items"], 60);
    started["campaign_id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_campaign_is_validated_item_by_item_before_anything_runs() {
    let h = Harness::start().await.unwrap();
    let mut items = sixty_items();
    items[4]["parameters"]["model"] = json!("svm");
    items[9]["dataset"] = json!("data/nowhere.csv");
    items[12]["parameters"]["colour"] = json!("red");
    let e = h
        .err(
            "start_campaign",
            json!({"workflow": "classification", "items": items, "max_concurrent": 2}),
        )
        .await;
    assert_eq!(e["code"], "invalid_parameters", "{e:#}");
    let fields: Vec<&str> = e["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "items[4].parameters.model",
            "items[9].dataset",
            "items[12].parameters.colour"
        ],
        "{e:#}"
    );
    let runs = h.ok("list_runs", json!({})).await;
    assert_eq!(runs["runs"]["total"], 0, "nothing may run: {runs:#}");

    // A grid expands in a stated order; a preview validates it all and starts nothing.
    let preview = h
        .ok(
            "start_campaign",
            json!({
                "workflow": "classification",
                "grid": {
                    "datasets": DATASETS,
                    "parameter_sets": models(),
                    "vary": {"seed": [0, 1, 2, 3, 4]},
                    "fixed": {"target": "target"}
                },
                "max_concurrent": 2,
                "confirm": false
            }),
        )
        .await;
    assert_eq!(preview["started"], false, "{preview:#}");
    assert_eq!(preview["items"], 60);
    let first = &preview["preview"]["items"]["items"][1];
    assert_eq!(first["dataset"], "data/iris.csv");
    assert_eq!(
        first["parameters"],
        json!({"model": "logistic", "seed": 1, "target": "target"})
    );
    let runs = h.ok("list_runs", json!({})).await;
    assert_eq!(runs["runs"]["total"], 0);
    let e = h
        .err(
            "start_campaign",
            json!({"workflow": "classification", "items": [], "max_concurrent": 2}),
        )
        .await;
    assert_eq!(e["code"], "invalid_request", "{e:#}");
}

#[tokio::test]
async fn a_sixty_item_campaign_runs_locally_within_its_bound() {
    let h = Harness::start().await.unwrap();
    let campaign_id = start_sixty(&h).await;
    // Sample the campaign's running items while it runs.
    let mut most = 0;
    loop {
        let s = h
            .ok(
                "get_campaign_status",
                json!({"campaign_id": campaign_id, "limit": 1}),
            )
            .await;
        most = most.max(s["counts"]["running"].as_u64().unwrap() as usize);
        if s["state"] != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(most <= BOUND, "{most} items ran at once");
    let rows = check_sixty(&h, &campaign_id).await;
    // Exactly, from the runs' own records: at no instant were more than BOUND running.
    let mut events = Vec::new();
    for row in &rows {
        let s = h
            .ok("get_run_status", json!({"run_id": row["run_id"]}))
            .await;
        let start: jiff::Timestamp = s["started_at"].as_str().unwrap().parse().unwrap();
        let end: jiff::Timestamp = s["ended_at"].as_str().unwrap().parse().unwrap();
        events.push((start, 1));
        events.push((end, -1));
    }
    events.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut peak) = (0, 0);
    for (_, d) in events {
        now += d;
        peak = peak.max(now);
    }
    assert!(peak <= BOUND as i32, "{peak} runs overlapped");
    assert!(peak >= 2, "the campaign never ran items side by side");
}

#[tokio::test]
async fn a_sixty_item_campaign_runs_as_one_slurm_job_array_within_its_bound() {
    if !slurm::cluster_up() {
        return;
    }
    let config = tempfile::tempdir().unwrap();
    let h = Harness::start_opts(Options {
        extra_args: slurm::serve_args(config.path()),
        ..Options::default()
    })
    .await
    .unwrap();
    let campaign_id = start_sixty(&h).await;
    // The items are prepared and submitted in the background: wait for the array's id.
    let deadline = Instant::now() + Duration::from_secs(60);
    let array = loop {
        let status = h
            .ok(
                "get_campaign_status",
                json!({"campaign_id": campaign_id, "limit": 1}),
            )
            .await;
        if let Some(id) = status["array_job_id"].as_str() {
            break id.to_string();
        }
        assert!(Instant::now() < deadline, "no job array: {status:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // What Slurm itself runs at once, sampled every 200 ms while the array lives.
    let (most, stop) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let sampler = {
        let (most, stop, array) = (Arc::clone(&most), Arc::clone(&stop), array.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let running =
                    slurm::squeue(&["-h", "-r", "-t", "running", "-j", &array, "-o", "%i"])
                        .lines()
                        .count();
                most.fetch_max(running, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    let rows = check_sixty(&h, &campaign_id).await;
    stop.store(true, Ordering::SeqCst);
    sampler.join().unwrap();
    let most = most.load(Ordering::SeqCst);
    assert!(most <= BOUND, "Slurm ran {most} tasks at once");
    assert!(most >= 2, "the array never ran tasks side by side");
    // One array: every item's run is one of its tasks.
    for row in &rows {
        let s = h
            .ok("get_run_status", json!({"run_id": row["run_id"]}))
            .await;
        let job = s["job"]["job_id"].as_str().unwrap();
        assert!(job.starts_with(&format!("{array}_")), "{s:#}");
    }
    assert_eq!(
        slurm::squeue(&["-h", "-t", "all", "-j", &array, "-o", "%T"])
            .lines()
            .filter(|l| *l == "COMPLETED")
            .count(),
        57
    );
}

fn sleepy_items(n: usize) -> Vec<Value> {
    (0..n)
        .map(|seed| {
            json!({"dataset": "data/diabetes.csv", "parameters": {"target": "target", "seed": seed, "sleep_s": 120}})
        })
        .collect()
}

/// Cancel a campaign once `running` of its items run; every item ends `cancelled`, and the
/// items held back never became runs.
async fn cancel_when_running(h: &Harness, running: u64) -> Value {
    let started = h
        .ok(
            "start_campaign",
            json!({"workflow": "regression", "items": sleepy_items(5), "max_concurrent": 2}),
        )
        .await;
    let campaign_id = started["campaign_id"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let s = h
            .ok("get_campaign_status", json!({"campaign_id": campaign_id}))
            .await;
        if s["counts"]["running"].as_u64().unwrap() >= running {
            break;
        }
        assert!(Instant::now() < deadline, "never running: {s:#}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let preview = h
        .ok(
            "cancel_campaign",
            json!({"campaign_id": campaign_id, "confirm": false}),
        )
        .await;
    assert_eq!(preview["changed"], false);
    let cancelled = h
        .ok("cancel_campaign", json!({"campaign_id": campaign_id}))
        .await;
    assert_eq!(cancelled["changed"], true, "{cancelled:#}");
    assert_eq!(cancelled["state"], "cancelled", "{cancelled:#}");
    assert_eq!(cancelled["counts"]["cancelled"], 5, "{cancelled:#}");
    let status = h
        .ok("get_campaign_status", json!({"campaign_id": campaign_id}))
        .await;
    assert_eq!(status["state"], "cancelled");
    status
}

#[tokio::test]
async fn cancel_campaign_ends_the_running_items_and_starts_no_other() {
    let h = Harness::start().await.unwrap();
    let status = cancel_when_running(&h, 2).await;
    let items = status["items"]["items"].as_array().unwrap();
    let never: Vec<&Value> = items.iter().filter(|i| i["run_id"].is_null()).collect();
    assert_eq!(never.len(), 3, "{status:#}");
    assert!(never.iter().all(|i| i["reason"] == "not_started"));
    let runs = h.ok("list_runs", json!({})).await;
    assert_eq!(runs["runs"]["total"], 2);
}

#[tokio::test]
async fn cancel_campaign_scancels_the_slurm_array() {
    if !slurm::cluster_up() {
        return;
    }
    let config = tempfile::tempdir().unwrap();
    let h = Harness::start_opts(Options {
        extra_args: slurm::serve_args(config.path()),
        ..Options::default()
    })
    .await
    .unwrap();
    let status = cancel_when_running(&h, 2).await;
    let array = status["array_job_id"].as_str().unwrap();
    assert_eq!(
        slurm::squeue(&["-h", "-r", "-j", array, "-o", "%i"]).trim(),
        ""
    );
    let states: BTreeSet<String> =
        slurm::squeue(&["-h", "-r", "-t", "all", "-j", array, "-o", "%T"])
            .lines()
            .map(String::from)
            .collect();
    assert_eq!(states, BTreeSet::from(["CANCELLED".to_string()]));
}
