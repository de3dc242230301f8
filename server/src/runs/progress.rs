//! The CLI's own progress, read from the newest lines it printed with the pattern its
//! workflow declares (`[workflow.progress]`), for the progress notifications of a waiting
//! call. Reading never fails a call: an unreadable log just says nothing.

use scimcp_core::manifest::{Adapter, CliProgress, ProgressStream};

use super::{RunManager, RunStatus};
use crate::request::LogStream;

/// How much of a log's end is searched for the newest progress line.
const TAIL_BYTES: usize = 16 * 1024;

/// What the run's newest progress line says, if its workflow declares a pattern and a line
/// matches. The pattern compiles on the first read (then once per process): every pattern
/// was checked when its manifest loaded, or, for an embedded adapter, by core's tests.
pub fn read(adapter: &Adapter, runs: &RunManager, status: &RunStatus) -> Option<CliProgress> {
    let spec = adapter.workflow(&status.workflow)?.progress.as_ref()?;
    let stream = match spec.stream {
        ProgressStream::Stdout => LogStream::Stdout,
        ProgressStream::Stderr => LogStream::Stderr,
    };
    let re = spec.compile().ok()?;
    let tail = runs.log_tail(&status.run_id, stream, TAIL_BYTES).ok()?;
    CliProgress::latest(&re, &tail.text)
}
