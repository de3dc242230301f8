//! The gate's two comparisons, kept apart because they answer different questions:
//!
//! - [`same_run`]: in one run on one machine, do the direct command line and the MCP path
//!   give the same thing? Byte for byte: every artifact's SHA-256, the metrics, the state,
//!   the exit code. Nothing is tolerated: both paths ran on the same CPU with the same
//!   libraries, so any difference is the wrapper's doing.
//! - [`against_recorded`]: does this run still give what the checked-in evidence recorded,
//!   possibly on another machine? Floats compare within the scenario's tolerance (another
//!   CPU rounds the last digits differently); everything else compares exactly. An
//!   artifact whose hash differs is drift only when its content also differs beyond
//!   tolerance.

use std::collections::BTreeSet;

use crate::content::{
    CompareMode, ContentComparison, compact, compare_csv, compare_sheets, compare_text,
    compare_values,
};
use crate::diff::{FieldDiff, Numeric};
use crate::evidence::{Artifact, Evidence};
use crate::scenario::Scenario;

/// The terminal facts both comparisons check exactly.
fn outcome_fields(left: &Evidence, right: &Evidence, out: &mut Vec<FieldDiff>) {
    let mut push = |field: &str, l: String, r: String| {
        if l != r {
            out.push(FieldDiff {
                field: field.to_string(),
                left: l,
                right: r,
                numeric: None,
            });
        }
    };
    push("adapter", left.adapter.clone(), right.adapter.clone());
    push("workflow", left.workflow.clone(), right.workflow.clone());
    push("state", left.state.clone(), right.state.clone());
    push(
        "exit_code",
        show_opt(left.exit_code),
        show_opt(right.exit_code),
    );
    push("signal", show_opt(left.signal), show_opt(right.signal));
    push(
        "error_line",
        show_opt(left.error_line.as_ref()),
        show_opt(right.error_line.as_ref()),
    );
    push(
        "process_tree_ended",
        show_opt(left.process_tree_ended),
        show_opt(right.process_tree_ended),
    );
}

/// Every artifact path of either record, sorted.
fn all_paths<'a>(left: &'a Evidence, right: &'a Evidence) -> BTreeSet<&'a str> {
    left.artifacts
        .iter()
        .chain(&right.artifacts)
        .map(|a| a.path.as_str())
        .collect()
}

fn presence_diff(path: &str, l: Option<&Artifact>, r: Option<&Artifact>) -> FieldDiff {
    FieldDiff {
        field: format!("artifacts[{path}]"),
        left: presence(l.is_some()),
        right: presence(r.is_some()),
        numeric: None,
    }
}

/// Same run, same machine: the direct side (`left`) and the MCP side (`right`) must agree
/// byte for byte — except the artifacts the scenario declares the CLI does not reproduce run
/// to run, whose floats get the tolerance (returned as tolerated, never silently).
pub fn same_run(
    scenario: &Scenario,
    left: &Evidence,
    right: &Evidence,
) -> (Vec<FieldDiff>, Vec<Numeric>) {
    let mut out = Vec::new();
    let mut tolerated = Vec::new();
    outcome_fields(left, right, &mut out);
    for path in all_paths(left, right) {
        match (left.artifact(path), right.artifact(path)) {
            (Some(l), Some(r)) if l.sha256 != r.sha256 && scenario.is_nondeterministic(path) => {
                let only = Evidence {
                    artifacts: vec![l.clone()],
                    metrics: None,
                    ..left.clone()
                };
                let other = Evidence {
                    artifacts: vec![r.clone()],
                    metrics: None,
                    ..left.clone()
                };
                let c = against_recorded(scenario, &only, &other);
                out.extend(c.drift);
                tolerated.extend(c.tolerated);
            }
            (Some(l), Some(r)) => {
                if l.sha256 != r.sha256 {
                    out.push(FieldDiff {
                        field: format!("artifacts[{path}].sha256"),
                        left: l.sha256.clone(),
                        right: r.sha256.clone(),
                        numeric: None,
                    });
                }
            }
            (l, r) => out.push(presence_diff(path, l, r)),
        }
    }
    if left.metrics != right.metrics {
        out.push(FieldDiff {
            field: "metrics".into(),
            left: left
                .metrics
                .as_ref()
                .map_or_else(|| "absent".into(), compact),
            right: right
                .metrics
                .as_ref()
                .map_or_else(|| "absent".into(), compact),
            numeric: None,
        });
    }
    (out, tolerated)
}

/// What [`against_recorded`] found.
#[derive(Debug, Default)]
pub struct EvidenceComparison {
    /// Differences that break the recorded evidence.
    pub drift: Vec<FieldDiff>,
    /// Floats that differ inside their tolerance (the first ones; see `tolerated_more`).
    pub tolerated: Vec<Numeric>,
    pub tolerated_more: usize,
}

impl EvidenceComparison {
    /// Byte-identical evidence: nothing drifted and nothing needed a tolerance.
    pub fn exact(&self) -> bool {
        self.drift.is_empty() && self.tolerated.is_empty() && self.tolerated_more == 0
    }
}

/// Recorded evidence (`recorded`) against this run (`now`), with `scenario`'s tolerances.
pub fn against_recorded(
    scenario: &Scenario,
    recorded: &Evidence,
    now: &Evidence,
) -> EvidenceComparison {
    let mut out = EvidenceComparison::default();
    outcome_fields(recorded, now, &mut out.drift);
    let mut content = ContentComparison::default();
    let tolerances = &scenario.tolerance;
    // The metrics first: the differences a reader looks for before any table cell.
    if let (Some(r), Some(n)) = (&recorded.metrics, &now.metrics) {
        let mut metrics = ContentComparison::default();
        compare_values("metrics", r, n, tolerances, &mut metrics);
        content.absorb(metrics.finish("metrics"));
    } else if recorded.metrics.is_some() != now.metrics.is_some() {
        content.drift.push(FieldDiff {
            field: format!("metrics ({})", scenario.metrics_file),
            left: presence(recorded.metrics.is_some()),
            right: presence(now.metrics.is_some()),
            numeric: None,
        });
    }
    // Values the server read from text: numbers within tolerance, like the metrics.
    match (&recorded.reported, &now.reported) {
        (Some(r), Some(n)) => {
            let mut reported = ContentComparison::default();
            compare_values("reported", r, n, tolerances, &mut reported);
            content.absorb(reported.finish("reported"));
        }
        (None, None) => {}
        (r, n) => content.drift.push(FieldDiff {
            field: "reported".into(),
            left: presence(r.is_some()),
            right: presence(n.is_some()),
            numeric: None,
        }),
    }
    for path in all_paths(recorded, now) {
        let (r, n) = match (recorded.artifact(path), now.artifact(path)) {
            (Some(r), Some(n)) => (r, n),
            (r, n) => {
                out.drift.push(presence_diff(path, r, n));
                continue;
            }
        };
        if r.sha256 == n.sha256 {
            continue;
        }
        let field = format!("artifacts[{path}]");
        let mut one = ContentComparison::default();
        // The mode comes from this run (the scenario as it is now); the recorded side must
        // hold the content that mode needs.
        match (n.content.compare, &r.content, &n.content) {
            (Some(CompareMode::Presence), _, _) | (Some(CompareMode::Metrics), _, _) => {}
            (Some(CompareMode::Json), rc, nc) if rc.json.is_some() && nc.json.is_some() => {
                compare_values(
                    &field,
                    rc.json.as_ref().expect("checked"),
                    nc.json.as_ref().expect("checked"),
                    tolerances,
                    &mut one,
                );
            }
            (Some(CompareMode::Csv), rc, nc) if rc.csv.is_some() && nc.csv.is_some() => {
                compare_csv(
                    &field,
                    rc.csv.as_deref().expect("checked"),
                    nc.csv.as_deref().expect("checked"),
                    tolerances,
                    &mut one,
                );
            }
            (Some(CompareMode::Cells), rc, nc) if rc.sheets.is_some() && nc.sheets.is_some() => {
                compare_sheets(
                    &field,
                    rc.sheets.as_deref().expect("checked"),
                    nc.sheets.as_deref().expect("checked"),
                    tolerances,
                    &mut one,
                );
            }
            (Some(CompareMode::Text), rc, nc) if rc.text.is_some() && nc.text.is_some() => {
                compare_text(
                    &field,
                    rc.text.as_deref().expect("checked"),
                    nc.text.as_deref().expect("checked"),
                    &mut one,
                );
            }
            (mode, rc, _) => {
                let why = match mode {
                    Some(CompareMode::Hash) | None => "",
                    _ if rc.compare.is_none() => {
                        " (the snapshot keeps only hashes: record it again with `scimcp-parity run`)"
                    }
                    _ => " (the snapshot holds no content of this kind for it)",
                };
                one.drift.push(FieldDiff {
                    field: format!("{field}.sha256"),
                    left: r.sha256.clone(),
                    right: format!("{}{why}", n.sha256),
                    numeric: None,
                });
            }
        }
        content.absorb(one.finish(&field));
    }
    out.drift.extend(content.drift);
    out.tolerated = content.tolerated;
    out.tolerated_more = content.tolerated_more;
    out
}

fn presence(present: bool) -> String {
    if present { "present" } else { "absent" }.to_string()
}

fn show_opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "none".to_string(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::Content;
    use serde_json::json;

    fn scenario() -> Scenario {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        fs_err::write(
            &path,
            "description = \"d\"\nadapter = \"refsci\"\nworkflow = \"regression\"\nexpect = \"succeeded\"\n[request]\ndataset = \"x.csv\"\n[direct]\nargv = [\"-m\", \"refsci\"]\n",
        )
        .unwrap();
        crate::scenario::load(&path).unwrap()
    }

    fn evidence(r2: f64, model_sha: &str) -> Evidence {
        let artifact = |path: &str, sha: String, content: Content| Artifact {
            path: path.into(),
            sha256: sha,
            normalized: false,
            content,
        };
        Evidence {
            artifacts: vec![
                artifact(
                    "metrics.json",
                    format!("m{r2}"),
                    Content {
                        compare: Some(CompareMode::Metrics),
                        ..Content::default()
                    },
                ),
                artifact(
                    "model.json",
                    model_sha.into(),
                    Content {
                        compare: Some(CompareMode::Hash),
                        ..Content::default()
                    },
                ),
            ],
            metrics: Some(json!({"r2": r2, "n_test": 111})),
            ..Evidence::test_default()
        }
    }

    #[test]
    fn same_run_is_byte_exact() {
        let s = scenario();
        assert!(
            same_run(&s, &evidence(0.5, "a"), &evidence(0.5, "a"))
                .0
                .is_empty()
        );
        let d = same_run(&s, &evidence(0.5, "a"), &evidence(0.5 + 1e-15, "a")).0;
        let fields: Vec<&str> = d.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(fields, ["artifacts[metrics.json].sha256", "metrics"]);
    }

    #[test]
    fn recorded_evidence_tolerates_rounding_but_not_change() {
        let s = scenario();
        let c = against_recorded(&s, &evidence(0.5, "a"), &evidence(0.5 + 1e-16, "a"));
        assert!(c.drift.is_empty(), "{:?}", c.drift);
        assert_eq!(c.tolerated.len(), 1);
        let c = against_recorded(&s, &evidence(0.5, "a"), &evidence(0.5000005, "a"));
        assert_eq!(c.drift.len(), 1);
        assert_eq!(c.drift[0].field, "metrics.r2");
        let c = against_recorded(&s, &evidence(0.5, "a"), &evidence(0.5, "b"));
        assert_eq!(c.drift[0].field, "artifacts[model.json].sha256");
        let mut missing = evidence(0.5, "a");
        missing.artifacts.pop();
        let c = against_recorded(&s, &evidence(0.5, "a"), &missing);
        assert_eq!(c.drift[0].field, "artifacts[model.json]");
        assert_eq!(
            (c.drift[0].left.as_str(), c.drift[0].right.as_str()),
            ("present", "absent")
        );
    }
    #[test]
    fn reported_values_compare_with_the_record_within_tolerance_and_not_in_the_same_run() {
        let s = scenario();
        let with = |best: f64| Evidence {
            reported: Some(json!({"stdout": {"best_affinity": best, "affinity": [best, -3.0]}})),
            ..evidence(0.5, "a")
        };
        let c = against_recorded(&s, &with(-4.536), &with(-4.536 * (1.0 + 1e-12)));
        assert!(c.drift.is_empty(), "{:?}", c.drift);
        let c = against_recorded(&s, &with(-4.536), &with(-4.397));
        let fields: Vec<&str> = c.drift.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "reported.stdout.affinity[0]",
                "reported.stdout.best_affinity"
            ]
        );
        let c = against_recorded(&s, &with(-4.536), &evidence(0.5, "a"));
        assert_eq!(c.drift[0].field, "reported");
        // The direct side never has `reported`: the same-run comparison leaves it out.
        assert!(
            same_run(&s, &evidence(0.5, "a"), &with(-4.536))
                .0
                .is_empty()
        );
    }
}

/// The committed evidence holds on another machine: every float moved the way another CPU
/// moves it passes, a real change fails naming its field. Runs on the checked-in snapshots
/// themselves, so a new scenario is covered the day it is recorded.
#[cfg(test)]
mod committed_snapshots {
    use super::*;
    use serde_json::Value;
    use std::path::Path;

    fn committed() -> Vec<(Scenario, Evidence)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let scenarios = crate::scenario::load_dir(&root.join("scenarios")).unwrap();
        let out: Vec<(Scenario, Evidence)> = scenarios
            .into_iter()
            .filter_map(|s| {
                let path = crate::snapshot::path_for(&root.join("snapshots"), &s.name);
                let text = crate::snapshot::read_contents(&path).unwrap()?;
                let ev: Evidence = serde_json::from_str(&text).unwrap();
                Some((s, ev))
            })
            .collect();
        assert!(
            out.len() >= 18,
            "the committed snapshots load: {}",
            out.len()
        );
        out
    }

    /// `x` moved by `n` units in the last place (zero moves to the nearest subnormals).
    fn ulps(x: f64, n: i64) -> f64 {
        if x == 0.0 {
            return n as f64 * f64::from_bits(1);
        }
        f64::from_bits((x.to_bits() as i64 + n) as u64)
    }

    /// Every float in `v` moved by 1 to 4 ULPs, alternating up and down.
    fn move_floats(v: &mut Value, k: &mut i64) -> usize {
        match v {
            Value::Number(n) if n.is_f64() => {
                *k = if *k >= 4 {
                    -1
                } else if *k <= -4 {
                    1
                } else {
                    *k + k.signum()
                };
                let moved = ulps(n.as_f64().unwrap(), *k);
                *v = Value::from(moved);
                1
            }
            Value::Array(items) => items.iter_mut().map(|i| move_floats(i, k)).sum(),
            Value::Object(map) => map.values_mut().map(|i| move_floats(i, k)).sum(),
            _ => 0,
        }
    }

    /// The last printed digit of a float cell printed at full precision (10 significant
    /// digits or more) flipped by one: what a value on a rounding boundary does on another
    /// CPU. Coarser cells cannot change by a few ULPs and stay as they are.
    fn flip_last_digit(cell: &mut String) -> bool {
        let t = cell.clone();
        let mantissa = t.split(['e', 'E']).next().unwrap_or("");
        let digits = mantissa.bytes().filter(u8::is_ascii_digit).count();
        let significant = mantissa
            .trim_start_matches(['-', '+'])
            .trim_start_matches(['0', '.'])
            .bytes()
            .filter(u8::is_ascii_digit)
            .count();
        if !mantissa.contains('.') || significant < 10 || digits == 0 {
            return false;
        }
        let last = mantissa.rfind(|c: char| c.is_ascii_digit()).unwrap();
        let d = mantissa.as_bytes()[last];
        let flipped = if d == b'9' { b'8' } else { d + 1 };
        let mut bytes = t.into_bytes();
        bytes[last] = flipped;
        *cell = String::from_utf8(bytes).unwrap();
        true
    }

    /// `ev` as another CPU would give it: floats moved, artifact hashes changed wherever
    /// content moved (their bytes would differ).
    fn as_on_another_cpu(ev: &Evidence) -> (Evidence, usize) {
        let mut other = ev.clone();
        let mut k = 1;
        let mut moved = 0;
        if let Some(m) = other.metrics.as_mut() {
            moved += move_floats(m, &mut k);
        }
        for a in &mut other.artifacts {
            let mut changed = 0;
            if let Some(json) = a.content.json.as_mut() {
                changed += move_floats(json, &mut k);
            }
            if let Some(rows) = a.content.csv.as_mut() {
                for cell in rows.iter_mut().skip(1).flatten() {
                    changed += usize::from(flip_last_digit(cell));
                }
            }
            if changed > 0 || a.content.compare == Some(CompareMode::Metrics) {
                a.sha256 = format!("{}-other-cpu", a.sha256);
            }
            moved += changed;
        }
        (other, moved)
    }

    #[test]
    fn floats_moved_as_another_cpu_moves_them_still_hold() {
        let mut total = 0;
        for (s, ev) in committed() {
            let (other, moved) = as_on_another_cpu(&ev);
            let c = against_recorded(&s, &ev, &other);
            assert!(c.drift.is_empty(), "{}: {:#?}", s.name, c.drift);
            assert_eq!(
                c.tolerated.len() + c.tolerated_more,
                moved,
                "{}: every moved float is reported as tolerated",
                s.name
            );
            total += moved;
        }
        assert!(total > 1000, "the snapshots hold many floats: {total}");
    }

    #[test]
    fn a_metric_moved_by_a_millionth_fails_naming_it() {
        let mut checked = 0;
        for (s, ev) in committed() {
            let Some(Value::Object(metrics)) = &ev.metrics else {
                continue;
            };
            let Some((key, x)) = metrics
                .iter()
                .find_map(|(k, v)| v.as_f64().filter(|_| v.is_f64()).map(|x| (k.clone(), x)))
            else {
                continue;
            };
            let mut changed = ev.clone();
            changed.metrics.as_mut().unwrap()[&key] = Value::from(x * (1.0 + 1e-6));
            let c = against_recorded(&s, &ev, &changed);
            assert_eq!(c.drift.len(), 1, "{}: {:?}", s.name, c.drift);
            assert_eq!(c.drift[0].field, format!("metrics.{key}"));
            let n = c.drift[0].numeric.as_ref().unwrap();
            assert!(!n.within && n.rel_err > 9e-7, "{n:?}");
            checked += 1;
        }
        assert!(checked >= 10, "{checked}");
    }

    #[test]
    fn a_changed_label_or_cell_text_fails_naming_it() {
        let mut checked = 0;
        for (s, ev) in committed() {
            for (i, a) in ev.artifacts.iter().enumerate() {
                let Some(rows) = &a.content.csv else { continue };
                if rows.len() < 2 {
                    continue;
                }
                let header = &rows[0];
                // The last column of the first data row: a predicted label, a cluster, a score.
                let col = header.len() - 1;
                for replacement in ["a changed label", "-1"] {
                    let mut changed = ev.clone();
                    let artifact = &mut changed.artifacts[i];
                    let cell = &mut artifact.content.csv.as_mut().unwrap()[1][col];
                    if cell == replacement {
                        continue;
                    }
                    *cell = replacement.into();
                    artifact.sha256 = "changed".into();
                    let c = against_recorded(&s, &ev, &changed);
                    assert_eq!(c.drift.len(), 1, "{} {}: {:?}", s.name, a.path, c.drift);
                    assert_eq!(
                        c.drift[0].field,
                        format!("artifacts[{}].{}[0]", a.path, header[col])
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= 20, "{checked}");
    }
}
