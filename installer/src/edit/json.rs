//! JSON and JSONC through `jsonc-parser`'s concrete syntax tree: only the entry's node is
//! replaced, so comments, trailing commas, key order and indentation elsewhere stay as they
//! were, and new nodes take the file's own indentation.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value as Json;

use super::{EditError, Slot};
use crate::entry::Entry;

/// Comments and trailing commas (JSONC) are accepted; the looser JSON5 forms are not, so a
/// file a strict client could not read is not silently "understood" here.
fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

fn parse(text: &str) -> Result<CstRootNode, EditError> {
    CstRootNode::parse(text, &options()).map_err(|e| EditError::Syntax {
        line: e.line_display(),
        column: e.column_display(),
        message: e.kind().to_string(),
    })
}

/// The root object; `None` for an empty file.
fn root_object(root: &CstRootNode) -> Result<Option<CstObject>, EditError> {
    match root.value() {
        None => Ok(None),
        Some(v) => v
            .as_object()
            .map(Some)
            .ok_or_else(|| EditError::Shape("the top-level value is not an object".into())),
    }
}

/// Walk `keys` from `obj`; `None` when a key is absent; an error when one is not an object.
fn descend(mut obj: CstObject, keys: &[&str]) -> Result<Option<CstObject>, EditError> {
    for key in keys {
        let Some(prop) = obj.get(key) else {
            return Ok(None);
        };
        obj = prop
            .object_value()
            .ok_or_else(|| EditError::Shape(format!("\"{key}\" is not an object")))?;
    }
    Ok(Some(obj))
}

pub(super) fn check(text: &str) -> Result<(), EditError> {
    root_object(&parse(text)?).map(|_| ())
}

pub(super) fn read(text: &str, slot: Slot<'_>) -> Result<Option<Json>, EditError> {
    let root = parse(text)?;
    let Some(obj) = root_object(&root)? else {
        return Ok(None);
    };
    Ok(descend(obj, slot.container)?
        .and_then(|o| o.get(slot.name))
        .and_then(|p| p.to_serde_value()))
}

pub(super) fn set(text: &str, slot: Slot<'_>, entry: &Entry) -> Result<String, EditError> {
    let root = parse(text)?;
    let mut obj = match root_object(&root)? {
        Some(o) => o,
        None => root.object_value_or_set(),
    };
    for key in slot.container {
        obj = match obj.get(key) {
            Some(prop) => prop
                .object_value()
                .ok_or_else(|| EditError::Shape(format!("\"{key}\" is not an object")))?,
            None => obj
                .append(key, CstInputValue::Object(Vec::new()))
                .object_value()
                .expect("an object was just appended"),
        };
    }
    match obj.get(slot.name) {
        Some(prop) => prop.set_value(entry.to_cst()),
        None => {
            obj.ensure_multiline();
            obj.append(slot.name, entry.to_cst());
        }
    }
    let mut out = root.to_string();
    if text.trim().is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

pub(super) fn remove(text: &str, slot: Slot<'_>) -> Result<(String, bool), EditError> {
    let root = parse(text)?;
    let Some(top) = root_object(&root)? else {
        return Ok((text.to_string(), true));
    };
    if let Some(prop) = descend(top.clone(), slot.container)?.and_then(|o| o.get(slot.name)) {
        prop.remove();
    }
    let left = top.to_serde_value().unwrap_or(Json::Null);
    Ok((root.to_string(), is_only_empty_containers(&left)))
}

/// `{}` or `{"mcpServers": {}}`: nothing but empty objects.
fn is_only_empty_containers(value: &Json) -> bool {
    match value {
        Json::Object(map) => map.values().all(is_only_empty_containers),
        _ => false,
    }
}
