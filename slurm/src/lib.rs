//! Slurm as scimcp talks to it: the operator's configuration (`--slurm-config`, checked the
//! same way wherever it is read), the client commands (`sbatch`, `squeue`, `scancel`,
//! `sacct`, `sinfo`) with their output parsed, and the partitions with their limits.
//!
//! It is its own crate because two parts must agree on all of it: the server's Slurm
//! executor submits and watches jobs with it, and the doctor's `cluster.slurm` check reads
//! the same file and asks the cluster the same questions, so the doctor's "ok" means the
//! server will start and its jobs will be accepted. The executor itself (batch scripts, job
//! records, how job states read as run states) stays in the server.

mod client;
mod config;
mod partition;

pub use client::{Observation, Slurm, SlurmError, Submission, parse_squeue};
pub use config::{ALLOWED_DIRECTIVES, ConfigError, DirectiveError, SlurmConfig, check_directive};
pub use partition::{Partition, node_state_takes_jobs, parse_minutes, parse_sinfo, per_node_max};
