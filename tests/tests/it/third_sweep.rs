//! Issue 26's third adversarial sweep, the server's part, each through the real `scimcp`
//! binary: a tiny campaign preview that names more items than memory holds, confirmations
//! replayed, carried to another session or another server, progress text with
//! bidirectional controls, and a campaign interrupted by its client hanging up.
#![cfg(unix)]

use scimcp_e2e::harness::Harness;
use serde_json::{Value, json};

/// Peak resident memory of `pid` in KiB (Linux's `VmHWM`); `None` elsewhere.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = fs_err::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// 8 `vary` keys of 10 values each: 10^8 combinations in a request of a few hundred bytes.
fn huge_grid_preview() -> Value {
    let vary: serde_json::Map<String, Value> = (0..8)
        .map(|k| (format!("p{k}"), json!((0..10).collect::<Vec<_>>())))
        .collect();
    json!({
        "workflow": "regression",
        "grid": {"datasets": ["data/diabetes.csv"], "vary": vary},
        "max_concurrent": 1,
        "confirm": false
    })
}

#[tokio::test]
async fn a_tiny_preview_naming_a_huge_grid_is_refused_before_anything_is_expanded() {
    let h = Harness::start().await.unwrap();
    let pid = h.session.pid().expect("the server's pid");
    let request = huge_grid_preview();
    let bytes = request.to_string().len();
    assert!(bytes < 500, "the attack request is {bytes} bytes");
    let before = peak_rss_kib(pid);
    let e = h.err("start_campaign", request).await;
    assert_eq!(e["code"], "invalid_request", "{e:#}");
    assert_eq!(e["field"], "grid", "{e:#}");
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("1 to 1000 items"), "{message}");
    assert!(message.contains("100000000"), "{message}");
    // The server is alive and its memory never grew towards the grid's size (10^8 maps of
    // 8 entries would be tens of gigabytes; 64 MiB over the start is generous).
    let caps = h.ok("get_capabilities", json!({})).await;
    assert!(caps.get("adapter").is_some(), "{caps:#}");
    if let (Some(before), Some(after)) = (before, peak_rss_kib(pid)) {
        assert!(
            after < before + 64 * 1024,
            "peak RSS grew from {before} KiB to {after} KiB"
        );
    }
    let runs = h.ok("list_runs", json!({})).await;
    assert_eq!(runs["runs"]["total"], 0);
}

fn regression() -> Value {
    json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": {"target": "target"}})
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

fn refused_because(e: &Value, field: &str, why: &str) {
    assert_eq!(e["code"], "stale_validation", "{e:#}");
    assert_eq!(e["field"], field, "{e:#}");
    assert!(e["message"].as_str().unwrap().contains(why), "{e:#}");
}

/// A `validation_id` starts one run, and only on the server process that issued it; a
/// campaign's `preview_id` starts one campaign.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_starts_one_thing_once_and_only_on_the_server_that_issued_it() {
    let h = Harness::start_with(true, &["--confirm", "required"])
        .await
        .unwrap();
    let v = h.ok("validate_analysis", regression()).await;
    let confirmed = with(
        regression(),
        json!({"confirm": true, "validation_id": v["validation_id"]}),
    );
    // Another server process on the same state directory never issued it.
    let other = h.another_server().await.unwrap();
    let e = scimcp_e2e::harness::err_on(&other, "start_analysis", confirmed.clone()).await;
    refused_because(&e, "validation_id", "not issued by this server process");
    let started = h.ok("start_analysis", confirmed.clone()).await;
    assert_eq!(started["started"], true, "{started:#}");
    // Replayed: refused, and no second run exists.
    let e = h.err("start_analysis", confirmed).await;
    refused_because(&e, "validation_id", "already been used");
    let runs = h.ok("list_runs", json!({})).await;
    assert_eq!(runs["runs"]["total"], 1, "{runs:#}");
    other.close().await.unwrap();

    let campaign = json!({
        "workflow": "regression",
        "items": [{"dataset": "data/diabetes.csv", "parameters": {"target": "target"}}],
        "max_concurrent": 1
    });
    let preview = h.ok("start_campaign", campaign.clone()).await;
    assert_eq!(preview["started"], false, "{preview:#}");
    let confirmed = with(
        campaign,
        json!({"confirm": true, "preview_id": preview["preview_id"]}),
    );
    let started = h.ok("start_campaign", confirmed.clone()).await;
    assert_eq!(started["started"], true, "{started:#}");
    let e = h.err("start_campaign", confirmed).await;
    refused_because(&e, "preview_id", "already been used");
    let runs = h.ok("list_runs", json!({})).await;
    assert_eq!(runs["runs"]["total"], 2, "one campaign item only: {runs:#}");
}

/// Over HTTP, a confirmation belongs to the MCP session that received it.
#[test]
fn a_confirmation_is_refused_in_another_session() {
    use rmcp::ServiceExt as _;
    use scimcp_e2e::http_client::{self, HttpTarget};
    use scimcp_e2e::http_server::{HttpServer, TestRoot, socket};
    let root = TestRoot::new().unwrap();
    let server = HttpServer::start(
        &root,
        &["--listen", "127.0.0.1:0", "--confirm", "required"],
        &[],
    )
    .unwrap();
    let target = HttpTarget {
        connect: socket(std::net::Ipv4Addr::LOCALHOST, server.port),
        authority: format!("127.0.0.1:{}", server.port),
        tls: None,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let first = ().serve(http_client::transport(&target, None, &[])).await.unwrap();
        let second = ().serve(http_client::transport(&target, None, &[])).await.unwrap();
        let v = http_client::ok(&first, "validate_analysis", regression()).await;
        let confirmed = with(
            regression(),
            json!({"confirm": true, "validation_id": v["validation_id"]}),
        );
        let e = http_client::err(&second, "start_analysis", confirmed.clone()).await;
        refused_because(&e, "validation_id", "another session");
        let started = http_client::ok(&first, "start_analysis", confirmed).await;
        assert_eq!(started["started"], true, "{started:#}");
        first.cancel().await.unwrap();
        second.cancel().await.unwrap();
    });
    drop(server);
}

/// `--client-timeout-s` (what scimcp-setup writes into a client's entry) sets the default
/// wait below the client's deadline, lowers a longer explicit wait, and a pending answer
/// says when to call again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_wait_ends_before_the_declared_client_timeout() {
    let h = Harness::start_with(true, &["--client-timeout-s", "20"])
        .await
        .unwrap();
    let mut sleepy = regression();
    sleepy["parameters"]["sleep_s"] = json!(60);
    let run = h.ok("start_analysis", sleepy).await;
    let run_id = run["run_id"].as_str().unwrap().to_string();
    for args in [
        json!({"run_id": run_id}),
        json!({"run_id": run_id, "wait_s": 300}),
    ] {
        let pending = h.ok("get_run_result", args.clone()).await;
        assert_eq!(pending["terminal"], false, "{pending:#}");
        // 20 s less the margin: 5 s, never the 300 s the client would not live to see.
        let waited = pending["waited_s"].as_f64().unwrap();
        assert!((4.5..19.0).contains(&waited), "{args}: waited {waited} s");
        assert_eq!(pending["retry_after_s"], 0, "{pending:#}");
        let next = pending["next_action"].as_str().unwrap();
        assert!(next.contains("call get_run_result again now"), "{next}");
        assert!(next.contains("--client-timeout-s 20"), "{next}");
    }
    let polled = h
        .ok("get_run_result", json!({"run_id": run_id, "wait_s": 0}))
        .await;
    assert_eq!(polled["retry_after_s"], 5, "{polled:#}");
    let e = h
        .err("get_run_result", json!({"run_id": run_id, "wait_s": 301}))
        .await;
    assert_eq!(e["field"], "wait_s", "{e:#}");
    h.ok("cancel_run", json!({"run_id": run_id, "confirm": true}))
        .await;
}
