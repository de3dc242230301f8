//! `[[workflow.require]]`: success predicates checked after the CLI exited 0. Exit status 0
//! is not enough for a CLI that reports a bad input as a warning and an empty result (an
//! affinity of 0 for a box far from the receptor, an empty alignment): the first
//! requirement that does not hold makes the run `failed` with reason `success_predicate`
//! (the executor's `check_requires` decides that), its message naming the requirement, the
//! value found and the manifest's explanation.
//!
//! This file only judges the requirements; it knows nothing of how a run ends, so the
//! executor that does can use it without the two importing each other.

use std::collections::BTreeMap;
use std::path::Path;

use scimcp_core::manifest::{Comparison, RequireSpec, output_regex};
use serde_json::Value;

use super::metrics::{OutputFileError, for_each_line};
use super::stream_copy::source_path;
use crate::plan::Plan;

/// Longest text of a found value or line quoted in a message.
const QUOTE: usize = 200;

/// What was found instead of what a requirement asks: the tail of the run's message.
#[derive(Debug, thiserror::Error)]
enum Unmet {
    #[error("it has no single comparison")]
    NoComparison,
    #[error("metric '{0}' found no value (see the run's problems)")]
    NoMetricValue(String),
    #[error("metric '{0}' found no value")]
    EmptyMetric(String),
    #[error("item {index}: {unmet}")]
    Item { index: usize, unmet: Box<Unmet> },
    #[error("'{0}' is not an output of this workflow")]
    NotAnOutput(String),
    #[error("{0} needs a metric")]
    NeedsMetric(&'static str),
    #[error("{0}")]
    Pattern(#[from] scimcp_core::manifest::InvalidPattern),
    #[error(transparent)]
    Read(#[from] OutputFileError),
    #[error("{from} line {line} reads '{text}'")]
    LineReads {
        from: String,
        line: usize,
        text: String,
    },
    #[error("no line of {0} matches")]
    NoLineMatches(String),
    #[error("the value found is '{0}'")]
    NoMatch(String),
    #[error("the value found, '{0}', is not a number")]
    NotANumber(String),
    #[error("the value found is {0}")]
    OutOfBounds(String),
}

/// The message for the first of the plan's requirements that does not hold, or `None` when
/// all hold.
pub(super) fn unmet_requirement(
    plan: &Plan,
    work: &Path,
    reported: &BTreeMap<String, BTreeMap<String, Value>>,
) -> Option<String> {
    plan.requires.iter().find_map(|r| {
        let found = holds(plan, work, reported, r).err()?;
        let mut message = format!(
            "the CLI exited 0 but the requirement '{}' does not hold: {found}",
            r.describe()
        );
        if let Some(why) = &r.message {
            message.push_str(&format!(" ({why})"));
        }
        Some(message)
    })
}

/// `Ok` when `r` holds, else what was found instead.
fn holds(
    plan: &Plan,
    work: &Path,
    reported: &BTreeMap<String, BTreeMap<String, Value>>,
    r: &RequireSpec,
) -> Result<(), Unmet> {
    let Some(cmp) = r.comparison() else {
        return Err(Unmet::NoComparison);
    };
    if let Some(id) = &r.metric {
        let from = plan
            .metrics
            .iter()
            .find(|m| &m.id == id)
            .map(|m| m.from.as_str())
            .unwrap_or_default();
        let value = reported
            .get(from)
            .and_then(|m| m.get(id))
            .ok_or_else(|| Unmet::NoMetricValue(id.clone()))?;
        return match value {
            Value::Array(items) => {
                if items.is_empty() {
                    return Err(Unmet::EmptyMetric(id.clone()));
                }
                items.iter().enumerate().try_for_each(|(index, v)| {
                    compare(&cmp, v).map_err(|unmet| Unmet::Item {
                        index,
                        unmet: Box::new(unmet),
                    })
                })
            }
            v => compare(&cmp, v),
        };
    }
    let from = r.from.as_deref().unwrap_or_default();
    let path = source_path(plan, work, from).ok_or_else(|| Unmet::NotAnOutput(from.to_string()))?;
    let shown = path
        .strip_prefix(work)
        .unwrap_or(&path)
        .to_string_lossy()
        .replace('\\', "/");
    let (Comparison::Absent(p) | Comparison::Present(p)) = cmp else {
        return Err(Unmet::NeedsMetric(cmp.op()));
    };
    let re = output_regex(p)?;
    let mut hit: Option<(usize, String)> = None;
    for_each_line(&path, &shown, |n, line| {
        if re.is_match(line) {
            hit = Some((n, quote(line)));
            return false;
        }
        true
    })?;
    match (cmp, hit) {
        (Comparison::Absent(_), Some((line, text))) => Err(Unmet::LineReads {
            from: from.to_string(),
            line,
            text,
        }),
        (Comparison::Present(_), None) => Err(Unmet::NoLineMatches(from.to_string())),
        _ => Ok(()),
    }
}

fn compare(cmp: &Comparison<'_>, value: &Value) -> Result<(), Unmet> {
    let shown = quote(&match value {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    });
    if let Comparison::Matches(p) = cmp {
        let re = output_regex(p)?;
        return if re.is_match(&shown) {
            Ok(())
        } else {
            Err(Unmet::NoMatch(shown))
        };
    }
    let number = match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
    .ok_or_else(|| Unmet::NotANumber(shown.clone()))?;
    let ok = match *cmp {
        Comparison::Lt(b) => number < b,
        Comparison::Le(b) => number <= b,
        Comparison::Gt(b) => number > b,
        Comparison::Ge(b) => number >= b,
        Comparison::Eq(b) => number == b,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Unmet::OutOfBounds(shown))
    }
}

fn quote(text: &str) -> String {
    if text.len() <= QUOTE {
        return text.to_string();
    }
    let mut end = QUOTE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::execute::{Finish, check_requires};
    use crate::runs::state::RunState;
    use crate::runs::stream_copy::tests::plan_with;
    use serde_json::json;

    fn plan(requires: &[&str]) -> Plan {
        let mut plan = plan_with(Vec::new(), &[]);
        plan.metrics = vec![
            toml::from_str("id = 'best'\nfrom = 'stdout'\npattern = '(?P<value>\\S+)'").unwrap(),
            toml::from_str("id = 'name'\nfrom = 'stdout'\npattern = '(?P<value>\\S+)'").unwrap(),
            toml::from_str("id = 'list'\nfrom = 'stdout'\npattern = '(?P<value>\\S+)'\nall = true")
                .unwrap(),
        ];
        plan.requires = requires
            .iter()
            .map(|r| toml::from_str(r).unwrap())
            .collect();
        plan
    }

    fn reported() -> BTreeMap<String, BTreeMap<String, Value>> {
        BTreeMap::from([(
            "stdout".to_string(),
            BTreeMap::from([
                ("best".to_string(), json!(-7.5)),
                ("name".to_string(), json!("aspirin-pose")),
                ("list".to_string(), json!([-7.5, -6.0, 0.5])),
            ]),
        )])
    }

    /// The run's ending under `requires`, with stderr holding `stderr`.
    fn outcome(requires: &[&str], stderr: &str) -> Finish {
        let dir = tempfile::tempdir().unwrap();
        let streams = dir.path().join(".scimcp/streams");
        fs_err::create_dir_all(&streams).unwrap();
        fs_err::write(streams.join("stderr"), stderr).unwrap();
        check_requires(
            &plan(requires),
            dir.path(),
            &reported(),
            Finish::new(RunState::Succeeded, "", ""),
        )
    }

    fn holds_(require: &str) -> bool {
        outcome(&[require], "all good\n").state == RunState::Succeeded
    }

    #[test]
    fn each_numeric_operator_compares() {
        assert!(holds_("metric = 'best'\nlt = 0.0"));
        assert!(!holds_("metric = 'best'\nlt = -7.5"));
        assert!(holds_("metric = 'best'\nle = -7.5"));
        assert!(!holds_("metric = 'best'\nle = -8.0"));
        assert!(holds_("metric = 'best'\ngt = -8.0"));
        assert!(!holds_("metric = 'best'\ngt = -7.5"));
        assert!(holds_("metric = 'best'\nge = -7.5"));
        assert!(!holds_("metric = 'best'\nge = 0.0"));
        assert!(holds_("metric = 'best'\neq = -7.5"));
        assert!(!holds_("metric = 'best'\neq = 7.5"));
    }

    #[test]
    fn text_operators_match_and_search() {
        assert!(holds_("metric = 'name'\nmatches = '^aspirin'"));
        assert!(!holds_("metric = 'name'\nmatches = '^ibuprofen'"));
        assert!(holds_("from = 'stderr'\nabsent = 'WARNING'"));
        assert!(!holds_("from = 'stderr'\npresent = 'WARNING'"));
        assert!(holds_("from = 'stderr'\npresent = 'good$'"));
    }

    #[test]
    fn the_first_failing_requirement_names_itself_the_value_and_the_message() {
        let f = outcome(
            &[
                "metric = 'best'\nlt = 0.0",
                "metric = 'list'\nlt = 0.0\nmessage = 'every pose must bind'",
                "from = 'stderr'\nabsent = 'WARNING'",
            ],
            "ok\nWARNING: box outside receptor\n",
        );
        assert_eq!(f.state, RunState::Failed);
        assert_eq!(f.reason, "success_predicate");
        assert_eq!(
            f.message,
            "the CLI exited 0 but the requirement 'list lt 0' does not hold: item 2: the value \
             found is 0.5 (every pose must bind)"
        );
        let f = outcome(
            &["from = 'stderr'\nabsent = 'WARNING'"],
            "ok\nWARNING: box outside\n",
        );
        assert_eq!(
            f.message,
            "the CLI exited 0 but the requirement 'stderr absent 'WARNING'' does not hold: \
             stderr line 2 reads 'WARNING: box outside'"
        );
    }

    #[test]
    fn a_missing_value_or_text_fails_and_other_endings_are_kept() {
        let f = outcome(&["metric = 'name'\nlt = 1.0"], "");
        assert!(
            f.message.contains("'aspirin-pose', is not a number"),
            "{}",
            f.message
        );
        let mut p = plan(&["metric = 'best'\nlt = 0.0"]);
        p.metrics[0].from = "stderr".into();
        let f = check_requires(
            &p,
            Path::new("."),
            &reported(),
            Finish::new(RunState::Succeeded, "", ""),
        );
        assert!(
            f.message.contains("metric 'best' found no value"),
            "{}",
            f.message
        );
        let failed = Finish::new(RunState::Failed, "exit_code", "exited 1");
        let f = check_requires(&p, Path::new("."), &reported(), failed);
        assert_eq!(
            (f.state, f.reason.as_str()),
            (RunState::Failed, "exit_code")
        );
        let dir = tempfile::tempdir().unwrap();
        let f = check_requires(
            &plan(&["from = 'stdout'\npresent = 'x'"]),
            dir.path(),
            &reported(),
            Finish::new(RunState::Succeeded, "", ""),
        );
        assert!(
            f.message.contains(".scimcp/streams/stdout was not written"),
            "{}",
            f.message
        );
    }
}
