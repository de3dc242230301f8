//! The CLI's own progress, read from the newest lines it printed with the pattern its
//! workflow declares (`[workflow.progress]`), for the progress notifications of a waiting
//! call. Reading never fails a call: an unreadable log just says nothing.

use std::collections::BTreeMap;

use scimcp_core::manifest::{Adapter, CliProgress, ProgressSpec, ProgressStream};

use super::{RunManager, RunStatus};
use crate::request::LogStream;

/// How much of a log's end is searched for the newest progress line.
const TAIL_BYTES: usize = 16 * 1024;

/// Each workflow's pattern and the stream it reads, by workflow id.
#[derive(Debug, Default)]
pub struct ProgressReaders(BTreeMap<String, (LogStream, ProgressSpec)>);

impl ProgressReaders {
    /// Every workflow's pattern. Each compiles on the first progress read, not at the
    /// server's start, where compiling was a fifth of the time to `tools/list`; every pattern
    /// was checked when its manifest loaded, or, for an embedded adapter, by core's tests.
    pub fn new(adapter: &Adapter) -> ProgressReaders {
        let mut readers = BTreeMap::new();
        for wf in &adapter.manifest.workflows {
            let Some(spec) = &wf.progress else { continue };
            let stream = match spec.stream {
                ProgressStream::Stdout => LogStream::Stdout,
                ProgressStream::Stderr => LogStream::Stderr,
            };
            readers.insert(wf.id.clone(), (stream, spec.clone()));
        }
        ProgressReaders(readers)
    }

    /// What the run's newest progress line says, if its workflow declares a pattern and a
    /// line matches.
    pub fn read(&self, runs: &RunManager, status: &RunStatus) -> Option<CliProgress> {
        let (stream, spec) = self.0.get(&status.workflow)?;
        let re = spec.compile().ok()?;
        let tail = runs.log_tail(&status.run_id, *stream, TAIL_BYTES).ok()?;
        CliProgress::latest(&re, &tail.text)
    }
}
