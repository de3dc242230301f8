//! InlineJavascriptRequirement: expressions run in an embedded QuickJS-NG (no Node, no I/O:
//! only the language's intrinsics, no host functions). One runtime and context per
//! [`super::Expressions`], made on first use; every evaluation is wrapped in its own
//! function, so `inputs`, `self`, `runtime` and the expressionLib are locals of that call and
//! nothing one expression declares is seen by the next. That function is called with `this`
//! bound to the global object, because cwltool runs the library at the top level of a script,
//! where `this` is the global object even in strict mode: libraries written for browsers and
//! Node (underscore's `(function(){ var root = this; root._ = _ }.call(this))`) need it. Bounds:
//! wall-clock time (interrupt handler), heap size and stack size, each reported as such when
//! exceeded.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::function::This;
use rquickjs::{Context as JsContext, Ctx, Function, Persistent, Runtime};
use serde_json::Value;

use super::{ExprErrorKind, Limits};

pub struct Engine {
    // Field order matters: saved functions go before the context, the context before its
    // runtime.
    /// Each function body compiled once (with the library) per document: compiling the
    /// wrapper and library is most of an evaluation's cost.
    compiled: RefCell<HashMap<String, Persistent<Function<'static>>>>,
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
            compiled: RefCell::new(HashMap::new()),
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
        // The function is called with `inputs`, `self` and `runtime` made by JSON.parse, not
        // spliced into the source as literals: a `__proto__` key in a literal would set the
        // prototype instead of a property, and the compiled function can be reused.
        let src = format!(
            "(function (inputs, self, runtime) {{\"use strict\";\n\
             {lib}\n\
             var r = (function () {body})();\n\
             return r === undefined ? undefined : JSON.stringify(r);\n}})"
        );
        self.interrupted.set(false);
        self.deadline.set(Some(Instant::now() + self.limits.time));
        let out = self.ctx.with(|ctx| {
            self.call(&ctx, body, src, [inputs, self_, runtime])
                .map_err(|e| self.describe(&ctx, e))
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

    fn call<'js>(
        &self,
        ctx: &Ctx<'js>,
        body: &str,
        src: String,
        args: [&Value; 3],
    ) -> rquickjs::Result<Option<String>> {
        let saved = self.compiled.borrow().get(body).cloned();
        let f: Function<'js> = match saved {
            Some(p) => p.restore(ctx)?,
            None => {
                let f: Function<'js> = ctx.eval(src)?;
                self.compiled
                    .borrow_mut()
                    .insert(body.to_owned(), Persistent::save(ctx, f.clone()));
                f
            }
        };
        let [a, b, c] = args.map(|v| ctx.json_parse(v.to_string()));
        f.call((This(ctx.globals()), a?, b?, c?))
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
