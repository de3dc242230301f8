//! TEMPORARY: the shape of `crate::expr` (cwl-engine.md module 1) until the expr helper
//! commits it; evaluating anything here is an error. Replaced by `crate::expr` then.

use serde_json::Value;

pub struct Context<'a> {
    pub inputs: &'a Value,
    pub self_: &'a Value,
    pub runtime: &'a Value,
}

#[derive(Debug, Default)]
pub struct Expressions;

impl Expressions {
    pub fn new(_inline_js: bool, _lib: Vec<String>) -> Self {
        Expressions
    }

    pub fn eval(&self, text: &str, _ctx: &Context) -> Result<Value, String> {
        Err(format!("`{text}`: expressions are not evaluated yet"))
    }
}

pub fn has_expression(text: &str) -> bool {
    text.contains("$(") || text.contains("${")
}
