//! What one side of a scenario produced, reduced to what must agree: terminal state, exit
//! code or signal, the error line, every artifact's path, SHA-256 and comparable content
//! ([`Content`]), and the parsed metrics. The same [`Evidence`] (of the MCP side, once both
//! sides agree) is the snapshot, with the machine it was taken on ([`Machine`]).
//!
//! Nothing here knows which side it describes: the direct runner and the MCP runner both
//! hand over an output directory and a terminal outcome, and the artifacts are hashed from
//! the bytes on disk by the same code. (The MCP side's own reported hashes are checked
//! against those bytes separately, in the MCP runner.)

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::{CompareMode, Content};
use crate::machine::Machine;
use crate::scenario::Scenario;

/// The evidence format this build writes. Format 1 kept artifact hashes only; format 2 adds
/// each artifact's comparable content and the machine the evidence was taken on.
pub const EVIDENCE_FORMAT: u32 = 2;

fn format_1() -> u32 {
    1
}

/// Normalized evidence of one side of a scenario. Field order is the snapshot's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    #[serde(default = "format_1")]
    pub format: u32,
    pub adapter: String,
    pub workflow: String,
    /// `succeeded`, `failed`, `cancelled` (or the server's `partial_failure`).
    pub state: String,
    /// The CLI's exit code, when it exited by itself.
    pub exit_code: Option<i32>,
    /// The signal that ended the CLI, when one did (Unix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The last non-empty line of stderr, normalized, when the run did not succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_line: Option<String>,
    /// For cancelled runs: the CLI and every process it started were gone afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_tree_ended: Option<bool>,
    /// Every file of the output directory, sorted by path.
    pub artifacts: Vec<Artifact>,
    /// The parsed metrics file (keys sorted), when the run wrote one.
    pub metrics: Option<Value>,
    /// The MCP side's `reported`, for a workflow that reads values from text
    /// (`[[workflow.metric]]`). The direct side has no server to read them, so this is held
    /// against the recorded evidence only; the text it was read from is an artifact, and
    /// that is compared byte for byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported: Option<Value>,
    /// Where this evidence was taken: never compared, shown when evidence drifts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_on: Option<Machine>,
}

/// One artifact: its `/`-separated path under the output directory, its SHA-256 and the
/// content a comparison with recorded evidence needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    pub path: String,
    /// Of the raw bytes, or of the normalized text when `normalized` is true.
    pub sha256: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub normalized: bool,
    #[serde(flatten)]
    pub content: Content,
}

impl Evidence {
    /// The artifact at `path`, if any.
    pub fn artifact(&self, path: &str) -> Option<&Artifact> {
        self.artifacts.iter().find(|a| a.path == path)
    }

    /// Empty evidence of a succeeded refsci regression, for tests to fill in.
    #[cfg(test)]
    pub fn test_default() -> Evidence {
        Evidence {
            format: EVIDENCE_FORMAT,
            adapter: "refsci".into(),
            workflow: "regression".into(),
            state: "succeeded".into(),
            exit_code: Some(0),
            signal: None,
            error_line: None,
            process_tree_ended: None,
            artifacts: Vec::new(),
            metrics: None,
            reported: None,
            recorded_on: None,
        }
    }
}

/// Every regular file under `dir`, as sorted `/`-separated relative paths. A missing
/// directory has no files (a CLI that fails early may never create it).
pub fn list_files(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let rel = path
                    .strip_prefix(dir)
                    .expect("walked below dir")
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push(rel);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Where a side's artifacts are: every file of its output directory, and the files of its
/// working directory that the workflow declares with `base = "work"` (a CLI that writes its
/// results where it chooses).
#[derive(Debug)]
pub struct ArtifactPlaces<'a> {
    pub output: &'a Path,
    pub work: Option<(&'a Path, &'a [globset::GlobMatcher])>,
}

/// The `base = "work"` artifact globs of `workflow`.
pub fn work_globs(workflow: &scimcp_core::Workflow) -> Vec<globset::GlobMatcher> {
    workflow
        .artifacts
        .iter()
        .filter(|a| a.base == scimcp_core::manifest::ArtifactBase::Work)
        .filter_map(|a| {
            globset::GlobBuilder::new(&a.path)
                .literal_separator(true)
                .build()
                .ok()
                .map(|g| g.compile_matcher())
        })
        .collect()
}

/// Hash every artifact (normalized where the scenario declares it), keep its comparable
/// content, and parse the metrics file. Paths are relative to the output directory, or to the
/// working directory for the declared files found there.
pub fn collect_artifacts(
    scenario: &Scenario,
    places: &ArtifactPlaces<'_>,
) -> std::io::Result<(Vec<Artifact>, Option<Value>)> {
    let mut found: Vec<(String, std::path::PathBuf)> = list_files(places.output)?
        .into_iter()
        .map(|rel| {
            let full = places.output.join(&rel);
            (rel, full)
        })
        .collect();
    if let Some((work, globs)) = places.work {
        let output_rel = places
            .output
            .strip_prefix(work)
            .ok()
            .map(|p| p.to_string_lossy().replace('\\', "/"));
        for rel in list_files(work)? {
            let in_output = output_rel
                .as_deref()
                .is_some_and(|o| rel.starts_with(&format!("{o}/")));
            if !in_output && globs.iter().any(|g| g.is_match(&rel)) {
                let full = work.join(&rel);
                found.push((rel, full));
            }
        }
    }
    found.sort();
    let mut artifacts = Vec::new();
    let mut metrics = None;
    for (rel, full) in found {
        let bytes = fs_err::read(&full)?;
        let mode = if rel == scenario.metrics_file {
            CompareMode::Metrics
        } else {
            scenario.compare_mode(&rel)
        };
        // A spreadsheet's bytes embed the time it was written: its evidence is its cells.
        let cells = (mode == CompareMode::Cells)
            .then(|| crate::content::sheets_of(&bytes))
            .flatten();
        let normalized = match &cells {
            Some(sheets) => Some(serde_json::to_vec(sheets).expect("cells serialize")),
            None => scenario.normalize_artifact(&rel, &bytes),
        };
        let content = normalized.as_deref().unwrap_or(&bytes);
        if rel == scenario.metrics_file {
            // An unparsable metrics file is evidence too (it must match the other side's),
            // not a reason to stop comparing the rest.
            metrics = Some(
                serde_json::from_slice(content)
                    .unwrap_or_else(|e| Value::String(format!("not valid JSON: {e}"))),
            );
        }
        let content_record = match cells {
            Some(sheets) => Content::from_sheets(sheets),
            None => Content::extract(&rel, mode, content),
        };
        artifacts.push(Artifact {
            sha256: scimcp_core::hash::sha256_hex(content),
            content: content_record,
            path: rel,
            normalized: normalized.is_some(),
        });
    }
    Ok((artifacts, metrics))
}

/// The last non-empty line of `stderr`, normalized as the scenario declares.
pub fn error_line(scenario: &Scenario, stderr: &str) -> Option<String> {
    stderr
        .lines()
        .rev()
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty())
        .map(|l| scenario.normalize_stderr(l))
}
