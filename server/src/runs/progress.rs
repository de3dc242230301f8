//! The CLI's own progress, read from the newest lines it printed with the pattern its
//! workflow declares (`[workflow.progress]`), for the progress notifications of a waiting
//! call. Reading never fails a call: an unreadable log just says nothing.

use std::collections::BTreeMap;

use regex::Regex;
use scimcp_core::manifest::{Adapter, CliProgress, ProgressStream};

use super::{RunManager, RunStatus};
use crate::request::LogStream;

/// How much of a log's end is searched for the newest progress line.
const TAIL_BYTES: usize = 16 * 1024;

/// The compiled patterns, by workflow id.
#[derive(Debug, Default)]
pub struct ProgressReaders(BTreeMap<String, (LogStream, Regex)>);

impl ProgressReaders {
    /// Compile every workflow's pattern (each was checked when the manifest loaded).
    pub fn compile(adapter: &Adapter) -> anyhow::Result<ProgressReaders> {
        let mut readers = BTreeMap::new();
        for wf in &adapter.manifest.workflows {
            let Some(spec) = &wf.progress else { continue };
            let re = spec
                .compile()
                .map_err(|e| anyhow::anyhow!("workflow '{}': progress.pattern: {e}", wf.id))?;
            let stream = match spec.stream {
                ProgressStream::Stdout => LogStream::Stdout,
                ProgressStream::Stderr => LogStream::Stderr,
            };
            readers.insert(wf.id.clone(), (stream, re));
        }
        Ok(ProgressReaders(readers))
    }

    /// What the run's newest progress line says, if its workflow declares a pattern and a
    /// line matches.
    pub fn read(&self, runs: &RunManager, status: &RunStatus) -> Option<CliProgress> {
        let (stream, re) = self.0.get(&status.workflow)?;
        let tail = runs.log_tail(&status.run_id, *stream, TAIL_BYTES).ok()?;
        CliProgress::latest(re, &tail.text)
    }
}
