//! Comparing two [`Evidence`] records field by field, with the scenario's metric
//! tolerances, into a list of readable differences.
//!
//! The same comparison serves both questions the gate asks: do the direct and MCP paths
//! agree (left = direct, right = MCP), and does the MCP path still produce what the
//! snapshot recorded (left = snapshot, right = now).
//!
//! Metrics compare exactly unless the scenario declares an absolute tolerance for a key.
//! A declared tolerance also relaxes the byte comparison of the metrics file itself (its
//! hash would differ whenever a tolerated value does); every other artifact still compares
//! by hash.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use crate::evidence::{Evidence, metric_keys};
use crate::scenario::Scenario;

/// One field on which two records disagree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldDiff {
    /// e.g. `state`, `exit_code`, `artifacts[model.json].sha256`, `metrics.r2`.
    pub field: String,
    pub left: String,
    pub right: String,
}

/// Everything on which `left` and `right` disagree, in a stable order.
pub fn compare(scenario: &Scenario, left: &Evidence, right: &Evidence) -> Vec<FieldDiff> {
    let mut out = Vec::new();
    let mut push = |field: &str, l: String, r: String| {
        if l != r {
            out.push(FieldDiff {
                field: field.to_string(),
                left: l,
                right: r,
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

    let paths: BTreeSet<&str> = left
        .artifacts
        .iter()
        .chain(&right.artifacts)
        .map(|a| a.path.as_str())
        .collect();
    let tolerant_metrics = !scenario.tolerance.is_empty();
    for path in paths {
        match (left.artifact(path), right.artifact(path)) {
            (Some(l), Some(r)) => {
                if tolerant_metrics && path == scenario.metrics_file {
                    continue;
                }
                push(
                    &format!("artifacts[{path}].sha256"),
                    l.sha256.clone(),
                    r.sha256.clone(),
                );
            }
            (l, r) => push(
                &format!("artifacts[{path}]"),
                presence(l.is_some()),
                presence(r.is_some()),
            ),
        }
    }

    let lm = metric_keys(left.metrics.as_ref());
    let rm = metric_keys(right.metrics.as_ref());
    let keys: BTreeSet<&String> = lm.keys().chain(rm.keys()).collect();
    for key in keys {
        let field = format!("metrics.{key}");
        match (lm.get(key), rm.get(key)) {
            (Some(l), Some(r)) => {
                let tol = scenario.tolerance.get(key).copied().unwrap_or(0.0);
                if !within(l, r, tol) {
                    let (mut ls, mut rs) = (compact(l), compact(r));
                    if tol > 0.0 {
                        ls.push_str(&format!(" (tolerance {tol:e})"));
                        rs.push_str(&format!(" (tolerance {tol:e})"));
                    }
                    push(&field, ls, rs);
                }
            }
            (l, r) => push(
                &field,
                l.map_or_else(|| "absent".to_string(), compact),
                r.map_or_else(|| "absent".to_string(), compact),
            ),
        }
    }
    if left.metrics.is_some() != right.metrics.is_some() {
        push(
            &format!("metrics ({})", scenario.metrics_file),
            presence(left.metrics.is_some()),
            presence(right.metrics.is_some()),
        );
    }
    out
}

fn presence(present: bool) -> String {
    if present { "present" } else { "absent" }.to_string()
}

fn show_opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "none".to_string(), |v| v.to_string())
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("JSON value serializes")
}

/// Do `a` and `b` agree within absolute tolerance `tol` (0 = exactly)? Arrays and objects
/// agree when their shapes match and every element agrees.
pub fn within(a: &Value, b: &Value, tol: f64) -> bool {
    if tol == 0.0 {
        return a == b;
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() <= tol,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| within(x, y, tol))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| within(v, w, tol)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Artifact;
    use serde_json::json;

    fn scenario(tolerance: &[(&str, f64)]) -> Scenario {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        let mut text = String::from(
            "description = \"d\"\nadapter = \"refsci\"\nworkflow = \"regression\"\nexpect = \"succeeded\"\n[request]\ndataset = \"x.csv\"\n[direct]\nargv = [\"-m\", \"refsci\"]\n[tolerance]\n",
        );
        for (k, v) in tolerance {
            text.push_str(&format!("{k} = {v:e}\n"));
        }
        fs_err::write(&path, text).unwrap();
        crate::scenario::load(&path).unwrap()
    }

    fn evidence(r2: f64, model_sha: &str) -> Evidence {
        Evidence {
            adapter: "refsci".into(),
            workflow: "regression".into(),
            state: "succeeded".into(),
            exit_code: Some(0),
            signal: None,
            error_line: None,
            process_tree_ended: None,
            artifacts: vec![
                Artifact {
                    path: "metrics.json".into(),
                    sha256: format!("m{r2}"),
                    normalized: false,
                },
                Artifact {
                    path: "model.json".into(),
                    sha256: model_sha.into(),
                    normalized: false,
                },
            ],
            metrics: Some(json!({"r2": r2, "n_test": 111})),
        }
    }

    #[test]
    fn equal_records_have_no_differences() {
        let s = scenario(&[]);
        assert!(compare(&s, &evidence(0.5, "a"), &evidence(0.5, "a")).is_empty());
    }

    #[test]
    fn exact_by_default_and_tolerant_where_declared() {
        let exact = scenario(&[]);
        let d = compare(&exact, &evidence(0.5, "a"), &evidence(0.5 + 1e-12, "b"));
        let fields: Vec<&str> = d.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "artifacts[metrics.json].sha256",
                "artifacts[model.json].sha256",
                "metrics.r2"
            ]
        );
        let tolerant = scenario(&[("r2", 1e-9)]);
        let d = compare(&tolerant, &evidence(0.5, "a"), &evidence(0.5 + 1e-12, "a"));
        assert!(d.is_empty(), "{d:?}");
        let d = compare(&tolerant, &evidence(0.5, "a"), &evidence(0.6, "a"));
        assert_eq!(d.len(), 1);
        assert!(d[0].left.contains("tolerance"), "{d:?}");
    }

    #[test]
    fn missing_artifacts_are_named() {
        let s = scenario(&[]);
        let mut right = evidence(0.5, "a");
        right.artifacts.pop();
        let d = compare(&s, &evidence(0.5, "a"), &right);
        assert_eq!(d[0].field, "artifacts[model.json]");
        assert_eq!(
            (d[0].left.as_str(), d[0].right.as_str()),
            ("present", "absent")
        );
    }
}
