//! Collecting the bindings of `arguments` and of the inputs (recursively through unions,
//! arrays and records), sorting them by key, and turning each into command-line pieces.

use serde_json::{Map, Value};

use super::{Builder, command_error, list, to_text};
use crate::CwlError;

/// How deep types may nest while binding (normalized types are finite; this bounds a job
/// value that is deeper than any real tool needs).
const MAX_DEPTH: usize = 64;

/// One element of a sort key: integers sort before strings (derived `Ord` follows the
/// variant order).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Int(i64),
    Str(String),
}

/// A binding with its value, ready to be turned into pieces.
#[derive(Debug, Clone)]
struct Bound {
    key: Vec<Key>,
    binding: Map<String, Value>,
    /// The value bound (`None` for an `arguments` entry, whose `self` is null).
    datum: Value,
    field: String,
}

/// The pieces after `baseCommand`, each with whether it may be shell-quoted.
pub(super) fn arguments(b: &Builder) -> Result<Vec<(String, bool)>, CwlError> {
    let mut bound = Vec::new();
    for (i, arg) in list(b.tool, "arguments").iter().enumerate() {
        let index = Key::Int(i as i64);
        let field = format!("arguments[{i}]");
        match arg {
            Value::String(s) => {
                let mut binding = Map::new();
                // Escaped `\$(` too goes through the evaluator, which removes the escape.
                if s.contains("$(") || s.contains("${") {
                    binding.insert("valueFrom".into(), arg.clone());
                    bound.push(Bound {
                        key: vec![Key::Int(0), index],
                        binding,
                        datum: Value::Null,
                        field,
                    });
                } else {
                    bound.push(Bound {
                        key: vec![Key::Int(0), index],
                        binding,
                        datum: Value::String(s.clone()),
                        field,
                    });
                }
            }
            Value::Object(o) => {
                let pos = position(b, &field, o, &Value::Null)?;
                bound.push(Bound {
                    key: vec![Key::Int(pos), index],
                    binding: o.clone(),
                    datum: Value::Null,
                    field,
                });
            }
            other => {
                return Err(command_error(
                    field,
                    format!("must be a string or a CommandLineBinding, not {other}"),
                ));
            }
        }
    }
    for input in list(b.tool, "inputs") {
        let Some(schema) = input.as_object() else {
            continue;
        };
        let id = schema.get("id").and_then(Value::as_str).unwrap_or_default();
        let datum = b.job.get(id).unwrap_or(&Value::Null);
        if datum.is_null() {
            continue;
        }
        let field = format!("inputs.{id}");
        bound.extend(bind(
            b,
            &field,
            schema,
            None,
            datum,
            Vec::new(),
            vec![Key::Str(id.to_string())],
            0,
        )?);
    }
    // Stable: equal keys keep the order they were collected in.
    bound.sort_by(|a, b| a.key.cmp(&b.key));
    let mut out = Vec::new();
    for one in &bound {
        let quote = one
            .binding
            .get("shellQuote")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        out.extend(pieces(b, one)?.into_iter().map(|p| (p, quote)));
    }
    Ok(out)
}

/// A binding's `position`: an integer, or an expression with `self` = the bound value.
fn position(
    b: &Builder,
    field: &str,
    binding: &Map<String, Value>,
    datum: &Value,
) -> Result<i64, CwlError> {
    let Some(p) = binding.get("position") else {
        return Ok(0);
    };
    let field = format!("{field}.position");
    match b.eval(&field, p, datum)? {
        Value::Null => Ok(0),
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .ok_or_else(|| command_error(field, format!("must be an integer, not {n}"))),
        other => Err(command_error(
            field,
            format!("must be an integer, not {other}"),
        )),
    }
}

/// The bindings of `datum` under `schema` (an object with `type` and maybe `inputBinding`;
/// `inherited` replaces that binding for array items, with its key already computed).
#[allow(clippy::too_many_arguments)]
fn bind(
    b: &Builder,
    field: &str,
    schema: &Map<String, Value>,
    inherited: Option<(Map<String, Value>, Vec<Key>)>,
    datum: &Value,
    lead: Vec<Key>,
    tail: Vec<Key>,
    depth: usize,
) -> Result<Vec<Bound>, CwlError> {
    if depth > MAX_DEPTH {
        return Err(command_error(
            field.to_string(),
            "the value nests too deeply",
        ));
    }
    let given = inherited.clone();
    let own: Option<(Map<String, Value>, Vec<Key>)> = match inherited {
        Some((binding, key)) => {
            let mut k = lead.clone();
            k.extend(key);
            k.extend(tail.iter().cloned());
            Some((binding, k))
        }
        None => match schema.get("inputBinding") {
            Some(Value::Object(binding)) => {
                let mut k = lead.clone();
                k.push(Key::Int(position(b, field, binding, datum)?));
                k.extend(tail.iter().cloned());
                Some((binding.clone(), k))
            }
            _ => None,
        },
    };
    let value_from = own
        .as_ref()
        .is_some_and(|(binding, _)| binding.contains_key("valueFrom"));
    let ty = schema.get("type").unwrap_or(&Value::Null);
    let mut nested = Vec::new();
    let mut own = own;
    match ty {
        Value::Array(members) => {
            let member = members.iter().find(|m| matches(m, datum)).ok_or_else(|| {
                command_error(
                    field.to_string(),
                    format!("the value {datum} matches none of the types {ty}"),
                )
            })?;
            if !value_from {
                let mut one = schema.clone();
                one.insert("type".into(), member.clone());
                return bind(b, field, &one, given, datum, lead, tail, depth + 1);
            }
        }
        Value::Object(t) => {
            let mut st = t.clone();
            // An array bound at the parameter level binds each item too (with an empty
            // binding), unless the items are joined by itemSeparator.
            if let Some((binding, _)) = &own
                && !st.contains_key("inputBinding")
                && st.get("type").and_then(Value::as_str) == Some("array")
                && !binding.contains_key("itemSeparator")
            {
                st.insert("inputBinding".into(), Value::Object(Map::new()));
            }
            if !value_from {
                nested = bind(b, field, &st, None, datum, lead, tail, depth + 1)?;
            }
        }
        Value::String(kind) => match kind.as_str() {
            "record" => {
                for f in list(&Value::Object(schema.clone()), "fields") {
                    let Some(fo) = f.as_object() else { continue };
                    let name = fo.get("name").and_then(Value::as_str).unwrap_or_default();
                    let v = datum.get(name).unwrap_or(&Value::Null);
                    if v.is_null() {
                        continue;
                    }
                    nested.extend(bind(
                        b,
                        &format!("{field}.{name}"),
                        fo,
                        None,
                        v,
                        lead.clone(),
                        vec![Key::Str(name.to_string())],
                        depth + 1,
                    )?);
                }
            }
            "array" => {
                let items = schema.get("items").cloned().unwrap_or(Value::Null);
                let values = datum.as_array().map(Vec::as_slice).unwrap_or(&[]);
                for (n, item) in values.iter().enumerate() {
                    let mut item_schema = Map::new();
                    item_schema.insert("type".into(), items.clone());
                    nested.extend(bind(
                        b,
                        &format!("{field}[{n}]"),
                        &item_schema,
                        own.clone(),
                        item,
                        vec![Key::Int(n as i64)],
                        tail.clone(),
                        depth + 1,
                    )?);
                }
                // The array's own binding went to each item.
                own = None;
            }
            _ => {}
        },
        _ => {}
    }
    let mut out = Vec::new();
    if let Some((binding, key)) = own {
        for mut n in nested {
            let mut k = key.clone();
            k.extend(n.key);
            n.key = k;
            out.push(n);
        }
        out.push(Bound {
            key,
            binding,
            datum: datum.clone(),
            field: field.to_string(),
        });
    } else {
        out = nested;
    }
    Ok(out)
}

/// Whether `datum` is of the (canonical) type `ty`, to pick a union member.
fn matches(ty: &Value, datum: &Value) -> bool {
    match ty {
        Value::String(s) => match s.as_str() {
            "null" => datum.is_null(),
            "Any" => !datum.is_null(),
            "boolean" => datum.is_boolean(),
            "int" | "long" => datum.is_i64() || datum.is_u64(),
            "float" | "double" => datum.is_number(),
            "string" => datum.is_string(),
            "File" | "Directory" => datum.get("class").and_then(Value::as_str) == Some(s),
            _ => false,
        },
        Value::Array(members) => members.iter().any(|m| matches(m, datum)),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("array") => {
                let items = o.get("items").unwrap_or(&Value::Null);
                datum
                    .as_array()
                    .is_some_and(|a| a.iter().all(|v| matches(items, v)))
            }
            Some("enum") => datum.as_str().is_some_and(|s| {
                o.get("symbols")
                    .and_then(Value::as_array)
                    .is_some_and(|syms| syms.iter().any(|x| x == s))
            }),
            // Every field's value fits its type (missing is null), so a union of records picks
            // the one whose enums and required fields the value has (tmap-tool.cwl).
            Some("record") => {
                datum.is_object()
                    && datum.get("class").is_none()
                    && list(ty, "fields").iter().all(|f| {
                        let name = f["name"].as_str().unwrap_or_default();
                        matches(&f["type"], datum.get(name).unwrap_or(&Value::Null))
                    })
            }
            _ => false,
        },
        _ => false,
    }
}

/// CommandLineBinding's rules for one bound value (after `valueFrom`).
fn pieces(b: &Builder, one: &Bound) -> Result<Vec<String>, CwlError> {
    let binding = &one.binding;
    let field = &one.field;
    let value = match binding.get("valueFrom") {
        Some(vf) => b.eval(&format!("{field}.valueFrom"), vf, &one.datum)?,
        None => one.datum.clone(),
    };
    let prefix = binding.get("prefix").and_then(Value::as_str);
    let separate = binding
        .get("separate")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let join = |p: Option<&str>, values: Vec<String>| -> Vec<String> {
        let mut out = Vec::new();
        for v in values {
            match p {
                Some(p) if separate => {
                    out.push(p.to_string());
                    out.push(v);
                }
                Some(p) => out.push(format!("{p}{v}")),
                None => out.push(v),
            }
        }
        out
    };
    Ok(match &value {
        Value::Null | Value::Bool(false) => Vec::new(),
        Value::Bool(true) => prefix.map(|p| vec![p.to_string()]).unwrap_or_default(),
        Value::Array(items) => {
            if items.is_empty() {
                Vec::new()
            } else if let Some(sep) = binding.get("itemSeparator").and_then(Value::as_str) {
                let texts = items
                    .iter()
                    .map(|v| to_text(field, v))
                    .collect::<Result<Vec<_>, _>>()?;
                join(prefix, vec![texts.join(sep)])
            } else if binding.contains_key("valueFrom") {
                // A valueFrom result has no nested bindings: its items are the pieces.
                let mut out: Vec<String> = prefix.map(|p| vec![p.to_string()]).unwrap_or_default();
                for v in items {
                    out.push(to_text(field, v)?);
                }
                out
            } else {
                // The items were bound by their own bindings.
                prefix.map(|p| vec![p.to_string()]).unwrap_or_default()
            }
        }
        Value::Object(o)
            if !matches!(
                o.get("class").and_then(Value::as_str),
                Some("File" | "Directory")
            ) =>
        {
            // A record: its fields were bound by their own bindings.
            prefix.map(|p| vec![p.to_string()]).unwrap_or_default()
        }
        other => join(prefix, vec![to_text(field, other)?]),
    })
}
