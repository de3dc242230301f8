//! A workflow's `parameters`: its JSON Schema file, read, parsed and held to the suite's
//! rules (a strict object schema that compiles, parameter names that are not run values),
//! with a warning for each free-form object below the top level.

use std::collections::BTreeSet;

use super::checker::{Checker, Problem, Seg};
use super::columns::column_rule_problems;
use super::files::Files;
use super::names::is_safe_relative;
use crate::manifest::error::ManifestError;
use crate::manifest::template::{RUN_VALUES, is_placeholder_name};
use crate::manifest::types::{COLUMN_KEYWORD, Manifest};

pub(super) fn load_schemas(c: &mut Checker<'_>, m: &mut Manifest, files: &Files<'_>) {
    for (i, wf) in m.workflows.iter_mut().enumerate() {
        if !is_safe_relative(&wf.parameters) {
            continue;
        }
        let path = [Seg::Key("workflow"), Seg::Index(i), Seg::Key("parameters")];
        let schema_file = files.display(&wf.parameters);
        let text = match files.read(&wf.parameters) {
            Ok(t) => t,
            Err(reason) => {
                c.error(
                    &path,
                    format!(
                        "cannot read the parameter schema {}: {reason}",
                        schema_file.display()
                    ),
                    Some("the path is relative to the manifest's directory".into()),
                );
                continue;
            }
        };
        let schema: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                c.errors.push(ManifestError {
                    file: schema_file,
                    line: Some(e.line()),
                    column: Some(e.column()),
                    field: String::new(),
                    message: format!("not valid JSON: {e}"),
                    hint: None,
                });
                continue;
            }
        };
        // An embedded adapter's schemas are compiled (and checked against the JSON Schema
        // meta-schema) by core's tests rather than at every server start, where building the
        // meta-schema validator alone was a sixth of the start. The server compiles each one
        // on its first request.
        let compile = !c.embedded;
        for problem in schema_problems(&schema, compile) {
            c.errors.push(ManifestError {
                file: schema_file.clone(),
                line: None,
                column: None,
                field: problem.0,
                message: problem.1,
                hint: problem.2,
            });
        }
        let mut free = Vec::new();
        free_form_objects(&schema, "", &mut free);
        for pointer in free {
            c.warnings.push(ManifestError {
                file: schema_file.clone(),
                line: None,
                column: None,
                field: pointer,
                message: "a free-form object: any key and value a client sends reaches the CLI (a path, a cache directory, a callable's name)".into(),
                hint: Some("declare the keys the CLI may take, each typed and bounded, with \"additionalProperties\": false".into()),
            });
        }
        wf.parameters_schema = schema;
    }
}

/// JSON pointers of the object schemas below the top level that accept keys nobody named:
/// no `"additionalProperties": false`, or `patternProperties`. (`if`/`then` rules that only
/// narrow an object already closed above are not counted.)
fn free_form_objects(schema: &serde_json::Value, pointer: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    let Value::Object(map) = schema else { return };
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        None => map.contains_key("properties") || map.contains_key("additionalProperties"),
        _ => false,
    };
    if !pointer.is_empty()
        && is_object
        && (map.get("additionalProperties") != Some(&Value::Bool(false))
            || map.contains_key("patternProperties"))
    {
        out.push(pointer.to_string());
    }
    for key in ["properties", "$defs", "definitions"] {
        if let Some(Value::Object(children)) = map.get(key) {
            for (name, child) in children {
                free_form_objects(child, &format!("{pointer}/{key}/{name}"), out);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child @ Value::Object(_)) = map.get(key) {
            free_form_objects(child, &format!("{pointer}/{key}"), out);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = map.get(key) {
            for (i, child) in children.iter().enumerate() {
                free_form_objects(child, &format!("{pointer}/{key}/{i}"), out);
            }
        }
    }
}

/// What makes a parameter schema unusable: it must be a strict object schema that compiles.
/// `compile`: also compile the schema (which checks it against its meta-schema first).
pub(super) fn schema_problems(schema: &serde_json::Value, compile: bool) -> Vec<Problem> {
    let mut out: Vec<Problem> = Vec::new();
    let Some(obj) = schema.as_object() else {
        out.push((
            String::new(),
            "the schema must be a JSON object".into(),
            None,
        ));
        return out;
    };
    if obj.get("type").and_then(|t| t.as_str()) != Some("object") {
        out.push((
            "/type".into(),
            "the schema must have \"type\": \"object\"".into(),
            None,
        ));
    }
    if obj.get("additionalProperties") != Some(&serde_json::Value::Bool(false)) {
        out.push((
            "/additionalProperties".into(),
            "the schema must be strict: \"additionalProperties\": false".into(),
            Some("strict schemas make unknown parameters fail before any process starts".into()),
        ));
    }
    let props = obj.get("properties").and_then(|p| p.as_object());
    if let Some(props) = props {
        for name in props.keys() {
            if !is_placeholder_name(name) {
                out.push((
                    format!("/properties/{name}"),
                    format!("parameter name '{name}' must be lower-case letters, digits and '_'"),
                    None,
                ));
            }
            if RUN_VALUES.contains(&name.as_str()) {
                out.push((
                    format!("/properties/{name}"),
                    format!(
                        "'{name}' is a run value the server fills in; it cannot be a parameter"
                    ),
                    None,
                ));
            }
        }
        for (name, prop) in props {
            if let Some(rule) = prop.get(COLUMN_KEYWORD) {
                out.extend(column_rule_problems(name, prop, rule));
            }
        }
    }
    if let Some(required) = obj.get("required").and_then(|r| r.as_array()) {
        for r in required {
            let name = r.as_str().unwrap_or_default();
            if props.is_none_or(|p| !p.contains_key(name)) {
                out.push((
                    "/required".into(),
                    format!("required parameter '{name}' is not among the properties"),
                    None,
                ));
            }
        }
    }
    if let Some(e) = compile
        .then(|| jsonschema::validator_for(schema).err())
        .flatten()
    {
        out.push((
            e.instance_path().to_string(),
            format!("the schema does not compile: {e}"),
            None,
        ));
    }
    out
}

/// Properties of a workflow's schema and the ones it requires.
pub(super) fn schema_params(schema: &serde_json::Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let props = schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let required = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    (props, required)
}
