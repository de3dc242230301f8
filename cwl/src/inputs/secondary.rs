//! The second pass of [`super::fill`]: `format` checks and `secondaryFiles`, which may be
//! expressions over the whole inputs object (and `self`, the primary File).

use std::path::Path;

use serde_json::{Value, json};

use super::check::Deferred;
use super::fsobj::{Fs, Listing, expand, split_ext};
use super::input_error;
use crate::CwlError;
use crate::expr::{Context, Expressions, has_expression};

pub(super) fn resolve(
    job: &mut Value,
    deferred: Vec<Deferred<'_>>,
    fs: &mut Fs<'_>,
    tool: &Value,
    exprs: &Expressions,
) -> Result<(), CwlError> {
    if deferred.is_empty() {
        return Ok(());
    }
    // Every expression sees the inputs as the first pass left them: secondary files found
    // for one input are not visible to another's expressions (none of CWL's needs that).
    let inputs = job.clone();
    // The inputs' runtime is not known yet (outdir, cores are the server's, later).
    let runtime = json!({});
    // With `$schemas` the formats may be related by an ontology (subclass, equivalent
    // class) this engine does not read: a format that differs is then accepted rather than
    // refused wrongly. Without them CWL allows exact matching, which is what is done.
    let has_ontology = tool.get("$schemas").is_some_and(|s| !s.is_null());
    for d in deferred {
        let Some(mut file) = job.pointer(&d.pointer).cloned() else {
            continue;
        };
        if let Some(format) = d.opts.format {
            let ctx = Context {
                inputs: &inputs,
                self_: &file,
                runtime: &runtime,
            };
            check_format(&file, format, has_ontology, &ctx, exprs, fs, &d.at)?;
        }
        if let Some(spec) = d.opts.secondary {
            add_secondary(&mut file, spec, &inputs, &runtime, exprs, fs, &d.at)?;
        }
        if let Some(slot) = job.pointer_mut(&d.pointer) {
            *slot = file;
        }
    }
    Ok(())
}

fn eval(exprs: &Expressions, text: &str, ctx: &Context, at: &str) -> Result<Value, CwlError> {
    exprs
        .eval(text, ctx)
        .map_err(|e| input_error(at, e.to_string()))
}

fn check_format(
    file: &Value,
    format: &Value,
    has_ontology: bool,
    ctx: &Context,
    exprs: &Expressions,
    fs: &Fs<'_>,
    at: &str,
) -> Result<(), CwlError> {
    let declared = match format {
        Value::String(s) if has_expression(s) => eval(exprs, s, ctx, at)?,
        other => other.clone(),
    };
    let allowed: Vec<String> = match &declared {
        Value::Null => return Ok(()),
        Value::String(s) => vec![expand(s, fs.namespaces())],
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|s| expand(s, fs.namespaces()))
            .collect(),
        other => {
            return Err(input_error(
                at,
                format!("the input's `format` must be an IRI or a list of IRIs, not {other}"),
            ));
        }
    };
    // A File given without a format is not refused: the server's clients name files by
    // path and rarely know format IRIs, and nothing contradicts the input's format then.
    let Some(actual) = file.get("format").and_then(Value::as_str) else {
        return Ok(());
    };
    if allowed.iter().any(|a| a == actual) || has_ontology {
        return Ok(());
    }
    let path = file.get("path").and_then(Value::as_str).unwrap_or_default();
    Err(input_error(
        at,
        format!(
            "the File {path} has format {actual}, but the input accepts only {}",
            allowed.join(", ")
        ),
    ))
}

/// One `secondaryFiles` entry: a pattern (or an expression) and whether it must exist.
struct Spec<'t> {
    pattern: &'t str,
    required: Option<&'t Value>,
    optional_mark: bool,
}

fn specs<'t>(spec: &'t Value, at: &str) -> Result<Vec<Spec<'t>>, CwlError> {
    let items: Vec<&Value> = match spec {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::String(s) => Ok(match s.strip_suffix('?') {
                Some(p) => Spec {
                    pattern: p,
                    required: None,
                    optional_mark: true,
                },
                None => Spec {
                    pattern: s,
                    required: None,
                    optional_mark: false,
                },
            }),
            Value::Object(o) => {
                let pattern = o.get("pattern").and_then(Value::as_str).ok_or_else(|| {
                    input_error(at, format!("a `secondaryFiles` entry without a `pattern`: {item}"))
                })?;
                let (pattern, optional_mark) = match pattern.strip_suffix('?') {
                    Some(p) => (p, true),
                    None => (pattern, false),
                };
                Ok(Spec {
                    pattern,
                    required: o.get("required").filter(|v| !v.is_null()),
                    optional_mark,
                })
            }
            other => Err(input_error(
                at,
                format!("a `secondaryFiles` entry must be a pattern or {{pattern, required}}, not {other}"),
            )),
        })
        .collect()
}

/// CWL's pattern rule: each leading `^` drops one extension of `name` (if it has one), then
/// the rest is appended (`^.bai` on `x.bam` is `x.bai`).
fn substitute(name: &str, pattern: &str) -> String {
    match pattern.strip_prefix('^') {
        Some(rest) => {
            let (root, ext) = split_ext(name);
            substitute(if ext.is_empty() { name } else { root }, rest)
        }
        None => format!("{name}{pattern}"),
    }
}

fn add_secondary(
    file: &mut Value,
    spec: &Value,
    inputs: &Value,
    runtime: &Value,
    exprs: &Expressions,
    fs: &mut Fs<'_>,
    at: &str,
) -> Result<(), CwlError> {
    let primary_path = file
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let dir = Path::new(&primary_path)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let basename = file
        .get("basename")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut found: Vec<Value> = match file.get("secondaryFiles") {
        Some(Value::Array(given)) => given.clone(),
        _ => Vec::new(),
    };
    for s in specs(spec, at)? {
        let ctx = Context {
            inputs,
            self_: file,
            runtime,
        };
        // Inputs' secondary files are required unless `?` or `required: false` says not.
        let required = match s.required {
            None => !s.optional_mark,
            Some(Value::Bool(b)) => *b,
            Some(Value::String(text)) if has_expression(text.as_str()) => {
                truthy(&eval(exprs, text, &ctx, at)?)
            }
            Some(other) => {
                return Err(input_error(
                    at,
                    format!(
                        "`secondaryFiles.required` must be a boolean or an expression, not {other}"
                    ),
                ));
            }
        };
        // A pattern names a file by the primary's basename; an expression's string is a
        // file name relative to the primary's directory (CWL's SecondaryFileSchema).
        let results = if has_expression(s.pattern) {
            eval(exprs, s.pattern, &ctx, at)?
        } else {
            Value::String(substitute(&basename, s.pattern))
        };
        let results = match results {
            Value::Array(items) => items,
            Value::Null => Vec::new(),
            one => vec![one],
        };
        for r in results {
            let candidate = match &r {
                Value::Null => continue,
                Value::String(name) if name.is_empty() => continue,
                Value::String(name) => {
                    let path = dir.join(name);
                    let Ok(meta) = fs_err::metadata(&path) else {
                        if required {
                            return Err(input_error(
                                at,
                                format!(
                                    "the secondary file {} (from `{}`) does not exist, and the input requires it",
                                    path.display(),
                                    s.pattern
                                ),
                            ));
                        }
                        continue;
                    };
                    let class = if meta.is_dir() { "Directory" } else { "File" };
                    let o = json!({"class": class, "path": path.to_string_lossy()});
                    fs.entry(&o, &dir, Listing::No, at)?
                }
                Value::Object(_) => fs.entry(&r, &dir, Listing::No, at)?,
                other => {
                    return Err(input_error(
                        at,
                        format!(
                            "a `secondaryFiles` expression gave {other}; expected a file name, a File or Directory object, a list of them or null"
                        ),
                    ));
                }
            };
            let name = candidate.get("basename").cloned();
            // A secondary file the job already gave (by basename) stands.
            if !found.iter().any(|f| f.get("basename") == name.as_ref()) {
                found.push(candidate);
            }
        }
    }
    if let Some(o) = file.as_object_mut() {
        o.insert("secondaryFiles".into(), Value::Array(found));
    }
    Ok(())
}

/// JavaScript's truthiness, for an expression's `required`.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}
