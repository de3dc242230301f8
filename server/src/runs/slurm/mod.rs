//! The Slurm executor's parts: the shared status poller, the batch script, the job record
//! kept in the run directory, and how Slurm's job states read as run states. The operator's
//! configuration and the client commands are the `scimcp-slurm` crate's, shared with the
//! doctor's `cluster.slurm` check.
//!
//! A Slurm run is the same run as a local one (plan, run directory, states, artifacts,
//! `result.json`): the server prepares the working directory as it always does, then
//! submits a two-line batch script that `exec`s `scimcp __job` on the compute node. That
//! subcommand executes the plan recorded in the run directory exactly as the local executor
//! would (isolated environment, stdin answers, bounded `stdout.log`/`stderr.log`) and writes
//! the CLI's exit status to `cli-status.json`. The run directory must therefore be on a file
//! system the compute nodes share.

pub mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use scimcp_slurm::{Observation, Partition, Slurm, SlurmConfig, SlurmError, Submission};
pub use watch::{JobView, JobWatch};

/// The job record of a run submitted to Slurm: `slurm-job.json` in its run directory. Its
/// presence is what tells a restarted server to re-attach instead of recording the run
/// interrupted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    pub schema_version: u32,
    /// `12`, or `12_3` for task 3 of array job 12.
    pub job_id: String,
    pub submitted_at: String,
    pub time_limit_min: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    pub cpus: u32,
    /// Slurm's own stdout and stderr of the job (its messages: time limit, memory).
    pub slurm_output: PathBuf,
    pub slurm_error: PathBuf,
    /// The campaign this run belongs to, when submitted as one of its job array's tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign_id: Option<String>,
}

/// The job record's file name.
pub const JOB_RECORD: &str = "slurm-job.json";

impl JobRecord {
    pub fn read(run_dir: &Path) -> Option<JobRecord> {
        let bytes = fs_err::read(run_dir.join(JOB_RECORD)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// The server's own binary, which the batch script runs, cannot be found.
#[derive(Debug, thiserror::Error)]
#[error("cannot locate the scimcp binary: {0}")]
pub struct NoScimcpBinary(std::io::Error);

/// A word the batch script would have to escape past what `sh` quoting keeps safe.
#[derive(Debug, thiserror::Error)]
#[error("{word:?} contains a line break")]
pub struct UnquotableWord {
    pub word: String,
}

/// The Slurm executor: client, poller, and where the compute nodes find `scimcp`.
#[derive(Debug)]
pub struct SlurmExecutor {
    pub slurm: Arc<Slurm>,
    pub watch: Arc<JobWatch>,
    pub scimcp: PathBuf,
}

impl SlurmExecutor {
    pub fn new(config: SlurmConfig) -> Result<Arc<SlurmExecutor>, NoScimcpBinary> {
        let scimcp = match &config.scimcp {
            Some(p) => p.clone(),
            None => std::env::current_exe().map_err(NoScimcpBinary)?,
        };
        let slurm = Arc::new(Slurm::new(config));
        Ok(Arc::new(SlurmExecutor {
            watch: JobWatch::new(Arc::clone(&slurm)),
            slurm,
            scimcp,
        }))
    }

    /// The batch script: no logic, only the `exec` of `scimcp __job` with its arguments,
    /// each quoted, so the job runs the recorded plan and nothing a shell could reinterpret.
    pub fn script(&self, job_args: &[String]) -> Result<String, UnquotableWord> {
        let mut line = vec![quote(&self.scimcp.display().to_string())?];
        line.push(crate::runs::job::SUBCOMMAND.to_string());
        for a in job_args {
            line.push(quote(a)?);
        }
        Ok(format!(
            "#!/bin/sh\n# Written by scimcp: runs the plan recorded in the run directory (plan.json).\nexec {}\n",
            line.join(" ")
        ))
    }
}

/// `word` single-quoted for `sh`; a path with a line break or NUL is refused, not escaped.
fn quote(word: &str) -> Result<String, UnquotableWord> {
    if word.contains(['\n', '\r', '\0']) {
        return Err(UnquotableWord {
            word: word.to_string(),
        });
    }
    Ok(format!("'{}'", word.replace('\'', r"'\''")))
}

/// How a job's state reads as a run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for resources (or held, or requeued): the run is `queued`.
    Pending,
    /// Running, completing or suspended: the run is `running`.
    Running,
    /// Slurm is done with it.
    Ended(Ending),
}

/// Why a job ended, in Slurm's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Completed,
    Failed,
    Cancelled,
    Timeout,
    OutOfMemory,
    NodeFail,
    Preempted,
    BootFail,
    Deadline,
    /// A state this code does not know; treated as a failure.
    Other,
}

/// Slurm's state word as a [`Phase`].
pub fn phase(state: &str) -> Phase {
    match state {
        "PENDING" | "CONFIGURING" | "REQUEUED" | "REQUEUE_HOLD" | "REQUEUE_FED"
        | "RESV_DEL_HOLD" => Phase::Pending,
        "RUNNING" | "COMPLETING" | "SUSPENDED" | "STAGE_OUT" | "SIGNALING" | "RESIZING"
        | "STOPPED" | "POWER_UP_NODE" | "UPDATE_DB" => Phase::Running,
        "COMPLETED" => Phase::Ended(Ending::Completed),
        "FAILED" => Phase::Ended(Ending::Failed),
        "CANCELLED" => Phase::Ended(Ending::Cancelled),
        "TIMEOUT" => Phase::Ended(Ending::Timeout),
        "OUT_OF_MEMORY" => Phase::Ended(Ending::OutOfMemory),
        "NODE_FAIL" => Phase::Ended(Ending::NodeFail),
        "PREEMPTED" => Phase::Ended(Ending::Preempted),
        "BOOT_FAIL" => Phase::Ended(Ending::BootFail),
        "DEADLINE" => Phase::Ended(Ending::Deadline),
        _ => Phase::Ended(Ending::Other),
    }
}

/// The last lines of Slurm's own error file for a job (its messages about time limits,
/// memory and node failures), at most `max` bytes.
pub fn slurm_messages(path: &Path, max: usize) -> Option<String> {
    let tail = crate::runs::logs::file_tail(path, max).ok()?;
    let lines: Vec<&str> = tail
        .text
        .lines()
        .filter(|l| l.contains("slurmstepd") || l.contains("error:"))
        .collect();
    (!lines.is_empty()).then(|| lines.join(" / "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_map_to_phases() {
        assert_eq!(phase("PENDING"), Phase::Pending);
        assert_eq!(phase("COMPLETING"), Phase::Running);
        assert_eq!(phase("TIMEOUT"), Phase::Ended(Ending::Timeout));
        assert_eq!(phase("OUT_OF_MEMORY"), Phase::Ended(Ending::OutOfMemory));
        assert_eq!(phase("NODE_FAIL"), Phase::Ended(Ending::NodeFail));
        assert_eq!(phase("WHATEVER"), Phase::Ended(Ending::Other));
    }

    #[test]
    fn the_script_only_execs_quoted_arguments() {
        let exec = SlurmExecutor {
            slurm: Arc::new(Slurm::new(SlurmConfig::default())),
            watch: JobWatch::new(Arc::new(Slurm::new(SlurmConfig::default()))),
            scimcp: PathBuf::from("/opt/sci mcp/bin/scimcp"),
        };
        let script = exec
            .script(&["--run-dir".into(), "/runs/it's".into()])
            .unwrap();
        assert!(script.starts_with("#!/bin/sh\n"));
        assert!(
            script.ends_with("exec '/opt/sci mcp/bin/scimcp' __job '--run-dir' '/runs/it'\\''s'\n"),
            "{script}"
        );
        assert!(exec.script(&["a\nb".into()]).is_err());
    }
}
