//! Results read from text: `[[workflow.metric]]` (values the server reads into a run's
//! `reported` from stdout, stderr or an artifact) and `[[workflow.require]]` (success
//! predicates checked after exit status 0). Many real CLIs print their results as text
//! tables or write them to stdout, so these are what let a run's outcome be judged without
//! a shell shim.

use serde::{Deserialize, Serialize};

/// A metric or requirement pattern as the server runs it, line by line, and the loader
/// checks it: Rust `regex` syntax (linear time), compiled size bounded.
pub fn output_regex(pattern: &str) -> Result<regex::Regex, InvalidPattern> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(InvalidPattern)
}

/// Why [`output_regex`] refused a pattern: its syntax, or a compiled size over the bound.
/// The regex error is part of the message (not a separate cause), as the loader prints it
/// on the pattern's own line.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid regular expression: {0}")]
pub struct InvalidPattern(pub regex::Error);

/// Run-time readers of metrics and requirements report their failures as text in a run's
/// result; this keeps `output_regex(p)?` working there.
impl From<InvalidPattern> for String {
    fn from(e: InvalidPattern) -> String {
        e.to_string()
    }
}

/// `[[workflow.metric]]`: one value (or list of values) read after the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    /// `[a-z][a-z0-9_]*`, unique in the workflow.
    pub id: String,
    /// `stdout`, `stderr`, or the id of one of the workflow's artifacts. The value lands in
    /// `reported[<from>][<id>]`.
    pub from: String,
    /// A regular expression (Rust `regex` syntax, linear time) matched against each line
    /// of the text (so `^` and `$` are the line's ends). With a group named `value` the metric is
    /// that group's text; otherwise every named group gives one value (an object by group
    /// name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// A column of a CSV/TSV artifact, by its header name: the first data row's cell
    /// (every row's with `all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// A JSON pointer (RFC 6901) into a JSON artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// Every match (or row) as a list instead of the first one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all: bool,
}

/// How a metric is read, once the manifest has been checked (exactly one is given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricReader<'a> {
    Pattern(&'a str),
    Column(&'a str),
    Pointer(&'a str),
}

/// Where a metric's or requirement's text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputSource<'a> {
    Stdout,
    Stderr,
    Artifact(&'a str),
}

impl<'a> OutputSource<'a> {
    pub fn parse(from: &'a str) -> OutputSource<'a> {
        match from {
            "stdout" => OutputSource::Stdout,
            "stderr" => OutputSource::Stderr,
            id => OutputSource::Artifact(id),
        }
    }
}

impl MetricSpec {
    /// The reader given; `None` when none or several are (the load check refuses both).
    pub fn reader(&self) -> Option<MetricReader<'_>> {
        match (&self.pattern, &self.column, &self.pointer) {
            (Some(p), None, None) => Some(MetricReader::Pattern(p)),
            (None, Some(c), None) => Some(MetricReader::Column(c)),
            (None, None, Some(p)) => Some(MetricReader::Pointer(p)),
            _ => None,
        }
    }

    pub fn source(&self) -> OutputSource<'_> {
        OutputSource::parse(&self.from)
    }
}

/// `[[workflow.require]]`: a success predicate over a metric's value, or over the text of
/// stdout, stderr or an artifact. The first one that fails makes the run `failed` with
/// reason `success_predicate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequireSpec {
    /// The id of one of the workflow's metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// `stdout`, `stderr` or an artifact id, for `absent`/`present` over the whole text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lt: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub le: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gt: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ge: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eq: Option<f64>,
    /// A regex the metric's text must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// A regex that must not match anywhere in `from`'s text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
    /// A regex that must match somewhere in `from`'s text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub present: Option<String>,
    /// What the scientist is told when the requirement fails (why it matters, what to check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The one comparison a requirement makes, once the manifest has been checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Comparison<'a> {
    Lt(f64),
    Le(f64),
    Gt(f64),
    Ge(f64),
    Eq(f64),
    Matches(&'a str),
    Absent(&'a str),
    Present(&'a str),
}

impl Comparison<'_> {
    /// The manifest key of the operator.
    pub fn op(&self) -> &'static str {
        match self {
            Comparison::Lt(_) => "lt",
            Comparison::Le(_) => "le",
            Comparison::Gt(_) => "gt",
            Comparison::Ge(_) => "ge",
            Comparison::Eq(_) => "eq",
            Comparison::Matches(_) => "matches",
            Comparison::Absent(_) => "absent",
            Comparison::Present(_) => "present",
        }
    }

    /// True for the operators that compare numbers.
    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            Comparison::Lt(_)
                | Comparison::Le(_)
                | Comparison::Gt(_)
                | Comparison::Ge(_)
                | Comparison::Eq(_)
        )
    }

    /// True for the operators that search a whole text (`absent`, `present`).
    pub fn is_text_search(&self) -> bool {
        matches!(self, Comparison::Absent(_) | Comparison::Present(_))
    }
}

impl RequireSpec {
    /// Every operator given, in manifest-key order (the load check requires exactly one).
    pub fn comparisons(&self) -> Vec<Comparison<'_>> {
        let mut out = Vec::new();
        let nums = [
            (self.lt, Comparison::Lt as fn(f64) -> Comparison<'static>),
            (self.le, Comparison::Le),
            (self.gt, Comparison::Gt),
            (self.ge, Comparison::Ge),
            (self.eq, Comparison::Eq),
        ];
        for (v, make) in nums {
            if let Some(v) = v {
                out.push(make(v));
            }
        }
        if let Some(m) = &self.matches {
            out.push(Comparison::Matches(m));
        }
        if let Some(m) = &self.absent {
            out.push(Comparison::Absent(m));
        }
        if let Some(m) = &self.present {
            out.push(Comparison::Present(m));
        }
        out
    }

    /// The single comparison, when exactly one is given.
    pub fn comparison(&self) -> Option<Comparison<'_>> {
        let all = self.comparisons();
        (all.len() == 1).then(|| all[0])
    }

    /// A short name for messages: `affinity lt 0` or `stderr absent 'WARNING'`.
    pub fn describe(&self) -> String {
        let subject = self
            .metric
            .as_deref()
            .or(self.from.as_deref())
            .unwrap_or("?");
        match self.comparison() {
            Some(c) => match c {
                Comparison::Matches(p) | Comparison::Absent(p) | Comparison::Present(p) => {
                    format!("{subject} {} '{p}'", c.op())
                }
                Comparison::Lt(v)
                | Comparison::Le(v)
                | Comparison::Gt(v)
                | Comparison::Ge(v)
                | Comparison::Eq(v) => format!("{subject} {} {v}", c.op()),
            },
            None => subject.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn require(toml_text: &str) -> RequireSpec {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn require_comparison_is_the_single_operator_given() {
        let r = require("metric = 'a'\nlt = 0.5");
        assert_eq!(r.comparison(), Some(Comparison::Lt(0.5)));
        assert_eq!(r.describe(), "a lt 0.5");
        let r = require("from = 'stderr'\nabsent = 'WARN'");
        assert_eq!(r.comparison(), Some(Comparison::Absent("WARN")));
        assert_eq!(r.describe(), "stderr absent 'WARN'");
        let r = require("metric = 'a'\nlt = 1.0\ngt = 0.0");
        assert_eq!(r.comparison(), None);
        assert_eq!(r.comparisons().len(), 2);
    }

    #[test]
    fn metric_reader_requires_exactly_one() {
        let m: MetricSpec = toml::from_str("id = 'x'\nfrom = 'stdout'\npattern = 'v'").unwrap();
        assert_eq!(m.reader(), Some(MetricReader::Pattern("v")));
        assert_eq!(m.source(), OutputSource::Stdout);
        let m: MetricSpec =
            toml::from_str("id = 'x'\nfrom = 't'\ncolumn = 'c'\npointer = '/p'").unwrap();
        assert_eq!(m.reader(), None);
        assert_eq!(m.source(), OutputSource::Artifact("t"));
        let unused = serde_json::to_value(
            toml::from_str::<MetricSpec>("id = 'x'\nfrom = 'stdout'\npattern = 'v'").unwrap(),
        )
        .unwrap();
        assert_eq!(
            unused,
            serde_json::json!({"id": "x", "from": "stdout", "pattern": "v"})
        );
    }
}
