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

/// Hash every artifact under `dir` (normalized where the scenario declares it), keep its
/// comparable content, and parse the metrics file.
pub fn collect_artifacts(
    scenario: &Scenario,
    dir: &Path,
) -> std::io::Result<(Vec<Artifact>, Option<Value>)> {
    let mut artifacts = Vec::new();
    let mut metrics = None;
    for rel in list_files(dir)? {
        let bytes = fs_err::read(dir.join(&rel))?;
        let normalized = scenario.normalize_artifact(&rel, &bytes);
        let content = normalized.as_deref().unwrap_or(&bytes);
        if rel == scenario.metrics_file {
            // An unparsable metrics file is evidence too (it must match the other side's),
            // not a reason to stop comparing the rest.
            metrics = Some(
                serde_json::from_slice(content)
                    .unwrap_or_else(|e| Value::String(format!("not valid JSON: {e}"))),
            );
        }
        let mode = if rel == scenario.metrics_file {
            CompareMode::Metrics
        } else {
            scenario.compare_mode(&rel)
        };
        artifacts.push(Artifact {
            sha256: scimcp_core::hash::sha256_hex(content),
            content: Content::extract(&rel, mode, content),
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
