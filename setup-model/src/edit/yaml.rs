//! YAML: one entry of a top-level mapping, edited as a bounded block of text.
//!
//! Why text and not a YAML library: the Rust YAML crates that are maintained (serde_norway,
//! saphyr) parse into values and drop comments when they write; the lossless ones are young
//! and unproven on real files. Goose's `config.yaml` is block-style YAML, so the edit is
//! small and checkable: find the column-0 `extensions:` line, find the ` scimcp:` child at
//! the block's own indentation, and replace exactly the lines of that child (or insert them
//! after the last child). Everything outside those lines is copied byte for byte.
//!
//! The safety net is a re-parse: the edited text is parsed again and must equal the original
//! document with only that one entry changed. Anything the text edit cannot handle (flow
//! style, anchors, a `extensions` key written in an unusual way) fails this check or is
//! refused before it, and the file is left untouched with a message saying so.

use serde_json::Value as Json;
use serde_norway::Value as Yaml;

use super::error::EditError;
use super::slot::Slot;
use crate::entry::Entry;

const STEP: usize = 2;

fn parse(text: &str) -> Result<Yaml, EditError> {
    if text.trim().is_empty() {
        return Ok(Yaml::Null);
    }
    serde_norway::from_str::<Yaml>(text).map_err(|e| {
        let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
        EditError::Syntax {
            line,
            column,
            message: e.to_string(),
        }
    })
}

fn to_json(value: &Yaml) -> Result<Json, EditError> {
    serde_json::to_value(value)
        .map_err(|e| EditError::Shape(format!("a value cannot be read as JSON: {e}")))
}

fn from_entry(entry: &Entry) -> Yaml {
    serde_norway::to_value(entry.to_json()).expect("JSON values are YAML values")
}

pub(super) fn check(text: &str) -> Result<(), EditError> {
    parse(text).map(|_| ())
}

/// The whole document as JSON.
pub(super) fn document(text: &str) -> Result<Json, EditError> {
    to_json(&parse(text)?)
}

/// `text` without the top-level `key: {}` line when `keys` is that one key and its mapping
/// is empty; checked by parsing the result again.
pub(super) fn remove_empty(text: &str, keys: &[&str]) -> Result<String, EditError> {
    let [key] = keys else {
        return Ok(text.to_string());
    };
    let before = parse(text)?;
    let Yaml::Mapping(map) = &before else {
        return Ok(text.to_string());
    };
    if !matches!(map.get(*key), Some(Yaml::Mapping(m)) if m.is_empty()) {
        return Ok(text.to_string());
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let header = lines.iter().position(|l| {
        indent_of(l) == 0 && key_rest(l.trim_end(), key).is_some_and(|rest| rest == "{}")
    });
    let Some(h) = header else {
        return Ok(text.to_string());
    };
    let out: String = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != h)
        .map(|(_, l)| *l)
        .collect();
    let mut expected = map.clone();
    expected.remove(*key);
    let after = parse(&out)?;
    let same = match &after {
        Yaml::Null => expected.is_empty(),
        Yaml::Mapping(m) => *m == expected,
        _ => false,
    };
    Ok(if same { out } else { text.to_string() })
}

pub(super) fn read_document(text: &str) -> Result<Option<Json>, EditError> {
    match parse(text)? {
        Yaml::Null => Ok(None),
        v => to_json(&v).map(Some),
    }
}

pub(super) fn read(text: &str, slot: Slot<'_>) -> Result<Option<Json>, EditError> {
    let mut value = &parse(text)?;
    for key in slot.container {
        match value {
            Yaml::Null => return Ok(None),
            Yaml::Mapping(m) => match m.get(*key) {
                None | Some(Yaml::Null) => return Ok(None),
                Some(v) => value = v,
            },
            _ => {
                return Err(EditError::Shape(format!(
                    "the parent of `{key}` is not a mapping"
                )));
            }
        }
    }
    match value {
        Yaml::Null => Ok(None),
        Yaml::Mapping(m) => m.get(slot.name).map(to_json).transpose(),
        _ => Err(EditError::Shape("the container is not a mapping".into())),
    }
}

pub(super) fn set(text: &str, slot: Slot<'_>, entry: &Entry) -> Result<String, EditError> {
    edit(text, slot, Some(entry))
}

pub(super) fn remove(text: &str, slot: Slot<'_>) -> Result<(String, bool), EditError> {
    let out = edit(text, slot, None)?;
    let empty = match parse(&out)? {
        Yaml::Null => true,
        Yaml::Mapping(m) => m
            .values()
            .all(|v| matches!(v, Yaml::Mapping(inner) if inner.is_empty())),
        _ => false,
    };
    Ok((out, empty))
}

/// The whole document of a file scimcp owns, rendered from `entry` (a mapping).
pub(super) fn render_document(entry: &Entry) -> String {
    let mut out = Vec::new();
    if let Entry::Map(pairs) = entry {
        for (k, v) in pairs {
            emit(&mut out, 0, k, v);
        }
    }
    out.iter().map(|l| format!("{l}\n")).collect()
}

fn edit(text: &str, slot: Slot<'_>, entry: Option<&Entry>) -> Result<String, EditError> {
    let [container] = slot.container else {
        return Err(EditError::Shape(
            "only an entry of a top-level mapping can be edited in YAML".into(),
        ));
    };
    let before = parse(text)?;
    let expected = expected_after(&before, container, slot.name, entry)?;
    if expected == before {
        return Ok(text.to_string());
    }
    let out = splice(text, &before, container, slot.name, entry)?;
    let after = parse(&out).map_err(|e| {
        EditError::Shape(format!(
            "the edited text would not parse ({e}); the file is left as it is"
        ))
    })?;
    if after != expected {
        return Err(EditError::Shape(format!(
            "`{container}` is written in a form this editor cannot change safely (flow style, \
             anchors or unusual keys); the file is left as it is: edit the `{}` entry by hand",
            slot.name
        )));
    }
    Ok(out)
}

/// The document value the edit must produce.
fn expected_after(
    before: &Yaml,
    container: &str,
    name: &str,
    entry: Option<&Entry>,
) -> Result<Yaml, EditError> {
    let mut doc = match before {
        Yaml::Null => serde_norway::Mapping::new(),
        Yaml::Mapping(m) => m.clone(),
        _ => {
            return Err(EditError::Shape(
                "the top-level value is not a mapping".into(),
            ));
        }
    };
    let mut inner = match doc.get(container) {
        None | Some(Yaml::Null) => serde_norway::Mapping::new(),
        Some(Yaml::Mapping(m)) => m.clone(),
        Some(_) => return Err(EditError::Shape(format!("`{container}` is not a mapping"))),
    };
    match entry {
        Some(e) => {
            inner.insert(Yaml::from(name), from_entry(e));
        }
        None => {
            if inner.remove(name).is_none() {
                return Ok(before.clone());
            }
        }
    }
    doc.insert(Yaml::from(container), Yaml::Mapping(inner));
    Ok(Yaml::Mapping(doc))
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A line that carries YAML content (not blank, not only a comment).
fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// If `line` (already stripped of indentation) is `key:` in plain or quoted form, what
/// follows the colon, without a trailing comment.
fn key_rest<'l>(line: &'l str, key: &str) -> Option<&'l str> {
    let rest = [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
        .iter()
        .find_map(|k| line.strip_prefix(k.as_str()))?
        .strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n'])) {
        return None;
    }
    let value = match rest.find(" #") {
        Some(i) => &rest[..i],
        None => rest,
    };
    Some(value.trim())
}

fn splice(
    text: &str,
    before: &Yaml,
    container: &str,
    name: &str,
    entry: Option<&Entry>,
) -> Result<String, EditError> {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    if let Some(last) = lines.last_mut()
        && !last.ends_with('\n')
    {
        last.push_str(eol);
    }
    let render = |indent: usize| -> Vec<String> {
        let mut out = Vec::new();
        if let Some(e) = entry {
            emit(&mut out, indent, name, e);
        }
        out.into_iter().map(|l| format!("{l}{eol}")).collect()
    };

    let header = lines
        .iter()
        .position(|l| indent_of(l) == 0 && key_rest(l.trim_end(), container).is_some());
    let Some(h) = header else {
        let has_key = matches!(before, Yaml::Mapping(m) if m.contains_key(container));
        if has_key {
            return Err(EditError::Shape(format!(
                "`{container}` is not written as a plain `{container}:` line at the start of a \
                 line; edit the `{name}` entry by hand"
            )));
        }
        lines.push(format!("{container}:{eol}"));
        lines.extend(render(STEP));
        return Ok(lines.concat());
    };
    let inline = key_rest(lines[h].trim_end(), container).unwrap_or_default();
    match inline {
        "" => {}
        "{}" => lines[h] = format!("{container}:{eol}"),
        _ => {
            return Err(EditError::Shape(format!(
                "`{container}` is written in flow style; edit the `{name}` entry by hand"
            )));
        }
    }
    let end = (h + 1..lines.len())
        .find(|&i| is_content(&lines[i]) && indent_of(&lines[i]) == 0)
        .unwrap_or(lines.len());
    let children: Vec<usize> = (h + 1..end).filter(|&i| is_content(&lines[i])).collect();
    let child_indent = children.first().map_or(STEP, |&i| indent_of(&lines[i]));
    if children
        .first()
        .is_some_and(|&i| lines[i].trim_start().starts_with('-'))
    {
        return Err(EditError::Shape(format!(
            "`{container}` is a list, not a mapping"
        )));
    }
    let found = children.iter().copied().find(|&i| {
        indent_of(&lines[i]) == child_indent && key_rest(lines[i].trim(), name).is_some()
    });
    match found {
        Some(k) => {
            let mut stop = (k + 1..end)
                .find(|&i| is_content(&lines[i]) && indent_of(&lines[i]) <= child_indent)
                .unwrap_or(end);
            // Blank and comment lines right before the next key belong to that key.
            while stop > k + 1 && !is_content(&lines[stop - 1]) {
                stop -= 1;
            }
            lines.splice(k..stop, render(child_indent));
        }
        None => {
            let at = children.last().map_or(h + 1, |&last| {
                (last + 1..end)
                    .find(|&i| is_content(&lines[i]) && indent_of(&lines[i]) <= child_indent)
                    .unwrap_or(end)
            });
            let mut at = at;
            if let Some(&last) = children.last() {
                // Blank and comment lines after the last child belong to what follows.
                while at > last + 1 && !is_content(&lines[at - 1]) {
                    at -= 1;
                }
            }
            lines.splice(at..at, render(child_indent));
        }
    }
    // A container left without children would read as null: keep it an empty mapping.
    let still = (h + 1..lines.len())
        .take_while(|&i| !(is_content(&lines[i]) && indent_of(&lines[i]) == 0))
        .any(|i| is_content(&lines[i]));
    if !still {
        lines[h] = format!("{container}: {{}}{eol}");
    }
    Ok(lines.concat())
}

/// Render `key: value` at `indent` as block YAML: strings as double-quoted (JSON escapes
/// are valid YAML), lists as `- ` items, nested maps indented by two spaces.
fn emit(out: &mut Vec<String>, indent: usize, key: &str, value: &Entry) {
    let pad = " ".repeat(indent);
    let key = yaml_key(key);
    match value {
        Entry::Map(pairs) if pairs.is_empty() => out.push(format!("{pad}{key}: {{}}")),
        Entry::List(items) if items.is_empty() => out.push(format!("{pad}{key}: []")),
        Entry::Map(pairs) => {
            out.push(format!("{pad}{key}:"));
            for (k, v) in pairs {
                emit(out, indent + STEP, k, v);
            }
        }
        Entry::List(items) => {
            out.push(format!("{pad}{key}:"));
            for item in items {
                emit_item(out, indent + STEP, item);
            }
        }
        scalar => out.push(format!("{pad}{key}: {}", yaml_scalar(scalar))),
    }
}

fn emit_item(out: &mut Vec<String>, indent: usize, item: &Entry) {
    let pad = " ".repeat(indent);
    match item {
        Entry::Map(pairs) if !pairs.is_empty() => {
            let start = out.len();
            for (k, v) in pairs {
                emit(out, indent + STEP, k, v);
            }
            // The first key goes on the dash line.
            let first = out[start].split_off(indent + STEP);
            out[start] = format!("{pad}- {first}");
        }
        Entry::Map(_) => out.push(format!("{pad}- {{}}")),
        Entry::List(_) => out.push(format!("{pad}- {}", item.to_json())),
        scalar => out.push(format!("{pad}- {}", yaml_scalar(scalar))),
    }
}

fn yaml_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        key.to_string()
    } else {
        Json::String(key.to_string()).to_string()
    }
}

fn yaml_scalar(value: &Entry) -> String {
    match value {
        Entry::Str(s) => Json::String(s.clone()).to_string(),
        Entry::Bool(b) => b.to_string(),
        Entry::Int(i) => i.to_string(),
        other => other.to_json().to_string(),
    }
}
