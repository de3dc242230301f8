//! Plan-then-confirm, through the real `scimcp` binary over stdio: where confirmation is
//! required, `start_analysis` and `cancel_run` without `confirm: true` change nothing — no
//! run directory, no process (the server's process tree is watched the whole time) — and
//! answer with what would happen; the confirmed start then runs exactly the previewed plan.
//! Where it is optional (stdio's default) a start without `confirm` runs at once, as before.

#[cfg(target_os = "linux")]
use std::sync::Arc;
#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(target_os = "linux")]
use std::time::{Duration, Instant};

use scimcp_e2e::harness::Harness;
use serde_json::{Value, json};

fn analysis(extra_params: Value) -> Value {
    let mut parameters = json!({"target": "target"});
    for (k, v) in extra_params.as_object().unwrap() {
        parameters[k] = v.clone();
    }
    json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": parameters})
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

fn run_dirs(h: &Harness) -> Vec<String> {
    let Ok(entries) = fs_err::read_dir(h.runs_dir()) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("run-"))
        .collect()
}

#[cfg(target_os = "linux")]
/// Every process that descends from the server while this watcher lives (sampled every
/// few milliseconds; Linux). Anything the server spawns — the run guard, the CLI, a probe of
/// the runtime — shows up here.
struct ProcessWatch {
    stop: Arc<AtomicBool>,
    seen: std::thread::JoinHandle<Vec<u32>>,
}

#[cfg(target_os = "linux")]
impl ProcessWatch {
    fn start(server: u32) -> ProcessWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let seen = std::thread::spawn(move || {
            let mut seen = std::collections::BTreeSet::new();
            while !flag.load(Ordering::SeqCst) {
                seen.extend(scimcp_e2e::http_server::descendants(server));
                std::thread::sleep(Duration::from_millis(2));
            }
            seen.into_iter().collect()
        });
        ProcessWatch { stop, seen }
    }

    fn finish(self) -> Vec<u32> {
        self.stop.store(true, Ordering::SeqCst);
        self.seen.join().unwrap()
    }
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_confirmation_is_required_nothing_runs_until_confirmed_and_the_preview_is_what_runs()
{
    let h = Harness::start_with(true, &["--confirm", "required"])
        .await
        .unwrap();
    let server = h.session.pid().expect("the server's pid");
    // Warm the dataset and runtime caches first, so the watch below sees only what the
    // start calls themselves do.
    let validated = h.ok("validate_analysis", analysis(json!({}))).await;
    assert_eq!(validated["ready"], true, "{validated:#}");

    let watch = ProcessWatch::start(server);
    let preview = h.ok("start_analysis", analysis(json!({}))).await;
    let explicit = h
        .ok(
            "start_analysis",
            with(analysis(json!({})), json!({"confirm": false})),
        )
        .await;
    let no_id = h
        .err(
            "start_analysis",
            with(analysis(json!({})), json!({"confirm": true})),
        )
        .await;
    let stale = h
        .err(
            "start_analysis",
            with(
                analysis(json!({"seed": 7})),
                json!({"confirm": true, "validation_id": preview["validation_id"]}),
            ),
        )
        .await;
    std::thread::sleep(Duration::from_millis(300));
    let spawned = watch.finish();
    assert!(
        spawned.is_empty(),
        "processes spawned without confirm: {spawned:?}"
    );
    assert!(run_dirs(&h).is_empty(), "a run directory without confirm");

    assert_eq!(preview["started"], false, "{preview:#}");
    assert!(preview.get("run_id").is_none());
    let p = &preview["preview"];
    assert_eq!(p["confirmation_required"], true);
    assert_eq!(p["ready"], true);
    assert_eq!(p["started_by"], "stdio");
    assert_eq!(preview["validation_id"], validated["validation_id"]);
    assert_eq!(preview["plan_sha256"], validated["plan_sha256"]);
    assert_eq!(p["plan"], validated["plan"]);
    let command_line = p["command_line"].as_str().unwrap();
    assert!(
        command_line.contains("-m refsci regress --data inputs/diabetes.csv --target target"),
        "{command_line}"
    );
    let artifacts: Vec<&str> = p["expected_artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert!(artifacts.contains(&"metrics"), "{artifacts:?}");
    let resources = &p["estimated_resources"];
    assert_eq!(resources["timeout_s"], p["plan"]["timeout_s"]);
    assert_eq!(
        resources["dataset_bytes"],
        validated["dataset"]["size_bytes"]
    );
    assert_eq!(resources["runs_pending_now"], 0);
    assert!(
        preview["next_action"]
            .as_str()
            .unwrap()
            .contains("confirm: true"),
        "{preview:#}"
    );
    assert_eq!(explicit["started"], false);
    assert_eq!(explicit["plan_sha256"], preview["plan_sha256"]);
    assert_eq!(no_id["code"], "confirmation_required", "{no_id:#}");
    assert_eq!(no_id["field"], "validation_id");
    assert_eq!(stale["code"], "stale_validation", "{stale:#}");

    // Confirmed: exactly the previewed plan runs (and the watch sees its processes, which
    // shows it would have seen any above).
    let watch = ProcessWatch::start(server);
    let started = h
        .ok(
            "start_analysis",
            with(
                analysis(json!({})),
                json!({"confirm": true, "validation_id": preview["validation_id"]}),
            ),
        )
        .await;
    assert_eq!(started["started"], true, "{started:#}");
    assert_eq!(started["plan_sha256"], preview["plan_sha256"]);
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let dir = h.runs_dir().join(&run_id);
    let plan: Value =
        serde_json::from_slice(&fs_err::read(dir.join("plan.json")).unwrap()).unwrap();
    assert_eq!(plan, p["plan"], "the run's plan differs from the preview's");
    let request: Value =
        serde_json::from_slice(&fs_err::read(dir.join("request.json")).unwrap()).unwrap();
    assert_eq!(request["started_by"], "stdio");
    assert_eq!(request["confirmed"], true);
    let result = h
        .ok("get_run_result", json!({"run_id": run_id, "wait_s": 120}))
        .await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    assert_eq!(result["result"]["plan_sha256"], preview["plan_sha256"]);
    assert!(
        !watch.finish().is_empty(),
        "the confirmed run spawned nothing the watch saw"
    );

    // Cancel: the preview names the run and leaves it running.
    let long = h
        .ok("start_analysis", analysis(json!({"sleep_s": 60})))
        .await;
    let long = h
        .ok(
            "start_analysis",
            with(
                analysis(json!({"sleep_s": 60})),
                json!({"confirm": true, "validation_id": long["validation_id"]}),
            ),
        )
        .await;
    let long_id = long["run_id"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = h.ok("get_run_status", json!({"run_id": long_id})).await;
        if status["state"] == "running" {
            break;
        }
        assert!(Instant::now() < deadline, "never running: {status:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for args in [
        json!({"run_id": long_id}),
        json!({"run_id": long_id, "confirm": false}),
    ] {
        let preview = h.ok("cancel_run", args).await;
        assert_eq!(preview["changed"], false, "{preview:#}");
        assert_eq!(preview["confirmation_required"], true);
        assert_eq!(preview["state"], "running");
        assert_eq!(preview["status"]["run_id"], long_id.as_str());
        assert_eq!(preview["started_by"], "stdio");
        assert!(
            preview["message"]
                .as_str()
                .unwrap()
                .contains("nothing was cancelled")
        );
    }
    let status = h.ok("get_run_status", json!({"run_id": long_id})).await;
    assert_eq!(status["state"], "running", "a preview cancelled the run");
    let cancelled = h
        .ok("cancel_run", json!({"run_id": long_id, "confirm": true}))
        .await;
    assert_eq!(cancelled["changed"], true, "{cancelled:#}");
    assert_eq!(cancelled["state"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_confirmation_is_optional_a_start_runs_at_once_and_previews_on_request() {
    let h = Harness::start().await.unwrap();
    let preview = h
        .ok(
            "start_analysis",
            with(analysis(json!({})), json!({"confirm": false})),
        )
        .await;
    assert_eq!(preview["started"], false, "{preview:#}");
    assert_eq!(preview["preview"]["confirmation_required"], false);
    assert!(run_dirs(&h).is_empty());
    let started = h.ok("start_analysis", analysis(json!({}))).await;
    assert_eq!(started["started"], true, "{started:#}");
    assert_eq!(started["plan_sha256"], preview["plan_sha256"]);
    let run_id = started["run_id"].as_str().unwrap();
    let request: Value = serde_json::from_slice(
        &fs_err::read(h.runs_dir().join(run_id).join("request.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(request["started_by"], "stdio");
    assert_eq!(request["confirmed"], false);
    let result = h
        .ok("get_run_result", json!({"run_id": run_id, "wait_s": 120}))
        .await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let ended = h.ok("cancel_run", json!({"run_id": run_id})).await;
    assert_eq!(ended["changed"], false);
    assert_eq!(ended["confirmation_required"], false);
}
