//! Resource bounds. Every bound has a suite default that is also its ceiling: an adapter
//! manifest may tighten a bound, never loosen it.

use serde::{Deserialize, Serialize};

/// Resource bounds for one adapter's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Wall-clock seconds a run may take before it is killed and marked `failed` (`timeout`).
    pub run_timeout_s: u64,
    /// Runs that may be queued or running at once; more are refused.
    pub max_pending_runs: u32,
    /// Runs that may execute at the same time; others wait queued.
    pub max_concurrent_runs: u32,
    /// Largest dataset file accepted, in bytes.
    pub max_dataset_bytes: u64,
    /// Most artifacts indexed for one run.
    pub max_artifacts: u32,
    /// Largest single artifact indexed, in bytes.
    pub max_artifact_bytes: u64,
    /// Bytes of stdout and of stderr kept per run (head plus tail).
    pub max_log_bytes: u64,
}

impl Limits {
    /// The suite defaults, which are also the ceilings.
    pub const DEFAULT: Limits = Limits {
        run_timeout_s: 3600,
        max_pending_runs: 4,
        max_concurrent_runs: 2,
        max_dataset_bytes: 256 * 1024 * 1024,
        max_artifacts: 512,
        max_artifact_bytes: 1024 * 1024 * 1024,
        max_log_bytes: 1024 * 1024,
    };

    /// Each bound paired with its name and value, for validation and reports.
    pub fn entries(&self) -> [(&'static str, u64); 7] {
        [
            ("run_timeout_s", self.run_timeout_s),
            ("max_pending_runs", u64::from(self.max_pending_runs)),
            ("max_concurrent_runs", u64::from(self.max_concurrent_runs)),
            ("max_dataset_bytes", self.max_dataset_bytes),
            ("max_artifacts", u64::from(self.max_artifacts)),
            ("max_artifact_bytes", self.max_artifact_bytes),
            ("max_log_bytes", self.max_log_bytes),
        ]
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
