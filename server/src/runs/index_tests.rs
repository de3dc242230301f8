//! The run index against its run directories: every kind of damage is rebuilt into exactly
//! the runs the directories hold, in the states their `status.json` say.

use std::collections::HashMap;
use std::path::Path;

use scimcp_core::fs::write_json_atomic;

use super::*;
use crate::runs::state::RECORD_SCHEMA_VERSION;

fn status(run_id: &str, state: RunState, created_at: &str) -> RunStatus {
    RunStatus {
        schema_version: RECORD_SCHEMA_VERSION,
        run_id: run_id.into(),
        state,
        reason: None,
        message: None,
        adapter: "refsci".into(),
        workflow: "regression".into(),
        validation_id: "val-0".into(),
        plan_sha256: String::new(),
        created_at: created_at.into(),
        started_at: None,
        ended_at: state.is_terminal().then(|| created_at.to_string()),
        pid: None,
        exit_code: None,
        signal: None,
        server_pid: 1,
        job: None,
    }
}

fn id(i: usize) -> String {
    format!("run-{i:016x}")
}

fn at(i: usize) -> String {
    format!("2026-01-01T00:{:02}:{:02}Z", i / 60, i % 60)
}

/// A run directory as a start leaves it, recorded in `index` when given.
fn make_run(root: &Path, i: usize, state: RunState, index: Option<&Index>) -> RunStatus {
    let s = status(&id(i), state, &at(i));
    let dir = root.join(&s.run_id);
    fs_err::create_dir_all(&dir).unwrap();
    let request = serde_json::json!({
        "workflow": "regression",
        "started_by": if i.is_multiple_of(2) { "alice" } else { "bob" },
        "campaign_id": if i.is_multiple_of(3) { Some("camp-1") } else { None },
    });
    write_json_atomic(&dir.join("request.json"), &request).unwrap();
    write_json_atomic(&dir.join("status.json"), &s).unwrap();
    if let Some(index) = index {
        index.created(&s, &request);
    }
    s
}

/// (run id, state) of every run the index lists, newest first.
fn listed(index: &Index) -> Vec<(String, RunState)> {
    index
        .summaries(&HashMap::new())
        .unwrap()
        .into_iter()
        .map(|s| (s.run_id, s.state))
        .collect()
}

/// (run id, state) of every run directory, as its status.json says, newest first.
fn truth(root: &Path) -> Vec<(String, RunState)> {
    let mut all: Vec<RunStatus> = run_names(root)
        .unwrap()
        .into_iter()
        .filter_map(|n| read_json::<RunStatus>(&root.join(n).join("status.json")).ok())
        .collect();
    all.sort_by(|a, b| {
        b.created_at
            .cmp(&a.created_at)
            .then_with(|| a.run_id.cmp(&b.run_id))
    });
    all.into_iter().map(|s| (s.run_id, s.state)).collect()
}

/// A history of 12 runs, the last two not terminal, written through the index.
fn history(root: &Path) -> Index {
    let index = Index::open(root).unwrap();
    for i in 0..12 {
        let state = if i >= 10 {
            RunState::Running
        } else {
            RunState::Succeeded
        };
        make_run(root, i, state, Some(&index));
    }
    index
}

fn journal(root: &Path) -> PathBuf {
    let generation = read_header(root).unwrap().generation;
    journal_path(root, generation)
}

#[test]
fn runs_written_through_the_index_are_listed_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let index = history(root);
    assert_eq!(listed(&index), truth(root));
    drop(index);
    let index = Index::open(root).unwrap();
    assert_eq!(listed(&index), truth(root));
    let mut unsettled: Vec<String> = index.unsettled().into_iter().map(|e| e.run_id).collect();
    unsettled.sort();
    assert_eq!(unsettled, [id(10), id(11)]);
    // Who started each run and for which campaign came from its request.
    let e = index
        .all()
        .unwrap()
        .into_iter()
        .find(|e| e.run_id == id(3))
        .unwrap();
    assert_eq!(e.started_by.as_deref(), Some("bob"));
    assert_eq!(e.campaign_id.as_deref(), Some("camp-1"));
}

/// Open a damaged index and check it lists exactly what the directories hold.
fn survives(damage: impl FnOnce(&Path)) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    drop(history(root));
    damage(root);
    let index = Index::open(root).unwrap();
    assert_eq!(listed(&index), truth(root));
    assert_eq!(truth(root).len(), 12);
    let mut unsettled: Vec<String> = index.unsettled().into_iter().map(|e| e.run_id).collect();
    unsettled.sort();
    assert_eq!(unsettled, [id(10), id(11)]);
    // And it was repaired: a second open reads it without rebuilding, the same.
    drop(index);
    assert!(load(root).is_ok(), "the rebuilt index reads back");
    assert_eq!(listed(&Index::open(root).unwrap()), truth(root));
}

#[test]
fn a_deleted_index_is_rebuilt() {
    survives(|root| fs_err::remove_dir_all(root.join(INDEX_DIR)).unwrap());
}

#[test]
fn a_journal_truncated_mid_line_is_rebuilt() {
    survives(|root| {
        let path = journal(root);
        let len = fs_err::metadata(&path).unwrap().len();
        let file = fs_err::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(len - 7).unwrap();
        assert!(matches!(load(root), Err(Damage::TruncatedTail { .. })));
    });
}

#[test]
fn garbage_in_the_journal_is_rebuilt() {
    survives(|root| {
        let path = journal(root);
        let mut file = fs_err::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"\x00\xff{not json\n").unwrap();
        assert!(load(root).is_err());
    });
}

#[test]
fn a_journal_line_of_another_version_is_rebuilt() {
    survives(|root| {
        let path = journal(root);
        let mut file = fs_err::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"v":99,"op":"seal","fp":{"secs":0,"nanos":0,"links":0}}"#)
            .unwrap();
        file.write_all(b"\n").unwrap();
        assert!(matches!(load(root), Err(Damage::Version { found: 99 })));
    });
}

#[test]
fn a_snapshot_of_another_version_is_rebuilt() {
    survives(|root| {
        let path = index_dir(root).join(SNAPSHOT);
        let text = fs_err::read_to_string(&path).unwrap();
        fs_err::write(&path, text.replacen("\"version\":1", "\"version\":7", 1)).unwrap();
        assert!(matches!(load(root), Err(Damage::Version { found: 7 })));
    });
}

#[test]
fn a_snapshot_with_garbage_or_a_lost_tail_is_rebuilt() {
    // The body is read only when the terminal runs are needed; compact first so there is one.
    for cut in [Cut::Garbage, Cut::Lines, Cut::MidLine] {
        survives(|root| {
            Index::open(root).unwrap().compact().unwrap();
            let path = index_dir(root).join(SNAPSHOT);
            let text = fs_err::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert!(lines.len() > 3, "the body holds the terminal runs");
            let damaged = match cut {
                Cut::Garbage => format!("{}\ngarbage\n{}\n", lines[0], lines[2..].join("\n")),
                Cut::Lines => format!("{}\n", lines[..lines.len() - 2].join("\n")),
                Cut::MidLine => text[..text.len() - 10].to_string(),
            };
            fs_err::write(&path, damaged).unwrap();
        });
    }
}

enum Cut {
    Garbage,
    Lines,
    MidLine,
}

#[test]
fn a_garbage_snapshot_header_is_rebuilt() {
    survives(|root| {
        fs_err::write(index_dir(root).join(SNAPSHOT), b"\x01\x02garbage\n").unwrap();
    });
}

#[test]
fn runs_added_or_removed_behind_the_index_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let index = history(root);
    // Another program copies a run in, and deletes another, while the index is open.
    make_run(root, 40, RunState::Failed, None);
    fs_err::remove_dir_all(root.join(id(2))).unwrap();
    assert_eq!(listed(&index), truth(root));
    assert!(listed(&index).iter().any(|(r, _)| *r == id(40)));
    // The same after a restart, the index closed meanwhile.
    drop(index);
    make_run(root, 41, RunState::Running, None);
    fs_err::remove_dir_all(root.join(id(3))).unwrap();
    let index = Index::open(root).unwrap();
    assert!(index.unsettled().iter().any(|e| e.run_id == id(41)));
    assert_eq!(listed(&index), truth(root));
}

#[test]
fn a_lagging_state_is_read_again_and_never_undone() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let index = history(root);
    // The run ended, but its server died before the index line.
    let done = status(&id(10), RunState::Succeeded, &at(10));
    write_json_atomic(&root.join(id(10)).join("status.json"), &done).unwrap();
    assert!(listed(&index).contains(&(id(10), RunState::Succeeded)));
    // A late `running` line after the terminal one does not bring it back.
    index.changed(&status(&id(10), RunState::Running, &at(10)));
    drop(index);
    let index = Index::open(root).unwrap();
    assert!(index.unsettled().iter().all(|e| e.run_id != id(10)));
    assert!(listed(&index).contains(&(id(10), RunState::Succeeded)));
}

#[test]
fn forget_drops_a_deleted_run_and_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let index = history(root);
    fs_err::remove_dir_all(root.join(id(4))).unwrap();
    forget(root, &id(4)).unwrap();
    // A forget of a run still there is ignored: the directory is the truth.
    forget(root, &id(5)).unwrap();
    assert_eq!(listed(&index), truth(root));
    assert_eq!(entries(root).unwrap().len(), 11);
}

#[test]
fn compaction_keeps_every_run_and_other_handles_follow_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let index = history(root);
    let other = Index::open(root).unwrap();
    other.compact().unwrap();
    // The first handle writes after the compaction: its line must not be lost.
    make_run(root, 20, RunState::Queued, Some(&index));
    index.changed(&status(&id(11), RunState::Cancelled, &at(11)));
    write_json_atomic(
        &root.join(id(11)).join("status.json"),
        &status(&id(11), RunState::Cancelled, &at(11)),
    )
    .unwrap();
    assert_eq!(listed(&other), truth(root));
    assert_eq!(listed(&index), truth(root));
    drop((index, other));
    let index = Index::open(root).unwrap();
    assert_eq!(listed(&index), truth(root));
    assert_eq!(truth(root).len(), 13);
}

#[test]
fn pages_filter_and_a_cursor_is_stable_under_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let index = history(root);
    let none = HashMap::new();
    let all = Filter::default();
    let first = index.list(&all, &Start::Offset(0), 5, &none).unwrap();
    assert_eq!(first.total, 12);
    assert_eq!(first.items[0].run_id, id(11));
    let (at_ns, last) = first.next.clone().unwrap();
    assert_eq!(last, id(7));
    // A newer run arrives between the pages: the cursor's page is unchanged.
    make_run(root, 30, RunState::Queued, Some(&index));
    let second = index
        .list(&all, &Start::After(at_ns, last), 5, &none)
        .unwrap();
    let ids: Vec<&str> = second.items.iter().map(|s| s.run_id.as_str()).collect();
    assert_eq!(ids, [id(6), id(5), id(4), id(3), id(2)]);
    assert_eq!(
        second.offset, 6,
        "the new run and the first page come before"
    );
    assert_eq!(second.total, 13);

    let alice_camp = Filter {
        started_by: Some("alice".into()),
        campaign_id: Some("camp-1".into()),
        ..Filter::default()
    };
    let page = index
        .list(&alice_camp, &Start::Offset(0), 50, &none)
        .unwrap();
    let ids: Vec<&str> = page.items.iter().map(|s| s.run_id.as_str()).collect();
    assert_eq!(ids, [id(30), id(6), id(0)]);
    let running = Filter {
        states: vec![RunState::Running, RunState::Queued],
        ..Filter::default()
    };
    assert_eq!(
        index
            .list(&running, &Start::Offset(0), 50, &none)
            .unwrap()
            .total,
        3
    );
    let window = Filter {
        created_after: Some(created_ns(&at(2))),
        created_before: Some(created_ns(&at(5))),
        ..Filter::default()
    };
    let page = index.list(&window, &Start::Offset(0), 50, &none).unwrap();
    let ids: Vec<&str> = page.items.iter().map(|s| s.run_id.as_str()).collect();
    assert_eq!(ids, [id(4), id(3)]);
    let other = Filter {
        workflow: Some("forecast".into()),
        ..Filter::default()
    };
    assert_eq!(
        index
            .list(&other, &Start::Offset(0), 50, &none)
            .unwrap()
            .total,
        0
    );
}

#[test]
fn the_sequence_hash_is_the_hash_of_every_listed_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let index = history(root);
    let none = HashMap::new();
    let lines = index.summaries(&none).unwrap();
    let want = scimcp_core::hash::canonical_sha256_of(&lines);
    for _ in 0..2 {
        // The second call answers from the cache; both must agree with the lines.
        let page = index
            .list(&Filter::default(), &Start::Offset(3), 4, &none)
            .unwrap();
        assert_eq!(page.sequence_sha256, want);
        assert_eq!(page.offset, 3);
        assert_eq!(page.items.len(), 4);
        assert!(page.next.is_some());
    }
}

/// A history large enough to be read on several threads comes back whole when the index is
/// built from its directories: every run once, in its own state.
#[test]
fn a_large_history_is_rebuilt_whole() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let n = PARALLEL_FROM * 2 + 7;
    for i in 0..n {
        let state = match i % 10 {
            0 => RunState::Failed,
            1 => RunState::Running,
            _ => RunState::Succeeded,
        };
        // Plain writes (a thousand atomic, synced ones would take most of the test's time).
        let dir = root.join(id(i));
        fs_err::create_dir_all(&dir).unwrap();
        let s = status(&id(i), state, &at(i));
        fs_err::write(dir.join("status.json"), serde_json::to_vec(&s).unwrap()).unwrap();
        fs_err::write(dir.join("request.json"), br#"{"started_by":"alice"}"#).unwrap();
    }
    let index = Index::open(root).unwrap();
    let all = listed(&index);
    assert_eq!(all.len(), n);
    assert_eq!(all, truth(root));
    let mut unsettled: Vec<String> = index.unsettled().into_iter().map(|e| e.run_id).collect();
    unsettled.sort();
    let expected: Vec<String> = (0..n).filter(|i| i % 10 == 1).map(id).collect();
    assert_eq!(unsettled, expected);
    assert!(
        index
            .all()
            .unwrap()
            .iter()
            .all(|e| e.started_by.as_deref() == Some("alice"))
    );
}

/// The background load of the terminal entries, racing new runs, state changes and a
/// compaction by another handle, leaves the index equal to the directories.
#[test]
fn the_background_load_keeps_every_change_made_meanwhile() {
    for round in 0..4 {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let index = history(root);
        index.compact().unwrap();
        drop(index);
        let index = Index::open(root).unwrap();
        index.prefetch();
        for i in 0..5 {
            make_run(root, 30 + i, RunState::Queued, Some(&index));
        }
        let done = status(&id(10), RunState::Succeeded, &at(10));
        write_json_atomic(&root.join(id(10)).join("status.json"), &done).unwrap();
        index.changed(&done);
        if round % 2 == 1 {
            Index::open(root).unwrap().compact().unwrap();
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while index.state.lock().unwrap().full.is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(listed(&index), truth(root), "round {round}");
        assert_eq!(truth(root).len(), 17);
        let mut unsettled: Vec<String> = index.unsettled().into_iter().map(|e| e.run_id).collect();
        unsettled.sort();
        let mut expected: Vec<String> = (30..35).map(id).collect();
        expected.push(id(11));
        expected.sort();
        assert_eq!(unsettled, expected, "round {round}");
    }
}
