//! CWL parameter references without JavaScript (CWL v1.2 concepts.md "Parameter
//! references"): `symbol` then any of `.name`, `['name']`, `["name"]`, `[index]`, with
//! `.length` of an array, and the bare `null`. Evaluated over the JSON values directly.

use serde_json::Value;

use super::Context;

enum Seg {
    Key(String),
    Index(usize),
}

/// Why a parameter reference gave no value.
pub enum RefError {
    /// The text is not in the parameter-reference grammar (so only JavaScript could say).
    Syntax,
    /// In the grammar, but it names something absent or indexes a wrong type.
    Eval(String),
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn parse(text: &str) -> Option<(String, Vec<Seg>)> {
    let sym_end = text.find(|c: char| !is_word(c)).unwrap_or(text.len());
    if sym_end == 0 {
        return None;
    }
    let symbol = text[..sym_end].to_owned();
    let mut rest = &text[sym_end..];
    let mut segs = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(|c: char| !is_word(c)).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            segs.push(Seg::Key(r[..end].to_owned()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let quote = r.chars().next()?;
            if quote == '\'' || quote == '"' {
                let (key, after) = quoted(&r[1..], quote)?;
                rest = after.strip_prefix(']')?;
                segs.push(Seg::Key(key));
            } else {
                let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
                if end == 0 {
                    return None;
                }
                let index = r[..end].parse().ok()?;
                rest = r[end..].strip_prefix(']')?;
                segs.push(Seg::Index(index));
            }
        } else {
            return None;
        }
    }
    Some((symbol, segs))
}

/// A quoted key up to its closing `quote`: `\'` and `\"` stand for the quote characters.
fn quoted(s: &str, quote: char) -> Option<(String, &str)> {
    let mut key = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, q @ ('\'' | '"'))) => key.push(q),
                Some((_, other)) => {
                    key.push('\\');
                    key.push(other);
                }
                None => return None,
            },
            c if c == quote => {
                return (!key.is_empty()).then_some((key, &s[i + 1..]));
            }
            c => key.push(c),
        }
    }
    None
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The value `text` (the inside of `$(…)`) refers to.
pub fn eval(text: &str, ctx: &Context) -> Result<Value, RefError> {
    if text == "null" {
        return Ok(Value::Null);
    }
    let (symbol, segs) = parse(text).ok_or(RefError::Syntax)?;
    let mut cur = match symbol.as_str() {
        "inputs" => ctx.inputs,
        "self" => ctx.self_,
        "runtime" => ctx.runtime,
        _ => {
            return Err(RefError::Eval(format!(
                "`{symbol}` is not defined (a parameter reference starts with inputs, self or runtime)"
            )));
        }
    };
    let mut path = symbol.clone();
    let last = segs.len().saturating_sub(1);
    for (n, seg) in segs.iter().enumerate() {
        match seg {
            Seg::Key(key) => {
                if let (Value::Array(items), "length") = (cur, key.as_str())
                    && n == last
                {
                    return Ok(Value::from(items.len()));
                }
                let Value::Object(map) = cur else {
                    return Err(RefError::Eval(format!(
                        "`{path}` is {}, which has no key `{key}`",
                        kind(cur)
                    )));
                };
                cur = map.get(key).ok_or_else(|| {
                    RefError::Eval(format!("`{path}` does not contain the key `{key}`"))
                })?;
                path.push_str(&format!("[{key:?}]"));
            }
            Seg::Index(i) => {
                let Value::Array(items) = cur else {
                    return Err(RefError::Eval(format!(
                        "`{path}` is {}, which cannot be indexed by [{i}]",
                        kind(cur)
                    )));
                };
                cur = items.get(*i).ok_or_else(|| {
                    RefError::Eval(format!("`{path}` has {} items, no index {i}", items.len()))
                })?;
                path.push_str(&format!("[{i}]"));
            }
        }
    }
    Ok(cur.clone())
}
