//! TEMPORARY: the API of `crate::expr` (parameter references only, no JavaScript) until the
//! expr module is committed; `command` then imports `crate::expr` and this file goes.

use serde_json::Value;
pub struct Context<'a> {
    pub inputs: &'a Value,
    pub self_: &'a Value,
    pub runtime: &'a Value,
}
pub struct Expressions {}
#[derive(Debug)]
pub struct ExprError(pub String);
impl std::fmt::Display for ExprError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ExprError {}
pub fn has_expression(text: &str) -> bool {
    let u = text.replace("\\$(", "").replace("\\${", "");
    u.contains("$(") || u.contains("${")
}
impl Expressions {
    pub fn new(_inline_js: bool, _lib: Vec<String>) -> Self {
        Expressions {}
    }
    pub fn eval_value(&self, v: &Value, ctx: &Context) -> Result<Value, ExprError> {
        match v {
            Value::String(s) => self.eval(s, ctx),
            o => Ok(o.clone()),
        }
    }
    pub fn eval(&self, text: &str, ctx: &Context) -> Result<Value, ExprError> {
        let t = text.trim();
        if t.starts_with("$(")
            && t.ends_with(')')
            && t[2..].find("$(").is_none()
            && !t[2..t.len() - 1].contains(')')
        {
            return self.reference(&t[2..t.len() - 1], ctx);
        }
        let mut out = String::new();
        let mut rest = text;
        while !rest.is_empty() {
            if let Some(a) = rest.strip_prefix("\\$(") {
                out.push_str("$(");
                rest = a;
                continue;
            }
            if let Some(a) = rest.strip_prefix("$(") {
                let end = a
                    .find(')')
                    .ok_or_else(|| ExprError(format!("unterminated {text}")))?;
                let v = self.reference(&a[..end], ctx)?;
                match v {
                    Value::String(s) => out.push_str(&s),
                    o => out.push_str(&o.to_string()),
                }
                rest = &a[end + 1..];
                continue;
            }
            let Some(c) = rest.chars().next() else { break };
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        Ok(Value::String(out))
    }
    fn reference(&self, e: &str, ctx: &Context) -> Result<Value, ExprError> {
        let e = e.trim();
        let mut parts: Vec<String> = Vec::new();
        for seg in e
            .replace("['", ".")
            .replace("']", "")
            .replace('[', ".")
            .replace(']', "")
            .split('.')
        {
            parts.push(seg.to_string());
        }
        let mut v = match parts[0].as_str() {
            "inputs" => ctx.inputs.clone(),
            "self" => ctx.self_.clone(),
            "runtime" => ctx.runtime.clone(),
            "null" => Value::Null,
            o => return Err(ExprError(format!("stub: {o}"))),
        };
        for p in &parts[1..] {
            v = match (&v, p.parse::<usize>()) {
                (Value::Array(a), Ok(i)) => a.get(i).cloned().unwrap_or(Value::Null),
                (Value::Array(a), _) if p == "length" => Value::from(a.len()),
                (Value::Object(o), _) => o.get(p).cloned().unwrap_or(Value::Null),
                _ => Value::Null,
            };
        }
        Ok(v)
    }
}
