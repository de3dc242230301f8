//! The preflight report: `preflight.json` (machine) and `preflight.md` (human), plus the
//! one-line-per-step summary printed as steps finish.

use serde::Serialize;

/// Version of `preflight.json`.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
    Skipped,
}

/// One step's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct StepReport {
    pub id: String,
    pub title: String,
    pub status: Status,
    pub duration_ms: u64,
    /// What was measured or found (for a failure: what failed and where).
    pub detail: String,
    /// For a failure: what to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub version: String,
    pub tag: Option<String>,
    pub commit: String,
    pub quick: bool,
    /// False for `--quick` runs and runs that skipped steps: they are not release evidence.
    pub release_evidence: bool,
    pub passed: bool,
    pub work_dir: String,
    pub steps: Vec<StepReport>,
}

impl Report {
    /// The Markdown rendering.
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "# Release preflight for scimcp {}\n\n- tag: {}\n- commit: {}\n- result: **{}**\n- release evidence: {}\n\n| step | status | time | detail |\n|---|---|---|---|\n",
            self.version,
            self.tag.as_deref().unwrap_or("(none)"),
            self.commit,
            if self.passed { "passed" } else { "failed" },
            if self.release_evidence {
                "yes"
            } else {
                "no (--quick or skipped steps)"
            },
        );
        for s in &self.steps {
            md.push_str(&format!(
                "| `{}` {} | {:?} | {:.1} s | {} |\n",
                s.id,
                s.title,
                s.status,
                s.duration_ms as f64 / 1000.0,
                match &s.hint {
                    Some(hint) => format!("{}<br>hint: {hint}", s.detail),
                    None => s.detail.clone(),
                }
                .replace('|', "\\|")
                .replace('\n', "<br>")
            ));
        }
        md
    }
}
