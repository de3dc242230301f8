//! TEMPORARY: the API of `crate::expr` (parameter references only, no JavaScript) until the
//! expr module is committed; `collect` then imports `crate::expr` and this file goes.

use serde_json::Value;

pub struct Context<'a> {
    pub inputs: &'a Value,
    pub self_: &'a Value,
    pub runtime: &'a Value,
}

#[derive(Debug, Default)]
pub struct Expressions;

#[derive(Debug)]
pub struct ExprError(String);

impl std::fmt::Display for ExprError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub fn has_expression(text: &str) -> bool {
    text.contains("$(") || text.contains("${")
}

impl Expressions {
    pub fn new(_inline_js: bool, _lib: Vec<String>) -> Self {
        Expressions
    }

    pub fn eval_value(&self, v: &Value, ctx: &Context) -> Result<Value, ExprError> {
        match v {
            Value::String(s) => self.eval(s, ctx),
            other => Ok(other.clone()),
        }
    }

    pub fn eval(&self, text: &str, ctx: &Context) -> Result<Value, ExprError> {
        let mut parts: Vec<Value> = Vec::new();
        let mut lit = String::new();
        let mut rest = text;
        while let Some(i) = rest.find("$(") {
            lit.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let end = after
                .find(')')
                .ok_or_else(|| ExprError(format!("`{text}`: unclosed $(")))?;
            if !lit.is_empty() {
                parts.push(Value::String(std::mem::take(&mut lit)));
            }
            parts.push(
                reference(&after[..end], ctx).map_err(|m| ExprError(format!("`{text}`: {m}")))?,
            );
            rest = &after[end + 1..];
        }
        lit.push_str(rest);
        if !lit.is_empty() {
            parts.push(Value::String(lit));
        }
        if parts.len() == 1 && !text.is_empty() && text.starts_with("$(") && text.ends_with(')') {
            return Ok(parts.remove(0));
        }
        Ok(Value::String(
            parts
                .into_iter()
                .map(|p| match p {
                    Value::String(s) => s,
                    other => other.to_string(),
                })
                .collect(),
        ))
    }
}

fn reference(expr: &str, ctx: &Context) -> Result<Value, String> {
    let mut segs = Vec::new();
    let mut cur = String::new();
    let mut chars = expr.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => segs.push(std::mem::take(&mut cur)),
            '[' => {
                segs.push(std::mem::take(&mut cur));
                let mut inner = String::new();
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    inner.push(d);
                }
                cur = inner.trim_matches(['\'', '"']).to_string();
            }
            c => cur.push(c),
        }
    }
    segs.push(cur);
    let segs: Vec<String> = segs.into_iter().filter(|s| !s.is_empty()).collect();
    let mut v = match segs.first().map(String::as_str) {
        Some("inputs") => ctx.inputs.clone(),
        Some("self") => ctx.self_.clone(),
        Some("runtime") => ctx.runtime.clone(),
        Some("null") => return Ok(Value::Null),
        _ => return Err(format!("`{expr}` is not a parameter reference")),
    };
    for s in &segs[1..] {
        v = match (&v, s.parse::<usize>()) {
            (Value::Array(a), Ok(i)) => a.get(i).cloned().unwrap_or(Value::Null),
            (Value::Array(a), _) if s == "length" => Value::from(a.len()),
            (Value::Object(o), _) => o.get(s).cloned().unwrap_or(Value::Null),
            _ => return Err(format!("`{expr}`: no `{s}` in {v}")),
        };
    }
    Ok(v)
}
