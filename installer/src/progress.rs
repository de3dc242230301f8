//! Progress on long steps (unpacking, provisioning): a spinner on stderr when stderr is a
//! terminal, nothing otherwise (pipes, CI, tests, `--json`).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Reports the step in progress.
pub trait Progress {
    /// A new step starts.
    fn step(&self, message: &str);
    /// All steps are over.
    fn finish(&self);
    /// The terminal spinner, for work that reports from another thread (a download's bytes).
    fn spinner(&self) -> Option<ProgressBar> {
        None
    }
}

/// No output at all.
#[derive(Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn step(&self, _message: &str) {}
    fn finish(&self) {}
}

/// An indicatif spinner.
#[derive(Debug)]
pub struct Spinner(ProgressBar);

impl Progress for Spinner {
    fn step(&self, message: &str) {
        self.0.set_message(message.to_string());
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
    fn spinner(&self) -> Option<ProgressBar> {
        Some(self.0.clone())
    }
}

/// A spinner on a terminal, silence elsewhere.
pub fn for_terminal(enabled: bool) -> Box<dyn Progress> {
    if !enabled || !std::io::stderr().is_terminal() {
        return Box::new(Silent);
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    Box::new(Spinner(bar))
}
