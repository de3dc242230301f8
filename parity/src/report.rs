//! The gate's verdict: a machine report (`--json FILE`, [`REPORT_SCHEMA_VERSION`]) and the
//! human rendering printed on stdout.
//!
//! Compatibility: fields are only ever added within one schema version; a rename or removal
//! bumps it.

use std::fmt::Write as _;

use serde::Serialize;

use crate::diff::Numeric;
use crate::evidence::Evidence;
use crate::machine::Machine;
use crate::tolerance::Tolerances;

/// Version of the JSON report. 2: the evidence comparison tolerates floats (`snapshot`
/// gains `within_tolerance` and `skipped`, scenarios list what was `tolerated`), and the
/// report says which machine ran it.
pub const REPORT_SCHEMA_VERSION: u32 = 2;

/// The whole machine report.
#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: &'static str,
    pub version: &'static str,
    /// `run`, `check` or `review`.
    pub mode: &'static str,
    pub passed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// `--quick`: one scenario per workflow; not release evidence.
    pub quick: bool,
    /// Scenarios run at a time (`--jobs`).
    pub jobs: usize,
    /// The `--scenario` globs, when any.
    pub filters: Vec<String>,
    /// Scenario files found (all of them, whatever the filters).
    pub scenarios_total: usize,
    /// Scenarios this invocation ran.
    pub scenarios_selected: usize,
    /// The machine this invocation ran on.
    pub machine: Machine,
    /// The gate's `--env` variables, given to both paths of every scenario.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    pub coverage: Coverage,
    /// Snapshots with no scenario (reported only when no `--scenario` filter applies).
    pub orphan_snapshots: Vec<String>,
    pub scenarios: Vec<ScenarioReport>,
    /// Seconds for the whole invocation.
    pub wall_time_s: f64,
    /// Sums over the scenarios that ran both paths.
    pub timing: TimingSummary,
}

/// `--shard I/N`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ShardInfo {
    pub index: usize,
    pub count: usize,
}

/// Which workflows of which adapters have parity evidence.
#[derive(Debug, Serialize)]
pub struct Coverage {
    pub adapters: Vec<AdapterCoverage>,
    /// `adapter/workflow` pairs without any scenario.
    pub missing: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct AdapterCoverage {
    pub name: String,
    pub manifest: String,
    pub sha256: String,
    pub workflows: Vec<WorkflowCoverage>,
}

#[derive(Debug, Serialize)]
pub struct WorkflowCoverage {
    pub id: String,
    pub scenarios: Vec<String>,
}

/// One scenario's outcome.
#[derive(Debug, Serialize)]
pub struct ScenarioReport {
    pub name: String,
    pub adapter: String,
    pub workflow: String,
    pub expect: &'static str,
    /// `pass`, `fail`, or `skipped` (the scenario does not run on this platform).
    pub status: &'static str,
    /// Same run, same machine: `agree` (byte-identical), `differ`, or `not_compared` (a
    /// side could not run).
    pub parity: &'static str,
    /// Recorded evidence against this run: `matched` (identical), `within_tolerance`
    /// (floats moved inside their tolerance; see `tolerated`), `drifted`, `missing`; when
    /// recording: `recorded`, `unchanged`, `not_recorded`; `not_compared`, `skipped`.
    pub snapshot: &'static str,
    /// Which snapshot file held the evidence: `shared`, or a platform's own (`macos-aarch64`)
    /// where that platform's results differ beyond tolerance from the shared one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_set: Option<String>,
    /// Where the recorded evidence was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_on: Option<Machine>,
    /// The tolerances the evidence comparison used.
    pub tolerance: Tolerances,
    /// Floats that differ from the recorded evidence inside their tolerance (the first
    /// ones; `tolerated_total` counts them all).
    pub tolerated: Vec<Numeric>,
    /// Floats of artifacts the scenario declares the CLI does not reproduce run to run
    /// (`nondeterministic`) that differed between the two paths of this run, inside the
    /// tolerance. Empty for a deterministic CLI.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub same_run_tolerated: Vec<Numeric>,
    pub tolerated_total: usize,
    /// The largest relative error among `tolerated`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rel_err: Option<f64>,
    /// Why the scenario was skipped, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub differences: Vec<Difference>,
    pub timing: Timing,
    /// The direct command as written in the scenario (placeholders unexpanded).
    pub direct_command: Vec<String>,
    /// The MCP request.
    pub request: serde_json::Value,
    /// The MCP side's normalized evidence (what the snapshot holds), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
}

/// Wall times of the two paths, in seconds.
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct Timing {
    /// Spawn to exit of the direct command.
    pub direct_s: Option<f64>,
    /// `validate_analysis` to the terminal `get_run_result`, through a running server.
    pub mcp_s: Option<f64>,
    /// The whole MCP session: server start, handshake, the run, shutdown.
    pub mcp_session_s: Option<f64>,
    /// `mcp_s / direct_s`.
    pub ratio: Option<f64>,
}

#[derive(Debug, Default, Serialize)]
pub struct TimingSummary {
    pub direct_s: f64,
    pub mcp_s: f64,
    pub mcp_session_s: f64,
    /// `mcp_s / direct_s` over the sums.
    pub ratio: Option<f64>,
}

/// One reason a scenario fails.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Difference {
    /// The direct and MCP paths disagree on a field.
    Parity {
        field: String,
        direct: String,
        mcp: String,
    },
    /// A side did not end the way the scenario expects.
    Expectation {
        side: &'static str,
        expected: String,
        actual: String,
    },
    /// The server's artifact index disagrees with the files it left behind.
    Index { message: String },
    /// The MCP evidence no longer matches the recorded snapshot.
    Snapshot {
        field: String,
        snapshot: String,
        current: String,
        /// For a float: its errors and the tolerance it exceeded.
        #[serde(skip_serializing_if = "Option::is_none")]
        numeric: Option<Numeric>,
    },
    /// A side could not be run or read.
    Error { side: &'static str, message: String },
}

/// `3f2a9c1b07de…` for a 64-hex digest, the value itself otherwise.
fn short(v: &str) -> String {
    if v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()) {
        format!("{}…", &v[..12])
    } else {
        v.to_string()
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Parity { field, direct, mcp } => write!(
                f,
                "parity: {field}: direct {} ≠ mcp {}",
                short(direct),
                short(mcp)
            ),
            Difference::Expectation {
                side,
                expected,
                actual,
            } => write!(
                f,
                "expectation: the {side} side ended {actual}, the scenario expects {expected}"
            ),
            Difference::Index { message } => write!(f, "mcp result index: {message}"),
            Difference::Snapshot {
                numeric: Some(n), ..
            } => write!(f, "snapshot drift: {n}"),
            Difference::Snapshot {
                field,
                snapshot,
                current,
                numeric: None,
            } => write!(
                f,
                "snapshot drift: {field}: recorded {} → now {}",
                short(snapshot),
                short(current)
            ),
            Difference::Error { side, message } => {
                let message = message.replace('\n', "\n        ");
                write!(f, "error ({side}): {message}")
            }
        }
    }
}

/// How many differences each scenario shows on the terminal (the JSON has all of them).
const SHOWN: usize = 8;

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |s| format!("{s:.2}s"))
}

/// One line per scenario, then its first differences.
pub fn render_scenario(s: &ScenarioReport) -> String {
    let mut out = String::new();
    if let Some(why) = &s.skipped {
        let _ = write!(
            out,
            "SKIP  {:<28} {:<30} {why}",
            s.name,
            format!("{}/{}", s.adapter, s.workflow)
        );
        return out;
    }
    let verdict = if s.status == "pass" { "PASS" } else { "FAIL" };
    let ratio = s
        .timing
        .ratio
        .map_or_else(|| "-".to_string(), |r| format!("x{r:.2}"));
    let _ = write!(
        out,
        "{verdict}  {:<28} {:<30} direct {:>7}  mcp {:>7}  {ratio:>6}  snapshot {}",
        s.name,
        format!("{}/{}", s.adapter, s.workflow),
        secs(s.timing.direct_s),
        secs(s.timing.mcp_s),
        s.snapshot
    );
    if let Some(set) = &s.snapshot_set {
        let _ = write!(out, " ({set} snapshot)");
    }
    if !s.same_run_tolerated.is_empty() {
        let _ = write!(
            out,
            "\n      same run: {} float(s) of artifacts the CLI does not reproduce run to run differ inside tolerance",
            s.same_run_tolerated.len()
        );
    }
    if s.tolerated_total > 0 {
        let _ = write!(
            out,
            "\n      {} float(s) inside tolerance ({}), largest relative error {:.2e}",
            s.tolerated_total,
            s.tolerance.default,
            s.max_rel_err.unwrap_or(0.0)
        );
    }
    if s.snapshot == "drifted"
        && let Some(m) = &s.recorded_on
    {
        let _ = write!(out, "\n      recorded on: {}", m.summary());
    }
    for d in s.differences.iter().take(SHOWN) {
        let _ = write!(out, "\n      {d}");
    }
    if s.differences.len() > SHOWN {
        let _ = write!(
            out,
            "\n      … and {} more (see --json)",
            s.differences.len() - SHOWN
        );
    }
    out
}

/// The closing summary.
pub fn render_summary(r: &Report) -> String {
    let mut out = String::new();
    if r.coverage.missing.is_empty() {
        let _ = writeln!(
            out,
            "coverage: every workflow of {} has a scenario",
            r.coverage
                .adapters
                .iter()
                .map(|a| format!("{} ({} workflows)", a.name, a.workflows.len()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    } else {
        for m in &r.coverage.missing {
            let _ = writeln!(
                out,
                "coverage: workflow {m} has no scenario: a capability without parity evidence is not done; add parity/scenarios/<name>.toml for it"
            );
        }
    }
    for o in &r.orphan_snapshots {
        let _ = writeln!(
            out,
            "orphan snapshot: {o} has no scenario; delete it (or run `scimcp-parity run`, which removes it)"
        );
    }
    let failed: Vec<&str> = r
        .scenarios
        .iter()
        .filter(|s| s.status == "fail")
        .map(|s| s.name.as_str())
        .collect();
    let skipped = r.scenarios.iter().filter(|s| s.status == "skipped").count();
    let tolerated = r
        .scenarios
        .iter()
        .filter(|s| s.snapshot == "within_tolerance")
        .count();
    let _ = writeln!(
        out,
        "evidence: {} scenario(s) byte-identical to their snapshot, {tolerated} within tolerance (floats moved in their last digits), {} drifted{}",
        r.scenarios
            .iter()
            .filter(|s| s.snapshot == "matched")
            .count(),
        r.scenarios
            .iter()
            .filter(|s| s.snapshot == "drifted")
            .count(),
        if skipped > 0 {
            format!(", {skipped} skipped on this platform")
        } else {
            String::new()
        }
    );
    let t = &r.timing;
    let _ = writeln!(
        out,
        "timing: direct {:.1}s, mcp {:.1}s (x{}), whole sessions {:.1}s, wall {:.1}s",
        t.direct_s,
        t.mcp_s,
        t.ratio
            .map_or_else(|| "-".to_string(), |r| format!("{r:.2}")),
        t.mcp_session_s,
        r.wall_time_s
    );
    if r.passed {
        let _ = write!(
            out,
            "parity {}: passed ({} scenarios{})",
            r.mode,
            r.scenarios_selected,
            if r.quick {
                "; --quick: one per workflow, not release evidence"
            } else {
                ""
            }
        );
    } else {
        let _ = write!(
            out,
            "parity {}: FAILED ({} of {} scenarios failed{}{})",
            r.mode,
            failed.len(),
            r.scenarios_selected,
            if r.coverage.missing.is_empty() {
                ""
            } else {
                ", workflows without scenarios"
            },
            if r.orphan_snapshots.is_empty() {
                ""
            } else {
                ", orphan snapshots"
            },
        );
        if !failed.is_empty() {
            let _ = write!(
                out,
                "\nhint: a parity difference means the MCP path and the literal command line disagree: fix the server or the scenario;\n      a snapshot drift means the agreed evidence changed: `scimcp-parity review --scenario {}` shows it as a diff,\n      and `scimcp-parity run --scenario {}` records it once it is intended",
                failed[0], failed[0]
            );
        }
    }
    out
}
