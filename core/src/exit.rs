//! The exit statuses of every scimcp binary, so a script can tell "the answer is no" from
//! "there is no answer".
//!
//! | status | meaning |
//! |---|---|
//! | [`SUCCESS`] `0` | the command did its job and its verdict, if it has one, is positive |
//! | [`NEGATIVE`] `1` | the command ran and its verdict is negative: the doctor found problems, the parity gate found differences, a preflight step failed, a signature was refused, a manifest is invalid |
//! | [`COULD_NOT_RUN`] `2` | the command could not do its job: bad input or usage (clap exits 2 too), I/O, network, an install or upgrade that failed |
//!
//! `scimcp __guard` and `scimcp __job` are the exception: they stand in for the scientific
//! CLI they wrap, so like `env` and `timeout` they exit with that CLI's status, and with
//! [`WRAPPER_FAILED`] `125` / [`COMMAND_NOT_FOUND`] `127` when the CLI never ran. The
//! printer that goes with these statuses is [`crate::failure`].

use std::process::ExitCode;

/// The command did its job; its verdict, if it has one, is positive.
pub const SUCCESS: u8 = 0;
/// The command ran, and its verdict is negative (problems found, differences, refusals).
pub const NEGATIVE: u8 = 1;
/// The command could not do its job (bad input or usage, I/O, network, a failed install).
pub const COULD_NOT_RUN: u8 = 2;
/// A wrapper (`scimcp __guard`, `scimcp __job`) failed before or around the wrapped CLI.
pub const WRAPPER_FAILED: u8 = 125;
/// A wrapper could not start the wrapped CLI at all.
pub const COMMAND_NOT_FOUND: u8 = 127;

/// The process exit code for one of the statuses above.
pub fn code(status: u8) -> ExitCode {
    ExitCode::from(status)
}

/// [`SUCCESS`] when `passed`, else [`NEGATIVE`]: the exit of a command whose job is a verdict.
pub fn verdict(passed: bool) -> u8 {
    if passed { SUCCESS } else { NEGATIVE }
}
