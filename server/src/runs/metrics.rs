//! `[[workflow.metric]]`: values read after the run from its stdout, stderr or an artifact
//! into `reported[<from>][<id>]` — a pattern over text, a column of a CSV/TSV table, or a
//! JSON pointer. Text is read line by line (each line up to [`MAX_LINE`] bytes), so any
//! size of output is read in bounded memory and linear time. A metric that finds nothing
//! is a problem of the run (`missing metric: …`), never a crash.

use std::io::{BufRead, BufReader};
use std::path::Path;

use scimcp_core::manifest::{MetricReader, MetricSpec, output_regex};
use serde_json::{Map, Value};

use super::artifacts::Collected;
use super::state::ArtifactProblem;
use super::stream_copy::source_path;
use crate::plan::Plan;

/// Longest line a pattern sees; the rest of a longer line is not searched.
pub(super) const MAX_LINE: usize = 64 * 1024;
/// Largest JSON artifact a pointer reads.
const MAX_JSON_BYTES: u64 = 16 * 1024 * 1024;
/// Most values one `all` metric reports.
const MAX_VALUES: usize = 10_000;

/// Why a metric found no value: the run's problem `missing metric: …`, naming the file as
/// the client knows it and what was looked for.
#[derive(Debug, thiserror::Error)]
pub(super) enum MetricError {
    #[error("'{0}' is not an artifact of this workflow")]
    NotAnArtifact(String),
    #[error("the metric says neither pattern, column nor pointer")]
    NoReader,
    #[error(transparent)]
    File(#[from] OutputFileError),
    /// The pattern does not compile, as core's regex check says it.
    #[error("{0}")]
    Pattern(String),
    #[error("no line of {shown} matches '{pattern}'")]
    NoMatch { shown: String, pattern: String },
    #[error("cannot read the header of {shown}: {source}")]
    Header { shown: String, source: csv::Error },
    #[error("{shown} has no column '{column}' (its header: {header})")]
    NoColumn {
        shown: String,
        column: String,
        /// The first 20 column names, comma-separated.
        header: String,
    },
    #[error("cannot read row {row} of {shown}: {source}")]
    Row {
        shown: String,
        row: usize,
        source: csv::Error,
    },
    #[error("column '{column}' of {shown} is empty in the first row")]
    EmptyFirstRow { shown: String, column: String },
    #[error("{shown} has a header but no rows")]
    NoRows { shown: String },
    #[error("cannot read {shown}: {source}")]
    ReadJson {
        shown: String,
        source: scimcp_core::fs::ReadError,
    },
    #[error(
        "{shown} was not written, is not a regular file or is larger than {max} bytes",
        max = MAX_JSON_BYTES
    )]
    NoJson { shown: String },
    #[error("{shown} is not valid JSON: {source}")]
    InvalidJson {
        shown: String,
        source: serde_json::Error,
    },
    #[error("{shown} has no value at {pointer}")]
    NoValueAt { shown: String, pointer: String },
}

/// Why a file the run left cannot be read line by line.
#[derive(Debug, thiserror::Error)]
pub(super) enum OutputFileError {
    #[error("{shown} was not written")]
    NotWritten { shown: String },
    #[error("{shown} is not a regular file")]
    NotRegular { shown: String },
    #[error("cannot read {shown}: {source}")]
    Unreadable {
        shown: String,
        source: std::io::Error,
    },
}

/// Read every metric of `plan` into `out.reported`, each failure into `out.problems`.
pub(super) fn read_metrics(plan: &Plan, work: &Path, out: &mut Collected) {
    for m in &plan.metrics {
        match read_metric(plan, work, m, &mut out.skipped) {
            Ok(value) => {
                out.reported
                    .entry(m.from.clone())
                    .or_default()
                    .insert(m.id.clone(), value);
            }
            Err(why) => out.problems.push(ArtifactProblem {
                id: m.id.clone(),
                path: m.from.clone(),
                problem: format!("missing metric: {why}"),
            }),
        }
    }
}

fn read_metric(
    plan: &Plan,
    work: &Path,
    m: &MetricSpec,
    notes: &mut Vec<String>,
) -> Result<Value, MetricError> {
    let path = source_path(plan, work, &m.from)
        .ok_or_else(|| MetricError::NotAnArtifact(m.from.clone()))?;
    let shown = shown_path(work, &path);
    let mut values = match m.reader() {
        Some(MetricReader::Pattern(p)) => by_pattern(&path, &shown, p, m.all)?,
        Some(MetricReader::Column(c)) => by_column(&path, &shown, c, m.all, is_tsv(plan, m))?,
        Some(MetricReader::Pointer(p)) => return by_pointer(&path, &shown, p),
        None => return Err(MetricError::NoReader),
    };
    if !m.all {
        return Ok(values.swap_remove(0));
    }
    if values.len() > MAX_VALUES {
        notes.push(format!(
            "metric {}: {} values, the first {MAX_VALUES} reported",
            m.id,
            values.len()
        ));
        values.truncate(MAX_VALUES);
    }
    Ok(Value::Array(values))
}

/// `path` as a client knows it: relative to the working directory.
fn shown_path(work: &Path, path: &Path) -> String {
    path.strip_prefix(work)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn is_tsv(plan: &Plan, m: &MetricSpec) -> bool {
    plan.artifacts.iter().any(|a| {
        a.id == m.from
            && (a.media_type.starts_with("text/tab-separated-values")
                || a.path.to_ascii_lowercase().ends_with(".tsv"))
    })
}

/// Open a regular file the run left, never through a link (a CLI could point one anywhere).
fn open_regular(path: &Path, shown: &str) -> Result<fs_err::File, OutputFileError> {
    let shown = || shown.to_string();
    match fs_err::symlink_metadata(path) {
        Err(_) => Err(OutputFileError::NotWritten { shown: shown() }),
        Ok(meta) if !meta.is_file() => Err(OutputFileError::NotRegular { shown: shown() }),
        Ok(_) => fs_err::File::open(path).map_err(|source| OutputFileError::Unreadable {
            shown: shown(),
            source,
        }),
    }
}

/// Call `f` with each line (without its end, at most [`MAX_LINE`] bytes, invalid UTF-8
/// replaced) and its 1-based number until `f` returns false.
pub(super) fn for_each_line(
    path: &Path,
    shown: &str,
    mut f: impl FnMut(usize, &str) -> bool,
) -> Result<(), OutputFileError> {
    let mut reader = BufReader::with_capacity(64 * 1024, open_regular(path, shown)?);
    let mut line: Vec<u8> = Vec::new();
    let mut number = 0;
    loop {
        let buf = reader
            .fill_buf()
            .map_err(|source| OutputFileError::Unreadable {
                shown: shown.to_string(),
                source,
            })?;
        if buf.is_empty() {
            if !line.is_empty() {
                number += 1;
                f(number, &String::from_utf8_lossy(&line));
            }
            return Ok(());
        }
        let (take, ends) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&buf[..take.min(room)]);
        reader.consume(take);
        if ends {
            number += 1;
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            if !f(number, &String::from_utf8_lossy(&line)) {
                return Ok(());
            }
            line.clear();
        }
    }
}

fn by_pattern(
    path: &Path,
    shown: &str,
    pattern: &str,
    all: bool,
) -> Result<Vec<Value>, MetricError> {
    let re = output_regex(pattern).map_err(|e| MetricError::Pattern(e.to_string()))?;
    let single = re.capture_names().flatten().any(|n| n == "value");
    let names: Vec<String> = re.capture_names().flatten().map(str::to_string).collect();
    let mut values = Vec::new();
    for_each_line(path, shown, |_, line| {
        for caps in re.captures_iter(line) {
            let value = if single {
                match caps.name("value") {
                    Some(m) => scalar(m.as_str()),
                    None => continue,
                }
            } else {
                let groups: Map<String, Value> = names
                    .iter()
                    .filter_map(|n| caps.name(n).map(|m| (n.clone(), scalar(m.as_str()))))
                    .collect();
                Value::Object(groups)
            };
            values.push(value);
            if !all || values.len() > MAX_VALUES {
                return false;
            }
        }
        true
    })?;
    if values.is_empty() {
        return Err(MetricError::NoMatch {
            shown: shown.to_string(),
            pattern: pattern.to_string(),
        });
    }
    Ok(values)
}

fn by_column(
    path: &Path,
    shown: &str,
    column: &str,
    all: bool,
    tsv: bool,
) -> Result<Vec<Value>, MetricError> {
    let file = open_regular(path, shown)?;
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(if tsv { b'\t' } else { b',' })
        .flexible(true)
        .from_reader(file);
    let headers = reader
        .headers()
        .map_err(|source| MetricError::Header {
            shown: shown.to_string(),
            source,
        })?
        .clone();
    let Some(index) = headers.iter().position(|h| h.trim() == column) else {
        let names: Vec<&str> = headers.iter().map(str::trim).take(20).collect();
        return Err(MetricError::NoColumn {
            shown: shown.to_string(),
            column: column.to_string(),
            header: names.join(", "),
        });
    };
    let mut values = Vec::new();
    for (row, record) in reader.records().enumerate() {
        let record = record.map_err(|source| MetricError::Row {
            shown: shown.to_string(),
            row: row + 1,
            source,
        })?;
        let cell = record.get(index).unwrap_or("").trim();
        if !all {
            if cell.is_empty() {
                return Err(MetricError::EmptyFirstRow {
                    shown: shown.to_string(),
                    column: column.to_string(),
                });
            }
            return Ok(vec![scalar(cell)]);
        }
        values.push(if cell.is_empty() {
            Value::Null
        } else {
            scalar(cell)
        });
        if values.len() > MAX_VALUES {
            break;
        }
    }
    if values.is_empty() {
        return Err(MetricError::NoRows {
            shown: shown.to_string(),
        });
    }
    Ok(values)
}

fn by_pointer(path: &Path, shown: &str, pointer: &str) -> Result<Value, MetricError> {
    let shown = || shown.to_string();
    let bytes = scimcp_core::fs::read_regular(path, MAX_JSON_BYTES)
        .map_err(|source| MetricError::ReadJson {
            shown: shown(),
            source,
        })?
        .ok_or_else(|| MetricError::NoJson { shown: shown() })?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|source| MetricError::InvalidJson {
        shown: shown(),
        source,
    })?;
    doc.pointer(pointer)
        .filter(|v| !v.is_null())
        .cloned()
        .ok_or_else(|| MetricError::NoValueAt {
            shown: shown(),
            pointer: pointer.to_string(),
        })
}

/// A captured text as JSON: an integer or a finite number when it reads as one (so
/// requirements and campaign tables compare numbers), otherwise the text.
pub(super) fn scalar(text: &str) -> Value {
    let t = text.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(f) = t.parse::<f64>()
        && let Some(n) = serde_json::Number::from_f64(f)
    {
        return Value::Number(n);
    }
    Value::String(t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::stream_copy::tests::plan_with;
    use scimcp_core::manifest::{ArtifactBase, ArtifactSpec};
    use serde_json::json;

    fn artifact(id: &str, path: &str, media_type: &str, base: ArtifactBase) -> ArtifactSpec {
        toml::from_str::<ArtifactSpec>(&format!(
            "id = '{id}'\npath = '{path}'\nmedia_type = '{media_type}'"
        ))
        .map(|mut a| {
            a.base = base;
            a
        })
        .unwrap()
    }

    fn metric(text: &str) -> MetricSpec {
        toml::from_str(text).unwrap()
    }

    /// A run directory whose stdout copy is `stdout`, with a TSV, a CSV and a JSON artifact.
    fn run(stdout: &str, metrics: &[&str]) -> (tempfile::TempDir, Collected) {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path();
        fs_err::create_dir_all(work.join("output")).unwrap();
        fs_err::write(work.join("output/out.txt"), stdout).unwrap();
        fs_err::write(
            work.join("output/scores.tsv"),
            "pose\taffinity\trmsd\n1\t-7.5\t0\n2\t-6.25\t1.5\n3\t\t2\n",
        )
        .unwrap();
        fs_err::write(work.join("output/t.csv"), "name,score\nx,abc\n").unwrap();
        fs_err::write(
            work.join("output/m.json"),
            r#"{"r2": 0.5, "fit": {"n": 3, "label": "ok"}}"#,
        )
        .unwrap();
        let mut plan = plan_with(
            vec![
                artifact("out", "out.txt", "text/plain", ArtifactBase::Stdout),
                artifact(
                    "scores",
                    "scores.tsv",
                    "text/tab-separated-values",
                    ArtifactBase::Output,
                ),
                artifact("table", "t.csv", "text/csv", ArtifactBase::Output),
                artifact("m", "m.json", "application/json", ArtifactBase::Output),
            ],
            &[],
        );
        plan.metrics = metrics.iter().map(|m| metric(m)).collect();
        let mut out = Collected::default();
        read_metrics(&plan, work, &mut out);
        (dir, out)
    }

    const VINA: &str = "mode |   affinity | dist from best mode\n-----+------------+\n   1       -7.123      0.000\n   2       -6.5        1.2\n";

    #[test]
    fn pattern_reads_the_first_match_as_a_number_or_every_match_with_all() {
        let (_d, out) = run(
            VINA,
            &[
                "id = 'best'\nfrom = 'stdout'\npattern = '^\\s+1\\s+(?P<value>-?\\d+(\\.\\d+)?)'",
                "id = 'every'\nfrom = 'stdout'\npattern = '^\\s+\\d+\\s+(?P<value>\\S+)'\nall = true",
                "id = 'head'\nfrom = 'out'\npattern = '^mode \\|\\s+(?P<value>\\w+)'",
                "id = 'row'\nfrom = 'stdout'\npattern = '^\\s+(?P<mode>\\d+)\\s+(?P<affinity>\\S+)'",
            ],
        );
        assert!(out.problems.is_empty(), "{:?}", out.problems);
        assert_eq!(out.reported["stdout"]["best"], json!(-7.123));
        assert_eq!(out.reported["stdout"]["every"], json!([-7.123, -6.5]));
        assert_eq!(out.reported["out"]["head"], json!("affinity"));
        assert_eq!(
            out.reported["stdout"]["row"],
            json!({"mode": 1, "affinity": -7.123})
        );
    }

    #[test]
    fn column_reads_the_first_row_or_every_row() {
        let (_d, out) = run(
            "",
            &[
                "id = 'affinity'\nfrom = 'scores'\ncolumn = 'affinity'",
                "id = 'all_aff'\nfrom = 'scores'\ncolumn = 'affinity'\nall = true",
                "id = 'rmsd'\nfrom = 'scores'\ncolumn = 'rmsd'\nall = true",
                "id = 'score'\nfrom = 'table'\ncolumn = 'score'",
            ],
        );
        assert!(out.problems.is_empty(), "{:?}", out.problems);
        assert_eq!(out.reported["scores"]["affinity"], json!(-7.5));
        assert_eq!(
            out.reported["scores"]["all_aff"],
            json!([-7.5, -6.25, null])
        );
        assert_eq!(out.reported["scores"]["rmsd"], json!([0, 1.5, 2]));
        assert_eq!(out.reported["table"]["score"], json!("abc"));
    }

    #[test]
    fn pointer_reads_a_json_value() {
        let (_d, out) = run(
            "",
            &[
                "id = 'r2'\nfrom = 'm'\npointer = '/r2'",
                "id = 'fit'\nfrom = 'm'\npointer = '/fit'",
            ],
        );
        assert!(out.problems.is_empty(), "{:?}", out.problems);
        assert_eq!(out.reported["m"]["r2"], json!(0.5));
        assert_eq!(out.reported["m"]["fit"], json!({"n": 3, "label": "ok"}));
    }

    #[test]
    fn a_metric_that_finds_nothing_is_a_problem_naming_it() {
        let (_d, out) = run(
            "nothing here\n",
            &[
                "id = 'a'\nfrom = 'stdout'\npattern = '(?P<value>\\d+)'",
                "id = 'b'\nfrom = 'scores'\ncolumn = 'energy'",
                "id = 'c'\nfrom = 'm'\npointer = '/missing'",
                "id = 'd'\nfrom = 'stderr'\npattern = '(?P<value>\\d+)'",
            ],
        );
        assert!(out.reported.is_empty(), "{:?}", out.reported);
        let problems: Vec<String> = out
            .problems
            .iter()
            .map(|p| format!("{} {}: {}", p.id, p.path, p.problem))
            .collect();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert_eq!(
            problems[0],
            "a stdout: missing metric: no line of output/out.txt matches '(?P<value>\\d+)'"
        );
        assert!(
            problems[1].contains("has no column 'energy' (its header: pose, affinity, rmsd)"),
            "{}",
            problems[1]
        );
        assert!(
            problems[2].contains("output/m.json has no value at /missing"),
            "{}",
            problems[2]
        );
        assert!(
            problems[3].contains(".scimcp/streams/stderr was not written"),
            "{}",
            problems[3]
        );
    }

    #[test]
    fn long_lines_are_cut_and_numbered_lines_read_in_bounded_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let long = "x".repeat(MAX_LINE * 3);
        fs_err::write(&path, format!("a\r\n{long}\nlast")).unwrap();
        let mut seen = Vec::new();
        for_each_line(&path, "t", |n, l| {
            seen.push((n, l.len()));
            true
        })
        .unwrap();
        assert_eq!(seen, vec![(1, 1), (2, MAX_LINE), (3, 4)]);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("secret");
        fs_err::write(&target, "42\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(
            by_pattern(&link, "link", "(?P<value>\\d+)", false)
                .unwrap_err()
                .to_string(),
            "link is not a regular file"
        );
    }

    #[test]
    fn scalars_become_numbers_only_when_they_read_as_finite_numbers() {
        assert_eq!(scalar(" 3 "), json!(3));
        assert_eq!(scalar("-1.5e2"), json!(-150.0));
        assert_eq!(scalar("nan"), json!("nan"));
        assert_eq!(scalar("inf"), json!("inf"));
        assert_eq!(scalar("ok"), json!("ok"));
    }
}
