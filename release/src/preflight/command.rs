//! A preflight step's programs, run through `crate::child` and judged the way every step
//! reports them: a program that cannot start, runs past its limit or exits unsuccessfully
//! becomes the [`StepError`] naming the step, with the end of its output.

use std::process::Command;

use scimcp_process::{Captured, ProcessError};

use super::error::StepError;
use crate::child::{self, Limits};

/// The number of output lines a failed step's error shows: enough for a compiler error or a
/// test's assertion, few enough to read in the report.
pub(super) const TAIL_LINES: usize = 12;

/// Run `command` as `what` within `limits`: `Ok` when it ran to an exit status (successful
/// or not: the caller judges), the error when it could not start or ran out of time.
pub(super) fn start(what: &str, command: Command, limits: Limits) -> Result<Captured, StepError> {
    // The executable's name, for the hint: a suite binary is run by its full path.
    let program = std::path::Path::new(command.get_program())
        .file_name()
        .unwrap_or(command.get_program())
        .to_string_lossy()
        .into_owned();
    let captured = match child::run(what, command, limits) {
        Ok(captured) => captured,
        Err(ProcessError::Spawn { step, source, .. }) => {
            return Err(StepError::Spawn {
                what: step,
                program,
                source,
            });
        }
        Err(other) => return Err(StepError::Process(other)),
    };
    if captured.timed_out {
        return Err(StepError::TimedOut {
            what: what.into(),
            limit: limits.time,
            tail: tail(&captured, TAIL_LINES),
        });
    }
    Ok(captured)
}

/// [`start`], and an unsuccessful exit is the step's [`StepError::Command`], showing the last
/// `lines` lines of its output.
pub(super) fn run(
    what: &str,
    command: Command,
    limits: Limits,
    lines: usize,
) -> Result<Captured, StepError> {
    let captured = start(what, command, limits)?;
    if captured.success() {
        return Ok(captured);
    }
    Err(StepError::Command {
        what: what.into(),
        status: status(&captured),
        tail: tail(&captured, lines),
    })
}

/// How a program that ran ended, for messages: `exit status 1`, `signal 9`.
fn status(captured: &Captured) -> String {
    match (captured.code, captured.signal) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "no exit status".into(),
    }
}

/// The last `lines` lines of stdout followed by stderr.
fn tail(captured: &Captured, lines: usize) -> String {
    let text = format!("{}{}", captured.stdout, captured.stderr);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(all(test, unix))]
mod tests {
    use std::time::Duration;

    use super::*;

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    #[test]
    fn a_step_past_its_limit_is_stopped_and_named() {
        let limits = Limits {
            time: Duration::from_millis(200),
            output: 1024,
        };
        let err = run("the hanging step", sh("echo started; sleep 30"), limits, 12).unwrap_err();
        assert!(matches!(err, StepError::TimedOut { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("the hanging step took longer than 0.2 s and was stopped"),
            "{err}"
        );
        assert!(err.to_string().ends_with("started"), "{err}");
    }

    #[test]
    fn a_failed_step_shows_its_status_and_its_last_lines() {
        let limits = Limits {
            time: Duration::from_secs(60),
            output: 1024,
        };
        let err = run(
            "the failing step",
            sh("echo one; echo two >&2; exit 3"),
            limits,
            1,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the failing step failed (exit status 3):\ntwo"
        );
        let err = run("nothing", Command::new("/nonexistent/prog"), limits, 1).unwrap_err();
        assert!(
            matches!(&err, StepError::Spawn { program, .. } if program == "prog"),
            "{err}"
        );
    }
}
