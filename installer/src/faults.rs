//! A test-only pause between file operations, so a fault-injection test can kill the
//! process part-way through an install.
//!
//! When `SCIMCP_SETUP_TEST_PAUSE_MS` is set to a number, every [`checkpoint`] sleeps that
//! many milliseconds. Checkpoints sit between the steps that change files (before and after
//! each backup, each client write, each layout switch, the receipt). Unset (always, outside
//! tests) a checkpoint costs one cached environment lookup.

use std::sync::OnceLock;
use std::time::Duration;

/// The environment variable that turns checkpoints into pauses.
pub const PAUSE_ENV: &str = "SCIMCP_SETUP_TEST_PAUSE_MS";

/// Pause here when the test hook asks for it.
pub fn checkpoint() {
    static PAUSE: OnceLock<Option<Duration>> = OnceLock::new();
    let pause = PAUSE.get_or_init(|| {
        std::env::var(PAUSE_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_millis)
    });
    if let Some(d) = pause {
        std::thread::sleep(*d);
    }
}
