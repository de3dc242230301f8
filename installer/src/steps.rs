//! The helper programs the installer runs — the interpreter query, `uv venv` / `python -m
//! venv`, `pip install` / `uv pip install`, the runtime probe, the import check, `claude mcp
//! …` — all through [`scimcp_process::run`]: each in its own process group, with a time limit
//! that ends the whole tree, bounded output, and its name in every error ("the import check
//! took longer than 120 s and was stopped").
//!
//! The limits are generous for a slow network and a cold disk; `SCIMCP_STEP_TIMEOUT_S`
//! replaces every one of them (tests shorten them, a very slow mirror may need longer).

use std::process::Command;
use std::time::Duration;

use scimcp_process::{Captured, ProcessError, Step};

use crate::progress::Progress;

// The override and its variable are shared with the client registration code in
// scimcp-setup-model (`claude mcp …`).
pub use scimcp_setup_model::steps::{TIMEOUT_ENV, limit};

/// Asking an interpreter for its version, and the runtime probe: they only read metadata.
pub const QUERY: Duration = Duration::from_secs(60);
/// Importing the scientific stack cold.
pub const IMPORT: Duration = Duration::from_secs(120);
/// Creating a virtual environment.
pub const VENV: Duration = Duration::from_secs(300);
/// Installing the pinned packages (downloads included).
pub const PIP: Duration = Duration::from_secs(1800);
/// `uv python install`: downloading and unpacking a Python.
pub const PYTHON_INSTALL: Duration = Duration::from_secs(900);

/// Run `command` as the step `name` within `limit(default)`; `Ok` only when it succeeded.
/// While it runs, the progress spinner (on a terminal) says how long it may still take.
pub fn run(
    name: &str,
    command: Command,
    default: Duration,
    progress: Option<&dyn Progress>,
) -> Result<Captured, ProcessError> {
    let limit = limit(default);
    let mut step = Step::new(name, command).timeout(limit);
    if let Some(bar) = progress.and_then(|p| p.spinner()) {
        let base = bar.message();
        step = step.on_tick(move |elapsed| {
            bar.set_message(format!(
                "{base} ({} of at most {})",
                minutes(elapsed),
                minutes(limit)
            ));
        });
    }
    scimcp_process::run(step)?.check()
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s} s")
    } else {
        format!("{} min {:02} s", s / 60, s % 60)
    }
}
