//! Time limits for tests that wait on the code's own deadlines: each is the constant the code
//! uses plus one slack for a shared, loaded machine, never a number picked to pass. Raise the
//! slack on a slow machine with `SCIMCP_TEST_SLACK_FACTOR` (a multiplier, default 1).

use std::time::Duration;

/// What scheduling, signal delivery and reaping may add on a loaded two-core machine (the
/// CI runners): measured under the full suite, a tree ended with SIGKILL is reaped within
/// about 300 ms; the rest is margin for a machine shared with other builds.
const SLACK: Duration = Duration::from_millis(1300);

/// The slack, times `SCIMCP_TEST_SLACK_FACTOR` when set to a number of at least 1.
pub fn slack() -> Duration {
    let factor = std::env::var("SCIMCP_TEST_SLACK_FACTOR")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|f| f.is_finite() && *f >= 1.0)
        .unwrap_or(1.0);
    SLACK.mul_f64(factor)
}

/// A run's whole process tree is gone within this after the suite ends it (a cancel, its
/// time limit, its server stopping): SIGTERM, at most [`scimcp_process::TERMINATE_GRACE`],
/// then SIGKILL and the reaping.
pub fn process_tree_gone() -> Duration {
    scimcp_process::TERMINATE_GRACE + slack()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_follows_the_code_grace() {
        assert!(process_tree_gone() > scimcp_process::TERMINATE_GRACE);
        assert!(process_tree_gone() >= scimcp_process::TERMINATE_GRACE + SLACK);
    }
}
