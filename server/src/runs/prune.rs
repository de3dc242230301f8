//! Retention: which finished runs of a runs directory may be deleted ([`plan`]), and deleting
//! them so that no crash, no live server and no run that still needs them is ever hurt
//! ([`execute`]). `scimcp runs prune` is the command over this module.
//!
//! A run that matches the criteria is still kept when it is not finished (queued, running), when
//! a process holds its `owner.lock`, when an un-ended campaign names it, or when a kept run took
//! one of its artifacts as input (`{run_id, artifact}`: the kept run's provenance must stay
//! checkable). Each kept run says which of these holds.
//!
//! A deletion first renames the run directory to a tombstone (`.pruned-run-…`, one atomic
//! rename in the same directory, flushed), then removes the tombstone. A tombstone is not a run
//! id, so listing, recovery and pending counts never see a half-deleted run; a prune that dies
//! between the two steps leaves one, which the next prune finishes before anything else.
//!
//! This module only reads and deletes under the runs directory it is given; it never starts,
//! stops or rewrites a run.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use scimcp_core::history::{TOMBSTONE_PREFIX, is_tombstone_name, tree_bytes};
use serde::Serialize;

use super::record::{is_run_id, read_json, try_own};
use super::state::{RunState, RunStatus};

/// Test-only: when set (to anything), [`execute`] stops after renaming the first run to its
/// tombstone and waits (a minute) for the test to kill it, so the test can prove the next
/// prune finishes the deletion.
pub const PAUSE_AFTER_RENAME_ENV: &str = "SCIMCP_TEST_PRUNE_PAUSE_AFTER_RENAME";

/// What to delete. A run is deleted only when it meets every criterion given and is kept by
/// no rule of the module comment.
#[derive(Debug, Clone, Default)]
pub struct Criteria {
    /// Only runs that ended (or, never started, were created) at least this long ago.
    pub older_than: Option<Duration>,
    /// Keep the newest N runs of the selection (by creation), whatever their age.
    pub keep_newest: Option<usize>,
    /// Only runs in one of these states (empty: any finished state).
    pub states: Vec<RunState>,
    /// Only runs of this adapter (the runs directory is shared by every adapter).
    pub adapter: Option<String>,
}

impl Criteria {
    /// Whether any criterion narrows the selection: without one, every finished run would go.
    pub fn is_empty(&self) -> bool {
        self.older_than.is_none() && self.keep_newest.is_none() && self.states.is_empty()
    }
}

/// One run, as the prune report shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunEntry {
    pub run_id: String,
    pub state: RunState,
    pub adapter: String,
    pub workflow: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    pub bytes: u64,
}

/// Why a run that matches the criteria is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum KeepReason {
    /// Queued or running: only a finished run is ever deleted.
    NotFinished,
    /// A process (a server finishing it, another prune) holds its `owner.lock`.
    OwnerLockHeld,
    /// An un-ended campaign names it as one of its items.
    Campaign { campaign_id: String },
    /// A kept run took one of its artifacts as input.
    InputOf { run_id: String },
}

impl std::fmt::Display for KeepReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeepReason::NotFinished => write!(f, "not finished (only finished runs are deleted)"),
            KeepReason::OwnerLockHeld => {
                write!(f, "its owner.lock is held (a server is still finishing it)")
            }
            KeepReason::Campaign { campaign_id } => {
                write!(f, "an item of campaign {campaign_id}, which has not ended")
            }
            KeepReason::InputOf { run_id } => {
                write!(
                    f,
                    "run {run_id}, which is kept, took one of its artifacts as input"
                )
            }
        }
    }
}

/// A matching run that is kept, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kept {
    #[serde(flatten)]
    pub run: RunEntry,
    pub reason: KeepReason,
    /// [`KeepReason`] in words.
    pub why: String,
}

impl Kept {
    fn new(run: RunEntry, reason: KeepReason) -> Kept {
        let why = reason.to_string();
        Kept { run, reason, why }
    }
}

/// A deletion an earlier prune began and did not finish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tombstone {
    /// The directory's name (`.pruned-run-…`).
    pub name: String,
    pub bytes: u64,
}

/// What a prune would do: computed alike for `--dry-run` and for the real run.
#[derive(Debug, Clone, Serialize)]
pub struct PrunePlan {
    pub runs_dir: PathBuf,
    /// The runs to delete, newest first.
    pub delete: Vec<RunEntry>,
    /// The runs that match but are kept, newest first.
    pub kept: Vec<Kept>,
    /// Deletions an earlier prune left unfinished; every prune finishes them first.
    pub tombstones: Vec<Tombstone>,
    /// Run directories without a readable status (a run being created, or damaged): never
    /// deleted.
    pub unreadable: Vec<String>,
    /// Problems that made the plan keep more than it might (an unreadable campaign record).
    pub warnings: Vec<String>,
    /// Runs looked at.
    pub scanned: usize,
}

impl PrunePlan {
    /// Bytes the deletions free: the runs' and the unfinished deletions'.
    pub fn total_bytes(&self) -> u64 {
        self.delete.iter().map(|r| r.bytes).sum::<u64>()
            + self.tombstones.iter().map(|t| t.bytes).sum::<u64>()
    }
}

/// What a real prune did.
#[derive(Debug, Clone, Serialize)]
pub struct PruneOutcome {
    /// The runs deleted, in the plan's order.
    pub deleted: Vec<RunEntry>,
    /// Runs the plan would delete but that were kept when their turn came (a server took
    /// their lock in between).
    pub kept: Vec<Kept>,
    /// Unfinished deletions finished.
    pub tombstones: Vec<Tombstone>,
    /// What could not be deleted, and why; a run renamed but not removed is left as a
    /// tombstone that the next prune finishes.
    pub failed: Vec<Failed>,
}

impl PruneOutcome {
    pub fn total_bytes(&self) -> u64 {
        self.deleted.iter().map(|r| r.bytes).sum::<u64>()
            + self.tombstones.iter().map(|t| t.bytes).sum::<u64>()
    }
}

/// One run or tombstone that could not be deleted.
#[derive(Debug, Clone, Serialize)]
pub struct Failed {
    pub name: String,
    pub error: String,
}

/// Why no plan could be made.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    #[error("cannot read the runs directory {}: {source}", path.display())]
    RunsDir {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Decide what a prune of `runs_dir` deletes at time `now`. `campaigns_dir` holds one
/// directory per adapter, each with `camp-…/campaign.json`. Reads only; changes nothing.
pub fn plan(
    runs_dir: &Path,
    campaigns_dir: &Path,
    criteria: &Criteria,
    now: jiff::Timestamp,
) -> Result<PrunePlan, PruneError> {
    let entries = match fs_err::read_dir(runs_dir) {
        Ok(entries) => Some(entries),
        // No runs directory: nothing was ever run here, so there is nothing to delete.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(PruneError::RunsDir {
                path: runs_dir.to_path_buf(),
                source,
            });
        }
    };
    let mut runs: Vec<(RunEntry, RunState)> = Vec::new();
    let mut tombstones = Vec::new();
    let mut unreadable = Vec::new();
    for entry in entries.into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_tombstone_name(&name) {
            tombstones.push(Tombstone {
                bytes: tree_bytes(&entry.path()),
                name,
            });
            continue;
        }
        if !is_run_id(&name) {
            continue;
        }
        match read_json::<RunStatus>(&entry.path().join("status.json")) {
            Ok(status) => {
                let state = status.state;
                runs.push((
                    RunEntry {
                        run_id: name,
                        state,
                        adapter: status.adapter,
                        workflow: status.workflow,
                        created_at: status.created_at,
                        ended_at: status.ended_at,
                        bytes: 0,
                    },
                    state,
                ));
            }
            Err(_) => unreadable.push(name),
        }
    }
    tombstones.sort_by(|a, b| a.name.cmp(&b.name));
    unreadable.sort();
    // Newest first, as list_runs shows them: `--keep-newest` counts in this order.
    runs.sort_by(|(a, _), (b, _)| {
        b.created_at
            .cmp(&a.created_at)
            .then_with(|| a.run_id.cmp(&b.run_id))
    });
    let scanned = runs.len();
    let states: HashMap<String, RunState> =
        runs.iter().map(|(r, s)| (r.run_id.clone(), *s)).collect();

    // The selection (adapter, states), then the newest N of it spared, then the age.
    let selected: Vec<&RunEntry> = runs
        .iter()
        .map(|(r, _)| r)
        .filter(|r| criteria.adapter.as_ref().is_none_or(|a| &r.adapter == a))
        .filter(|r| criteria.states.is_empty() || criteria.states.contains(&r.state))
        .collect();
    let spared = criteria.keep_newest.unwrap_or(0);
    let matching: Vec<&RunEntry> = selected
        .into_iter()
        .skip(spared)
        .filter(|r| old_enough(r, criteria.older_than, now))
        .collect();

    let mut warnings = Vec::new();
    let in_campaigns = unended_campaign_runs(campaigns_dir, &states, &mut warnings);
    let mut delete: BTreeMap<String, RunEntry> = BTreeMap::new();
    let mut kept = Vec::new();
    for run in matching {
        let mut run = run.clone();
        run.bytes = tree_bytes(&runs_dir.join(&run.run_id));
        let reason = if !run.state.is_terminal() {
            Some(KeepReason::NotFinished)
        } else if let Some(campaign_id) = in_campaigns.get(&run.run_id) {
            Some(KeepReason::Campaign {
                campaign_id: campaign_id.clone(),
            })
        } else if lock_held(&runs_dir.join(&run.run_id)) {
            Some(KeepReason::OwnerLockHeld)
        } else {
            None
        };
        match reason {
            Some(reason) => kept.push(Kept::new(run, reason)),
            None => {
                delete.insert(run.run_id.clone(), run);
            }
        }
    }

    // A run a kept run read an artifact of stays, and so, in turn, does what that run read.
    // References only point back in time, so only runs created after the oldest candidate
    // can hold one; runs being created (no status yet) are read too.
    if let Some(oldest) = delete.values().map(|r| r.created_at.clone()).min() {
        let mut queue: Vec<String> = runs
            .iter()
            .map(|(r, _)| r)
            .filter(|r| !delete.contains_key(&r.run_id) && r.created_at >= oldest)
            .map(|r| r.run_id.clone())
            .chain(unreadable.iter().cloned())
            .collect();
        while let Some(reader) = queue.pop() {
            for source in input_runs(&runs_dir.join(&reader)) {
                if let Some(run) = delete.remove(&source) {
                    kept.push(Kept::new(
                        run,
                        KeepReason::InputOf {
                            run_id: reader.clone(),
                        },
                    ));
                    queue.push(source);
                }
            }
        }
    }

    let newest_first = |a: &RunEntry, b: &RunEntry| {
        b.created_at
            .cmp(&a.created_at)
            .then_with(|| a.run_id.cmp(&b.run_id))
    };
    let mut delete: Vec<RunEntry> = delete.into_values().collect();
    delete.sort_by(newest_first);
    kept.sort_by(|a, b| newest_first(&a.run, &b.run));
    Ok(PrunePlan {
        runs_dir: runs_dir.to_path_buf(),
        delete,
        kept,
        tombstones,
        unreadable,
        warnings,
        scanned,
    })
}

/// Whether the run ended (else was created) at least `older_than` before `now`; a time that
/// does not parse is never old enough.
fn old_enough(run: &RunEntry, older_than: Option<Duration>, now: jiff::Timestamp) -> bool {
    let Some(older_than) = older_than else {
        return true;
    };
    let at = run.ended_at.as_deref().unwrap_or(&run.created_at);
    let Ok(at) = at.parse::<jiff::Timestamp>() else {
        return false;
    };
    let Ok(limit) = jiff::SignedDuration::try_from(older_than) else {
        return false;
    };
    now.duration_since(at) >= limit
}

/// Whether another process holds `dir/owner.lock`, found without creating the file (a dry run
/// changes nothing): a missing lock file is held by nobody.
fn lock_held(dir: &Path) -> bool {
    let Ok(file) = fs_err::OpenOptions::new()
        .write(true)
        .open(dir.join("owner.lock"))
    else {
        return false;
    };
    matches!(
        file.file().try_lock(),
        Err(std::fs::TryLockError::WouldBlock)
    )
}

/// The runs whose artifacts the run in `dir` took as inputs: from its plan (`inputs[].
/// files[].from_run.run_id`) and, should the plan not be written yet, its request
/// (`inputs.<id>.run_id`, or a list of such).
fn input_runs(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Ok(plan) = read_json::<serde_json::Value>(&dir.join("plan.json")) {
        for input in plan["inputs"].as_array().into_iter().flatten() {
            for file in input["files"].as_array().into_iter().flatten() {
                if let Some(id) = file["from_run"]["run_id"].as_str() {
                    out.insert(id.to_string());
                }
            }
        }
    }
    if let Ok(request) = read_json::<serde_json::Value>(&dir.join("request.json"))
        && let Some(inputs) = request["inputs"].as_object()
    {
        for value in inputs.values() {
            let refs = match value.as_array() {
                Some(list) => list.iter().collect::<Vec<_>>(),
                None => vec![value],
            };
            for r in refs {
                if let Some(id) = r["run_id"].as_str() {
                    out.insert(id.to_string());
                }
            }
        }
    }
    out.retain(|id| is_run_id(id));
    out
}

/// Every run named by a campaign that has not ended, with the campaign's id. A campaign has
/// not ended while a server holds its lock, an item waits to start, or an item's run is not
/// finished. A campaign record that cannot be read is reported, and its runs cannot be told.
fn unended_campaign_runs(
    campaigns_dir: &Path,
    states: &HashMap<String, RunState>,
    warnings: &mut Vec<String>,
) -> HashMap<String, String> {
    let mut runs = HashMap::new();
    let Ok(adapters) = fs_err::read_dir(campaigns_dir) else {
        return runs;
    };
    for adapter in adapters.flatten() {
        let Ok(campaigns) = fs_err::read_dir(adapter.path()) else {
            continue;
        };
        for campaign in campaigns.flatten() {
            let id = campaign.file_name().to_string_lossy().into_owned();
            if !crate::campaigns::is_campaign_id(&id) {
                continue;
            }
            let path = campaign.path().join("campaign.json");
            let record = match read_json::<crate::campaigns::CampaignRecord>(&path) {
                Ok(record) => record,
                Err(e) => {
                    warnings.push(format!(
                        "campaign {id}'s record cannot be read ({e}); a run it names may be deleted: check it before pruning"
                    ));
                    continue;
                }
            };
            let waiting = record
                .items
                .iter()
                .any(|i| i.run_id.is_none() && i.start_error.is_none() && !record.cancelled);
            let unfinished = record.items.iter().any(|i| {
                i.run_id
                    .as_ref()
                    .and_then(|r| states.get(r))
                    .is_some_and(|s| !s.is_terminal())
            });
            if waiting || unfinished || lock_held(&campaign.path()) {
                for run_id in record.items.iter().filter_map(|i| i.run_id.clone()) {
                    runs.insert(run_id, id.clone());
                }
            }
        }
    }
    runs
}

/// Carry out `plan`: finish the unfinished deletions, then delete each planned run under its
/// owner lock (rename to a tombstone, flush the directory, remove). `forget` is told each run
/// id once its directory is gone from the runs directory (the run index drops it).
pub fn execute(plan: &PrunePlan, mut forget: impl FnMut(&str)) -> PruneOutcome {
    let mut outcome = PruneOutcome {
        deleted: Vec::new(),
        kept: Vec::new(),
        tombstones: Vec::new(),
        failed: Vec::new(),
    };
    for tombstone in &plan.tombstones {
        match fs_err::remove_dir_all(plan.runs_dir.join(&tombstone.name)) {
            Ok(()) => {
                // The prune that renamed it may have died before telling the index.
                if let Some(run_id) = tombstone.name.strip_prefix(TOMBSTONE_PREFIX) {
                    forget(run_id);
                }
                outcome.tombstones.push(tombstone.clone());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => outcome.failed.push(Failed {
                name: tombstone.name.clone(),
                error: e.to_string(),
            }),
        }
    }
    let pause = std::env::var_os(PAUSE_AFTER_RENAME_ENV).is_some();
    for run in &plan.delete {
        let dir = plan.runs_dir.join(&run.run_id);
        // Held until the directory is gone: a server that looks at the run meanwhile finds it
        // owned, and never picks it up.
        let _owner = match try_own(&dir) {
            Ok(Some(lock)) => lock,
            Ok(None) => {
                outcome
                    .kept
                    .push(Kept::new(run.clone(), KeepReason::OwnerLockHeld));
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                outcome.failed.push(Failed {
                    name: run.run_id.clone(),
                    error: format!("cannot take its owner lock: {e}"),
                });
                continue;
            }
        };
        let tomb = plan
            .runs_dir
            .join(format!("{TOMBSTONE_PREFIX}{}", run.run_id));
        if let Err(e) = fs_err::rename(&dir, &tomb) {
            outcome.failed.push(Failed {
                name: run.run_id.clone(),
                error: e.to_string(),
            });
            continue;
        }
        // The rename is what makes the run gone: flushed before anything else happens.
        let _ = scimcp_core::fs::sync_dir(&plan.runs_dir);
        forget(&run.run_id);
        if pause {
            // On stderr, the one place a test waiting to kill the prune can watch.
            let _ = writeln!(
                std::io::stderr(),
                "renamed {} to {}",
                run.run_id,
                tomb.display()
            );
            std::thread::sleep(Duration::from_secs(60));
        }
        match fs_err::remove_dir_all(&tomb) {
            Ok(()) => outcome.deleted.push(run.clone()),
            Err(e) => outcome.failed.push(Failed {
                name: run.run_id.clone(),
                error: format!(
                    "{e}; it is no longer listed, and the next prune finishes deleting it"
                ),
            }),
        }
    }
    outcome
}

/// `30d`, `12h`, `90m`, `45s`, `2w`: a whole number and one unit.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| DurationError(text.to_string()))?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| DurationError(text.to_string()))?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(DurationError(text.to_string())),
    };
    n.checked_mul(seconds)
        .map(Duration::from_secs)
        .ok_or_else(|| DurationError(text.to_string()))
}

/// A duration that is not a whole number with one unit.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0:?} is not a duration: write a whole number and one unit of s, m, h, d or w (e.g. 30d, 12h)"
)]
pub struct DurationError(String);

#[cfg(test)]
mod tests {
    use super::*;
    use scimcp_core::fs::write_json_atomic;

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

    struct Fixture {
        _dir: tempfile::TempDir,
        runs: PathBuf,
        campaigns: PathBuf,
    }

    impl Fixture {
        fn new() -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            let runs = dir.path().join("runs");
            let campaigns = dir.path().join("campaigns");
            fs_err::create_dir_all(&runs).unwrap();
            Fixture {
                _dir: dir,
                runs,
                campaigns,
            }
        }

        /// A run created (and, when finished, ended) on `date` (`MM-DD`) of 2026.
        fn run(&self, n: u8, state: RunState, date: &str) -> String {
            let id = format!("run-{n:016x}");
            let dir = self.runs.join(&id);
            fs_err::create_dir_all(dir.join("work/output")).unwrap();
            let at = format!("2026-{date}T00:00:00Z");
            write_json_atomic(&dir.join("status.json"), &status(&id, state, &at)).unwrap();
            fs_err::write(dir.join("work/output/a.bin"), vec![7u8; 1000]).unwrap();
            fs_err::write(dir.join("owner.lock"), b"").unwrap();
            id
        }

        fn reads(&self, reader: &str, source: &str) {
            let plan = serde_json::json!({"inputs": [{"id": "db", "files": [
                {"from_run": {"run_id": source, "artifact": "db", "path": "db"}}]}]});
            write_json_atomic(&self.runs.join(reader).join("plan.json"), &plan).unwrap();
        }

        fn plan(&self, criteria: &Criteria) -> PrunePlan {
            let now: jiff::Timestamp = "2026-03-01T00:00:00Z".parse().unwrap();
            plan(&self.runs, &self.campaigns, criteria, now).unwrap()
        }
    }

    fn ids(runs: &[RunEntry]) -> Vec<&str> {
        runs.iter().map(|r| r.run_id.as_str()).collect()
    }

    fn kept(plan: &PrunePlan) -> Vec<(&str, &KeepReason)> {
        plan.kept
            .iter()
            .map(|k| (k.run.run_id.as_str(), &k.reason))
            .collect()
    }

    #[test]
    fn prune_keeps_the_newest_and_the_young_and_deletes_the_rest() {
        let f = Fixture::new();
        let old = f.run(1, RunState::Succeeded, "01-01");
        let failed = f.run(2, RunState::Failed, "01-02");
        let young = f.run(3, RunState::Succeeded, "02-20");
        let newest = f.run(4, RunState::Cancelled, "02-25");
        let by_age = f.plan(&Criteria {
            older_than: Some(Duration::from_secs(30 * 86_400)),
            ..Criteria::default()
        });
        assert_eq!(ids(&by_age.delete), [failed.as_str(), old.as_str()]);
        assert!(by_age.kept.is_empty());
        assert!(by_age.total_bytes() >= 2000, "{}", by_age.total_bytes());

        let by_count = f.plan(&Criteria {
            keep_newest: Some(1),
            ..Criteria::default()
        });
        assert_eq!(
            ids(&by_count.delete),
            [young.as_str(), failed.as_str(), old.as_str()]
        );
        let failed_only = f.plan(&Criteria {
            states: vec![RunState::Failed, RunState::Cancelled],
            keep_newest: Some(1),
            ..Criteria::default()
        });
        assert_eq!(ids(&failed_only.delete), [failed.as_str()]);
        let _ = newest;
    }

    #[test]
    fn prune_keeps_a_running_run_a_locked_one_and_one_a_kept_run_read() {
        let f = Fixture::new();
        let running = f.run(1, RunState::Running, "01-01");
        let locked = f.run(2, RunState::Succeeded, "01-02");
        let source = f.run(3, RunState::Succeeded, "01-03");
        let middle = f.run(4, RunState::Succeeded, "01-04");
        let reader = f.run(5, RunState::Succeeded, "02-20");
        // `reader` (kept: too young) read `middle`, which read `source`: both stay.
        f.reads(&reader, &middle);
        f.reads(&middle, &source);
        let _held = try_own(&f.runs.join(&locked)).unwrap().unwrap();
        let p = f.plan(&Criteria {
            older_than: Some(Duration::from_secs(40 * 86_400)),
            ..Criteria::default()
        });
        assert!(p.delete.is_empty(), "{:?}", ids(&p.delete));
        assert_eq!(
            kept(&p),
            [
                (
                    middle.as_str(),
                    &KeepReason::InputOf {
                        run_id: reader.clone()
                    }
                ),
                (
                    source.as_str(),
                    &KeepReason::InputOf {
                        run_id: middle.clone()
                    }
                ),
                (locked.as_str(), &KeepReason::OwnerLockHeld),
                (running.as_str(), &KeepReason::NotFinished),
            ]
        );
        // When the reader goes too, so may what it read.
        let p = f.plan(&Criteria {
            older_than: Some(Duration::from_secs(7 * 86_400)),
            ..Criteria::default()
        });
        assert_eq!(
            ids(&p.delete),
            [reader.as_str(), middle.as_str(), source.as_str()]
        );
    }

    #[test]
    fn prune_keeps_the_runs_of_an_unended_campaign_only() {
        let f = Fixture::new();
        let a = f.run(1, RunState::Succeeded, "01-01");
        let b = f.run(2, RunState::Succeeded, "01-02");
        let c = f.run(3, RunState::Succeeded, "01-03");
        let campaign = |id: &str, items: serde_json::Value| {
            let dir = f.campaigns.join("refsci").join(id);
            fs_err::create_dir_all(&dir).unwrap();
            let record = serde_json::json!({
                "schema_version": 1, "campaign_id": id, "adapter": "refsci",
                "workflow": "regression", "executor": "local", "max_concurrent": 1,
                "columns": [], "created_at": "2026-01-01T00:00:00Z", "started_by": "t",
                "items": items,
            });
            write_json_atomic(&dir.join("campaign.json"), &record).unwrap();
        };
        let item = |i: usize, run: Option<&str>| {
            serde_json::json!({"index": i, "dataset": "d", "parameters": {},
                "validation_id": "v", "run_id": run})
        };
        // One item done, one still waiting: not ended.
        campaign(
            "camp-00000000000000aa",
            serde_json::json!([item(0, Some(&a)), item(1, None)]),
        );
        // Every item finished: ended, its run may go.
        campaign(
            "camp-00000000000000bb",
            serde_json::json!([item(0, Some(&b))]),
        );
        let p = f.plan(&Criteria {
            older_than: Some(Duration::from_secs(86_400)),
            ..Criteria::default()
        });
        assert_eq!(ids(&p.delete), [c.as_str(), b.as_str()]);
        assert_eq!(
            kept(&p),
            [(
                a.as_str(),
                &KeepReason::Campaign {
                    campaign_id: "camp-00000000000000aa".into()
                }
            )]
        );
    }

    #[test]
    fn prune_deletes_what_the_plan_lists_and_finishes_a_left_tombstone() {
        let f = Fixture::new();
        let a = f.run(1, RunState::Succeeded, "01-01");
        let b = f.run(2, RunState::Failed, "01-02");
        let keep = f.run(3, RunState::Succeeded, "02-27");
        // A prune that died between rename and remove.
        let left = f.run(9, RunState::Succeeded, "01-01");
        fs_err::rename(f.runs.join(&left), f.runs.join(format!(".pruned-{left}"))).unwrap();
        let criteria = Criteria {
            older_than: Some(Duration::from_secs(30 * 86_400)),
            ..Criteria::default()
        };
        let dry = f.plan(&criteria);
        assert_eq!(dry.tombstones.len(), 1);
        let mut forgotten = Vec::new();
        let done = execute(&dry, |id| forgotten.push(id.to_string()));
        assert_eq!(ids(&done.deleted), ids(&dry.delete));
        assert_eq!(ids(&done.deleted), [b.as_str(), a.as_str()]);
        assert_eq!(forgotten, [left.clone(), b.clone(), a.clone()]);
        assert_eq!(done.tombstones, dry.tombstones);
        assert!(done.failed.is_empty(), "{:?}", done.failed);
        let left_over: Vec<String> = fs_err::read_dir(&f.runs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left_over, [keep]);
        // Nothing more to do.
        let again = f.plan(&criteria);
        assert!(again.delete.is_empty() && again.tombstones.is_empty());
    }

    #[test]
    fn a_run_locked_after_planning_is_kept_at_delete_time() {
        let f = Fixture::new();
        let a = f.run(1, RunState::Succeeded, "01-01");
        let p = f.plan(&Criteria {
            older_than: Some(Duration::from_secs(86_400)),
            ..Criteria::default()
        });
        assert_eq!(ids(&p.delete), [a.as_str()]);
        let _held = try_own(&f.runs.join(&a)).unwrap().unwrap();
        let done = execute(&p, |_| {});
        assert!(done.deleted.is_empty());
        assert_eq!(done.kept[0].reason, KeepReason::OwnerLockHeld);
        assert!(f.runs.join(&a).join("status.json").is_file());
    }

    #[test]
    fn prune_durations_parse_and_bad_ones_say_how_to_write_them() {
        assert_eq!(
            parse_duration("30d").unwrap(),
            Duration::from_secs(30 * 86_400)
        );
        assert_eq!(
            parse_duration("12h").unwrap(),
            Duration::from_secs(12 * 3600)
        );
        assert_eq!(
            parse_duration("2w").unwrap(),
            Duration::from_secs(14 * 86_400)
        );
        for bad in ["", "30", "d", "1.5d", "3y", "-1d"] {
            let e = parse_duration(bad).unwrap_err().to_string();
            assert!(e.contains("e.g. 30d"), "{bad}: {e}");
        }
    }
}
