//! What a workflow reads, from its manifest alone: a table (`{dataset}`, column features)
//! and the table's columns (a parameter marked as columns, a column filter in a template).
//! The dataset checks, the request's input checks and `list_datasets` all ask; this file
//! imports nothing of the crate.

use scimcp_core::manifest::COLUMN_KEYWORD;
use scimcp_core::{Template, Workflow};
use serde_json::Value;

/// Does `workflow` read a table? Yes when it uses `{dataset}` or column features, and
/// when it declares no named inputs (every workflow before named inputs took a dataset).
pub fn takes_dataset(workflow: &Workflow) -> bool {
    if uses_columns(workflow) {
        return true;
    }
    if workflow.inputs.is_empty() && workflow.reads_dataset != Some(false) {
        return true;
    }
    let mut texts: Vec<String> = workflow
        .argv
        .iter()
        .chain(&workflow.stdin)
        .chain(workflow.steps.iter().flat_map(|s| &s.argv))
        .cloned()
        .collect();
    for f in &workflow.input_files {
        collect_strings(&f.template, &mut texts);
    }
    texts
        .iter()
        .any(|t| Template::parse(t).is_ok_and(|t| t.placeholders().any(|p| p == "dataset")))
}

/// Does the workflow read the dataset's columns (a parameter marked as columns, or a column
/// filter in a template)?
pub fn uses_columns(workflow: &Workflow) -> bool {
    let marked = workflow
        .parameters_schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|props| props.values().any(|p| p.get(COLUMN_KEYWORD).is_some()));
    marked || {
        let mut texts: Vec<&str> = workflow
            .argv
            .iter()
            .chain(&workflow.stdin)
            .chain(
                workflow
                    .steps
                    .iter()
                    .flat_map(|s| s.argv.iter().chain(&s.stdin)),
            )
            .map(String::as_str)
            .collect();
        let mut strings = Vec::new();
        for f in &workflow.input_files {
            collect_strings(&f.template, &mut strings);
        }
        texts.extend(strings.iter().map(String::as_str));
        texts.iter().any(|t| {
            Template::parse(t).is_ok_and(|t| {
                t.placeholder_parts()
                    .any(|p| p.filters.iter().any(|f| f.needs_columns()))
            })
        })
    }
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}
