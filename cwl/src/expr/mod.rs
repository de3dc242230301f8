//! CWL expressions (CWL v1.2 concepts.md "Parameter references" and "Expressions"): the
//! `$(…)` and `${…}` of a string field, evaluated against `inputs`, `self` and `runtime`.
//!
//! Without InlineJavascriptRequirement only the parameter-reference grammar is accepted and
//! evaluated in Rust. With it, a parameter reference is still evaluated in Rust first (the
//! result is the same as JavaScript property access on the same JSON, which the spec
//! requires) and anything else — or a reference the Rust path cannot answer, such as
//! `.length` of a string — goes to QuickJS, as the reference runner does.

mod format;
mod js;
mod paramref;
mod scan;
#[cfg(test)]
mod tests;

use std::cell::OnceCell;
use std::time::Duration;

use serde_json::Value;

pub use format::{py_float, to_text};
pub use scan::{Segment, has_expression, parse_refs};

/// What an expression sees.
pub struct Context<'a> {
    pub inputs: &'a Value,
    pub self_: &'a Value,
    pub runtime: &'a Value,
}

/// Bounds on one JavaScript evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time of one evaluation.
    pub time: Duration,
    /// The QuickJS heap.
    pub memory_bytes: usize,
    /// The QuickJS stack (native stack used by the interpreter).
    pub stack_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: js::DEFAULT_TIME,
            memory_bytes: 64 << 20,
            // Well inside the 2 MiB stack of a spawned Rust (and tokio worker) thread.
            stack_bytes: 512 << 10,
        }
    }
}

/// What went wrong in one expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprErrorKind {
    #[error("{0}")]
    Syntax(String),
    #[error("{0}")]
    Reference(String),
    #[error(
        "this is JavaScript (not a parameter reference) and the tool has no InlineJavascriptRequirement: add it under requirements"
    )]
    NeedsJavascript,
    #[error("JavaScript error: {0}")]
    Javascript(String),
    #[error("JavaScript ran past its time limit of {0:?} (a loop that never ends?)")]
    TimeLimit(Duration),
    #[error("JavaScript exceeded its memory limit of {} MiB", .0 >> 20)]
    MemoryLimit(usize),
    #[error("JavaScript exceeded its stack limit of {} KiB (recursion too deep?)", .0 >> 10)]
    StackLimit(usize),
    #[error("cannot start the JavaScript engine: {0}")]
    Engine(String),
}

/// An expression that could not be evaluated: the expression's text and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CWL expression `{expr}`: {kind}")]
pub struct ExprError {
    pub expr: String,
    pub kind: ExprErrorKind,
}

/// The expression evaluator of one tool document.
pub struct Expressions {
    inline_js: bool,
    lib: String,
    limits: Limits,
    engine: OnceCell<Result<js::Engine, String>>,
}

impl std::fmt::Debug for Expressions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expressions")
            .field("inline_js", &self.inline_js)
            .field("lib_bytes", &self.lib.len())
            .field("limits", &self.limits)
            .field("engine_started", &self.engine.get().is_some())
            .finish()
    }
}

/// No InlineJavascriptRequirement, no expressionLib: parameter references only.
impl Default for Expressions {
    fn default() -> Self {
        Self::new(false, Vec::new())
    }
}

impl Expressions {
    /// `inline_js`: the tool has InlineJavascriptRequirement; `lib`: its expressionLib
    /// (already resolved to source text).
    pub fn new(inline_js: bool, lib: Vec<String>) -> Self {
        Self::with_limits(inline_js, lib, Limits::default())
    }

    pub fn with_limits(inline_js: bool, lib: Vec<String>, limits: Limits) -> Self {
        Expressions {
            inline_js,
            lib: lib.join("\n"),
            limits,
            engine: OnceCell::new(),
        }
    }

    /// CWL evaluation of one string field: a field that is exactly one `$(…)`/`${…}` (after
    /// trimming surrounding whitespace, as the reference runner does) yields that value with
    /// its JSON type; otherwise the pieces are joined, strings raw and other values as JSON
    /// (see [`to_text`]). A field without `$(` or `${` is returned as it is.
    pub fn eval(&self, text: &str, ctx: &Context) -> Result<Value, ExprError> {
        if !(text.contains("$(") || text.contains("${")) {
            return Ok(Value::String(text.to_owned()));
        }
        let text = text.trim();
        let err = |kind| ExprError {
            expr: text.to_owned(),
            kind,
        };
        let segs = parse_refs(text).map_err(|m| err(ExprErrorKind::Syntax(m)))?;
        if let [one] = segs.as_slice()
            && !matches!(one, Segment::Text(_))
        {
            return self.segment(one, ctx);
        }
        let mut out = String::new();
        for seg in &segs {
            match seg {
                Segment::Text(t) => out.push_str(t),
                expr => out.push_str(&to_text(&self.segment(expr, ctx)?)),
            }
        }
        Ok(Value::String(out))
    }

    /// `eval` for a JSON value: only a string is evaluated; anything else is returned
    /// unchanged.
    pub fn eval_value(&self, v: &Value, ctx: &Context) -> Result<Value, ExprError> {
        match v {
            Value::String(s) => self.eval(s, ctx),
            other => Ok(other.clone()),
        }
    }

    fn segment(&self, seg: &Segment, ctx: &Context) -> Result<Value, ExprError> {
        let (shown, body) = match seg {
            Segment::Text(t) => return Ok(Value::String(t.clone())),
            Segment::Paren(p) => {
                let shown = format!("$({p})");
                match paramref::eval(p, ctx) {
                    Ok(v) => return Ok(v),
                    Err(e) if !self.inline_js => {
                        let kind = match e {
                            paramref::RefError::Syntax => ExprErrorKind::NeedsJavascript,
                            paramref::RefError::Eval(m) => ExprErrorKind::Reference(m),
                        };
                        return Err(ExprError { expr: shown, kind });
                    }
                    Err(_) => (shown, format!("{{return ({p});}}")),
                }
            }
            Segment::Brace(b) => {
                let shown = format!("${{{b}}}");
                if !self.inline_js {
                    return Err(ExprError {
                        expr: shown,
                        kind: ExprErrorKind::NeedsJavascript,
                    });
                }
                (shown, format!("{{{b}}}"))
            }
        };
        let engine = self
            .engine
            .get_or_init(|| js::Engine::new(self.limits))
            .as_ref()
            .map_err(|m| ExprError {
                expr: shown.clone(),
                kind: ExprErrorKind::Engine(m.clone()),
            })?;
        engine
            .eval(&self.lib, &body, ctx.inputs, ctx.self_, ctx.runtime)
            .map_err(|kind| ExprError { expr: shown, kind })
    }
}
