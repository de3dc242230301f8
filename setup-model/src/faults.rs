//! Test-only pauses between file operations, so a fault-injection test can kill the process
//! part-way through an install.
//!
//! When `SCIMCP_SETUP_TEST_PAUSE_MS` is set to a number, every [`checkpoint`] sleeps that
//! many milliseconds. Checkpoints sit between the steps that change files (before and after
//! each backup, each client write, each layout switch, the receipt). When
//! `SCIMCP_SETUP_TEST_PAUSE_STAGED_MS` is set, every [`staged`] point sleeps that long: it
//! sits inside a write, after the temporary file is complete and before it is renamed into
//! place, so a kill there leaves a `.tmp` behind (what the sweep at the start of every
//! mutating command removes). Unset (always, outside tests) each costs one cached
//! environment lookup.

use std::sync::OnceLock;
use std::time::Duration;

/// The environment variable that turns checkpoints into pauses.
pub const PAUSE_ENV: &str = "SCIMCP_SETUP_TEST_PAUSE_MS";
/// The environment variable that pauses inside a write, with its temporary file staged.
pub const PAUSE_STAGED_ENV: &str = "SCIMCP_SETUP_TEST_PAUSE_STAGED_MS";

fn pause(cell: &'static OnceLock<Option<Duration>>, name: &str) {
    let pause = cell.get_or_init(|| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_millis)
    });
    if let Some(d) = pause {
        std::thread::sleep(*d);
    }
}

/// Pause here when the test hook asks for it.
pub fn checkpoint() {
    static PAUSE: OnceLock<Option<Duration>> = OnceLock::new();
    pause(&PAUSE, PAUSE_ENV);
}

/// Pause with a write's temporary file staged, when the test hook asks for it.
pub fn staged() {
    static PAUSE: OnceLock<Option<Duration>> = OnceLock::new();
    pause(&PAUSE, PAUSE_STAGED_ENV);
}
