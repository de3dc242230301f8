//! The structural pass over a manifest that serde refused: every unknown key, wrong type,
//! unknown variant and missing required key at once, each placed at its file:line:column,
//! instead of serde's first error only (three rounds to see three mistakes).
//!
//! The rules come from the manifest types themselves: a JSON Schema derived from
//! [`Manifest`] (`schemars`, the same serde attributes deserialization obeys), validated
//! against the document converted to JSON. So a key another change adds is known here the
//! moment its type derives `JsonSchema`, which the derive on `Manifest` makes a compile-time
//! requirement of every type a manifest holds. Serde stays the authority: this pass only runs
//! after serde refused the text, and serde's own error is kept when the schema missed it.

use std::sync::OnceLock;

use serde_json::Value;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::manifest::error::{ManifestError, line_col};
use crate::manifest::types::Manifest;

const HINT: &str =
    "see docs/adapter-manifest.md for every key, its type and whether it is required";

/// The manifest types' schema, compiled once.
fn validator() -> Option<&'static (Value, jsonschema::Validator)> {
    static SCHEMA: OnceLock<Option<(Value, jsonschema::Validator)>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let schema = manifest_schema();
            match jsonschema::validator_for(&schema) {
                Ok(v) => Some((schema, v)),
                // Core's tests compile it; a release never gets here.
                Err(_) => None,
            }
        })
        .as_ref()
}

/// The JSON Schema of a manifest as serde reads it, every subschema inline. TOML has no
/// null, so the `null` alternatives schemars gives `Option` fields are dropped: a wrong value
/// of an optional table is then reported inside it, not as "matches no alternative".
pub(super) fn manifest_schema() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<Manifest>();
    let mut value = schema.to_value();
    drop_null(&mut value);
    value
}

fn drop_null(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            for key in ["anyOf", "oneOf"] {
                let Some(Value::Array(branches)) = map.get_mut(key) else {
                    continue;
                };
                branches.retain(|b| b.get("type").is_none_or(|t| t != "null"));
                if branches.len() == 1 {
                    let Some(Value::Object(only)) = branches.pop() else {
                        continue;
                    };
                    map.remove(key);
                    for (k, val) in only {
                        map.entry(k).or_insert(val);
                    }
                }
            }
            map.values_mut().for_each(drop_null);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null),
        _ => {}
    }
}

/// One step of a path into the document.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

fn field_of(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Every structural problem of `text` (valid TOML that serde refused with `first`), in
/// document order; `first` is among them.
pub(super) fn every_problem(
    text: &str,
    file: &std::path::Path,
    first: ManifestError,
) -> Vec<ManifestError> {
    let Some((schema, validator)) = validator() else {
        return vec![first];
    };
    let Ok(table) = text.parse::<toml::Table>() else {
        return vec![first];
    };
    let Ok(instance) = serde_json::to_value(&table) else {
        return vec![first];
    };
    let doc = DeTable::parse(text).ok();
    let place = |path: &[Step], key: bool| -> (Option<usize>, Option<usize>) {
        let span = doc.as_ref().and_then(|d| span_of(d, path, key));
        match span {
            Some(s) => {
                let (l, c) = line_col(text, s.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        }
    };
    let mut out: Vec<ManifestError> = Vec::new();
    for e in validator.iter_errors(&instance) {
        let at = steps(&instance, &e.instance_path().to_string());
        for (path, message, key) in describe(&e, &at, schema) {
            let (line, column) = place(&path, key);
            out.push(ManifestError {
                file: file.to_path_buf(),
                line,
                column,
                field: field_of(&path),
                message,
                hint: Some(HINT.into()),
            });
        }
    }
    // Serde's own words for the problem it found, so the first error reads as it always did.
    match out.iter_mut().find(|e| e.field == first.field) {
        Some(same) => *same = first,
        None => out.push(first),
    }
    out.sort_by_key(|e| (e.line.unwrap_or(usize::MAX), e.column.unwrap_or(0)));
    out.dedup_by(|a, b| a.field == b.field && a.message == b.message);
    out
}

/// The document path of a JSON pointer: a segment is an index where the value is an array.
fn steps(instance: &Value, pointer: &str) -> Vec<Step> {
    let mut out = Vec::new();
    let mut at = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        match at {
            Some(Value::Array(items)) => {
                let i = seg.parse().unwrap_or(usize::MAX);
                at = items.get(i);
                out.push(Step::Index(i));
            }
            Some(Value::Object(map)) => {
                at = map.get(&seg);
                out.push(Step::Key(seg));
            }
            _ => {
                at = None;
                out.push(Step::Key(seg));
            }
        }
    }
    out
}

/// The schema that describes the value at `path`, following properties, maps, items and the
/// first alternative that has the step.
fn schema_at<'s>(schema: &'s Value, path: &[Step]) -> Option<&'s Value> {
    let Some((step, rest)) = path.split_first() else {
        return Some(schema);
    };
    let direct = match step {
        Step::Key(k) => schema
            .get("properties")
            .and_then(|p| p.get(k))
            .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object())),
        Step::Index(_) => schema.get("items"),
    };
    if let Some(next) = direct {
        return schema_at(next, rest);
    }
    ["anyOf", "oneOf", "allOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten()
        .find_map(|branch| schema_at(branch, path))
}

/// The values an enum-like schema allows (`enum`, or alternatives of `const`).
fn variants(schema: &Value) -> Vec<String> {
    let word = |v: &Value| {
        v.as_str()
            .map_or_else(|| v.to_string(), |s| format!("`{s}`"))
    };
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().map(word).collect();
    }
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten()
        .flat_map(|b| {
            b.get("const")
                .map(|c| vec![word(c)])
                .unwrap_or_else(|| variants(b))
        })
        .collect()
}

fn keys(schema: &Value) -> Vec<String> {
    let mut out: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(|k| format!("`{k}`")).collect())
        .unwrap_or_default();
    for k in ["anyOf", "oneOf", "allOf"] {
        for b in schema
            .get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.extend(keys(b));
        }
    }
    out
}

/// What a TOML user calls the kind of `v`.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

fn expected_kind(t: &str) -> String {
    match t {
        "object" => "a table".into(),
        "array" => "an array".into(),
        "integer" => "an integer".into(),
        "number" => "a number".into(),
        "boolean" => "a boolean".into(),
        "string" => "a string".into(),
        other => other.to_string(),
    }
}

fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

/// The problems one validation error stands for: (path, message, place at the key).
fn describe(
    e: &jsonschema::ValidationError<'_>,
    at: &[Step],
    schema: &Value,
) -> Vec<(Vec<Step>, String, bool)> {
    use jsonschema::error::{TypeKind, ValidationErrorKind as K};
    let here = schema_at(schema, at);
    let instance = e.instance();
    match e.kind() {
        K::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|name| {
                let mut path = at.to_vec();
                path.push(Step::Key(name.clone()));
                let allowed = here.map(keys).unwrap_or_default();
                let message = if allowed.is_empty() {
                    format!("unknown field `{name}`")
                } else {
                    format!(
                        "unknown field `{name}`, expected one of {}",
                        allowed.join(", ")
                    )
                };
                (path, message, true)
            })
            .collect(),
        K::Required { property } => {
            let name = property.as_str().unwrap_or_default().to_string();
            let mut path = at.to_vec();
            path.push(Step::Key(name.clone()));
            // Placed at the table that lacks it.
            let message = format!("missing field `{name}`");
            vec![(path, message, false)]
        }
        K::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => expected_kind(&t.to_string()),
                TypeKind::Multiple(ts) => ts
                    .iter()
                    .map(|t| expected_kind(&t.to_string()))
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            vec![(
                at.to_vec(),
                format!(
                    "invalid type: {} {}, expected {expected}",
                    kind_of(instance),
                    shown(instance)
                ),
                false,
            )]
        }
        K::Enum { .. } | K::OneOfNotValid { .. } | K::AnyOf { .. } | K::Constant { .. } => {
            let allowed = here.map(variants).unwrap_or_default();
            let message = match (instance.as_ref(), allowed.is_empty()) {
                (Value::String(s), false) => {
                    format!(
                        "unknown variant `{s}`, expected one of {}",
                        allowed.join(", ")
                    )
                }
                (v, false) => format!(
                    "invalid value {}: expected one of {}",
                    shown(v),
                    allowed.join(", ")
                ),
                (v, true) => format!(
                    "invalid value {}: {} does not have the shape this key takes",
                    shown(v),
                    kind_of(v)
                ),
            };
            vec![(at.to_vec(), message, false)]
        }
        _ => vec![(at.to_vec(), e.to_string(), false)],
    }
}

/// The span of the value (or, with `key`, of the key) at `path`; the nearest enclosing one
/// when the path goes further than the document.
fn span_of(doc: &Spanned<DeTable<'_>>, path: &[Step], key: bool) -> Option<std::ops::Range<usize>> {
    let mut span = doc.span();
    let mut table: Option<&DeTable<'_>> = Some(doc.get_ref());
    let mut array: Option<&[Spanned<DeValue<'_>>]> = None;
    for (n, step) in path.iter().enumerate() {
        let last = n + 1 == path.len();
        let next = match (step, table, array) {
            (Step::Key(k), Some(t), _) => t.iter().find(|(name, _)| name.get_ref().as_ref() == k),
            (Step::Index(i), _, Some(a)) => {
                let Some(v) = a.get(*i) else { break };
                span = v.span();
                table = None;
                array = None;
                match v.get_ref() {
                    DeValue::Table(t) => table = Some(t),
                    DeValue::Array(a) => array = Some(a),
                    _ => {}
                }
                continue;
            }
            _ => None,
        };
        let Some((name, value)) = next else { break };
        span = if key && last {
            name.span()
        } else {
            value.span()
        };
        table = None;
        array = None;
        match value.get_ref() {
            DeValue::Table(t) => table = Some(t),
            DeValue::Array(a) => array = Some(a),
            _ => {}
        }
    }
    Some(span)
}

/// Any type a manifest holds must describe itself for this pass: a field whose type lacks
/// `#[derive(schemars::JsonSchema)]` fails to compile here, not silently at run time.
const _: fn() = || {
    fn describes_itself<T: schemars::JsonSchema>() {}
    describes_itself::<Manifest>();
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_compiles_and_has_no_null_alternatives() {
        let schema = manifest_schema();
        assert!(jsonschema::validator_for(&schema).is_ok());
        let text = schema.to_string();
        assert!(!text.contains("\"null\""), "a null alternative is left");
        assert!(validator().is_some());
    }

    /// A manifest with three mistakes: an unknown key in a workflow, a wrong type in the
    /// runtime, an unknown variant of an artifact's base.
    const THREE_MISTAKES: &str = r#"schema_version = 1
name = "demo"
version = "0.2.0"
summary = "A demo adapter."

[runtime]
kind = "executable"
executable = "demo"
launch = "--fast"

[[workflow]]
id = "fit"
summary = "Fit."
parameters = "fit.json"
argv = ["{dataset}"]
datasets = ["a", "b"]

[[workflow.artifact]]
id = "out"
path = "out.txt"
media_type = "text/plain"
base = "stdout_stream"
"#;

    #[test]
    fn every_structural_mistake_is_reported_at_once_with_its_place() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("fit.json"), r#"{"type": "object"}"#).unwrap();
        let path = dir.path().join("demo.toml");
        fs_err::write(&path, THREE_MISTAKES).unwrap();
        let errors = crate::manifest::load_file(&path).unwrap_err().0;
        let found: Vec<(&str, Option<usize>)> =
            errors.iter().map(|e| (e.field.as_str(), e.line)).collect();
        assert_eq!(
            found,
            [
                ("runtime.launch", Some(9)),
                ("workflow[0].datasets", Some(16)),
                ("workflow[0].artifact[0].base", Some(22)),
            ],
            "{errors:#?}"
        );
        // Serde's words for the first problem, the schema's for the others.
        assert!(
            errors[0].message.contains("invalid type: string"),
            "{}",
            errors[0].message
        );
        assert!(
            errors[1].message.contains("unknown field `datasets`")
                && errors[1].message.contains("`argv`"),
            "{}",
            errors[1].message
        );
        assert_eq!(errors[1].column, Some(1), "placed at the key");
        assert!(
            errors[2]
                .message
                .contains("unknown variant `stdout_stream`")
                && errors[2].message.contains("`output`"),
            "{}",
            errors[2].message
        );
        assert!(errors.iter().all(|e| e.file == path && e.hint.is_some()));
    }

    #[test]
    fn a_missing_required_key_is_named_beside_the_other_mistakes() {
        let text = THREE_MISTAKES.replace("summary = \"Fit.\"\n", "");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("demo.toml");
        fs_err::write(&path, &text).unwrap();
        let errors = crate::manifest::load_file(&path).unwrap_err().0;
        let missing = errors
            .iter()
            .find(|e| e.field == "workflow[0].summary")
            .unwrap_or_else(|| panic!("{errors:#?}"));
        assert_eq!(missing.message, "missing field `summary`");
        assert_eq!(missing.line, Some(11), "placed at the workflow's table");
        assert_eq!(errors.len(), 4, "{errors:#?}");
    }

    #[test]
    fn every_embedded_adapter_matches_the_schema() {
        let (_, validator) = validator().unwrap();
        for adapter in crate::manifest::EMBEDDED_ADAPTERS {
            let text = adapter
                .files
                .iter()
                .find(|(rel, _)| *rel == adapter.manifest_path)
                .map(|(_, text)| *text)
                .unwrap();
            let table: toml::Table = text.parse().unwrap();
            let json = serde_json::to_value(&table).unwrap();
            let problems: Vec<String> = validator
                .iter_errors(&json)
                .map(|e| e.to_string())
                .collect();
            assert!(problems.is_empty(), "{}: {problems:?}", adapter.name);
        }
    }

    #[test]
    fn pointers_become_document_paths() {
        let v = serde_json::json!({"workflow": [{"argv": ["a", "b"]}], "m": {"0": 1}});
        assert_eq!(
            field_of(&steps(&v, "/workflow/0/argv/1")),
            "workflow[0].argv[1]"
        );
        assert_eq!(field_of(&steps(&v, "/m/0")), "m.0");
        assert_eq!(field_of(&steps(&v, "")), "");
    }
}
