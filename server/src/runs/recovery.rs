//! Start-up recovery: runs left `queued` or `running` by a server that died.
//!
//! A run is orphaned when nobody holds its `owner.lock` (the OS releases the lock of a dead
//! process, so this is immune to pid reuse). An orphan is marked `failed` with reason
//! `interrupted` and gets a `receipt.json`; no `result.json` is ever written for it. When its
//! CLI is still running, the process group is ended, but only after the process is proven to
//! be that run's CLI (on Linux its working directory is the run's `work/`; elsewhere its
//! process group and command must match), so an unrelated process that reused the pid is
//! never touched.
//!
//! A run submitted to a batch scheduler (it has a `slurm-job.json`) is not an orphan: its job
//! runs on without the server, and the next server re-attaches to it by job id.

use std::path::Path;

use scimcp_core::fs::write_json_atomic;

use super::child::{Signal, signal_tree};
use super::index::Index;
use super::record::{is_run_id, read_json, try_own};
use super::state::{RECORD_SCHEMA_VERSION, RunResult, RunState, RunStatus, now};

/// Recover every orphaned run under `root`: only the runs its index holds as not terminal
/// are read (a terminal state is final), so a start costs what is live, not the history.
/// Each run settled here is recorded in the index.
pub(super) fn recover(root: &Path, server_pid: u32, index: &Index) {
    for entry in index.unsettled() {
        let run_id = entry.run_id;
        if !is_run_id(&run_id) {
            continue;
        }
        let dir = root.join(&run_id);
        let status = match read_json::<RunStatus>(&dir.join("status.json")) {
            Ok(status) => status,
            Err(_) if !dir.exists() => {
                index.dropped(&run_id);
                continue;
            }
            Err(_) => continue,
        };
        if status.state.is_terminal() {
            // Ended after its last index line (the server died between the two writes).
            index.changed(&status);
            continue;
        }
        // A submitted batch job is not interrupted by its server's death: it is re-attached
        // by job id (RunManager::reattach).
        if dir.join(super::slurm::JOB_RECORD).is_file() {
            continue;
        }
        // A live owner holds the lock: another server is running this run right now.
        let Ok(Some(_lock)) = try_own(&dir) else {
            continue;
        };
        if let Some(status) = recover_one(&dir, status, server_pid) {
            index.changed(&status);
        }
    }
}

/// Settle one orphaned run; its new terminal status, once written.
fn recover_one(dir: &Path, mut status: RunStatus, server_pid: u32) -> Option<RunStatus> {
    let previous = status.state;
    if let Ok(result) = read_json::<RunResult>(&dir.join("result.json")) {
        // The server died between publishing the result and recording it: adopt it.
        status.state = result.state;
        status.reason = result.reason;
        status.message = result.message;
        status.ended_at = Some(result.ended_at);
        return write_json_atomic(&dir.join("status.json"), &status)
            .ok()
            .map(|()| status);
    }
    let orphan = status.pid.map(|pid| {
        let plan: Option<serde_json::Value> = read_json(&dir.join("plan.json")).ok();
        let program = plan.as_ref().and_then(|p| p["program"].as_str().map(String::from)).unwrap_or_default();
        match is_our_cli(pid, &dir.join("work"), &program) {
            Identity::Ours => {
                signal_tree(pid, Signal::Kill);
                serde_json::json!({"pid": pid, "ended": true, "note": "the run's CLI was still running and its process group was killed"})
            }
            Identity::Gone => serde_json::json!({"pid": pid, "ended": true, "note": "the run's CLI had already exited"}),
            Identity::NotOurs(why) => serde_json::json!({"pid": pid, "ended": false, "note": format!("not ended: {why}")}),
        }
    });
    status.state = RunState::Failed;
    status.reason = Some("interrupted".into());
    status.message = Some(format!(
        "the server (pid {}) running this analysis stopped before it finished; start the analysis again",
        status.server_pid
    ));
    status.ended_at = Some(now());
    let receipt = serde_json::json!({
        "schema_version": RECORD_SCHEMA_VERSION,
        "run_id": status.run_id,
        "state": status.state,
        "reason": "interrupted",
        "previous_state": previous,
        "recovered_at": status.ended_at,
        "recovered_by_server_pid": server_pid,
        "original_server_pid": status.server_pid,
        "orphan": orphan,
    });
    tracing::warn!(
        run_id = status.run_id,
        "recovered a run left unfinished by a stopped server"
    );
    let _ = write_json_atomic(&dir.join("receipt.json"), &receipt);
    write_json_atomic(&dir.join("status.json"), &status)
        .ok()
        .map(|()| status)
}

enum Identity {
    Ours,
    Gone,
    NotOurs(String),
}

#[cfg(target_os = "linux")]
fn is_our_cli(pid: u32, work: &Path, _program: &str) -> Identity {
    let work = fs_err::canonicalize(work).ok();
    let in_run = |member: u32| {
        let cwd = fs_err::read_link(Path::new("/proc").join(member.to_string()).join("cwd")).ok();
        cwd.is_some()
            && cwd
                .as_deref()
                .zip(work.as_deref())
                .is_some_and(|(c, w)| c.starts_with(w))
    };
    let proc_dir = Path::new("/proc").join(pid.to_string());
    let leader_alive = fs_err::read_to_string(proc_dir.join("stat")).is_ok_and(|stat| {
        // The state letter follows the command name's closing parenthesis.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z")
    });
    if leader_alive {
        return if in_run(pid) {
            Identity::Ours
        } else {
            Identity::NotOurs(
                "the pid now belongs to a process outside this run's directory".into(),
            )
        };
    }
    // The leader is gone, but its group lives on while any member does (a worker whose
    // parent was killed). A group id is not reused while the group exists, and a member
    // working inside this run's directory proves the group is the run's.
    let members = scimcp_process::group_members(pid);
    if members.is_empty() {
        Identity::Gone
    } else if members.iter().any(|m| in_run(*m)) {
        Identity::Ours
    } else {
        Identity::NotOurs("the group's processes work outside this run's directory".into())
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn is_our_cli(pid: u32, _work: &Path, program: &str) -> Identity {
    let mut ps = std::process::Command::new("ps");
    ps.args(["-o", "pgid=,stat=,command=", "-p", &pid.to_string()]);
    // Through the suite's runner: bounded in time and output like every other child, so a
    // hung `ps` cannot hold up a server's start.
    let out = scimcp_process::run(
        scimcp_process::Step::new("the process listing (ps)", ps)
            .timeout(std::time::Duration::from_secs(10)),
    );
    let Ok(out) = out else {
        return Identity::NotOurs("ps is not available".into());
    };
    let line = out.stdout.trim().to_string();
    if line.is_empty() {
        return Identity::Gone;
    }
    let mut parts = line.split_whitespace();
    let pgid = parts.next().unwrap_or_default();
    let stat = parts.next().unwrap_or_default();
    if stat.starts_with('Z') {
        return Identity::Gone;
    }
    if pgid == pid.to_string() && !program.is_empty() && line.contains(program) {
        Identity::Ours
    } else {
        Identity::NotOurs("the pid now belongs to a different program".into())
    }
}

#[cfg(windows)]
fn is_our_cli(_pid: u32, _work: &Path, _program: &str) -> Identity {
    Identity::NotOurs("the process identity cannot be verified on Windows".into())
}
