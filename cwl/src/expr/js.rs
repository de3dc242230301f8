//! InlineJavascriptRequirement: expressions run in an embedded QuickJS-NG (no Node, no I/O:
//! only the language's intrinsics, no host functions). One runtime and context per
//! [`super::Expressions`], made on first use; every evaluation is wrapped in its own
//! function, so `inputs`, `self`, `runtime` and the expressionLib are locals of that call and
//! nothing one expression declares is seen by the next. Bounds: wall-clock time (interrupt
//! handler), heap size and stack size, each reported as such when exceeded.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::{Context as JsContext, Ctx, Runtime};
use serde_json::Value;

use super::{ExprErrorKind, Limits};

pub struct Engine {
    // Field order matters: the context must be dropped before its runtime.
    ctx: JsContext,
    rt: Runtime,
    deadline: Rc<Cell<Option<Instant>>>,
    interrupted: Rc<Cell<bool>>,
    limits: Limits,
}

impl Engine {
    pub fn new(limits: Limits) -> Result<Self, String> {
        let rt = Runtime::new().map_err(|e| format!("cannot start QuickJS: {e}"))?;
        rt.set_memory_limit(limits.memory_bytes);
        rt.set_max_stack_size(limits.stack_bytes);
        let deadline: Rc<Cell<Option<Instant>>> = Rc::new(Cell::new(None));
        let interrupted = Rc::new(Cell::new(false));
        {
            let deadline = Rc::clone(&deadline);
            let interrupted = Rc::clone(&interrupted);
            rt.set_interrupt_handler(Some(Box::new(move || {
                let over = deadline.get().is_some_and(|d| Instant::now() >= d);
                if over {
                    interrupted.set(true);
                }
                over
            })));
        }
        let ctx =
            JsContext::full(&rt).map_err(|e| format!("cannot make a QuickJS context: {e}"))?;
        Ok(Engine {
            ctx,
            rt,
            deadline,
            interrupted,
            limits,
        })
    }

    /// Runs `body` (a function body, `{…}`) with `inputs`, `self`, `runtime` and the library
    /// in scope, in strict mode, and returns its result as JSON (`undefined` is an error).
    pub fn eval(
        &self,
        lib: &str,
        body: &str,
        inputs: &Value,
        self_: &Value,
        runtime: &Value,
    ) -> Result<Value, ExprErrorKind> {
        // JSON.parse of a string literal, not the JSON spliced in as an object literal: a
        // `__proto__` key in a literal would set the prototype instead of a property.
        let lit = |v: &Value| Value::String(v.to_string()).to_string();
        let src = format!(
            "(function () {{\"use strict\";\n\
             var inputs = JSON.parse({}), self = JSON.parse({}), runtime = JSON.parse({});\n\
             {lib}\n\
             var r = (function () {body})();\n\
             return r === undefined ? undefined : JSON.stringify(r);\n}})()",
            lit(inputs),
            lit(self_),
            lit(runtime),
        );
        self.interrupted.set(false);
        self.deadline.set(Some(Instant::now() + self.limits.time));
        let out = self.ctx.with(|ctx| {
            let res: rquickjs::Result<Option<String>> = ctx.eval(src);
            res.map_err(|e| self.describe(&ctx, e))
        });
        self.deadline.set(None);
        if out.is_err() {
            // Reference counting frees a finished evaluation's values; only a failed one (an
            // exceeded memory limit, cycles left behind) needs a full collection, so that the
            // next evaluation does not start near the limit. Collecting every time costs more
            // than the evaluation.
            self.rt.run_gc();
        }
        match out? {
            // The reference runner refuses `undefined` too (it is not JSON): saying so here
            // beats a null that silently drops an argument or an output.
            None => Err(ExprErrorKind::Javascript(
                "its value is undefined (a ${…} body without `return`, or a missing property?): return a value, or null"
                    .into(),
            )),
            Some(json) => serde_json::from_str(&json).map_err(|e| {
                ExprErrorKind::Javascript(format!("its result is not JSON ({e}): {json}"))
            }),
        }
    }

    fn describe(&self, ctx: &Ctx<'_>, e: rquickjs::Error) -> ExprErrorKind {
        if self.interrupted.get() {
            return ExprErrorKind::TimeLimit(self.limits.time);
        }
        let message = match e {
            rquickjs::Error::Exception => {
                let v = ctx.catch();
                match v.as_exception() {
                    Some(ex) => {
                        let msg = ex.message().unwrap_or_default();
                        let name: Option<String> = ex.get("name").ok();
                        match name {
                            Some(n) if !n.is_empty() => format!("{n}: {msg}"),
                            _ => msg,
                        }
                    }
                    None => {
                        let s: Option<rquickjs::convert::Coerced<String>> = v.get().ok();
                        format!("uncaught {}", s.map_or_else(|| "value".into(), |s| s.0))
                    }
                }
            }
            rquickjs::Error::Allocation => "out of memory".into(),
            other => other.to_string(),
        };
        if message.contains("out of memory") {
            ExprErrorKind::MemoryLimit(self.limits.memory_bytes)
        } else if message.contains("stack overflow")
            || message.contains("Maximum call stack size exceeded")
        {
            ExprErrorKind::StackLimit(self.limits.stack_bytes)
        } else {
            ExprErrorKind::Javascript(message)
        }
    }
}

/// How long one evaluation may run by default.
pub const DEFAULT_TIME: Duration = Duration::from_secs(10);
