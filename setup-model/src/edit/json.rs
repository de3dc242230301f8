//! JSON and JSONC through `jsonc-parser`'s concrete syntax tree: only the entry's node is
//! replaced, so comments, trailing commas, key order and indentation elsewhere stay as they
//! were, and new nodes take the file's own indentation.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value as Json;

use super::error::{EditError, line_column};
use super::slot::Slot;
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

/// Parse `text`, refusing a key that appears twice in the top-level object or in any object
/// on the way to the entry (`container`): clients disagree on which of two blocks counts
/// (some keep the first, most the last), so an edit of either could be the one never read.
fn parse_checked(text: &str, container: &[&str]) -> Result<CstRootNode, EditError> {
    let root = parse(text)?;
    duplicates(text, container)?;
    Ok(root)
}

fn parse(text: &str) -> Result<CstRootNode, EditError> {
    CstRootNode::parse(text, &options()).map_err(|e| EditError::Syntax {
        line: e.line_display(),
        column: e.column_display(),
        message: e.kind().to_string(),
    })
}

/// The first repeated key in the root object or along `container`, with both positions.
fn duplicates(text: &str, container: &[&str]) -> Result<(), EditError> {
    use jsonc_parser::ast::Value as Ast;
    let collect = jsonc_parser::CollectOptions::default();
    let Ok(parsed) = jsonc_parser::parse_to_ast(text, &collect, &options()) else {
        return Ok(()); // the CST parse reports the syntax error
    };
    let mut object = match parsed.value {
        Some(Ast::Object(o)) => o,
        _ => return Ok(()),
    };
    let mut path: Vec<String> = Vec::new();
    for depth in 0..=container.len() {
        let mut seen: Vec<(&str, usize)> = Vec::new();
        for prop in &object.properties {
            let name = prop.name.as_str();
            if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
                let (line, column) = line_column(text, prop.range.start);
                let (first_line, _) = line_column(text, *first);
                let mut key = path.clone();
                key.push(name.to_string());
                return Err(EditError::Duplicate {
                    key: key.join("."),
                    line,
                    column,
                    first_line,
                });
            }
            seen.push((name, prop.range.start));
        }
        let Some(key) = container.get(depth) else {
            break;
        };
        path.push((*key).to_string());
        let next = object
            .properties
            .iter()
            .rev()
            .find(|p| p.name.as_str() == *key)
            .and_then(|p| match &p.value {
                Ast::Object(o) => Some(o.clone()),
                _ => None,
            });
        match next {
            Some(o) => object = o,
            None => break,
        }
    }
    Ok(())
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

/// The whole document as JSON (`Null` for an empty file).
pub(super) fn document(text: &str) -> Result<Json, EditError> {
    let root = parse(text)?;
    Ok(root_object(&root)?
        .and_then(|o| o.to_serde_value())
        .unwrap_or(Json::Null))
}

/// `text` without the property at `keys` when its value is an empty object (a container
/// scimcp created and nothing else uses any more); otherwise `text` unchanged.
pub(super) fn remove_empty(text: &str, keys: &[&str]) -> Result<String, EditError> {
    let root = parse_checked(text, keys)?;
    let (Some((last, parents)), Some(top)) = (keys.split_last(), root_object(&root)?) else {
        return Ok(text.to_string());
    };
    let Some(parent) = descend(top, parents)? else {
        return Ok(text.to_string());
    };
    match parent.get(last) {
        Some(prop)
            if prop
                .object_value()
                .is_some_and(|o| o.properties().is_empty() && !has_comments(&o)) =>
        {
            prop.remove();
            Ok(root.to_string())
        }
        _ => Ok(text.to_string()),
    }
}

/// Whether an object holds a comment (which would go with it).
fn has_comments(object: &CstObject) -> bool {
    object
        .children()
        .iter()
        .any(|c| c.is_comment() || c.children().iter().any(|c| c.is_comment()))
}

pub(super) fn read(text: &str, slot: Slot<'_>) -> Result<Option<Json>, EditError> {
    let root = parse_checked(text, slot.container)?;
    let Some(obj) = root_object(&root)? else {
        return Ok(None);
    };
    Ok(descend(obj, slot.container)?
        .and_then(|o| o.get(slot.name))
        .and_then(|p| p.to_serde_value()))
}

pub(super) fn set(text: &str, slot: Slot<'_>, entry: &Entry) -> Result<String, EditError> {
    let root = parse_checked(text, slot.container)?;
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
    let root = parse_checked(text, slot.container)?;
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

/// The object in the top-level list `list` whose `"id"` is `id`.
fn find_item(top: &CstObject, list: &str, id: &str) -> Result<Option<CstObject>, EditError> {
    let Some(prop) = top.get(list) else {
        return Ok(None);
    };
    let array = prop
        .array_value()
        .ok_or_else(|| EditError::Shape(format!("\"{list}\" is not a list")))?;
    Ok(array.elements().into_iter().find_map(|e| {
        let object = e.as_object()?;
        let matches = object
            .get("id")
            .and_then(|p| p.to_serde_value())
            .is_some_and(|v| v == Json::String(id.to_string()));
        matches.then_some(object)
    }))
}

pub(super) fn read_item(text: &str, list: &str, id: &str) -> Result<Option<Json>, EditError> {
    let root = parse_checked(text, &[])?;
    let Some(top) = root_object(&root)? else {
        return Ok(None);
    };
    Ok(find_item(&top, list, id)?.and_then(|o| o.to_serde_value()))
}

pub(super) fn set_item(
    text: &str,
    list: &str,
    id: &str,
    value: &Entry,
) -> Result<String, EditError> {
    let root = parse_checked(text, &[])?;
    let top = match root_object(&root)? {
        Some(o) => o,
        None => root.object_value_or_set(),
    };
    match find_item(&top, list, id)? {
        Some(object) => {
            object.replace_with(value.to_cst());
        }
        None => {
            let array = match top.get(list) {
                Some(prop) => prop
                    .array_value()
                    .ok_or_else(|| EditError::Shape(format!("\"{list}\" is not a list")))?,
                None => {
                    top.ensure_multiline();
                    top.append(list, CstInputValue::Array(Vec::new()))
                        .array_value()
                        .expect("a list was just appended")
                }
            };
            array.ensure_multiline();
            array.append(value.to_cst());
        }
    }
    Ok(root.to_string())
}

pub(super) fn remove_item(text: &str, list: &str, id: &str) -> Result<String, EditError> {
    let root = parse_checked(text, &[])?;
    let Some(top) = root_object(&root)? else {
        return Ok(text.to_string());
    };
    let Some(object) = find_item(&top, list, id)? else {
        return Ok(text.to_string());
    };
    object.remove();
    // The list goes too once it is empty (and holds no comment), as before the item came.
    if let Some(prop) = top.get(list)
        && let Some(array) = prop.array_value()
        && array.elements().is_empty()
        && !array.children().iter().any(|c| c.is_comment())
    {
        prop.remove();
    }
    Ok(root.to_string())
}
