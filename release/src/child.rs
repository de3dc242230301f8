//! Every program the release tool runs (git, cargo, npx, the suite's own binaries) goes
//! through [`scimcp_process::run`]: in its own process group, with both pipes drained and
//! bounded, and a time limit that ends the whole tree. Each kind of program has its limits
//! here, with the reason for them, so a hung `git` or a wedged test suite ends the preflight
//! with a message naming the step instead of holding a release job until CI kills it.
//!
//! The limits catch hangs, not slow machines: each is several times what the slowest
//! runner we know takes.

use std::process::Command;
use std::time::Duration;

use scimcp_process::{Captured, ProcessError, Step};

/// How long one kind of program may run, and how much of each output stream is kept.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) time: Duration,
    pub(crate) output: usize,
}

/// Kept per stream (its head and its tail): a failure shows the end of the output, and
/// `cargo test` of the whole workspace can print far more than anyone reads.
const OUTPUT: usize = 1024 * 1024;

/// git on a local checkout (`rev-parse`, `status`, `cat-file`, `log -1`) answers in well
/// under a second; a minute covers a cold disk and a huge working tree. A longer wait is a
/// credential prompt or a lock held by another git: a hang.
pub(crate) const GIT: Limits = Limits {
    time: Duration::from_secs(60),
    output: OUTPUT,
};

/// `--version` probes (`cargo nextest`, `npx`) print one line; npx may first unpack itself.
pub(crate) const PROBE: Limits = Limits {
    time: Duration::from_secs(120),
    output: OUTPUT,
};

/// `cargo metadata --no-deps --offline` reads the manifests only. Its JSON is parsed, so the
/// bound must keep it whole: this workspace's is under 100 KB, 16 MiB is hundreds of crates.
pub(crate) const METADATA: Limits = Limits {
    time: Duration::from_secs(300),
    output: 16 * 1024 * 1024,
};

/// `cargo fmt --check` reads every source file and builds nothing: seconds, even cold.
pub(crate) const CARGO_FMT: Limits = Limits {
    time: Duration::from_secs(10 * 60),
    output: OUTPUT,
};

/// `cargo clippy` and the test suite: a cold build of the whole workspace plus
/// every test takes tens of minutes on a slow CI runner; two hours is a hang.
pub(crate) const CARGO_BUILD: Limits = Limits {
    time: Duration::from_secs(2 * 60 * 60),
    output: OUTPUT,
};

/// `npx @anthropic-ai/mcpb validate` downloads the validator on first use.
pub(crate) const MCPB_VALIDATE: Limits = Limits {
    time: Duration::from_secs(10 * 60),
    output: OUTPUT,
};

/// One `scimcp-setup` command of the lifecycle smoke: an install or upgrade provisions a
/// Python runtime (`pip install` of the adapters' packages), minutes on a slow network.
pub(crate) const SETUP: Limits = Limits {
    time: Duration::from_secs(30 * 60),
    output: OUTPUT,
};

/// The installed `scimcp-doctor --json`: every check, the MCP handshakes included, takes
/// seconds. Its JSON is parsed; a report is a few kilobytes.
pub(crate) const DOCTOR: Limits = Limits {
    time: Duration::from_secs(5 * 60),
    output: OUTPUT,
};

/// `scimcp-parity check`: every parity scenario against the reference implementation, each
/// with its own limits inside; the whole gate takes tens of minutes.
pub(crate) const PARITY: Limits = Limits {
    time: Duration::from_secs(2 * 60 * 60),
    output: OUTPUT,
};

/// Run `command` to completion as the step `name` (what messages call it) within `limits`.
/// `Err` only when it could not start; a failure or a timeout is in the [`Captured`].
pub(crate) fn run(name: &str, command: Command, limits: Limits) -> Result<Captured, ProcessError> {
    scimcp_process::run(
        Step::new(name, command)
            .timeout(limits.time)
            .max_output(limits.output),
    )
}
