//! The exit statuses of every scimcp binary. They follow the house rule
//! (`STYLE.md` rule 3, "Exit codes: 0 ok, 1 user/env failure, 2 bug/arguments", after uv's
//! `ExitStatus`): 1 is something its user can act on, 2 is a wrong command line or a bug.
//!
//! | status | meaning |
//! |---|---|
//! | [`SUCCESS`] `0` | the command did its job and its verdict, if it has one, is positive |
//! | [`FAILURE`] `1` | the command failed for a reason its user can act on: bad input, a missing or unreadable file, the network, a refused signature, an install or upgrade that failed; or its verdict is negative: the parity gate found differences, a preflight step failed, a verification was refused |
//! | [`ERROR`] `2` | invalid arguments (clap exits 2 itself; so does a value that names none of a fixed set, such as an unknown `scimcp-release preflight --only` step) or an unexpected internal error, i.e. a bug |
//!
//! `scimcp-doctor` is the one exception, as `DESIGN.md` (the doctor section) fixes it: 0
//! every check passed, [`DOCTOR_WARNINGS`] `1` warnings only, [`DOCTOR_FAILURES`] `2` a check
//! failed (something is broken: the strongest verdict). Its own errors (an unknown `--check`
//! id, an argument problem) exit [`ERROR`] `2` too. Its report's `exit_code` says the same.
//!
//! `scimcp __guard` and `scimcp __job` stand in for the scientific CLI they wrap, so like
//! `env` and `timeout` they exit with that CLI's status, and with [`WRAPPER_FAILED`] `125` /
//! [`COMMAND_NOT_FOUND`] `127` when the CLI never ran. The printer that goes with these
//! statuses is [`crate::failure`].

use std::process::ExitCode;

/// The command did its job; its verdict, if it has one, is positive.
pub const SUCCESS: u8 = 0;
/// The command failed for a reason its user can act on (bad input, a missing file, the
/// network, a refused signature, a failed install), or its verdict is negative.
pub const FAILURE: u8 = 1;
/// Invalid arguments, or an unexpected internal error (a bug).
pub const ERROR: u8 = 2;
/// `scimcp-doctor`: some check warned, none failed (`DESIGN.md`).
pub const DOCTOR_WARNINGS: u8 = 1;
/// `scimcp-doctor`: some check failed (`DESIGN.md`).
pub const DOCTOR_FAILURES: u8 = 2;
/// A wrapper (`scimcp __guard`, `scimcp __job`) failed before or around the wrapped CLI.
pub const WRAPPER_FAILED: u8 = 125;
/// A wrapper could not start the wrapped CLI at all.
pub const COMMAND_NOT_FOUND: u8 = 127;

/// The process exit code for one of the statuses above.
pub fn code(status: u8) -> ExitCode {
    ExitCode::from(status)
}

/// [`SUCCESS`] when `passed`, else [`FAILURE`]: the exit of a command whose job is a verdict.
pub fn verdict(passed: bool) -> u8 {
    if passed { SUCCESS } else { FAILURE }
}
