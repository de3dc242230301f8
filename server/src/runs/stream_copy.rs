//! Complete copies of a CLI's stdout and stderr, besides its logs. The logs keep a head and
//! a tail (`max_log_bytes`) for a person to read; a CLI that writes its result to stdout
//! (an alignment, a score table) needs the whole stream as a file: a `base = "stdout"`
//! artifact (`output/<path>`), or a hidden copy under [`STREAMS_DIR`] when only metrics or
//! requirements read the stream. Both are bounded by `max_artifact_bytes`.
//!
//! A copy keeps one byte past the bound, so the collector can tell a stream that was cut
//! from one of exactly the bound, whichever process wrote it (the server, or `scimcp __job`
//! on a Slurm node): [`settle`] cuts that byte and reports the artifact.

use std::io::Write;
use std::path::{Path, PathBuf};

use scimcp_core::manifest::{ArtifactBase, ArtifactSpec, OutputSource};

use tokio::io::{AsyncRead, AsyncReadExt};

use super::logs::LogCapture;
use super::state::ArtifactProblem;
use crate::plan::Plan;

/// Where hidden stream copies live, inside the working directory.
pub const STREAMS_DIR: &str = ".scimcp/streams";

/// The files one program start copies its streams to (none: only the logs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamCopies {
    pub stdout: Option<PathBuf>,
    pub stderr: Option<PathBuf>,
    /// Most bytes a copy keeps (`max_artifact_bytes`).
    pub max_bytes: u64,
}

/// The copies step `step_index` (0-based; 0 for a single-program plan) of `plan` makes, in
/// the run's working directory `work`. A stream artifact belongs to the step it names, or
/// to the last step; metrics and requirements read the last step's streams.
pub fn stream_copies(plan: &Plan, step_index: usize, work: &Path, max_bytes: u64) -> StreamCopies {
    let count = plan.steps.len().max(1);
    let last = step_index + 1 == count;
    let step_id = plan.steps.get(step_index).map(|s| s.id.as_str());
    let copy = |base: ArtifactBase| {
        let declared = plan.artifacts.iter().find(|a| {
            a.base == base
                && match (&a.step, step_id) {
                    (Some(want), Some(id)) => want == id,
                    _ => last,
                }
        });
        match declared {
            Some(a) => Some(work.join(&plan.output_dir).join(&a.path)),
            None if last && reads_stream(plan, base) => Some(hidden_copy(work, base)),
            None => None,
        }
    };
    let mut copies = StreamCopies {
        stdout: copy(ArtifactBase::Stdout),
        stderr: copy(ArtifactBase::Stderr),
        max_bytes,
    };
    // An engine names its streams' files in the working directory itself (CWL's `stdout:`),
    // where its output rules look for them.
    if let Some(engine) = plan.engine.as_ref().filter(|_| last) {
        let cwd = work.join(engine.cwd.as_deref().unwrap_or("."));
        let at = |name: &Option<String>| name.as_deref().map(|n| cwd.join(in_work(n)));
        copies.stdout = at(&engine.stdout_file).or(copies.stdout);
        copies.stderr = at(&engine.stderr_file).or(copies.stderr);
    }
    copies
}

/// The file an engine plan feeds on the CLI's stdin (CWL's `stdin`), in `work`.
pub fn stdin_file(plan: &Plan, work: &Path) -> Option<PathBuf> {
    let engine = plan.engine.as_ref()?;
    engine.stdin_file.as_deref().map(|p| work.join(in_work(p)))
}

/// An engine's path as one relative to the working directory (`{work_dir}/x` → `x`).
fn in_work(path: &str) -> &str {
    path.strip_prefix("{work_dir}/").unwrap_or(path)
}

fn stream_key(base: ArtifactBase) -> &'static str {
    if base == ArtifactBase::Stderr {
        "stderr"
    } else {
        "stdout"
    }
}

fn hidden_copy(work: &Path, base: ArtifactBase) -> PathBuf {
    work.join(STREAMS_DIR).join(stream_key(base))
}

/// True when a metric or requirement reads `base`'s stream by name.
fn reads_stream(plan: &Plan, base: ArtifactBase) -> bool {
    let key = stream_key(base);
    plan.metrics.iter().any(|m| m.from == key)
        || plan.requires.iter().any(|r| r.from.as_deref() == Some(key))
}

/// The last step's stream artifact for `base`, when one is declared.
fn last_step_stream(plan: &Plan, base: ArtifactBase) -> Option<&ArtifactSpec> {
    let last = plan.steps.last().map(|s| s.id.as_str());
    plan.artifacts
        .iter()
        .find(|a| a.base == base && (a.step.is_none() || a.step.as_deref() == last))
}

/// The file a metric or requirement's `from` reads, once the run has ended.
pub fn source_path(plan: &Plan, work: &Path, from: &str) -> Option<PathBuf> {
    let output = work.join(&plan.output_dir);
    let stream = |base| match last_step_stream(plan, base) {
        Some(a) => output.join(&a.path),
        None => hidden_copy(work, base),
    };
    match OutputSource::parse(from) {
        OutputSource::Stdout => Some(stream(ArtifactBase::Stdout)),
        OutputSource::Stderr => Some(stream(ArtifactBase::Stderr)),
        OutputSource::Artifact(id) => {
            let a = plan.artifacts.iter().find(|a| a.id == id)?;
            Some(match a.base {
                ArtifactBase::Work => work.join(&a.path),
                _ => output.join(&a.path),
            })
        }
    }
}

/// A stream copy being written: at most `max_bytes + 1` bytes reach the file.
pub(super) struct CopyWriter {
    file: fs_err::File,
    written: u64,
    keep: u64,
}

impl CopyWriter {
    /// Open (truncate) `path`, creating its directory. A copy that cannot be opened is
    /// logged and skipped: its artifact is then found missing, which the run reports.
    pub(super) fn open(path: &Path, max_bytes: u64) -> Option<CopyWriter> {
        let opened = path
            .parent()
            .map_or(Ok(()), fs_err::create_dir_all)
            .and_then(|()| {
                fs_err::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .truncate(true)
                    .open(path)
            });
        match opened {
            Ok(file) => Some(CopyWriter {
                file,
                written: 0,
                keep: max_bytes.saturating_add(1),
            }),
            Err(e) => {
                tracing::error!("cannot copy a stream to {}: {e}", path.display());
                None
            }
        }
    }

    pub(super) fn write(&mut self, chunk: &[u8]) {
        let room = self.keep.saturating_sub(self.written);
        let n = usize::try_from(room).unwrap_or(usize::MAX).min(chunk.len());
        if n > 0 && self.file.write_all(&chunk[..n]).is_ok() {
            self.written += n as u64;
        }
    }

    pub(super) fn finish(self) {
        let _ = self.file.sync_all();
    }
}

/// Read `reader` to its end into `log` and, when given, into `copy`.
pub(super) async fn tee(
    log: LogCapture,
    mut copy: Option<CopyWriter>,
    mut reader: impl AsyncRead + Unpin,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                log.feed(&buf[..n]);
                if let Some(c) = copy.as_mut() {
                    c.write(&buf[..n]);
                }
            }
        }
    }
    if let Some(c) = copy {
        c.finish();
    }
}

/// After the run: cut every stream copy that went past `max_bytes` back to it, and report
/// each cut stream artifact (its file holds the stream's first `max_bytes` bytes).
pub fn settle(plan: &Plan, work: &Path, max_bytes: u64) -> Vec<ArtifactProblem> {
    let mut problems = Vec::new();
    let output = work.join(&plan.output_dir);
    let declared = plan
        .artifacts
        .iter()
        .filter(|a| a.base.is_stream())
        .map(|a| (Some(a), output.join(&a.path)));
    let hidden = [ArtifactBase::Stdout, ArtifactBase::Stderr]
        .into_iter()
        .map(|b| (None, hidden_copy(work, b)));
    for (spec, path) in declared.chain(hidden) {
        // Never follow a link the CLI may have put in the copy's place.
        let Ok(meta) = fs_err::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() || meta.len() <= max_bytes {
            continue;
        }
        let cut = fs_err::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_len(max_bytes));
        if let Err(e) = cut {
            tracing::error!("cannot cut {} to its bound: {e}", path.display());
        }
        if let Some(a) = spec {
            problems.push(ArtifactProblem {
                id: a.id.clone(),
                path: a.path.clone(),
                problem: format!(
                    "the {} stream was longer than max_artifact_bytes = {max_bytes}; the file \
                     holds its first {max_bytes} bytes (raise limits.max_artifact_bytes, or \
                     have the CLI write less)",
                    stream_key(a.base)
                ),
            });
        }
    }
    problems
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::plan_steps::PlannedStep;

    fn artifact(id: &str, base: ArtifactBase, path: &str, step: Option<&str>) -> ArtifactSpec {
        ArtifactSpec {
            id: id.into(),
            path: path.into(),
            media_type: "text/plain".into(),
            required: true,
            json_keys: Vec::new(),
            min_count: None,
            max_count: None,
            base,
            step: step.map(str::to_string),
            allow_empty: false,
        }
    }

    pub(crate) fn plan_with(artifacts: Vec<ArtifactSpec>, steps: &[&str]) -> Plan {
        let mut plan: Plan = serde_json::from_value(serde_json::json!({
            "adapter": "t", "adapter_version": "0.1.0", "adapter_sha256": "0",
            "workflow": "w", "program": "cat", "args": [], "stdin": [], "input_files": [],
            "env": {}, "env_passthrough": [], "working_dir": "work", "output_dir": "output",
            "artifacts": [], "timeout_s": 10
        }))
        .unwrap();
        plan.artifacts = artifacts;
        plan.steps = steps
            .iter()
            .map(|id| PlannedStep {
                id: id.to_string(),
                program_id: "runtime".into(),
                program: "cat".into(),
                args: Vec::new(),
                stdin: Vec::new(),
            })
            .collect();
        plan
    }

    #[test]
    fn a_plan_without_outputs_read_from_text_serializes_as_before() {
        let plan = plan_with(
            vec![artifact("a", ArtifactBase::Output, "a.csv", None)],
            &[],
        );
        let value = serde_json::to_value(&plan).unwrap();
        assert!(
            value.get("metrics").is_none() && value.get("requires").is_none(),
            "{value}"
        );
        let a = &value["artifacts"][0];
        assert!(
            a.get("step").is_none() && a.get("allow_empty").is_none(),
            "{a}"
        );
        assert!(a.get("base").is_none(), "{a}");
    }

    #[test]
    fn copies_go_to_the_step_the_artifact_names_or_the_last() {
        let work = Path::new("w");
        let plan = plan_with(
            vec![
                artifact("a", ArtifactBase::Stdout, "a.txt", Some("first")),
                artifact("b", ArtifactBase::Stdout, "b.txt", None),
                artifact("e", ArtifactBase::Stderr, "e.txt", None),
            ],
            &["first", "second"],
        );
        let first = stream_copies(&plan, 0, work, 9);
        assert_eq!(first.stdout, Some(work.join("output/a.txt")));
        assert_eq!(first.stderr, None);
        let second = stream_copies(&plan, 1, work, 9);
        assert_eq!(second.stdout, Some(work.join("output/b.txt")));
        assert_eq!(second.stderr, Some(work.join("output/e.txt")));
        assert_eq!(second.max_bytes, 9);
        assert_eq!(
            source_path(&plan, work, "stdout"),
            Some(work.join("output/b.txt"))
        );
        assert_eq!(
            source_path(&plan, work, "e"),
            Some(work.join("output/e.txt"))
        );
    }

    #[test]
    fn a_stream_only_a_metric_reads_gets_a_hidden_copy() {
        let work = Path::new("w");
        let mut plan = plan_with(Vec::new(), &[]);
        assert_eq!(
            stream_copies(&plan, 0, work, 9),
            StreamCopies {
                max_bytes: 9,
                ..StreamCopies::default()
            }
        );
        plan.metrics =
            vec![toml::from_str("id = 'x'\nfrom = 'stderr'\npattern = '(?P<value>.)'").unwrap()];
        let copies = stream_copies(&plan, 0, work, 9);
        assert_eq!(copies.stdout, None);
        assert_eq!(copies.stderr, Some(work.join(".scimcp/streams/stderr")));
        assert_eq!(
            source_path(&plan, work, "stderr"),
            Some(work.join(".scimcp/streams/stderr"))
        );
    }

    #[test]
    fn writer_keeps_one_byte_past_the_bound_and_settle_cuts_and_reports_it() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path();
        let plan = plan_with(
            vec![
                artifact("long", ArtifactBase::Stdout, "long.txt", None),
                artifact("exact", ArtifactBase::Stderr, "exact.txt", None),
            ],
            &[],
        );
        let copies = stream_copies(&plan, 0, work, 10);
        let mut long = CopyWriter::open(copies.stdout.as_ref().unwrap(), 10).unwrap();
        for _ in 0..100 {
            long.write(b"0123456789");
        }
        long.finish();
        let mut exact = CopyWriter::open(copies.stderr.as_ref().unwrap(), 10).unwrap();
        exact.write(b"0123456789");
        exact.finish();
        let path = work.join("output/long.txt");
        assert_eq!(fs_err::metadata(&path).unwrap().len(), 11);
        let problems = settle(&plan, work, 10);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].id, "long");
        assert!(
            problems[0].problem.contains("max_artifact_bytes = 10"),
            "{}",
            problems[0].problem
        );
        assert_eq!(fs_err::read(&path).unwrap(), b"0123456789");
        assert_eq!(
            fs_err::read(work.join("output/exact.txt")).unwrap(),
            b"0123456789"
        );
    }
}
