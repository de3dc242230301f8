//! Parity snapshots: each scenario's agreed evidence, checked in as an `insta` snapshot file
//! `parity/snapshots/parity__<scenario>.snap`.
//!
//! Why we write the files ourselves instead of calling `insta::assert_snapshot!`: insta's
//! assertion machinery is built for `#[test]` functions. It reports a mismatch by panicking,
//! decides between writing `.snap.new` files and failing from `INSTA_UPDATE`/`CI` in the
//! environment, and names snapshots after the calling test module. The gate must decide
//! for itself (`run` records, `check` never writes, `review` shows a diff), keep going after
//! one scenario drifts, and report every drift at the end. Insta's API to build and save a
//! snapshot outside its macros is crate-private or `#[doc(hidden)]`, so depending on it
//! would break on any insta upgrade.
//!
//! So this module writes insta's file format directly — a YAML metadata block between two
//! `---` lines, then the contents — which is small, documented and stable, and it reads
//! every snapshot back through insta's own public parser ([`insta::Snapshot::from_file`])
//! and compares by insta's own rule (see [`matches`]). A file
//! this module wrote is therefore a file insta (and `cargo insta review`) reads; the unit
//! test below proves the round trip. `review` writes `<name>.snap.new` pending files in the
//! same format (git-ignored), which `scimcp-parity run` or `cargo insta review` accepts.

use std::path::{Path, PathBuf};

use insta::Snapshot;
use scimcp_core::fs::{Privacy, write_atomic};

use crate::error::Error;

/// The module part of every snapshot name (`<module>__<name>.snap`, insta's convention).
pub const MODULE: &str = "parity";

/// `dir/parity__<name>.snap`.
pub fn path_for(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{MODULE}__{name}.snap"))
}

/// The pending file `review` writes beside a drifted snapshot.
pub fn pending_path_for(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{MODULE}__{name}.snap.new"))
}

/// The scenario names of every `parity__*.snap` in `dir` (empty when `dir` is missing).
pub fn recorded_names(dir: &Path) -> Result<Vec<String>, Error> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut names = Vec::new();
    for entry in fs_err::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let file = entry.file_name().to_string_lossy().into_owned();
        if let Some(name) = file
            .strip_prefix(&format!("{MODULE}__"))
            .and_then(|f| f.strip_suffix(".snap"))
        {
            names.push(name.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// What a snapshot header says about where the evidence came from.
#[derive(Debug, Clone)]
pub struct Header {
    /// The scenario file, relative to the workspace root when it lies inside it.
    pub source: String,
    /// The scenario's description.
    pub description: String,
}

/// The whole `.snap` file for `contents`.
pub fn render(header: &Header, contents: &str) -> String {
    format!(
        "---\nsource: {}\ndescription: {}\nexpression: {}\n---\n{}\n",
        yaml_string(&header.source),
        yaml_string(&header.description),
        yaml_string("parity evidence (direct CLI == MCP)"),
        contents.trim_end()
    )
}

/// A YAML scalar for `s`: plain when that is unambiguous, otherwise double-quoted with
/// JSON escapes (a JSON string is a valid YAML double-quoted scalar).
fn yaml_string(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '.'))
        && s.starts_with(|c: char| c.is_ascii_alphanumeric());
    if plain {
        s.to_string()
    } else {
        serde_json::Value::String(s.to_string()).to_string()
    }
}

/// Read the contents of the snapshot at `path` through insta's parser; `None` when the
/// file does not exist.
pub fn read_contents(path: &Path) -> Result<Option<String>, Error> {
    if !path.is_file() {
        return Ok(None);
    }
    let snapshot = Snapshot::from_file(path).map_err(|e| {
        Error::usage(
            format!("{} is not a readable insta snapshot: {e}", path.display()),
            "delete it and record it again with `scimcp-parity run`",
        )
    })?;
    // Display of a text snapshot is insta's normalized form of its contents.
    match snapshot.as_text() {
        Some(text) => Ok(Some(text.to_string())),
        None => Err(Error::usage(
            format!(
                "{} is a binary insta snapshot; parity snapshots are text",
                path.display()
            ),
            "delete it and run `scimcp-parity run`",
        )),
    }
}

/// The snapshot text of `evidence`: JSON with a stable field and key order, indented, with
/// every array of plain values on one line (a CSV row, a confusion-matrix row), so a table
/// reads as a table and a changed cell shows as one changed line in a diff.
pub fn evidence_text(evidence: &crate::evidence::Evidence) -> String {
    let value = serde_json::to_value(evidence).expect("evidence serializes");
    let mut out = String::new();
    write_value(&mut out, &value, 0);
    out
}

/// The order fields of evidence are written in; other keys (metrics, JSON artifacts) keep
/// their sorted order after these.
const FIELD_ORDER: &[&str] = &[
    "format",
    "adapter",
    "workflow",
    "state",
    "exit_code",
    "signal",
    "error_line",
    "process_tree_ended",
    "path",
    "sha256",
    "normalized",
    "compare",
    "artifacts",
    "metrics",
    "recorded_on",
];

fn write_value(out: &mut String, value: &serde_json::Value, indent: usize) {
    use serde_json::Value;
    let pad = |n: usize| "  ".repeat(n);
    match value {
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) if items.iter().all(|v| !v.is_array() && !v.is_object()) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&item.to_string());
            }
            out.push(']');
        }
        Value::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad(indent + 1));
                write_value(out, item, indent + 1);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(indent));
            out.push(']');
        }
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            out.push_str("{\n");
            // serde_json's map is sorted; put the evidence's fields back in reading order.
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by_key(|k| {
                FIELD_ORDER
                    .iter()
                    .position(|f| f == k)
                    .unwrap_or(FIELD_ORDER.len())
            });
            for (i, key) in keys.into_iter().enumerate() {
                let item = &map[key];
                out.push_str(&pad(indent + 1));
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_value(out, item, indent + 1);
                out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(indent));
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Write `text` to `path` atomically, creating the directory.
pub fn write(path: &Path, text: &str) -> Result<(), Error> {
    if let Some(parent) = path.parent() {
        fs_err::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    write_atomic(path, text.as_bytes(), Privacy::KeepExisting).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// A unified diff from the recorded contents to the current ones, for humans.
pub fn unified_diff(name: &str, recorded: &str, current: &str) -> String {
    similar::TextDiff::from_lines(recorded, current)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{name} (snapshot)"), &format!("{name} (this run)"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_files_read_back_through_insta() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_for(dir.path(), "regression_ridge");
        let header = Header {
            source: "parity/scenarios/regression_ridge.toml".into(),
            description: "Ridge: \"alpha\" 0.5 — données: diabetes".into(),
        };
        let contents = "{\n  \"state\": \"succeeded\",\n  \"exit_code\": 0\n}";
        write(&path, &render(&header, contents)).unwrap();
        let snapshot = Snapshot::from_file(&path).unwrap();
        assert_eq!(snapshot.module_name(), MODULE);
        assert_eq!(snapshot.snapshot_name(), Some("regression_ridge"));
        assert_eq!(
            snapshot.metadata().source(),
            Some("parity/scenarios/regression_ridge.toml")
        );
        assert_eq!(
            snapshot.metadata().description(),
            Some(header.description.as_str())
        );
        let read = read_contents(&path).unwrap().unwrap();
        assert_eq!(read, contents);
        assert_eq!(recorded_names(dir.path()).unwrap(), ["regression_ridge"]);
    }

    #[test]
    fn missing_snapshots_read_as_none_and_diffs_name_both_sides() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_contents(&path_for(dir.path(), "x")).unwrap(), None);
        let d = unified_diff("x", "a\nb\n", "a\nc\n");
        assert!(
            d.contains("-b") && d.contains("+c") && d.contains("x (snapshot)"),
            "{d}"
        );
    }
}
