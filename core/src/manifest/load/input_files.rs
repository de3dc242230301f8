//! `[[workflow.input_file]]`: files written into the run directory from a template, each at
//! its own relative path.

use std::collections::BTreeSet;

use super::checker::{Checker, Seg};
use super::names::is_safe_relative;
use crate::manifest::types::{InputFileFormat, Workflow};

/// Each input file's path is relative, inside the run directory and declared once; a text
/// file's template is a string.
pub(super) fn check_input_files(c: &mut Checker<'_>, i: usize, wf: &Workflow) {
    let mut paths = BTreeSet::new();
    for (j, f) in wf.input_files.iter().enumerate() {
        let path = [
            Seg::Key("workflow"),
            Seg::Index(i),
            Seg::Key("input_file"),
            Seg::Index(j),
            Seg::Key("path"),
        ];
        if !is_safe_relative(&f.path) {
            c.error(
                &path,
                format!(
                    "'{}' must be a relative path inside the run directory",
                    f.path
                ),
                None,
            );
        } else if !paths.insert(f.path.clone()) {
            c.error(
                &path,
                format!("input file '{}' is declared twice", f.path),
                None,
            );
        }
        if f.format == InputFileFormat::Text && !f.template.is_string() {
            let path = [
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("input_file"),
                Seg::Index(j),
                Seg::Key("template"),
            ];
            c.error(&path, "a text input file's template must be a string", None);
        }
    }
}

/// Every string of an input file's template (its placeholders may sit at any depth).
pub(super) fn collect_strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}
