//! TOML through `toml_edit`, which keeps comments, whitespace and key order; the entry is
//! written as its own `[container.name]` table (or an inline table inside an inline parent).

use serde_json::Value as Json;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value};

use super::error::{EditError, line_column};
use super::slot::Slot;
use crate::entry::Entry;

fn parse(text: &str) -> Result<DocumentMut, EditError> {
    text.parse::<DocumentMut>().map_err(|e| {
        let (line, column) = line_column(text, e.span().map_or(0, |s| s.start));
        EditError::Syntax {
            line,
            column,
            message: e.message().to_string(),
        }
    })
}

pub(super) fn check(text: &str) -> Result<(), EditError> {
    parse(text).map(|_| ())
}

/// The whole document as JSON.
pub(super) fn document(text: &str) -> Result<Json, EditError> {
    Ok(item_to_json(parse(text)?.as_item()))
}

/// `text` without the table at `keys` when it is empty.
pub(super) fn remove_empty(text: &str, keys: &[&str]) -> Result<String, EditError> {
    let mut doc = parse(text)?;
    let Some((last, parents)) = keys.split_last() else {
        return Ok(text.to_string());
    };
    let mut item: Option<&mut Item> = Some(doc.as_item_mut());
    for key in parents {
        item = item.and_then(|i| i.get_mut(key));
    }
    let Some(parent) = item.and_then(Item::as_table_like_mut) else {
        return Ok(text.to_string());
    };
    let empty = parent
        .get(last)
        .and_then(Item::as_table_like)
        .is_some_and(|t| t.is_empty());
    if !empty {
        return Ok(text.to_string());
    }
    parent.remove(last);
    Ok(doc.to_string())
}

pub(super) fn read(text: &str, slot: Slot<'_>) -> Result<Option<Json>, EditError> {
    let doc = parse(text)?;
    let mut item: &Item = doc.as_item();
    for key in slot.container {
        let Some(next) = item.get(key) else {
            return Ok(None);
        };
        if !next.is_table_like() {
            return Err(EditError::Shape(format!("`{key}` is not a table")));
        }
        item = next;
    }
    Ok(item.get(slot.name).map(item_to_json))
}

pub(super) fn set(text: &str, slot: Slot<'_>, entry: &Entry) -> Result<String, EditError> {
    let mut doc = parse(text)?;
    let mut item: &mut Item = doc.as_item_mut();
    for key in slot.container {
        let table = item
            .as_table_like_mut()
            .ok_or_else(|| EditError::Shape(format!("the parent of `{key}` is not a table")))?;
        if table.get(key).is_none() {
            let mut t = Table::new();
            // `[mcp_servers.scimcp]` alone reads best; no empty `[mcp_servers]` header.
            t.set_implicit(true);
            table.insert(key, Item::Table(t));
        }
        item = table.get_mut(key).expect("inserted above");
        if !item.is_table_like() {
            return Err(EditError::Shape(format!("`{key}` is not a table")));
        }
    }
    let new_item = match item {
        Item::Value(Value::InlineTable(_)) => Item::Value(Value::InlineTable(inline_table(entry))),
        _ => Item::Table(table(entry)),
    };
    let parent = item.as_table_like_mut().expect("checked above");
    match parent.get_mut(slot.name) {
        Some(existing) => *existing = new_item,
        None => {
            parent.insert(slot.name, new_item);
        }
    }
    Ok(doc.to_string())
}

pub(super) fn remove(text: &str, slot: Slot<'_>) -> Result<(String, bool), EditError> {
    let mut doc = parse(text)?;
    let mut item: Option<&mut Item> = Some(doc.as_item_mut());
    for key in slot.container {
        item = item.and_then(|i| i.get_mut(key));
    }
    if let Some(parent) = item.and_then(Item::as_table_like_mut) {
        parent.remove(slot.name);
    }
    let empty = is_only_empty_tables(doc.as_item());
    Ok((doc.to_string(), empty))
}

fn is_only_empty_tables(item: &Item) -> bool {
    match item.as_table_like() {
        Some(t) => t.iter().all(|(_, v)| is_only_empty_tables(v)),
        None => false,
    }
}

fn table(entry: &Entry) -> Table {
    let mut t = Table::new();
    if let Entry::Map(pairs) = entry {
        for (k, v) in pairs {
            t.insert(k, Item::Value(value(v)));
        }
    }
    t
}

fn inline_table(entry: &Entry) -> InlineTable {
    let mut t = InlineTable::new();
    if let Entry::Map(pairs) = entry {
        for (k, v) in pairs {
            t.insert(k, value(v));
        }
    }
    t
}

fn value(entry: &Entry) -> Value {
    match entry {
        Entry::Str(s) => Value::from(s.as_str()),
        Entry::Bool(b) => Value::from(*b),
        Entry::Int(i) => Value::from(*i),
        Entry::List(items) => Value::Array(items.iter().map(value).collect::<Array>()),
        Entry::Map(_) => Value::InlineTable(inline_table(entry)),
    }
}

fn item_to_json(item: &Item) -> Json {
    match item {
        Item::None => Json::Null,
        Item::Value(v) => value_to_json(v),
        Item::Table(t) => Json::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), item_to_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(a) => Json::Array(
            a.iter()
                .map(|t| item_to_json(&Item::Table(t.clone())))
                .collect(),
        ),
    }
}

fn value_to_json(v: &Value) -> Json {
    match v {
        Value::String(s) => Json::String(s.value().clone()),
        Value::Integer(i) => Json::from(*i.value()),
        Value::Float(f) => {
            serde_json::Number::from_f64(*f.value()).map_or(Json::Null, Json::Number)
        }
        Value::Boolean(b) => Json::Bool(*b.value()),
        Value::Datetime(d) => Json::String(d.value().to_string()),
        Value::Array(a) => Json::Array(a.iter().map(value_to_json).collect()),
        Value::InlineTable(t) => Json::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), value_to_json(v)))
                .collect(),
        ),
    }
}
