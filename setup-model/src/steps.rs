//! The time limits of the helper programs, which `SCIMCP_STEP_TIMEOUT_S` replaces (tests
//! shorten them, a very slow mirror may need longer). The installer's other steps use the
//! same [`limit`].

use std::sync::OnceLock;
use std::time::Duration;

/// The environment variable that replaces every step's time limit (whole seconds).
pub const TIMEOUT_ENV: &str = "SCIMCP_STEP_TIMEOUT_S";

/// A client's own command-line tool (`claude mcp add-json`).
pub const CLIENT_CLI: Duration = Duration::from_secs(120);

/// The limit in force for a step whose default is `default`.
pub fn limit(default: Duration) -> Duration {
    static OVERRIDE: OnceLock<Option<Duration>> = OnceLock::new();
    OVERRIDE
        .get_or_init(|| {
            std::env::var(TIMEOUT_ENV)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|s| *s > 0)
                .map(Duration::from_secs)
        })
        .unwrap_or(default)
}
