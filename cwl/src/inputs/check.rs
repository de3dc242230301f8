//! The first pass of [`super::fill`]: each value checked against its (normalized) CWL type
//! and rebuilt, Files and Directories completed through [`Fs`].

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::fsobj::{Fs, Listing};
use super::{input_error, pointer_token};
use crate::CwlError;

/// What a parameter (an input or a record field) says about the Files and Directories in
/// its value, wherever they sit in it (array items, union members; not inside nested
/// records, whose fields say it themselves).
#[derive(Debug, Clone, Copy)]
pub(super) struct Opts<'t> {
    pub secondary: Option<&'t Value>,
    pub format: Option<&'t Value>,
    pub load_contents: bool,
    pub listing: Listing,
}

impl<'t> Opts<'t> {
    pub fn of(param: &'t Value, default_listing: Listing) -> Self {
        // `inputBinding.loadContents` is the v1.0 spelling, still accepted by v1.2.
        let load_contents = param.get("loadContents").and_then(Value::as_bool) == Some(true)
            || param
                .pointer("/inputBinding/loadContents")
                .and_then(Value::as_bool)
                == Some(true);
        Opts {
            secondary: param.get("secondaryFiles").filter(|v| !v.is_null()),
            format: param.get("format").filter(|v| !v.is_null()),
            load_contents,
            listing: param
                .get("loadListing")
                .and_then(Value::as_str)
                .and_then(Listing::parse)
                .unwrap_or(default_listing),
        }
    }
}

/// A File whose secondary files and format the second pass settles, by pointer into the
/// filled job.
#[derive(Debug)]
pub(super) struct Deferred<'t> {
    pub pointer: String,
    pub at: String,
    pub opts: Opts<'t>,
}

pub(super) struct Filler<'t> {
    pub fs: Fs<'t>,
    pub default_listing: Listing,
    pub deferred: Vec<Deferred<'t>>,
}

impl<'t> Filler<'t> {
    pub fn new(tool: &Value, staging: &'t Path, namespaces: &'t BTreeMap<String, String>) -> Self {
        Filler {
            fs: Fs::new(staging, namespaces),
            default_listing: default_listing(tool),
            deferred: Vec::new(),
        }
    }

    /// `v` checked against `ty` and completed; `at` names it in errors (`rec.f2[1]`), `ptr`
    /// is its JSON pointer in the filled job.
    pub fn value(
        &mut self,
        ty: &'t Value,
        v: &Value,
        base: &Path,
        opts: Opts<'t>,
        at: &str,
        ptr: &str,
    ) -> Result<Value, CwlError> {
        if v.is_null() && !accepts_null(ty) {
            let message = if ty == "Any" {
                "has no value and no default; an `Any` input needs a value (null is not one)"
                    .to_string()
            } else {
                format!(
                    "has no value and no default; the tool requires {}",
                    describe(ty)
                )
            };
            return Err(input_error(at, message));
        }
        match ty {
            Value::String(name) => self.named(name, v, base, opts, at, ptr),
            Value::Array(members) => match members.iter().find(|m| matches(m, v)) {
                Some(m) => self.value(m, v, base, opts, at, ptr),
                None => Err(mismatch(at, ty, v)),
            },
            Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                Some("array") => {
                    let items_ty = o.get("items").unwrap_or(&Value::Null);
                    let Value::Array(items) = v else {
                        return Err(mismatch(at, ty, v));
                    };
                    let mut out = Vec::with_capacity(items.len());
                    for (i, item) in items.iter().enumerate() {
                        out.push(self.value(
                            items_ty,
                            item,
                            base,
                            opts,
                            &format!("{at}[{i}]"),
                            &format!("{ptr}/{i}"),
                        )?);
                    }
                    Ok(Value::Array(out))
                }
                Some("record") => {
                    let Some(given) = v.as_object().filter(|o| !is_fs_object(o)) else {
                        return Err(mismatch(at, ty, v));
                    };
                    let mut out = Map::new();
                    for field in o
                        .get("fields")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let Some(name) = field.get("name").and_then(Value::as_str) else {
                            continue;
                        };
                        let field_ty = field.get("type").unwrap_or(&Value::Null);
                        let value = given.get(name).unwrap_or(&Value::Null);
                        let filled = self.value(
                            field_ty,
                            value,
                            base,
                            Opts::of(field, self.default_listing),
                            &format!("{at}.{name}"),
                            &format!("{ptr}{}", pointer_token(name)),
                        )?;
                        out.insert(name.to_string(), filled);
                    }
                    Ok(Value::Object(out))
                }
                Some("enum") => {
                    // The declared symbol (short, as norm left it), however the job spelled it.
                    let short = v.as_str().map(short_name);
                    o.get("symbols")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .find(|sym| Some(short_name(sym)) == short)
                        .map(|sym| Value::String(sym.to_string()))
                        .ok_or_else(|| mismatch(at, ty, v))
                }
                _ => Err(input_error(
                    at,
                    format!("the tool declares no CWL type here: {ty}"),
                )),
            },
            other => Err(input_error(
                at,
                format!("the tool declares no CWL type here: {other}"),
            )),
        }
    }

    fn named(
        &mut self,
        name: &str,
        v: &Value,
        base: &Path,
        opts: Opts<'t>,
        at: &str,
        ptr: &str,
    ) -> Result<Value, CwlError> {
        match name {
            "Any" => self.any(v, base, at, ptr),
            "File" => {
                let Some(o) = v.as_object().filter(|o| class_of(o) == Some("File")) else {
                    return Err(mismatch(at, &Value::String(name.into()), v));
                };
                let filled = self.fs.file(o, base, opts.load_contents, at)?;
                if opts.secondary.is_some() || opts.format.is_some() {
                    self.deferred.push(Deferred {
                        pointer: ptr.to_string(),
                        at: at.to_string(),
                        opts,
                    });
                }
                Ok(filled)
            }
            "Directory" => {
                let Some(o) = v.as_object().filter(|o| class_of(o) == Some("Directory")) else {
                    return Err(mismatch(at, &Value::String(name.into()), v));
                };
                self.fs.directory(o, base, opts.listing, at)
            }
            "stdout" | "stderr" => Err(input_error(
                at,
                format!("`{name}` is an output type; an input cannot have it"),
            )),
            _ if matches(&Value::String(name.into()), v) => Ok(v.clone()),
            _ if !is_scalar_type(name) => Err(input_error(
                at,
                format!("`{name}` is not a CWL type (normalize the tool first)"),
            )),
            _ => Err(mismatch(at, &Value::String(name.into()), v)),
        }
    }

    /// An `Any` value: as given, with every File and Directory in it completed (so it can
    /// be staged and its `path` used).
    fn any(&mut self, v: &Value, base: &Path, at: &str, ptr: &str) -> Result<Value, CwlError> {
        match v {
            Value::Object(o) if class_of(o) == Some("File") => self.fs.file(o, base, false, at),
            Value::Object(o) if class_of(o) == Some("Directory") => {
                self.fs.directory(o, base, self.default_listing, at)
            }
            Value::Object(o) => {
                let mut out = Map::new();
                for (k, item) in o {
                    let filled = self.any(
                        item,
                        base,
                        &format!("{at}.{k}"),
                        &format!("{ptr}{}", pointer_token(k)),
                    )?;
                    out.insert(k.clone(), filled);
                }
                Ok(Value::Object(out))
            }
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| self.any(item, base, &format!("{at}[{i}]"), &format!("{ptr}/{i}")))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            other => Ok(other.clone()),
        }
    }
}

/// `LoadListingRequirement` (a requirement, else a hint); without one `no_listing`, except
/// for v1.0 documents, which listed directories deeply before v1.1 added the requirement.
fn default_listing(tool: &Value) -> Listing {
    for key in ["requirements", "hints"] {
        let found = tool
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|r| r.get("class").and_then(Value::as_str) == Some("LoadListingRequirement"))
            .find_map(|r| {
                r.get("loadListing")
                    .and_then(Value::as_str)
                    .and_then(Listing::parse)
            });
        if let Some(l) = found {
            return l;
        }
    }
    if tool.get("cwlVersion").and_then(Value::as_str) == Some("v1.0") {
        Listing::Deep
    } else {
        Listing::No
    }
}

fn class_of(o: &Map<String, Value>) -> Option<&str> {
    o.get("class").and_then(Value::as_str)
}

fn is_fs_object(o: &Map<String, Value>) -> bool {
    matches!(class_of(o), Some("File" | "Directory"))
}

fn is_scalar_type(name: &str) -> bool {
    matches!(
        name,
        "null" | "boolean" | "int" | "long" | "float" | "double" | "string"
    )
}

fn accepts_null(ty: &Value) -> bool {
    match ty {
        Value::String(s) => s == "null",
        Value::Array(members) => members.iter().any(accepts_null),
        _ => false,
    }
}

/// Whether `v` fits `ty` by shape (nothing read from disk): how a union picks its member.
pub(super) fn matches(ty: &Value, v: &Value) -> bool {
    match ty {
        Value::String(name) => match name.as_str() {
            "null" => v.is_null(),
            "Any" => !v.is_null(),
            "boolean" => v.is_boolean(),
            // CWL's int is 32-bit and long 64-bit (Avro's); a whole number written as a
            // float (`1.0`) is not an int, as in cwltool.
            "int" => v.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
            "long" => v.is_i64() || v.is_u64(),
            "float" | "double" => v.is_number(),
            "string" => v.is_string(),
            "File" => v.as_object().is_some_and(|o| class_of(o) == Some("File")),
            "Directory" => v
                .as_object()
                .is_some_and(|o| class_of(o) == Some("Directory")),
            _ => false,
        },
        Value::Array(members) => members.iter().any(|m| matches(m, v)),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("array") => {
                let items = o.get("items").unwrap_or(&Value::Null);
                v.as_array()
                    .is_some_and(|vs| vs.iter().all(|x| matches(items, x)))
            }
            Some("record") => {
                let Some(given) = v.as_object().filter(|g| !is_fs_object(g)) else {
                    return false;
                };
                o.get("fields")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .all(|f| {
                        let name = f.get("name").and_then(Value::as_str).unwrap_or("");
                        let fty = f.get("type").unwrap_or(&Value::Null);
                        matches(fty, given.get(name).unwrap_or(&Value::Null))
                    })
            }
            Some("enum") => {
                let Some(s) = v.as_str() else {
                    return false;
                };
                let short = short_name(s);
                o.get("symbols")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .any(|sym| sym == s || short_name(sym) == short)
            }
            _ => false,
        },
        _ => false,
    }
}

/// An enum symbol without its document prefix (`file.cwl#e/a` is `a`), as norm shortens
/// the declared ones.
fn short_name(s: &str) -> &str {
    match s.rsplit_once('#') {
        Some((_, frag)) => frag.rsplit('/').next().unwrap_or(frag),
        None => s,
    }
}

fn mismatch(at: &str, ty: &Value, v: &Value) -> CwlError {
    input_error(
        at,
        format!("expected {}, got {}", describe(ty), describe_value(v)),
    )
}

/// A type as a reader would say it: `int`, `File or array of File`, `one of a, b`.
pub(super) fn describe(ty: &Value) -> String {
    match ty {
        Value::String(s) => s.clone(),
        Value::Array(members) => members
            .iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join(" or "),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("array") => format!(
                "an array of {}",
                describe(o.get("items").unwrap_or(&Value::Null))
            ),
            Some("record") => {
                let fields: Vec<&str> = o
                    .get("fields")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.get("name").and_then(Value::as_str))
                    .collect();
                format!("a record with fields {}", fields.join(", "))
            }
            Some("enum") => {
                let symbols: Vec<&str> = o
                    .get("symbols")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                format!("one of {}", symbols.join(", "))
            }
            _ => ty.to_string(),
        },
        other => other.to_string(),
    }
}

fn describe_value(v: &Value) -> String {
    let short = |s: String| {
        if s.chars().count() > 80 {
            format!("{}…", s.chars().take(80).collect::<String>())
        } else {
            s
        }
    };
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) if n.is_f64() => format!("the number {n}"),
        Value::Number(n) => format!("the integer {n}"),
        Value::String(s) => format!("the string {}", short(format!("{s:?}"))),
        Value::Array(items) => format!("a list of {} item(s)", items.len()),
        Value::Object(o) => match class_of(o) {
            Some(c) => format!("a {c} object"),
            None => short(format!("the object {v}")),
        },
    }
}
