//! Load-time checks of what a run's outputs are read as: stream artifacts (`base = "stdout"
//! | "stderr"`, `step`), `[[workflow.metric]]` and `[[workflow.require]]`. A metric or
//! requirement that cannot work (an unknown source, a pattern without a value group, a
//! column of a JSON file) is refused here rather than found missing after every run.

use std::collections::{BTreeMap, BTreeSet};

use super::checker::{Checker, Seg};
use super::names::check_id;
use crate::manifest::outputs::{
    Comparison, InvalidPattern, MetricReader, MetricSpec, OutputSource,
};
use crate::manifest::types::{ArtifactBase, ArtifactSpec, Workflow};

/// Longest `message` of a requirement.
const MAX_MESSAGE: usize = 500;

/// Every stream artifact, metric and requirement of workflow `i`.
pub(super) fn check_outputs(c: &mut Checker<'_>, i: usize, wf: &Workflow) {
    check_stream_artifacts(c, i, wf);
    let metrics = check_metrics(c, i, wf);
    check_requires(c, i, wf, &metrics);
}

fn artifact_at(i: usize, j: usize, k: &'static str) -> [Seg; 5] {
    [
        Seg::Key("workflow"),
        Seg::Index(i),
        Seg::Key("artifact"),
        Seg::Index(j),
        Seg::Key(k),
    ]
}

fn check_stream_artifacts(c: &mut Checker<'_>, i: usize, wf: &Workflow) {
    let step_ids: Vec<&str> = wf.steps.iter().map(|s| s.id.as_str()).collect();
    let mut streams: BTreeMap<(ArtifactBase, &str), &str> = BTreeMap::new();
    for (j, a) in wf.artifacts.iter().enumerate() {
        if !a.base.is_stream() {
            if a.step.is_some() {
                c.error(
                    &artifact_at(i, j, "step"),
                    "step applies only to base = \"stdout\" or \"stderr\"",
                    Some("remove step, or set base to the stream this file is".into()),
                );
            }
            continue;
        }
        let stream = stream_name(a.base);
        if a.is_glob() || a.path.contains(['/', '\\']) {
            c.error(
                &artifact_at(i, j, "path"),
                format!(
                    "'{}' must be a plain file name: the server writes the {stream} stream to \
                     output/<path>",
                    a.path
                ),
                Some(format!("e.g. path = \"{stream}.txt\"")),
            );
        }
        if a.step.is_some() && step_ids.is_empty() {
            c.error(
                &artifact_at(i, j, "step"),
                "step names a step, but this workflow has no [[workflow.step]]",
                Some(
                    "remove step: the workflow's only program is the one whose stream this is"
                        .into(),
                ),
            );
        }
        if let Some(step) = &a.step
            && !step_ids.is_empty()
            && !step_ids.contains(&step.as_str())
        {
            c.error(
                &artifact_at(i, j, "step"),
                format!("step '{step}' is not declared in this workflow"),
                Some(format!("declared steps: {}", step_ids.join(", "))),
            );
        }
        let step = match step_ids.last() {
            None => "",
            Some(last) => a.step.as_deref().unwrap_or(last),
        };
        if let Some(other) = streams.insert((a.base, step), a.id.as_str()) {
            let whose = if step.is_empty() {
                String::new()
            } else {
                format!(" of step '{step}'")
            };
            c.error(
                &artifact_at(i, j, "base"),
                format!("the {stream} stream{whose} is already the artifact '{other}'"),
                Some("declare each stream of each step at most once".into()),
            );
        }
        if let Some(clash) = wf.artifacts.iter().find(|o| {
            !o.base.is_stream() && o.base.directory() == ArtifactBase::Output && o.path == a.path
        }) {
            c.error(
                &artifact_at(i, j, "path"),
                format!(
                    "output/{} is also the artifact '{}' the CLI writes",
                    a.path, clash.id
                ),
                Some("give the stream's copy a file name of its own".into()),
            );
        }
    }
}

fn stream_name(base: ArtifactBase) -> &'static str {
    match base {
        ArtifactBase::Stderr => "stderr",
        _ => "stdout",
    }
}

/// Why a metric's or requirement's `from` names nothing it can read.
#[derive(Debug, thiserror::Error)]
enum FromError {
    #[error("'{id}' is a glob artifact (several files); a metric reads one file")]
    GlobArtifact { id: String },
    #[error("'{from}' is neither stdout, stderr nor an artifact of this workflow{}", known(.artifacts))]
    Unknown {
        from: String,
        artifacts: Vec<String>,
    },
}

/// The workflow's artifact ids, as the end of [`FromError::Unknown`]'s message.
fn known(artifacts: &[String]) -> String {
    if artifacts.is_empty() {
        String::new()
    } else {
        format!(" (artifacts: {})", artifacts.join(", "))
    }
}

/// What `from` names, or why it names nothing.
fn resolve_from<'w>(wf: &'w Workflow, from: &str) -> Result<Option<&'w ArtifactSpec>, FromError> {
    match OutputSource::parse(from) {
        OutputSource::Stdout | OutputSource::Stderr => Ok(None),
        OutputSource::Artifact(id) => match wf.artifacts.iter().find(|a| a.id == id) {
            Some(a) if a.is_glob() => Err(FromError::GlobArtifact { id: id.to_string() }),
            Some(a) => Ok(Some(a)),
            None => Err(FromError::Unknown {
                from: from.to_string(),
                artifacts: wf.artifacts.iter().map(|a| a.id.clone()).collect(),
            }),
        },
    }
}

fn is_table(a: &ArtifactSpec) -> bool {
    let mt = a.media_type.to_ascii_lowercase();
    let path = a.path.to_ascii_lowercase();
    mt.starts_with("text/csv")
        || mt.starts_with("text/tab-separated-values")
        || path.ends_with(".csv")
        || path.ends_with(".tsv")
}

fn is_json(a: &ArtifactSpec) -> bool {
    a.media_type.to_ascii_lowercase().contains("json")
}

/// What a checked metric yields: one comparable value, or an object of named groups.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum MetricShape {
    Value,
    Groups,
}

fn check_metrics<'w>(
    c: &mut Checker<'_>,
    i: usize,
    wf: &'w Workflow,
) -> BTreeMap<&'w str, MetricShape> {
    let mut shapes = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for (j, m) in wf.metrics.iter().enumerate() {
        let at = |k| {
            [
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("metric"),
                Seg::Index(j),
                Seg::Key(k),
            ]
        };
        check_id(
            c,
            &at("id"),
            "metric",
            &m.id,
            &mut seen,
            " in this workflow",
            Some("requirements name metrics by id: give each its own"),
        );
        let artifact = match resolve_from(wf, &m.from) {
            Ok(a) => a,
            Err(e) => {
                c.error(
                    &at("from"),
                    e.to_string(),
                    Some("from = \"stdout\", \"stderr\" or an artifact id".into()),
                );
                continue;
            }
        };
        if let Some(a) = artifact
            && a.json_keys.contains(&m.id)
        {
            c.error(
                &at("id"),
                format!(
                    "reported.{}.{} is already the artifact's json_keys entry",
                    a.id, m.id
                ),
                Some("give the metric another id".into()),
            );
        }
        let Some(reader) = m.reader() else {
            let given = [&m.pattern, &m.column, &m.pointer]
                .iter()
                .filter(|v| v.is_some())
                .count();
            c.error(
                &at("id"),
                if given == 0 {
                    format!("metric '{}' says neither pattern, column nor pointer", m.id)
                } else {
                    format!(
                        "metric '{}' gives more than one of pattern, column, pointer",
                        m.id
                    )
                },
                Some("give exactly one: pattern (text), column (CSV/TSV) or pointer (JSON)".into()),
            );
            continue;
        };
        match reader {
            MetricReader::Pattern(p) => {
                if let Some(shape) = check_pattern(c, &at("pattern"), p) {
                    shapes.insert(m.id.as_str(), shape);
                }
            }
            MetricReader::Column(col) => {
                if col.is_empty() {
                    c.error(&at("column"), "column must name a header", None);
                }
                if !artifact.is_some_and(is_table) {
                    c.error(
                        &at("column"),
                        format!("column applies only to a CSV/TSV artifact; '{}' is not one", m.from),
                        Some(
                            "name an artifact with media_type \"text/csv\" or \"text/tab-separated-values\" (for a table on stdout, declare a base = \"stdout\" artifact with that media type and name its id)".into(),
                        ),
                    );
                }
                shapes.insert(m.id.as_str(), MetricShape::Value);
            }
            MetricReader::Pointer(p) => {
                if !p.is_empty() && !p.starts_with('/') {
                    c.error(
                        &at("pointer"),
                        format!("'{p}' is not a JSON pointer"),
                        Some("a JSON pointer starts with '/', e.g. \"/scores/0\"".into()),
                    );
                }
                if !artifact.is_some_and(is_json) {
                    c.error(
                        &at("pointer"),
                        format!(
                            "pointer applies only to a JSON artifact; '{}' is not one",
                            m.from
                        ),
                        Some("name an artifact whose media_type is JSON (application/json)".into()),
                    );
                }
                if m.all {
                    c.error(
                        &at("all"),
                        "all applies to pattern and column; a pointer names one value",
                        Some("point at the array itself to report every element".into()),
                    );
                }
                shapes.insert(m.id.as_str(), MetricShape::Value);
            }
        }
    }
    shapes
}

/// Compile `pattern` and say what it yields; `None` (reported) when unusable.
fn check_pattern(c: &mut Checker<'_>, at: &[Seg], pattern: &str) -> Option<MetricShape> {
    let re = match compile(pattern) {
        Ok(re) => re,
        Err(e) => {
            c.error(at, e.to_string(), None);
            return None;
        }
    };
    let names: Vec<&str> = re.capture_names().flatten().collect();
    if names.contains(&"value") {
        Some(MetricShape::Value)
    } else if names.is_empty() {
        c.error(
            at,
            "the pattern has no named group",
            Some(
                "capture the value as (?P<value>…), or name several groups for an object of values"
                    .into(),
            ),
        );
        None
    } else {
        Some(MetricShape::Groups)
    }
}

fn compile(pattern: &str) -> Result<regex::Regex, InvalidPattern> {
    crate::manifest::outputs::output_regex(pattern)
}

fn check_requires(
    c: &mut Checker<'_>,
    i: usize,
    wf: &Workflow,
    shapes: &BTreeMap<&str, MetricShape>,
) {
    for (j, r) in wf.requires.iter().enumerate() {
        let at = |k| {
            [
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("require"),
                Seg::Index(j),
                Seg::Key(k),
            ]
        };
        if let Some(msg) = &r.message
            && (msg.trim().is_empty() || msg.len() > MAX_MESSAGE)
        {
            c.error(
                &at("message"),
                format!("message must be 1 to {MAX_MESSAGE} characters"),
                None,
            );
        }
        let comparisons = r.comparisons();
        let Some(cmp) = r.comparison() else {
            let ops: Vec<&str> = comparisons.iter().map(Comparison::op).collect();
            c.error(
                &at("metric"),
                if ops.is_empty() {
                    "the requirement has no comparison".to_string()
                } else {
                    format!("the requirement has several comparisons ({})", ops.join(", "))
                },
                Some("give exactly one of lt, le, gt, ge, eq, matches (with metric) or absent, present (with from); write several [[workflow.require]] for several".into()),
            );
            continue;
        };
        match (&r.metric, &r.from) {
            (Some(_), Some(_)) | (None, None) => {
                c.error(
                    &at("metric"),
                    "a requirement names either a metric or a from",
                    Some("metric = \"<metric id>\" for lt/le/gt/ge/eq/matches; from = \"stdout\" | \"stderr\" | \"<artifact id>\" for absent/present".into()),
                );
                continue;
            }
            (Some(metric), None) => {
                if cmp.is_text_search() {
                    c.error(
                        &at(cmp.op()),
                        format!("{} searches a whole text: use from, not metric", cmp.op()),
                        Some(format!("e.g. from = \"stderr\", {} = '…'", cmp.op())),
                    );
                }
                match wf.metrics.iter().find(|m| &m.id == metric) {
                    None => c.error(
                        &at("metric"),
                        format!("metric '{metric}' is not declared in this workflow"),
                        Some("declare it with [[workflow.metric]]".into()),
                    ),
                    Some(m) => check_metric_shape(c, &at("metric"), m, shapes),
                }
            }
            (None, Some(from)) => {
                if !cmp.is_text_search() {
                    c.error(
                        &at(cmp.op()),
                        format!(
                            "{} compares a metric's value: use metric, not from",
                            cmp.op()
                        ),
                        Some("declare a [[workflow.metric]] reading the value and name it".into()),
                    );
                }
                if let Err(e) = resolve_from(wf, from) {
                    c.error(&at("from"), e.to_string(), None);
                }
            }
        }
        match cmp {
            Comparison::Matches(p) | Comparison::Absent(p) | Comparison::Present(p) => {
                if let Err(e) = compile(p) {
                    c.error(&at(cmp.op()), e.to_string(), None);
                }
            }
            Comparison::Lt(v)
            | Comparison::Le(v)
            | Comparison::Gt(v)
            | Comparison::Ge(v)
            | Comparison::Eq(v) => {
                if !v.is_finite() {
                    c.error(&at(cmp.op()), format!("{v} is not a finite number"), None);
                }
            }
        }
    }
}

fn check_metric_shape(
    c: &mut Checker<'_>,
    at: &[Seg],
    m: &MetricSpec,
    shapes: &BTreeMap<&str, MetricShape>,
) {
    if shapes.get(m.id.as_str()) == Some(&MetricShape::Groups) {
        c.error(
            at,
            format!(
                "metric '{}' yields an object of named groups, which cannot be compared",
                m.id
            ),
            Some("name the compared group `value` in its pattern".into()),
        );
    }
}

#[cfg(test)]
mod tests;
