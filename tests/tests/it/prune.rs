//! `scimcp runs prune` and the disk quota, through the built binaries: the dry run lists
//! exactly what the real run deletes; a running run, a run an un-ended campaign names and a
//! run a kept run read an artifact of are kept, each saying why; a prune killed between its
//! rename and its removal leaves a tombstone no server lists and the next prune finishes; a
//! server with `--max-history-bytes` refuses a run naming the quota, and starts it again once
//! a prune (run while the server runs) freed the space.

#![cfg(unix)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use scimcp_e2e::harness::{Harness, Options, err_on, fixture_adapter, ok_on};
use serde_json::{Value, json};

/// A finished (or not) run written the way a server writes its records, created and ended
/// `days_ago` days ago, with `bytes` of output.
fn fake_run(runs: &Path, n: u32, state: &str, days_ago: i64, bytes: usize) -> String {
    let id = format!("run-{n:016x}");
    let dir = runs.join(&id);
    fs_err::create_dir_all(dir.join("work/output")).unwrap();
    let at = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(24 * days_ago)).to_string();
    let terminal = !matches!(state, "queued" | "running");
    let mut status = json!({
        "schema_version": 1, "run_id": id, "state": state, "adapter": "fixture",
        "workflow": "misbehave", "validation_id": "val-0", "plan_sha256": "",
        "created_at": at, "server_pid": 1,
    });
    if terminal {
        status["ended_at"] = json!(at);
    }
    fs_err::write(dir.join("status.json"), status.to_string()).unwrap();
    fs_err::write(dir.join("plan.json"), json!({"inputs": []}).to_string()).unwrap();
    fs_err::write(dir.join("owner.lock"), b"").unwrap();
    fs_err::write(dir.join("work/output/result.json"), vec![b' '; bytes]).unwrap();
    id
}

/// Make `reader`'s plan name an artifact of `source` as one of its inputs.
fn reads(runs: &Path, reader: &str, source: &str) {
    let plan = json!({"inputs": [{"id": "db", "kind": "file", "files": [{
        "reference": format!("{source}:db"), "run_path": "inputs/db/db", "sha256": "00",
        "size_bytes": 1, "from_run": {"run_id": source, "artifact": "db", "path": "db"}}]}]});
    fs_err::write(runs.join(reader).join("plan.json"), plan.to_string()).unwrap();
}

fn prune(home: &Path, args: &[&str]) -> Value {
    let out = Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap())
        .args(["runs", "prune", "--json"])
        .args(args)
        .env("SCIMCP_HOME", home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "runs prune {args:?}: {out:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ids(report: &Value, key: &str) -> BTreeSet<String> {
    report[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {report:#}"))
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect()
}

fn reason(report: &Value, run_id: &str) -> String {
    report["kept"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["run_id"] == run_id)
        .map(|k| k["reason"]["code"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("{run_id} is not among the kept: {report:#}"))
}

fn names(dir: &Path) -> BTreeSet<String> {
    fs_err::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn prune_dry_run_lists_exactly_what_the_real_run_deletes_and_keeps_what_is_referenced() {
    let home = tempfile::tempdir().unwrap();
    let runs = home.path().join("runs");
    let old_a = fake_run(&runs, 1, "succeeded", 60, 5000);
    let old_b = fake_run(&runs, 2, "failed", 50, 3000);
    let read_by_kept = fake_run(&runs, 3, "succeeded", 45, 100);
    let in_campaign = fake_run(&runs, 4, "succeeded", 40, 100);
    let running = fake_run(&runs, 5, "running", 40, 100);
    let young = fake_run(&runs, 6, "succeeded", 1, 100);
    let old_reader = fake_run(&runs, 7, "cancelled", 35, 100);
    let read_by_old = fake_run(&runs, 8, "succeeded", 36, 100);
    // A kept (young) run read an artifact of `read_by_kept`; a run that goes too read
    // `read_by_old`, which may go with it.
    reads(&runs, &young, &read_by_kept);
    reads(&runs, &old_reader, &read_by_old);
    // A campaign with an item still waiting has not ended: its finished item's run stays.
    let campaign = home.path().join("campaigns/fixture/camp-00000000000000aa");
    fs_err::create_dir_all(&campaign).unwrap();
    let item = |i: usize, run: Option<&str>| json!({"index": i, "dataset": "small.csv", "parameters": {}, "validation_id": "v", "run_id": run});
    let record = json!({
        "schema_version": 1, "campaign_id": "camp-00000000000000aa", "adapter": "fixture",
        "workflow": "misbehave", "executor": "local", "max_concurrent": 1, "columns": [],
        "created_at": "2026-01-01T00:00:00Z", "started_by": "e2e",
        "items": [item(0, Some(&in_campaign)), item(1, None)],
    });
    fs_err::write(campaign.join("campaign.json"), record.to_string()).unwrap();
    let before = names(&runs);

    let dry = prune(home.path(), &["--older-than", "30d", "--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(
        names(&runs),
        before,
        "the dry run changed the runs directory"
    );
    let expected: BTreeSet<String> = [&old_a, &old_b, &old_reader, &read_by_old]
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(ids(&dry, "delete"), expected, "{dry:#}");
    assert_eq!(reason(&dry, &read_by_kept), "input_of");
    assert_eq!(reason(&dry, &in_campaign), "campaign");
    assert_eq!(reason(&dry, &running), "not_finished");
    assert!(dry["total_bytes"].as_u64().unwrap() >= 8300, "{dry:#}");

    let real = prune(home.path(), &["--older-than", "30d"]);
    assert_eq!(real["dry_run"], false);
    assert_eq!(
        ids(&real, "deleted"),
        ids(&dry, "delete"),
        "the real run deleted other runs than the dry run listed"
    );
    assert_eq!(real["total_bytes"], dry["total_bytes"]);
    assert_eq!(real["failed"], json!([]));
    let left: BTreeSet<String> = names(&runs)
        .into_iter()
        .filter(|n| n.starts_with("run-"))
        .collect();
    let kept: BTreeSet<String> = [&read_by_kept, &in_campaign, &running, &young]
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(left, kept);
    assert!(
        !names(&runs).iter().any(|n| n.starts_with(".pruned-")),
        "a tombstone was left: {:?}",
        names(&runs)
    );
}

#[test]
fn prune_asked_for_nothing_refuses_to_delete_everything() {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap())
        .args(["runs", "prune"])
        .env("SCIMCP_HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--older-than DURATION"), "{err}");
    let out = Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap())
        .args(["runs", "prune", "--older-than", "a month"])
        .env("SCIMCP_HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("e.g. 30d"));
}

async fn fixture_server(extra_args: &[&str]) -> Harness {
    let dir = tempfile::tempdir().unwrap().keep();
    let manifest = fixture_adapter(&dir, "").unwrap();
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

async fn listed(h: &Harness) -> BTreeSet<String> {
    let list = h.ok("list_runs", json!({})).await;
    // A page of runs (`runs.items`), or the plain list older servers answered.
    let runs = if list["runs"]["items"].is_array() {
        &list["runs"]["items"]
    } else {
        &list["runs"]
    };
    runs.as_array()
        .unwrap_or_else(|| panic!("{list:#}"))
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_prune_killed_between_rename_and_remove_is_finished_by_the_next() {
    let mut h = fixture_server(&[]).await;
    let runs = h.runs_dir();
    let doomed: Vec<String> = (1..=3)
        .map(|n| fake_run(&runs, n, "succeeded", 40, 2000))
        .collect();
    let young = fake_run(&runs, 9, "succeeded", 1, 10);

    let mut child = Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap())
        .args(["runs", "prune", "--older-than", "30d"])
        .env("SCIMCP_HOME", &h.home)
        .env("SCIMCP_TEST_PRUNE_PAUSE_AFTER_RENAME", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("renamed run-"), "{line:?}");
    // SIGKILL: nothing of the prune runs after this.
    child.kill().unwrap();
    child.wait().unwrap();
    let on_disk = names(&runs);
    let tombstones: Vec<&String> = on_disk
        .iter()
        .filter(|n| n.starts_with(".pruned-"))
        .collect();
    assert_eq!(tombstones.len(), 1, "{on_disk:?}");
    let half_deleted = tombstones[0].trim_start_matches(".pruned-").to_string();
    assert!(doomed.contains(&half_deleted) && !on_disk.contains(&half_deleted));

    // A server starting now (recovery, listing) never sees the half-deleted run.
    h.restart().await.unwrap();
    let mut expected: BTreeSet<String> = doomed.iter().cloned().collect();
    expected.remove(&half_deleted);
    expected.insert(young.clone());
    assert_eq!(listed(&h).await, expected);

    // The next prune finishes it first, and deletes the rest, as its dry run says.
    let dry = prune(&h.home, &["--older-than", "30d", "--dry-run"]);
    assert_eq!(
        dry["tombstones"][0]["name"],
        tombstones[0].as_str(),
        "{dry:#}"
    );
    let real = prune(&h.home, &["--older-than", "30d"]);
    assert_eq!(ids(&real, "deleted"), ids(&dry, "delete"));
    assert_eq!(real["tombstones"], dry["tombstones"]);
    let run_names: BTreeSet<String> = names(&runs)
        .into_iter()
        .filter(|n| n.starts_with("run-") || n.starts_with(".pruned-"))
        .collect();
    assert_eq!(run_names, BTreeSet::from([young.clone()]));
    // The running server, pruned under, lists what is left.
    assert_eq!(listed(&h).await, BTreeSet::from([young]));
}

#[tokio::test]
async fn quota_refuses_a_run_naming_itself_and_a_prune_lets_runs_start_again() {
    let h = fixture_server(&["--max-history-bytes", "100000"]).await;
    let runs = h.runs_dir();
    let request = json!({"workflow": "misbehave", "dataset": "small.csv", "parameters": {}});
    // Under the quota: runs start; one of them keeps running.
    let first = h.ok("start_analysis", request.clone()).await["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    h.ok("get_run_result", json!({"run_id": first, "wait_s": 30}))
        .await;
    let sleeping = h
        .ok(
            "start_analysis",
            json!({"workflow": "misbehave", "dataset": "small.csv", "parameters": {"sleep_s": 30}}),
        )
        .await["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    // The history grows past the quota (an old finished run of 200 kB); a second server on
    // the same directory measures it as it starts, and refuses a run before it exists.
    let big = fake_run(&runs, 7, "succeeded", 90, 200_000);
    let other = h.another_server().await.unwrap();
    let before = names(&runs);
    let refused = err_on(&other, "start_analysis", request.clone()).await;
    assert_eq!(refused["code"], "not_ready", "{refused:#}");
    let text = refused.to_string();
    assert!(text.contains("--max-history-bytes 100000"), "{text}");
    assert!(text.contains(&runs.display().to_string()), "{text}");
    assert!(text.contains("scimcp runs prune"), "{text}");
    assert_eq!(names(&runs), before, "a refused run left a trace");

    // Pruned while both servers run: the old run goes, the running one is kept.
    let pruned = prune(&h.home, &["--older-than", "30d"]);
    assert_eq!(ids(&pruned, "deleted"), BTreeSet::from([big]));
    let everything = prune(&h.home, &["--older-than", "0s", "--dry-run"]);
    assert_eq!(reason(&everything, &sleeping), "not_finished");
    assert!(
        ids(&everything, "delete").contains(&first),
        "{everything:#}"
    );
    // The server that refused measures again before refusing: it starts the run now.
    let again = ok_on(&other, "start_analysis", request).await;
    assert!(again["run_id"].is_string(), "{again:#}");
    h.ok("cancel_run", json!({"run_id": sleeping})).await;
}
