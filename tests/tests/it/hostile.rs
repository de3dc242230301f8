//! What a hostile client and a careless local environment tried (docs/RELIABILITY.md, "hostile
//! inputs"), each through the real `scimcp` binary: free-form estimator options, implicit data
//! roots and secrets, line breaks that change what the CLI reads, confinement races, a table
//! two million columns wide, integers written as floats, malformed JSON-RPC lines, arguments
//! out of range, and limits shared by servers of one state directory. The race tests loop for
//! a bounded time and print how many attempts they made (`--nocapture`).
#![cfg(unix)]
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use scimcp_e2e::harness::{Harness, Options, fixture_adapter};
use serde_json::json;

async fn refsci_in(start_dir: &Path, env: Vec<(String, String)>, extra: &[&str]) -> Harness {
    Harness::start_opts(Options {
        start_dir: Some(start_dir.to_path_buf()),
        env,
        extra_args: extra.iter().map(|s| s.to_string()).collect(),
        ..Options::default()
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn free_form_estimator_options_never_reach_the_cli() {
    let h = Harness::start().await.unwrap();
    let cache = h.outside_dir().join("joblib cache");
    for params in [
        json!({"memory": cache.to_str().unwrap()}),
        json!({"n_jobs": -1}),
        json!({"linkage": "ward", "metric": "/etc/passwd"}),
    ] {
        let e = h
            .err(
                "validate_analysis",
                json!({"workflow": "clustering", "dataset": "data/iris.csv",
                       "parameters": {"model": "agglomerative", "exclude": "target", "params": params}}),
            )
            .await;
        assert_eq!(e["code"], "invalid_parameters", "{e:#}");
        assert!(
            e["field"]
                .as_str()
                .unwrap()
                .starts_with("parameters.params"),
            "{e:#}"
        );
    }
    // An option another model takes is refused for this one.
    let e = h
        .err(
            "validate_analysis",
            json!({"workflow": "clustering", "dataset": "data/iris.csv",
                   "parameters": {"model": "kmeans", "params": {"linkage": "ward"}}}),
        )
        .await;
    assert_eq!(e["code"], "invalid_parameters", "{e:#}");
    assert!(
        !cache.exists(),
        "nothing was ever written to the cache directory"
    );
    assert_eq!(h.ok("list_runs", json!({})).await["runs"]["total"], 0);
}

#[tokio::test]
async fn root_and_home_are_never_implicit_data_roots_and_secrets_are_refused_anywhere() {
    // Started in `/`: nothing of the file system is a dataset.
    let fake_home = tempfile::tempdir().unwrap();
    let home = fs_err::canonicalize(fake_home.path()).unwrap();
    let env = vec![("HOME".to_string(), home.display().to_string())];
    let h = refsci_in(Path::new("/"), env.clone(), &[]).await;
    for dataset in [
        "/etc/passwd",
        "etc/passwd",
        "/etc/shadow",
        "/proc/self/environ",
    ] {
        let e = h.err("inspect_dataset", json!({"dataset": dataset})).await;
        assert_eq!(e["code"], "dataset_outside_roots", "{dataset}: {e:#}");
    }
    let listed = h.ok("list_datasets", json!({})).await;
    assert!(
        !listed["allowed_roots"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "/"),
        "{listed:#}"
    );
    drop(h);

    // Started in the home directory, which holds a private key and a table.
    fs_err::create_dir_all(home.join(".ssh")).unwrap();
    fs_err::write(
        home.join(".ssh/id_ed25519"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    fs_err::write(home.join("notes.csv"), "a,b\n1,2\n").unwrap();
    let h = refsci_in(&home, env.clone(), &[]).await;
    for dataset in ["notes.csv", ".ssh/id_ed25519"] {
        let e = h.err("inspect_dataset", json!({"dataset": dataset})).await;
        assert_eq!(e["code"], "dataset_outside_roots", "{dataset}: {e:#}");
    }
    drop(h);

    // Even inside a data directory the operator named, secret-bearing places are refused.
    let data = home.join("lab data");
    fs_err::create_dir_all(data.join(".ssh")).unwrap();
    fs_err::create_dir_all(data.join(".gnupg")).unwrap();
    fs_err::write(data.join(".ssh/keys.csv"), "a,b\n1,2\n").unwrap();
    fs_err::write(data.join(".gnupg/trust.csv"), "a,b\n1,2\n").unwrap();
    fs_err::write(data.join("ok.csv"), "a,b\n1,2\n").unwrap();
    let data_arg = data.display().to_string();
    let h = refsci_in(&home, env, &["--data-dir", &data_arg, "--data-dir", "/"]).await;
    for dataset in [
        ".ssh/keys.csv",
        ".gnupg/trust.csv",
        "/proc/self/environ",
        "/dev/zero",
    ] {
        let e = h.err("inspect_dataset", json!({"dataset": dataset})).await;
        assert_eq!(e["code"], "dataset_outside_roots", "{dataset}: {e:#}");
    }
    assert_eq!(
        h.ok("inspect_dataset", json!({"dataset": "ok.csv"})).await["row_count"],
        1
    );
}

#[tokio::test]
async fn a_line_break_cannot_add_answers_the_plan_does_not_show() {
    let h = Harness::start().await.unwrap();
    let e = h
        .err(
            "validate_analysis",
            json!({"workflow": "regression_interactive", "dataset": "data/diabetes.csv",
                   "parameters": {"target": "target\nrandom_forest\n7", "model": "linear", "seed": 0}}),
        )
        .await;
    assert_eq!(e["code"], "invalid_parameters", "{e:#}");
    assert_eq!(e["field"], "parameters.target");
    assert!(
        e["message"].as_str().unwrap().contains("line break"),
        "{e:#}"
    );
    for target in ["target\r", "tar\u{0}get"] {
        let e = h
            .err(
                "start_analysis",
                json!({"workflow": "regression_interactive", "dataset": "data/diabetes.csv",
                       "parameters": {"target": target, "model": "linear", "seed": 0}}),
            )
            .await;
        assert_eq!(e["code"], "invalid_parameters", "{target:?}: {e:#}");
    }
    // A file name with a line break would reach stdin as {dataset}.
    fs_err::copy(
        h.cwd.join("data/diabetes.csv"),
        h.cwd.join("evil\nrandom_forest.csv"),
    )
    .unwrap();
    let e = h
        .err(
            "validate_analysis",
            json!({"workflow": "regression_interactive", "dataset": "evil\nrandom_forest.csv",
                   "parameters": {"target": "target", "model": "linear", "seed": 0}}),
        )
        .await;
    assert_eq!(e["field"], "dataset", "{e:#}");
    assert_eq!(h.ok("list_runs", json!({})).await["runs"]["total"], 0);
}

#[tokio::test]
async fn integers_written_as_floats_reach_the_cli_as_integers() {
    let h = Harness::start().await.unwrap();
    let v = h
        .ok(
            "validate_analysis",
            json!({"workflow": "regression", "dataset": "data/diabetes.csv",
                   "parameters": {"target": "target", "seed": 1.0}}),
        )
        .await;
    let args: Vec<&str> = v["plan"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let at = args.iter().position(|a| *a == "--seed").unwrap();
    assert_eq!(args[at + 1], "1", "{args:?}");
    assert_eq!(v["resolved_parameters"]["seed"], 1);
    let mut start = json!({"workflow": "regression", "dataset": "data/diabetes.csv",
                           "parameters": {"target": "target", "seed": 1.0}});
    start["validation_id"] = v["validation_id"].clone();
    let run = h.ok("start_analysis", start).await;
    let done = h
        .ok(
            "get_run_result",
            json!({"run_id": run["run_id"], "wait_s": 120}),
        )
        .await;
    assert_eq!(done["state"], "succeeded", "{done:#}");
}

#[tokio::test]
async fn out_of_range_arguments_are_refused_naming_the_range() {
    let h = Harness::start().await.unwrap();
    for (tool, args, field) in [
        ("list_datasets", json!({"limit": 101}), "limit"),
        ("list_runs", json!({"limit": 0}), "limit"),
        (
            "inspect_dataset",
            json!({"dataset": "data/iris.csv", "sample_rows": 11}),
            "sample_rows",
        ),
        (
            "inspect_dataset",
            json!({"dataset": "data/iris.csv", "column_limit": 5000}),
            "column_limit",
        ),
    ] {
        let e = h.err(tool, args).await;
        assert_eq!(e["code"], "invalid_parameters", "{tool}: {e:#}");
        assert_eq!(e["field"], field, "{tool}: {e:#}");
        assert!(e["message"].as_str().unwrap().contains("outside"), "{e:#}");
    }
    let v = h
        .ok(
            "start_analysis",
            json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": {"target": "target"}}),
        )
        .await;
    for (tool, args, field) in [
        (
            "get_run_result",
            json!({"run_id": v["run_id"], "wait_s": 301}),
            "wait_s",
        ),
        (
            "get_run_log",
            json!({"run_id": v["run_id"], "max_bytes": 20000}),
            "max_bytes",
        ),
    ] {
        let e = h.err(tool, args).await;
        assert_eq!(e["field"], field, "{tool}: {e:#}");
    }
}

#[tokio::test]
async fn a_table_two_million_columns_wide_is_refused_in_bounded_memory() {
    let h = Harness::start().await.unwrap();
    let mut text = String::with_capacity(22 << 20);
    for i in 0..2_000_000u32 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("c{i}"));
    }
    text.push('\n');
    fs_err::write(h.cwd.join("wide.csv"), text).unwrap();
    let pid = h.session.pid().unwrap();
    let e = h
        .err("inspect_dataset", json!({"dataset": "wide.csv"}))
        .await;
    assert_eq!(e["code"], "dataset_too_large", "{e:#}");
    assert!(
        e["message"].as_str().unwrap().contains("2000000 columns"),
        "{e:#}"
    );
    if let Ok(status) = fs_err::read_to_string(format!("/proc/{pid}/status")) {
        let peak_kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap();
        println!(
            "peak RSS reading a 2,000,000-column header: {} MiB",
            peak_kib / 1024
        );
        assert!(peak_kib < 256 * 1024, "peak RSS {} MiB", peak_kib / 1024);
    }
}

/// Each line a client sends gets an answer, malformed or not.
#[test]
fn malformed_json_rpc_lines_get_error_answers_and_the_session_goes_on() {
    let mut session = scimcp_e2e::raw_stdio::RawSession::start().unwrap();
    let mut stdin = session.take_stdin();
    let lines: Vec<Vec<u8>> = vec![
        b"NaN".to_vec(),
        format!("{}{}", "[".repeat(130), "]".repeat(130)).into_bytes(),
        Vec::new(),
        vec![b'x'; 17 * 1024 * 1024],
        b"{\"jsonrpc\":\"2.0\",\"id\":9}".to_vec(),
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.to_vec(),
    ];
    let writer = std::thread::spawn(move || {
        for line in lines {
            stdin.write_all(&line).unwrap();
            stdin.write_all(b"\n").unwrap();
        }
        stdin
    });
    let mut answers = Vec::new();
    while answers.len() < 6 {
        answers.push(
            session
                .next(Duration::from_secs(60))
                .unwrap_or_else(|| panic!("only {} answers: {answers:#?}", answers.len())),
        );
    }
    let stdin = writer.join().unwrap();
    drop(stdin);
    let codes: Vec<i64> = answers
        .iter()
        .filter_map(|a| a["error"]["code"].as_i64())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == -32700).count(),
        4,
        "{answers:#?}"
    );
    assert_eq!(
        codes.iter().filter(|c| **c == -32600).count(),
        1,
        "{answers:#?}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 1 && a["result"]["serverInfo"]["name"] == "scimcp"),
        "the session went on: {answers:#?}"
    );
}

#[tokio::test]
async fn max_pending_runs_counts_every_server_of_a_state_directory() {
    let dir = tempfile::tempdir().unwrap().keep();
    let manifest = fixture_adapter(&dir, "max_pending_runs = 1\nmax_concurrent_runs = 1").unwrap();
    let h = Harness::start_opts(Options {
        adapter: manifest.display().to_string(),
        python: false,
        datasets: false,
        ..Options::default()
    })
    .await
    .unwrap();
    fs_err::write(h.cwd.join("small.csv"), "a,b\n1,2\n").unwrap();
    let request =
        json!({"workflow": "misbehave", "dataset": "small.csv", "parameters": {"sleep_s": 20}});
    let first = h.ok("start_analysis", request.clone()).await;
    let other = h.another_server().await.unwrap();
    let e = scimcp_e2e::harness::err_on(&other, "start_analysis", request).await;
    assert_eq!(e["code"], "too_many_runs", "{e:#}");
    // The refused start left no run directory behind.
    let runs: Vec<_> = fs_err::read_dir(h.runs_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("run-"))
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    h.ok("cancel_run", json!({"run_id": first["run_id"]})).await;
}

/// While a client asks for `inside/dir/table.csv`, another process swaps `inside/dir` with
/// a link to a directory outside the roots (renameat2 RENAME_EXCHANGE), as fast as it can.
/// Before, 90 of 400 answers leaked the outside file; now none may.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapping_a_directory_for_a_link_never_leaks_an_outside_file() {
    let h = Harness::start().await.unwrap();
    let outside = h.outside_dir().join("secret dir");
    fs_err::create_dir_all(&outside).unwrap();
    fs_err::write(outside.join("table.csv"), "leaked_secret_column\n1\n").unwrap();
    let inside = h.cwd.join("inside");
    fs_err::create_dir_all(inside.join("dir")).unwrap();
    fs_err::write(inside.join("dir/table.csv"), "safe_column\n1\n").unwrap();
    std::os::unix::fs::symlink(&outside, inside.join("swap")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, a, b) = (stop.clone(), inside.join("dir"), inside.join("swap"));
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &a,
                    rustix::fs::CWD,
                    &b,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let (mut attempts, mut leaks, mut answered) = (0u32, 0u32, 0u32);
    let deadline = Instant::now() + Duration::from_secs(8);
    while Instant::now() < deadline {
        attempts += 1;
        let out = h
            .session
            .call(
                "inspect_dataset",
                json!({"dataset": "inside/dir/table.csv"}),
            )
            .await
            .unwrap();
        let text = format!("{} {}", out.text, out.structured);
        if text.contains("leaked_secret_column") {
            leaks += 1;
        }
        if text.contains("safe_column") {
            answered += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    println!(
        "{attempts} inspect_dataset calls against {swaps} swaps: {answered} read the file inside, {leaks} leaked"
    );
    assert!(
        attempts >= 20 && swaps >= 100,
        "{attempts} calls, {swaps} swaps"
    );
    assert_eq!(
        leaks, 0,
        "{leaks} of {attempts} answers read the outside file"
    );
}

/// A regular file swapped for a FIFO (or the FIFO left in place) never blocks a tool, and
/// the server keeps answering.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapping_a_file_for_a_fifo_never_blocks_the_server() {
    let h = Harness::start().await.unwrap();
    let real = h.cwd.join("table.csv");
    let fifo = h.cwd.join("pipe.csv");
    fs_err::copy(h.cwd.join("data/iris.csv"), &real).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, a, b) = (stop.clone(), real.clone(), fifo.clone());
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &a,
                    rustix::fs::CWD,
                    &b,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let mut attempts = 0u32;
    let deadline = Instant::now() + Duration::from_secs(6);
    while Instant::now() < deadline {
        attempts += 1;
        let request = json!({"workflow": "classification", "dataset": "table.csv", "parameters": {"target": "target"}});
        for tool in ["inspect_dataset", "validate_analysis", "start_analysis"] {
            let args = if tool == "inspect_dataset" {
                json!({"dataset": "table.csv"})
            } else {
                request.clone()
            };
            tokio::time::timeout(Duration::from_secs(20), h.session.call(tool, args))
                .await
                .unwrap_or_else(|_| panic!("{tool} blocked on a FIFO"))
                .unwrap();
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    println!(
        "{attempts} rounds of inspect/validate/start against {swaps} file↔FIFO swaps, none blocked"
    );
    // Every run reached a terminal state: none waits forever on a FIFO.
    let runs = h.ok("list_runs", json!({"limit": 100})).await;
    for run in runs["runs"]["items"].as_array().unwrap() {
        let done = h
            .ok(
                "get_run_result",
                json!({"run_id": run["run_id"], "wait_s": 120}),
            )
            .await;
        assert_eq!(done["terminal"], true, "{done:#}");
    }
    assert!(
        h.ok("list_runs", json!({})).await["runs"]["total"]
            .as_u64()
            .is_some()
    );
}
