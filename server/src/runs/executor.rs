//! Where a run's CLI executes: here, as a child process (`local`, the default), or as a
//! Slurm batch job (`slurm`). The run contract — plan, run directory, states, artifacts,
//! `result.json`, receipts — is the same for both; only the way the process is started,
//! watched and stopped differs.

use std::sync::Arc;

use super::slurm::SlurmExecutor;

/// The executor a server was started with.
#[derive(Debug, Clone, Default)]
pub enum Executor {
    #[default]
    Local,
    Slurm(Arc<SlurmExecutor>),
}

impl Executor {
    /// `local` or `slurm`.
    pub fn kind(&self) -> &'static str {
        match self {
            Executor::Local => "local",
            Executor::Slurm(_) => "slurm",
        }
    }

    pub fn slurm(&self) -> Option<&Arc<SlurmExecutor>> {
        match self {
            Executor::Slurm(s) => Some(s),
            Executor::Local => None,
        }
    }
}
