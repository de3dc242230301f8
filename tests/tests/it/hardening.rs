//! The fail-closed contract of the server, one test per rule: confined paths, data
//! integrity, limits, bounded responses, durability and recovery. Each drives the real
//! `scimcp` binary over stdio; misbehaviour comes from `scimcp-fixture-cli`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use scimcp_e2e::harness::{Harness, Options, fixture_adapter, ok_on};
use serde_json::{Value, json};

async fn fixture(limits: &str) -> Harness {
    fixture_with(limits, &[]).await
}

/// [`fixture`] with extra server arguments (e.g. `--sandbox off`).
async fn fixture_with(limits: &str, extra_args: &[&str]) -> Harness {
    let dir = tempfile::tempdir().unwrap().keep();
    let manifest = fixture_adapter(&dir, limits).unwrap();
    let h = Harness::start_opts(Options {
        adapter: manifest.display().to_string(),
        python: false,
        datasets: false,
        extra_args: extra_args.iter().map(|a| a.to_string()).collect(),
        ..Options::default()
    })
    .await
    .unwrap();
    fs_err::write(h.cwd.join("small.csv"), "a,b\n1,2\n").unwrap();
    h
}

fn misbehave(params: Value) -> Value {
    json!({"workflow": "misbehave", "dataset": "small.csv", "parameters": params})
}

async fn start(h: &Harness, request: Value) -> String {
    h.ok("start_analysis", request).await["run_id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn finish(h: &Harness, run_id: &str) -> Value {
    let r = h
        .ok("get_run_result", json!({"run_id": run_id, "wait_s": 60}))
        .await;
    assert_eq!(r["terminal"], true, "{r:#}");
    r
}

/// True while `pid` exists and is not a zombie.
#[cfg(unix)]
fn alive(pid: u64) -> bool {
    let out = std::process::Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .output()
        .unwrap();
    let stat = String::from_utf8_lossy(&out.stdout).trim().to_string();
    !stat.is_empty() && !stat.starts_with('Z')
}

#[cfg(unix)]
async fn wait_gone(pid: u64, within: Duration) {
    let t0 = Instant::now();
    while alive(pid) {
        assert!(
            t0.elapsed() < within,
            "process {pid} is still alive after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn wait_for_file(path: &std::path::Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = fs_err::read_to_string(path)
            && !text.trim().is_empty()
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(unix)]
#[tokio::test]
async fn dataset_escapes_are_refused_before_a_byte_is_read() {
    let h = Harness::start().await.unwrap();
    let outside = h.outside_dir().join("secret.csv");
    fs_err::write(&outside, "a,b\n1,2\n").unwrap();
    std::os::unix::fs::symlink(&outside, h.cwd.join("link.csv")).unwrap();
    fs_err::hard_link(&outside, h.cwd.join("hard.csv")).unwrap();
    fs_err::create_dir_all(h.cwd.join("folder.csv")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(h.cwd.join("pipe.csv"))
        .status()
        .unwrap();
    assert!(fifo.success());
    // A link inside the root to a file inside the root is refused too: datasets are opened
    // without following links, so no path can be swapped to point elsewhere mid-check.
    std::os::unix::fs::symlink(h.cwd.join("data/iris.csv"), h.cwd.join("iris-link.csv")).unwrap();
    std::os::unix::fs::symlink(h.cwd.join("data"), h.cwd.join("data-link")).unwrap();
    let cases = [
        ("iris-link.csv", "dataset_outside_roots"),
        ("data-link/iris.csv", "dataset_outside_roots"),
        ("data/../data/iris.csv", "dataset_outside_roots"),
        ("../outside/secret.csv", "dataset_outside_roots"),
        (outside.to_str().unwrap(), "dataset_outside_roots"),
        ("link.csv", "dataset_outside_roots"),
        ("hard.csv", "dataset_not_regular"),
        ("folder.csv", "dataset_not_regular"),
        ("pipe.csv", "dataset_not_regular"),
        ("nope.csv", "dataset_not_found"),
        ("builtin:nope", "dataset_not_found"),
    ];
    for (dataset, code) in cases {
        for tool in ["inspect_dataset", "validate_analysis"] {
            let args = if tool == "inspect_dataset" {
                json!({"dataset": dataset})
            } else {
                json!({"workflow": "classification", "dataset": dataset, "parameters": {"target": "target"}})
            };
            // A FIFO that was opened would block this call forever; the timeout proves it was not.
            let e = tokio::time::timeout(Duration::from_secs(30), h.err(tool, args))
                .await
                .expect("answered without reading");
            assert_eq!(e["code"], code, "{tool} {dataset}: {e:#}");
            assert_eq!(e["field"], "dataset", "{tool} {dataset}: {e:#}");
        }
    }
    let ok = h
        .ok("inspect_dataset", json!({"dataset": "data/iris.csv"}))
        .await;
    assert_eq!(ok["row_count"], 150);
    assert_eq!(h.ok("list_runs", json!({})).await["runs"]["total"], 0);
}

#[tokio::test]
async fn a_dataset_over_the_size_limit_is_refused() {
    let h = fixture("max_dataset_bytes = 1024").await;
    fs_err::write(h.cwd.join("big.csv"), "a\n".repeat(1000)).unwrap();
    let e = h
        .err(
            "validate_analysis",
            json!({"workflow": "misbehave", "dataset": "big.csv"}),
        )
        .await;
    assert_eq!(e["code"], "dataset_too_large", "{e:#}");
    assert!(
        e["message"].as_str().unwrap().contains("2000 bytes"),
        "{e:#}"
    );
}

#[tokio::test]
async fn a_dataset_changed_between_validate_and_start_blocks_the_run() {
    let h = Harness::start().await.unwrap();
    let path = h.cwd.join("mine.csv");
    fs_err::copy(h.cwd.join("data/iris.csv"), &path).unwrap();
    let request = json!({"workflow": "classification", "dataset": "mine.csv", "parameters": {"target": "target"}});
    let v = h.ok("validate_analysis", request.clone()).await;
    let mut text = fs_err::read_to_string(&path).unwrap();
    text.push_str("5.0,3.0,1.5,0.2,0\n");
    fs_err::write(&path, text).unwrap();
    let mut start = request.clone();
    start["validation_id"] = v["validation_id"].clone();
    let e = h.err("start_analysis", start).await;
    assert_eq!(e["code"], "dataset_changed", "{e:#}");
    assert_eq!(e["field"], "dataset");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains(v["dataset"]["sha256"].as_str().unwrap())
    );
    assert_eq!(h.ok("list_runs", json!({})).await["runs"]["total"], 0);
    // Validating again accepts the new bytes.
    let v2 = h.ok("validate_analysis", request).await;
    assert_ne!(v2["dataset"]["sha256"], v["dataset"]["sha256"]);
}

#[tokio::test]
async fn more_pending_runs_than_allowed_are_refused() {
    let h = fixture("max_pending_runs = 2\nmax_concurrent_runs = 1").await;
    let a = start(&h, misbehave(json!({"sleep_s": 30}))).await;
    let b = start(&h, misbehave(json!({"sleep_s": 30}))).await;
    let e = h.err("start_analysis", misbehave(json!({}))).await;
    assert_eq!(e["code"], "too_many_runs", "{e:#}");
    // One runs, the other waits for the single slot.
    let mut states = BTreeSet::new();
    for id in [&a, &b] {
        states.insert(
            h.ok("get_run_status", json!({"run_id": id})).await["state"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert!(states.contains("queued"), "{states:?}");
    for id in [&a, &b] {
        assert_eq!(
            h.ok("cancel_run", json!({"run_id": id})).await["state"],
            "cancelled"
        );
    }
    let c = start(&h, misbehave(json!({}))).await;
    assert_eq!(finish(&h, &c).await["state"], "succeeded");
}

#[cfg(unix)]
#[tokio::test]
async fn a_run_over_its_timeout_is_killed_and_failed() {
    let h = fixture("run_timeout_s = 2").await;
    let id = start(&h, misbehave(json!({"sleep_s": 60, "spawn_child": true}))).await;
    let worker = wait_for_file(&h.runs_dir().join(&id).join("work/output/worker.pid")).await;
    let r = finish(&h, &id).await;
    assert_eq!(r["state"], "failed");
    assert_eq!(r["result"]["reason"], "timeout", "{r:#}");
    wait_gone(
        worker.trim().parse().unwrap(),
        scimcp_testkit::limits::process_tree_gone(),
    )
    .await;
}

#[tokio::test]
async fn a_flooding_cli_keeps_its_log_bounded_and_the_server_responsive() {
    let h = fixture("max_log_bytes = 65536").await;
    let flood: u64 = 100 * 1024 * 1024;
    let id = start(&h, misbehave(json!({"flood_bytes": flood, "sleep_s": 3}))).await;
    // While the CLI floods and then sleeps, the server keeps answering.
    let mut answered_running = false;
    for _ in 0..200 {
        let s = h.ok("get_run_status", json!({"run_id": id})).await;
        if s["state"] == "running" {
            answered_running = true;
        }
        if s["state"] != "queued" && s["state"] != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(answered_running);
    let r = finish(&h, &id).await;
    assert_eq!(r["state"], "succeeded", "{r:#}");
    let log_len = fs_err::metadata(h.runs_dir().join(&id).join("stdout.log"))
        .unwrap()
        .len();
    assert!(log_len <= 65536 + 200, "stdout.log is {log_len} bytes");
    let tail = h
        .ok(
            "get_run_log",
            json!({"run_id": id, "stream": "stdout", "max_bytes": 100}),
        )
        .await;
    assert!(
        tail["text"]
            .as_str()
            .unwrap()
            .ends_with("fixture: flood done\n"),
        "{tail:#}"
    );
    assert_eq!(tail["truncated"], true);
}

#[tokio::test]
async fn exit_zero_without_a_required_artifact_is_a_partial_failure() {
    let h = fixture("").await;
    let id = start(&h, misbehave(json!({"skip_artifact": true}))).await;
    let r = finish(&h, &id).await;
    assert_eq!(r["state"], "partial_failure", "{r:#}");
    assert_eq!(r["result"]["reason"], "missing_artifacts");
    assert_eq!(r["result"]["problems"]["items"][0]["id"], "result");
    assert_eq!(r["result"]["problems"]["items"][0]["problem"], "missing");
}

/// The collector's own confinement, which is all there is where no sandbox applies (macOS and
/// Windows today, `--sandbox off`): a CLI that writes outside its output directory succeeds,
/// and what it wrote there is never indexed.
#[tokio::test]
async fn files_written_outside_the_output_directory_are_never_indexed() {
    let h = fixture_with("", &["--sandbox", "off"]).await;
    let id = start(&h, misbehave(json!({"write_outside": true}))).await;
    let r = finish(&h, &id).await;
    assert_eq!(r["state"], "succeeded", "{r:#}");
    let paths: Vec<&str> = r["result"]["artifacts"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["result.json"]);
    let run = h.runs_dir().join(&id);
    assert!(run.join("work/outside.txt").is_file() && run.join("escape.txt").is_file());
}

/// With the sandbox (the default), the same write above the working directory is denied by
/// the kernel: nothing lands in the run's directory, and the failed run names the denial.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_sandboxed_cli_cannot_write_above_its_working_directory() {
    let h = fixture("").await;
    let id = start(&h, misbehave(json!({"write_outside": true}))).await;
    let r = finish(&h, &id).await;
    let run = h.runs_dir().join(&id);
    let manifest: Value =
        serde_json::from_slice(&fs_err::read(run.join("manifest.json")).unwrap()).unwrap();
    let fs_enforced = manifest["sandbox"]["protections"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|p| p["protection"] == "file_system" && p["state"] == "enforced");
    if !fs_enforced {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: this kernel does not enforce the sandbox's file-system rule");
        }
        return;
    }
    assert_eq!(r["state"], "failed", "{r:#}");
    assert!(!run.join("escape.txt").exists());
    let message = r["result"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("sandbox denied"), "{message}");
}

#[tokio::test]
async fn artifacts_over_the_count_limit_are_skipped_explicitly() {
    let h = fixture("max_artifacts = 10").await;
    let id = start(&h, misbehave(json!({"files": 25}))).await;
    let r = finish(&h, &id).await;
    let result = &r["result"];
    assert_eq!(result["artifacts"]["total"], 10, "{r:#}");
    assert_eq!(result["skipped"]["total"], 16);
    assert!(
        result["skipped"]["items"][0]
            .as_str()
            .unwrap()
            .contains("over max_artifacts = 10")
    );
}

/// The CLI's pid, once the server has recorded the run as running (the CLI may write its
/// files a moment before the server records the transition).
#[cfg(unix)]
async fn running_pid(h: &Harness, id: &str) -> u64 {
    for _ in 0..600 {
        let s = h.ok("get_run_status", json!({"run_id": id})).await;
        if let Some(pid) = s["pid"].as_u64() {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {id} never recorded its pid");
}

#[cfg(unix)]
#[tokio::test]
async fn a_server_killed_mid_run_takes_its_cli_and_workers_with_it() {
    let mut h = fixture("").await;
    let id = start(&h, misbehave(json!({"sleep_s": 120, "spawn_child": true}))).await;
    let run = h.runs_dir().join(&id);
    let worker: u64 = wait_for_file(&run.join("work/output/worker.pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    // The run's process group: the guard leads it, the CLI and its worker are in it.
    let group = running_pid(&h, &id).await;
    let server = h.session.pid().unwrap();
    kill9(u64::from(server));
    wait_gone(u64::from(server), Duration::from_secs(5)).await;
    // No restart needed: the guard saw its server die and ended the whole group.
    wait_gone(worker, Duration::from_secs(10)).await;
    wait_gone(group, Duration::from_secs(10)).await;

    h.restart().await.unwrap();
    let status = h.ok("get_run_status", json!({"run_id": id})).await;
    assert_eq!(status["state"], "failed", "{status:#}");
    assert_eq!(status["reason"], "interrupted");
    let receipt: Value =
        serde_json::from_str(&fs_err::read_to_string(run.join("receipt.json")).unwrap()).unwrap();
    assert_eq!(receipt["reason"], "interrupted");
    assert_eq!(receipt["orphan"]["ended"], true, "{receipt:#}");
    assert!(!run.join("result.json").exists());
    let r = h
        .ok("get_run_result", json!({"run_id": id, "wait_s": 0}))
        .await;
    assert_eq!(r["terminal"], true);
    assert!(
        r.get("result").is_none() && r["status"]["reason"] == "interrupted",
        "{r:#}"
    );
}

fn kill9(pid: u64) {
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
}

/// When the process leading the run's group and the server are both SIGKILLed before either
/// can act (the server is stopped first, so it cannot end the group when its leader dies),
/// the CLI and its worker are orphans in a leaderless group; the next server's recovery
/// still ends them, after proving the group works inside the run's directory.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn recovery_ends_a_run_group_whose_leader_died_too() {
    let mut h = fixture("").await;
    let id = start(&h, misbehave(json!({"sleep_s": 120, "spawn_child": true}))).await;
    let run = h.runs_dir().join(&id);
    let worker: u64 = wait_for_file(&run.join("work/output/worker.pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    let leader = running_pid(&h, &id).await;
    let server = h.session.pid().unwrap();
    assert!(
        std::process::Command::new("kill")
            .args(["-STOP", &server.to_string()])
            .status()
            .unwrap()
            .success()
    );
    kill9(leader);
    wait_gone(leader, Duration::from_secs(5)).await;
    kill9(u64::from(server));
    wait_gone(u64::from(server), Duration::from_secs(5)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        alive(worker),
        "the worker outlived its group's leader and its server"
    );

    h.restart().await.unwrap();
    let receipt: Value =
        serde_json::from_str(&fs_err::read_to_string(run.join("receipt.json")).unwrap()).unwrap();
    assert_eq!(receipt["orphan"]["ended"], true, "{receipt:#}");
    wait_gone(worker, Duration::from_secs(5)).await;
}

#[tokio::test]
async fn responses_stay_bounded_and_pages_return_every_item_once() {
    let h = fixture("").await;
    // A 5,000-column table.
    let columns: Vec<String> = (0..5000)
        .map(|i| format!("feature_with_a_long_name_{i:05}"))
        .collect();
    let mut csv = columns.join(",");
    csv.push('\n');
    for r in 0..3 {
        csv.push_str(
            &(0..5000)
                .map(|c| format!("{}.{}", r, c))
                .collect::<Vec<_>>()
                .join(","),
        );
        csv.push('\n');
    }
    fs_err::write(h.cwd.join("wide.csv"), csv).unwrap();
    // 2,000 runs in history, written as a crashed-free past would have left them.
    let runs = h.runs_dir();
    let mut all_ids = BTreeSet::new();
    for i in 0..2000u32 {
        let id = format!("run-{:016x}", 0xa000_0000_0000_0000u64 + u64::from(i));
        fs_err::create_dir_all(runs.join(&id)).unwrap();
        let status = json!({
            "schema_version": 1, "run_id": id, "state": "succeeded", "adapter": "fixture", "workflow": "misbehave",
            "validation_id": "val-0000000000000000", "plan_sha256": "0".repeat(64),
            "created_at": format!("2026-01-01T00:{:02}:{:02}.{:03}Z", i / 60 % 60, i % 60, i), "ended_at": "2026-01-01T01:00:00Z", "server_pid": 1,
        });
        fs_err::write(runs.join(&id).join("status.json"), status.to_string()).unwrap();
        all_ids.insert(id);
    }
    const CEILING: usize = 64 * 1024;
    let call = |tool: &'static str, args: Value| {
        let session = &h.session;
        async move {
            let out = session.call(tool, args).await.unwrap();
            assert!(
                out.wire_bytes <= CEILING,
                "{tool}: {} bytes",
                out.wire_bytes
            );
            out.ok().unwrap()
        }
    };
    let mut seen = Vec::new();
    let mut offset = Some(0u64);
    let mut sequence = BTreeSet::new();
    while let Some(o) = offset {
        let page = call("list_runs", json!({"offset": o, "limit": 100})).await;
        let p = &page["runs"];
        assert_eq!(p["total"], 2000);
        sequence.insert(p["sequence_sha256"].as_str().unwrap().to_string());
        seen.extend(
            p["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["run_id"].as_str().unwrap().to_string()),
        );
        offset = p["next_offset"].as_u64();
    }
    assert_eq!(seen.len(), 2000);
    assert_eq!(
        seen.iter().cloned().collect::<BTreeSet<_>>(),
        all_ids,
        "every run exactly once"
    );
    assert_eq!(sequence.len(), 1);
    // An oversized page request is refused with the range, never silently clamped.
    let refused = h.err("list_runs", json!({"limit": 1000})).await;
    assert_eq!(refused["code"], "invalid_parameters", "{refused:#}");
    assert_eq!(refused["field"], "limit");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("outside 1..=100"),
        "{refused:#}"
    );

    let mut names = Vec::new();
    let mut offset = Some(0u64);
    while let Some(o) = offset {
        let page = call("inspect_dataset", json!({"dataset": "wide.csv", "column_offset": o, "column_limit": 100, "sample_rows": 3})).await;
        assert_eq!(page["column_count"], 5000);
        let items = page["columns"]["items"].as_array().unwrap();
        assert_eq!(
            page["sample_rows"][0].as_array().unwrap().len(),
            items.len()
        );
        names.extend(
            items
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_string()),
        );
        offset = page["columns"]["next_offset"].as_u64();
    }
    assert_eq!(names, columns, "every column exactly once, in order");
    for (tool, args) in [
        ("get_capabilities", json!({})),
        ("get_capabilities", json!({"detail": "full"})),
        ("list_datasets", json!({})),
        ("get_run_status", json!({"run_id": seen[0]})),
        ("get_run_log", json!({"run_id": seen[0]})),
    ] {
        call(tool, args).await;
    }
    let full = h
        .session
        .call(
            "inspect_dataset",
            json!({"dataset": "wide.csv", "detail": "full", "column_limit": 2000}),
        )
        .await
        .unwrap();
    assert!(full.wire_bytes <= 1024 * 1024);
    assert_eq!(
        full.ok().unwrap()["columns"]["items"]
            .as_array()
            .unwrap()
            .len(),
        2000
    );
}

#[tokio::test]
async fn an_unchanged_result_is_answered_not_modified() {
    let h = fixture("").await;
    let id = start(&h, misbehave(json!({}))).await;
    let r = finish(&h, &id).await;
    let sha = r["result_sha256"].as_str().unwrap().to_string();
    let again = h
        .ok(
            "get_run_result",
            json!({"run_id": id, "if_result_sha256": sha}),
        )
        .await;
    assert_eq!(again["not_modified"], true);
    assert!(again.get("result").is_none());
    let other = h
        .ok(
            "get_run_result",
            json!({"run_id": id, "if_result_sha256": "0".repeat(64)}),
        )
        .await;
    assert_eq!(other["result"]["state"], "succeeded");
    let manifest: Value = serde_json::from_str(
        &fs_err::read_to_string(h.runs_dir().join(&id).join("manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        manifest["result_sha256"],
        sha.as_str(),
        "the run manifest binds the published result"
    );
    assert_eq!(manifest["artifacts"][0]["path"], "result.json");
    assert_eq!(
        manifest["inputs"][0]["validated_sha256"],
        manifest["inputs"][0]["sha256_at_end"]
    );
}

#[tokio::test]
async fn two_servers_sharing_a_state_directory_keep_their_runs_apart() {
    let h = fixture("").await;
    let long = start(&h, misbehave(json!({"sleep_s": 4}))).await;
    // The second server starts (and runs its recovery) while the first one's run is live.
    let other = h.another_server().await.unwrap();
    let mut ids = vec![long.clone()];
    // One at a time: max_pending_runs counts the runs of both servers together.
    for i in 0..3 {
        let mine = start(&h, misbehave(json!({"files": i}))).await;
        finish(&h, &mine).await;
        ids.push(mine);
        let r = ok_on(&other, "start_analysis", misbehave(json!({"files": i + 3}))).await;
        let theirs = r["run_id"].as_str().unwrap().to_string();
        ok_on(
            &other,
            "get_run_result",
            json!({"run_id": theirs, "wait_s": 60}),
        )
        .await;
        ids.push(theirs);
    }
    let s = ok_on(&other, "get_run_status", json!({"run_id": long})).await;
    assert_eq!(
        s["state"], "running",
        "the other server must not recover a live run: {s:#}"
    );
    for id in &ids {
        let r = ok_on(&other, "get_run_status", json!({"run_id": id})).await;
        let owner_is_other = r["server_pid"].as_u64() == other.pid().map(u64::from);
        let session = if owner_is_other { &other } else { &h.session };
        let done = ok_on(
            session,
            "get_run_result",
            json!({"run_id": id, "wait_s": 60}),
        )
        .await;
        assert_eq!(done["state"], "succeeded", "{done:#}");
    }
    let listed = ok_on(&other, "list_runs", json!({})).await;
    assert_eq!(listed["runs"]["total"], ids.len());
    let unique: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(unique.len(), ids.len());
}
