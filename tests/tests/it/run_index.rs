//! The run index (server/src/runs/index.rs) under SIGKILL and damage: servers are killed at
//! many points while they write it (opening a history that changed behind it, recovering
//! runs, starting runs; index writes slowed by the test-only `SCIMCP_TEST_SLOW_INDEX_MS` so
//! kills land inside them), the index is truncated mid-line, filled with garbage or deleted
//! between rounds, and run directories appear behind it. After each round a server lists
//! every run directory exactly once, in the state its status.json says.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use scimcp_client::McpSession;
use scimcp_e2e::harness::{Harness, ok_on};
use serde_json::{Value, json};

/// A small deterministic generator: the kill delays differ from round to round, the same in
/// every test run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Copy a finished run into `count` new run directories with fresh ids, the way another
/// program (a restore, a copy from another machine) adds runs the index has not seen; every
/// fourth is left `running` with no owner, which the next server's recovery settles.
fn clone_runs(runs: &Path, template: &str, count: usize, salt: u64) -> Vec<String> {
    let status: Value =
        serde_json::from_slice(&fs_err::read(runs.join(template).join("status.json")).unwrap())
            .unwrap();
    let request = fs_err::read(runs.join(template).join("request.json")).unwrap();
    (0..count)
        .map(|i| {
            let run_id = format!("run-{:08x}{:08x}", salt, i);
            let dir = runs.join(&run_id);
            fs_err::create_dir_all(&dir).unwrap();
            let mut s = status.clone();
            s["run_id"] = json!(run_id);
            s["created_at"] = json!(format!("2025-0{}-01T00:00:{:02}Z", 1 + salt % 9, i % 60));
            if i % 4 == 0 {
                s["state"] = json!("running");
                s.as_object_mut().unwrap().remove("ended_at");
                s.as_object_mut().unwrap().remove("reason");
            }
            fs_err::write(dir.join("request.json"), &request).unwrap();
            fs_err::write(dir.join("status.json"), serde_json::to_vec(&s).unwrap()).unwrap();
            run_id
        })
        .collect()
}

/// `run-` and 16 lower-case hex digits: a run directory's name.
fn is_run_id(name: &str) -> bool {
    name.strip_prefix("run-").is_some_and(|hex| {
        hex.len() == 16 && hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
    })
}

/// Every run directory's state as its status.json says (directories without a readable
/// status are not runs: a start killed before its status was written leaves one).
fn truth(runs: &Path) -> BTreeMap<String, String> {
    fs_err::read_dir(runs)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !is_run_id(&name) {
                return None;
            }
            let bytes = fs_err::read(e.path().join("status.json")).ok()?;
            let s: Value = serde_json::from_slice(&bytes).ok()?;
            Some((name, s["state"].as_str()?.to_string()))
        })
        .collect()
}

/// Every run `list_runs` lists, paging with its cursor; each run id exactly once.
async fn listed(session: &McpSession) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"limit": 100});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = ok_on(session, "list_runs", args).await;
        for run in page["runs"]["items"].as_array().unwrap() {
            let id = run["run_id"].as_str().unwrap().to_string();
            let state = run["state"].as_str().unwrap().to_string();
            assert!(out.insert(id.clone(), state).is_none(), "{id} listed twice");
        }
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return out,
        }
    }
}

/// The index files a damage step may hit.
fn journal(runs: &Path) -> Option<PathBuf> {
    fs_err::read_dir(runs.join(".index"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("journal-"))
        })
}

fn damage(runs: &Path, round: usize) -> &'static str {
    let index = runs.join(".index");
    match round % 5 {
        0 => "none",
        1 => {
            if let Some(j) = journal(runs) {
                let len = fs_err::metadata(&j).unwrap().len();
                let f = fs_err::OpenOptions::new().write(true).open(&j).unwrap();
                f.set_len(len.saturating_sub(5)).unwrap();
            }
            "journal truncated mid-line"
        }
        2 => {
            if let Some(j) = journal(runs) {
                let mut bytes = fs_err::read(&j).unwrap();
                bytes.extend_from_slice(b"\xde\xad{\"v\":1,\"op\":\n");
                fs_err::write(&j, bytes).unwrap();
            }
            "garbage appended to the journal"
        }
        3 => {
            let snap = index.join("snapshot.jsonl");
            if snap.exists() {
                fs_err::write(&snap, b"\x00\x01 not an index\n").unwrap();
            }
            "garbage snapshot"
        }
        _ => {
            let _ = fs_err::remove_dir_all(&index);
            "index deleted"
        }
    }
}

struct Server {
    binary: PathBuf,
    args: Vec<String>,
    cwd: PathBuf,
    home: PathBuf,
}

impl Server {
    fn env(&self, slow_ms: u64) -> Vec<(String, String)> {
        vec![
            ("SCIMCP_HOME".into(), self.home.display().to_string()),
            ("SCIMCP_LOG".into(), "error".into()),
            ("SCIMCP_TEST_SLOW_INDEX_MS".into(), slow_ms.to_string()),
        ]
    }

    async fn session(&self, slow_ms: u64) -> McpSession {
        McpSession::spawn(&self.binary, &self.args, &self.env(slow_ms), &self.cwd)
            .await
            .unwrap()
    }

    /// A server killed `after` its process starts: during its context open (index
    /// rebuild, reconciliation, recovery), before any client speaks.
    fn killed_while_opening(&self, slow_ms: u64, after: Duration) {
        let mut child = std::process::Command::new(&self.binary)
            .args(&self.args)
            .envs(self.env(slow_ms))
            .current_dir(&self.cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(after);
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

fn sigkill(pid: u32) {
    let ok = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -KILL {pid}");
}

async fn check(server: &Server, runs: &Path, what: &str) {
    let session = server.session(0).await;
    let listed = listed(&session).await;
    // Read after listing: the listing server's recovery settled orphans before it answered.
    let truth = truth(runs);
    assert_eq!(
        listed.keys().collect::<BTreeSet<_>>(),
        truth.keys().collect::<BTreeSet<_>>(),
        "after {what}: the listed runs are not the run directories\nserver stderr:\n{}",
        session.stderr()
    );
    for (id, state) in &truth {
        assert_eq!(
            &listed[id], state,
            "after {what}: {id} is listed {} but its status.json says {state}",
            listed[id]
        );
    }
    // A filtered page agrees with the directories too.
    let failed = ok_on(
        &session,
        "list_runs",
        json!({"state": ["failed"], "limit": 1000, "detail": "full"}),
    )
    .await;
    let want = truth.values().filter(|s| *s == "failed").count();
    assert_eq!(failed["runs"]["total"], want, "after {what}: {failed:#}");
    let succeeded = ok_on(
        &session,
        "list_runs",
        json!({"state": "succeeded", "limit": 1}),
    )
    .await;
    let want = truth.values().filter(|s| *s == "succeeded").count();
    assert_eq!(
        succeeded["runs"]["total"], want,
        "after {what}: {succeeded:#}"
    );
    session.close().await.unwrap();
}

#[tokio::test]
async fn every_run_is_listed_once_in_its_state_after_kills_and_damage() {
    let h = Harness::start().await.unwrap();
    let request = json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": {"target": "target"}});
    let started = h.ok("start_analysis", request).await;
    let template = started["run_id"].as_str().unwrap().to_string();
    let done = h
        .ok("get_run_result", json!({"run_id": template, "wait_s": 120}))
        .await;
    assert_eq!(done["terminal"], true, "{done:#}");
    let server = Server {
        binary: scimcp_e2e::sibling_binary("scimcp").unwrap(),
        args: vec![
            "serve".into(),
            "--adapter".into(),
            "refsci".into(),
            "--python".into(),
            h.python.display().to_string(),
        ],
        cwd: h.cwd.clone(),
        home: h.home.clone(),
    };
    let (runs, _keep) = h.hang_up().await.unwrap();
    clone_runs(&runs, &template, 150, 1);

    let mut rng = Lcg(31);
    for round in 0..10 {
        let slow_ms = [0, 3, 15][round % 3];
        // New directories behind the index before every other round.
        if round % 2 == 1 {
            clone_runs(&runs, &template, 20, 100 + round as u64);
        }
        let what = damage(&runs, round);
        if round % 2 == 0 {
            // Killed while opening: rebuilding, reconciling or recovering.
            let after = Duration::from_millis(20 + rng.below(400));
            server.killed_while_opening(slow_ms, after);
        } else {
            // Killed while starting runs: each start appends its index line (slowed down),
            // and a run that ends appends another.
            let session = server.session(slow_ms).await;
            let pid = session.pid().unwrap();
            let delay = Duration::from_millis(rng.below(300));
            let killer = tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                sigkill(pid);
            });
            for seed in 0..6 {
                let r = json!({"workflow": "regression", "dataset": "data/diabetes.csv",
                    "parameters": {"target": "target", "seed": seed, "sleep_s": 20}});
                // Calls after the kill fail: that is the point.
                if session.call("start_analysis", r).await.is_err() {
                    break;
                }
            }
            killer.await.unwrap();
            while scimcp_e2e::process_alive(pid) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        check(
            &server,
            &runs,
            &format!("round {round} ({what}, writes slowed {slow_ms} ms)"),
        )
        .await;
    }
    // Deleted behind the index while no server runs (a prune without `forget`).
    let victims: Vec<String> = truth(&runs).keys().take(7).cloned().collect();
    for id in &victims {
        fs_err::remove_dir_all(runs.join(id)).unwrap();
    }
    check(&server, &runs, "run directories deleted behind the index").await;
    assert!(truth(&runs).len() > 150);
}
