//! What one disagreement looks like, shared by the content comparison ([`crate::content`])
//! and the record comparison ([`crate::compare`]). It sits below both and imports neither,
//! so the two can use it without importing each other.

use serde::Serialize;

use crate::tolerance::Tolerance;

/// One field on which two records disagree (`left` is the direct side or the recorded
/// evidence, `right` the MCP side or this run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldDiff {
    /// e.g. `state`, `exit_code`, `artifacts[model.json].sha256`, `metrics.r2`.
    pub field: String,
    pub left: String,
    pub right: String,
    /// For a float beyond its tolerance: the errors and the tolerance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numeric: Option<Numeric>,
}

/// A float that differs between the recorded evidence and this run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Numeric {
    pub field: String,
    pub recorded: f64,
    pub now: f64,
    pub abs_err: f64,
    pub rel_err: f64,
    pub tolerance: Tolerance,
    /// Inside the tolerance (reported, never failing).
    pub within: bool,
}

impl std::fmt::Display for Numeric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: recorded {} → now {} (abs {:.3e}, rel {:.3e}; {} tolerance: {})",
            self.field,
            show_float(self.recorded),
            show_float(self.now),
            self.abs_err,
            self.rel_err,
            if self.within { "inside" } else { "BEYOND" },
            self.tolerance
        )
    }
}

/// A float as Rust prints it shortest-round-trip (what JSON carries).
pub fn show_float(x: f64) -> String {
    serde_json::Number::from_f64(x).map_or_else(|| x.to_string(), |n| n.to_string())
}
