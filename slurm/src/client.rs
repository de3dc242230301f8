//! Slurm's client commands (`sbatch`, `squeue`, `scancel`, `sacct`, `sinfo`, `scontrol`),
//! each run through `scimcp-process` with a time limit, a bounded output and a cleared
//! environment, and their output parsed. Blocking: callers on the async runtime use
//! `spawn_blocking`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::SlurmConfig;
use crate::partition::{Partition, parse_sinfo};

/// One job (or array task) as `squeue` reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// `12` for a job, `12_3` for an array task: how the executor names it.
    pub key: String,
    /// Slurm's state word, e.g. `PENDING`, `RUNNING`, `TIMEOUT`.
    pub state: String,
    /// Slurm's reason, e.g. `Resources`, `NonZeroExitCode`; `None` when Slurm says `None`.
    pub reason: Option<String>,
    /// The raw wait status Slurm recorded (code << 8 | signal).
    pub exit_status: Option<i32>,
    pub node: Option<String>,
}

/// What `sbatch` is asked to do.
#[derive(Debug, Clone)]
pub struct Submission {
    pub job_name: String,
    pub script: PathBuf,
    pub chdir: PathBuf,
    pub output: PathBuf,
    pub error: PathBuf,
    pub cpus: u32,
    pub memory_mb: Option<u64>,
    pub time_limit_min: u64,
    /// `0-59%3` for a job array.
    pub array: Option<String>,
}

/// A Slurm command that failed, with what it said.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct SlurmError(pub String);

/// The Slurm client with the operator's configuration.
#[derive(Debug)]
pub struct Slurm {
    pub config: SlurmConfig,
}

impl Slurm {
    pub fn new(config: SlurmConfig) -> Slurm {
        Slurm { config }
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.config.command_timeout_s)
    }

    /// `program` with a cleared environment: the run passthrough names (a job submitted
    /// with `--export=ALL` gives its CLI the same variables a local run gets) and Slurm's
    /// own configuration pointer.
    fn command(&self, program: &str) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        cmd.env_clear();
        for name in scimcp_core::run_env::ENV_PASSTHROUGH
            .iter()
            .copied()
            .chain(["SLURM_CONF"])
        {
            if let Some(value) = std::env::var_os(name) {
                cmd.env(name, value);
            }
        }
        cmd
    }

    fn run(&self, what: &str, cmd: std::process::Command) -> Result<String, SlurmError> {
        let step = scimcp_process::Step::new(what, cmd)
            .timeout(self.timeout())
            .max_output(4 * 1024 * 1024);
        let captured = scimcp_process::run(step)
            .map_err(|e| SlurmError(e.to_string()))?
            .check()
            .map_err(|e| SlurmError(e.to_string()))?;
        Ok(captured.stdout)
    }

    /// Submit; returns the job id (for an array, the array's id).
    pub fn submit(&self, s: &Submission) -> Result<String, SlurmError> {
        let mut cmd = self.command("sbatch");
        let path = |p: &Path| p.display().to_string();
        cmd.arg("--parsable")
            .arg(format!("--job-name={}", s.job_name))
            .arg(format!("--chdir={}", path(&s.chdir)))
            .arg(format!("--output={}", path(&s.output)))
            .arg(format!("--error={}", path(&s.error)))
            .arg("--export=ALL")
            // A job whose node fails ends as NODE_FAIL and is reported, not silently rerun.
            .arg("--no-requeue")
            .arg("--ntasks=1")
            .arg(format!("--cpus-per-task={}", s.cpus))
            .arg(format!("--time={}", s.time_limit_min));
        if let Some(mb) = s.memory_mb {
            cmd.arg(format!("--mem={mb}M"));
        }
        if let Some(p) = &self.config.partition {
            cmd.arg(format!("--partition={p}"));
        }
        if let Some(a) = &self.config.account {
            cmd.arg(format!("--account={a}"));
        }
        if let Some(q) = &self.config.qos {
            cmd.arg(format!("--qos={q}"));
        }
        cmd.args(&self.config.directives);
        if let Some(array) = &s.array {
            cmd.arg(format!("--array={array}"));
        }
        cmd.arg(&s.script);
        let out = self.run("sbatch", cmd)?;
        // `--parsable` prints `id` or, on a multi-cluster setup, `id;cluster`.
        let id = out.trim().split(';').next().unwrap_or_default().to_string();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
            return Err(SlurmError(format!(
                "sbatch printed no job id: {:?}",
                out.trim()
            )));
        }
        Ok(id)
    }

    /// One `squeue` for every job and array task of `job_ids` (finished ones included while
    /// the controller remembers them).
    pub fn query(&self, job_ids: &[String]) -> Result<Vec<Observation>, SlurmError> {
        if job_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut cmd = self.command("squeue");
        cmd.args(["-h", "-r", "-t", "all", "-j", &job_ids.join(",")])
            .args(["-O", "JobArrayID:|,State:|,Reason:|,exit_code:|,NodeList:|"]);
        match self.run("squeue", cmd) {
            Ok(out) => Ok(parse_squeue(&out)),
            // A single id the controller no longer knows is an error; several are not.
            Err(e) if e.0.contains("Invalid job id") => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// `scancel` jobs or array tasks (`12`, `12_3`); unknown or finished ones are ignored.
    pub fn cancel(&self, keys: &[String]) -> Result<(), SlurmError> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut cmd = self.command("scancel");
        cmd.args(keys);
        self.run("scancel", cmd).map(|_| ())
    }

    /// A job the controller has forgotten, from the accounting database when there is one.
    pub fn accounting(&self, key: &str) -> Option<Observation> {
        let mut cmd = self.command("sacct");
        cmd.args([
            "-X",
            "-n",
            "-P",
            "-j",
            key,
            "-o",
            "JobID,State,ExitCode,Reason,NodeList",
        ]);
        let out = self.run("sacct", cmd).ok()?;
        out.lines().find_map(|line| {
            let f: Vec<&str> = line.split('|').collect();
            if f.len() < 5 || f[0] != key {
                return None;
            }
            // `CANCELLED by 0`: the state is the first word.
            let state = f[1].split_whitespace().next()?.to_string();
            let (code, signal) = f[2].split_once(':')?;
            let exit_status = code
                .parse::<i32>()
                .ok()
                .zip(signal.parse::<i32>().ok())
                .map(|(c, s)| (c << 8) | (s & 0x7f));
            Some(Observation {
                key: key.to_string(),
                state,
                reason: none_if_none(f[3]),
                exit_status,
                node: none_if_none(f[4]),
            })
        })
    }

    /// The partitions this server may submit to, with their limits.
    pub fn partitions(&self) -> Result<Vec<Partition>, SlurmError> {
        let mut cmd = self.command("sinfo");
        cmd.args(["-h", "-o", "%R|%P|%a|%l|%L|%D|%c|%m|%t"]);
        let out = self.run("sinfo", cmd)?;
        Ok(parse_sinfo(&out))
    }

    /// Whether `sacct` can answer (accounting is configured): `Err` with what it said when
    /// not. Without it, a job the controller has forgotten is known only by the exit status
    /// it left in its run directory.
    pub fn accounting_available(&self) -> Result<(), SlurmError> {
        let mut cmd = self.command("sacct");
        // Jobs that started from now on: an answer in one round trip, whatever the history.
        cmd.args(["-X", "-n", "-P", "-S", "now", "-o", "JobID"]);
        self.run("sacct", cmd).map(|_| ())
    }
}

fn none_if_none(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty() && s != "None" && s != "(null)").then(|| s.to_string())
}

/// `JobArrayID|State|Reason|exit_code|NodeList|` lines.
pub fn parse_squeue(out: &str) -> Vec<Observation> {
    out.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split('|').map(str::trim).collect();
            if f.len() < 5 || f[0].is_empty() {
                return None;
            }
            Some(Observation {
                key: f[0].to_string(),
                state: f[1].to_string(),
                reason: none_if_none(f[2]),
                exit_status: f[3].parse().ok(),
                node: none_if_none(f[4]),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeue_lines_parse_with_reasons_and_wait_statuses() {
        let out = "1|FAILED|NonZeroExitCode|768|vm|\n2_4|PENDING|JobArrayTaskLimit|0||\n\
                   3|PENDING|ReqNodeNotAvail, UnavailableNodes:vm|0||\n";
        let obs = parse_squeue(out);
        assert_eq!(obs.len(), 3);
        assert_eq!(obs[0].key, "1");
        assert_eq!(obs[0].exit_status, Some(768));
        assert_eq!(obs[0].node.as_deref(), Some("vm"));
        assert_eq!(obs[1].key, "2_4");
        assert_eq!(obs[1].node, None);
        assert_eq!(
            obs[2].reason.as_deref(),
            Some("ReqNodeNotAvail, UnavailableNodes:vm")
        );
    }
}
