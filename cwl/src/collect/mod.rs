//! The CWL output object of a finished CommandLineTool run (CWL v1.2, CommandLineTool
//! "Output binding" and `CommandOutputBinding`): `cwl.output.json` when the tool wrote one,
//! else each declared output from its `glob`, `loadContents`, `outputEval`, `secondaryFiles`
//! and `format`, in that order, then checked against its type.
//!
//! Every path an output names must be in the output directory or be an input of the job
//! (a symlink out of the directory is an error, not followed). Files get `location`
//! (`file://`), `path`, `basename`, `nameroot`, `nameext`, `checksum` and `size`; Directories
//! a full `listing`. Whether the exit status counts as success is the caller's decision:
//! this only reads what the run left behind.

mod fsobj;
mod glob;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::CwlError;
use crate::expr::{Context, Expressions, has_expression};
use fsobj::{Listing, Roots};

pub use fsobj::LOAD_CONTENTS_LIMIT;

/// The files the run's standard output and error went to, by name in the output directory
/// (`CommandLine::stdout` / `stderr`): what outputs of type `stdout` / `stderr` are.
#[derive(Debug, Clone, Copy, Default)]
pub struct Streams<'a> {
    pub stdout: Option<&'a str>,
    pub stderr: Option<&'a str>,
}

/// The CWL output object of the run of `tool` (normalized, [`crate::norm`]) on `job` (the
/// filled inputs object) whose output directory is `outdir`. `runtime` is the expressions'
/// `runtime` with `exitCode` set; `namespaces` the document's `$namespaces` (for `format`).
pub fn collect(
    tool: &Value,
    job: &Value,
    runtime: &Value,
    outdir: &Path,
    namespaces: &BTreeMap<String, String>,
    exprs: &Expressions,
    streams: Streams<'_>,
) -> Result<Value, CwlError> {
    let whole = |message: String| CwlError::Output {
        output: "*".into(),
        message,
    };
    // Locations are absolute `file://` URIs, so the directory they are in must be absolute.
    let outdir = &std::path::absolute(outdir).map_err(|e| {
        whole(format!(
            "the output directory `{}` has no absolute path: {e}",
            outdir.display()
        ))
    })?;
    let roots = Roots::new(outdir, job).map_err(|e| {
        whole(format!(
            "cannot read the output directory `{}`: {e}",
            outdir.display()
        ))
    })?;
    let c = Collector {
        job,
        runtime,
        outdir,
        namespaces,
        exprs,
        streams,
        roots,
        listing: default_listing(tool),
    };
    let outputs = tool
        .get("outputs")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let custom = outdir.join("cwl.output.json");
    if fs_err::symlink_metadata(&custom).is_ok() {
        return c.custom_output(&custom, outputs);
    }
    let mut out = Map::new();
    for param in outputs {
        let id = param.get("id").and_then(Value::as_str).unwrap_or_default();
        let mut value = c.param(param, id)?;
        c.finish(&mut value).map_err(|m| c.err(id, m))?;
        c.check_type(&mut value, param.get("type").unwrap_or(&Value::Null), id)?;
        out.insert(id.to_string(), value);
    }
    Ok(Value::Object(out))
}

struct Collector<'a> {
    job: &'a Value,
    runtime: &'a Value,
    outdir: &'a Path,
    namespaces: &'a BTreeMap<String, String>,
    exprs: &'a Expressions,
    streams: Streams<'a>,
    roots: Roots,
    /// `LoadListingRequirement`'s `loadListing`, for Directories given to `outputEval`.
    listing: Listing,
}

/// The tool's `LoadListingRequirement` (requirements before hints), else no listing, as
/// CWL v1.1+ defaults (v1.0 had no such field and always listed everything).
fn default_listing(tool: &Value) -> Listing {
    for key in ["requirements", "hints"] {
        let found = tool
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|r| r.get("class").and_then(Value::as_str) == Some("LoadListingRequirement"))
            .and_then(|r| r.get("loadListing"))
            .and_then(Listing::parse);
        if let Some(l) = found {
            return l;
        }
    }
    if tool.get("cwlVersion").and_then(Value::as_str) == Some("v1.0") {
        Listing::Deep
    } else {
        Listing::None
    }
}

impl Collector<'_> {
    fn err(&self, output: &str, message: String) -> CwlError {
        CwlError::Output {
            output: output.to_string(),
            message,
        }
    }

    /// The one place expressions are evaluated: `v` (a string field, else returned as is)
    /// with `self` = `self_`.
    fn eval(&self, v: &Value, self_: &Value, output: &str, field: &str) -> Result<Value, CwlError> {
        let ctx = Context {
            inputs: self.job,
            self_,
            runtime: self.runtime,
        };
        self.exprs
            .eval_value(v, &ctx)
            .map_err(|e| self.err(output, format!("`{field}`: {e}")))
    }

    /// `cwl.output.json` is the output object: its Files and Directories resolved against
    /// the output directory and completed, then each declared output checked.
    fn custom_output(&self, path: &Path, outputs: &[Value]) -> Result<Value, CwlError> {
        let file = "cwl.output.json";
        self.roots.check(path).map_err(|m| self.err(file, m))?;
        let text = fs_err::read_to_string(path).map_err(|e| self.err(file, e.to_string()))?;
        let mut value: Value = serde_json::from_str(&text).map_err(|e| {
            self.err(
                file,
                format!("the tool wrote a cwl.output.json that is not JSON: {e}"),
            )
        })?;
        if !value.is_object() {
            return Err(self.err(
                file,
                "the tool wrote a cwl.output.json that is not a JSON object".into(),
            ));
        }
        let mut literals = 0usize;
        self.resolve_custom(&mut value, &mut literals)
            .map_err(|m| self.err(file, m))?;
        self.finish(&mut value).map_err(|m| self.err(file, m))?;
        let Value::Object(obj) = &mut value else {
            return Ok(value);
        };
        for param in outputs {
            let id = param.get("id").and_then(Value::as_str).unwrap_or_default();
            let v = obj.entry(id.to_string()).or_insert(Value::Null);
            self.check_type(v, param.get("type").unwrap_or(&Value::Null), id)?;
        }
        Ok(value)
    }

    /// Give every File/Directory of `cwl.output.json` an absolute `path`: `path` (which wins
    /// over `location`) and `location` relative to the output directory; a File literal
    /// (`contents` only) is written there.
    fn resolve_custom(&self, v: &mut Value, literals: &mut usize) -> Result<(), String> {
        match v {
            Value::Array(items) => {
                for i in items {
                    self.resolve_custom(i, literals)?;
                }
            }
            Value::Object(o) => {
                if is_fs_object(o) {
                    let path = match (o.get("path"), o.get("location")) {
                        (Some(Value::String(p)), _) => Some(self.outdir.join(p)),
                        (_, Some(Value::String(l))) => Some(self.resolve_location(l)?),
                        _ => None,
                    };
                    match path {
                        Some(p) => {
                            o.insert("path".into(), json!(p.to_string_lossy()));
                        }
                        None => self.write_literal(o, literals)?,
                    }
                    // Recomputed from the file itself.
                    o.remove("checksum");
                    o.remove("size");
                }
                for (_, i) in o.iter_mut() {
                    self.resolve_custom(i, literals)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn resolve_location(&self, loc: &str) -> Result<PathBuf, String> {
        if let Some(rest) = loc.strip_prefix("file://") {
            return Ok(fsobj::decode(rest));
        }
        if loc.contains("://") {
            return Err(format!(
                "location `{loc}`: only file:// locations and paths relative to the output \
                 directory are supported"
            ));
        }
        Ok(self.outdir.join(fsobj::decode(loc)))
    }

    /// A File literal in `cwl.output.json`: its `contents` become a file in the output
    /// directory named by its `basename` (or a generated name).
    fn write_literal(&self, o: &mut Map<String, Value>, n: &mut usize) -> Result<(), String> {
        let Some(contents) = o.get("contents").and_then(Value::as_str) else {
            return Err(format!(
                "a File or Directory without `path`, `location` or `contents`: {}",
                Value::Object(o.clone())
            ));
        };
        *n += 1;
        let name = match o.get("basename").and_then(Value::as_str) {
            Some(b) if !b.contains('/') && !b.is_empty() => b.to_string(),
            _ => format!("cwl-literal-{n}"),
        };
        let path = self.outdir.join(name);
        fs_err::write(&path, contents).map_err(|e| e.to_string())?;
        o.insert("path".into(), json!(path.to_string_lossy()));
        Ok(())
    }

    /// One output parameter (or record field) as the bindings give it.
    fn param(&self, param: &Value, id: &str) -> Result<Value, CwlError> {
        let ty = param.get("type").unwrap_or(&Value::Null);
        let stream = match ty.as_str() {
            Some("stdout") => Some(("stdout", self.streams.stdout)),
            Some("stderr") => Some(("stderr", self.streams.stderr)),
            _ => None,
        };
        let stream_binding;
        let binding = match stream {
            Some((_, Some(name))) => {
                stream_binding = json!({ "glob": name });
                Some(&stream_binding)
            }
            Some((which, None)) => {
                return Err(self.err(
                    id,
                    format!(
                        "is of type `{which}`, but the run's {which} was not captured to a file"
                    ),
                ));
            }
            None => param.get("outputBinding"),
        };
        let file_ty = json!("File");
        let ty = if stream.is_some() { &file_ty } else { ty };
        let (single, optional) = single_optional(ty);

        let mut result = Value::Null;
        if let Some(b) = binding {
            let mut patterns = Vec::new();
            let mut found = Vec::new();
            if let Some(g) = b.get("glob") {
                patterns = self.patterns(g, id)?;
                let load_contents =
                    truthy(b.get("loadContents")) || truthy(param.get("loadContents"));
                let listing = b
                    .get("loadListing")
                    .or_else(|| param.get("loadListing"))
                    .and_then(Listing::parse)
                    .unwrap_or(self.listing);
                let prefixes = self.outdir_prefixes();
                let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
                for p in &patterns {
                    for path in
                        glob::matches(self.outdir, &prefixes, p).map_err(|m| self.err(id, m))?
                    {
                        let mut obj = fsobj::object(&path, listing, &self.roots)
                            .map_err(|m| self.err(id, m))?;
                        if load_contents && obj.get("class") == Some(&json!("File")) {
                            let text = fsobj::contents(&path).map_err(|m| self.err(id, m))?;
                            obj.insert("contents".into(), json!(text));
                        }
                        found.push(Value::Object(obj));
                    }
                }
            }
            let found = Value::Array(found);
            result = match b.get("outputEval") {
                Some(e) => self.eval(e, &found, id, "outputBinding.outputEval")?,
                None => found,
            };
            if single {
                result = match result {
                    Value::Array(mut items) if items.len() <= 1 => {
                        items.pop().unwrap_or(Value::Null)
                    }
                    Value::Array(items) => {
                        return Err(self.err(
                            id,
                            format!(
                                "is a single {} but {} paths matched ({}): make the glob match one",
                                type_name(ty),
                                items.len(),
                                items
                                    .iter()
                                    .filter_map(|i| i.get("basename").and_then(Value::as_str))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ));
                    }
                    other => other,
                };
                if result.is_null() && !optional {
                    return Err(self.err(
                        id,
                        format!(
                            "no file matched its glob {}: the tool did not write it in the \
                             output directory `{}`",
                            json!(patterns),
                            self.outdir.display()
                        ),
                    ));
                }
            }
        }

        if let Some(sf) = param.get("secondaryFiles") {
            let mut primaries = Vec::new();
            each_file_mut(&mut result, &mut primaries);
            for primary in primaries {
                self.secondary_files(primary, sf, id)?;
            }
        }
        if let Some(format) = param.get("format") {
            let mut primaries = Vec::new();
            each_file_mut(&mut result, &mut primaries);
            for primary in primaries {
                let self_ = Value::Object(primary.clone());
                let f = self.eval(format, &self_, id, "format")?;
                let Some(f) = f.as_str() else {
                    return Err(self.err(id, format!("`format` gave {f}, not a string")));
                };
                primary.insert("format".into(), json!(expand(f, self.namespaces)));
            }
        }

        if optional && is_empty(&result) {
            return Ok(Value::Null);
        }
        if is_empty(&result)
            && let Some(fields) = record_fields(ty)
        {
            let mut out = Map::new();
            for field in fields {
                let name = field
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let v = self.param(field, &format!("{id}.{name}"))?;
                out.insert(name.to_string(), v);
            }
            return Ok(Value::Object(out));
        }
        Ok(result)
    }

    /// The output directory as globs may spell it: as the tool saw it (`runtime.outdir`) and
    /// as it is here.
    fn outdir_prefixes(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(o) = self.runtime.get("outdir").and_then(Value::as_str) {
            v.push(o.to_string());
        }
        v.push(self.outdir.to_string_lossy().into_owned());
        v
    }

    /// `glob` as patterns: a string or a list of strings, each evaluated, each result a
    /// string or a list of strings (empty ones and nulls dropped).
    fn patterns(&self, glob: &Value, id: &str) -> Result<Vec<String>, CwlError> {
        let items: Vec<&Value> = match glob {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        let mut out = Vec::new();
        for g in items {
            let v = self.eval(g, &Value::Null, id, "outputBinding.glob")?;
            let bad = |v: &Value| {
                self.err(
                    id,
                    format!("`outputBinding.glob` {g} gave {v}: it must give a string or a list of strings"),
                )
            };
            match &v {
                Value::Null => {}
                Value::String(s) if s.is_empty() => {}
                Value::String(s) => out.push(s.clone()),
                Value::Array(list) => {
                    for s in list {
                        match s {
                            Value::String(s) if !s.is_empty() => out.push(s.clone()),
                            Value::String(_) => {}
                            other => return Err(bad(other)),
                        }
                    }
                }
                other => return Err(bad(other)),
            }
        }
        Ok(out)
    }

    /// `secondaryFiles` of one output File, found next to it (a missing optional one is left
    /// out; outputs' secondary files are optional unless `required` says so).
    fn secondary_files(
        &self,
        primary: &mut Map<String, Value>,
        spec: &Value,
        id: &str,
    ) -> Result<(), CwlError> {
        let Some(path) = primary
            .get("path")
            .and_then(Value::as_str)
            .map(PathBuf::from)
        else {
            return Ok(());
        };
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let basename = primary
            .get("basename")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let specs: Vec<&Value> = match spec {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        let self_ = Value::Object(primary.clone());
        let mut found: Vec<Value> = match primary.get("secondaryFiles") {
            Some(Value::Array(a)) => a.clone(),
            _ => Vec::new(),
        };
        for s in specs {
            let (pattern, required) = match s {
                Value::String(p) => (Value::String(p.clone()), Value::Null),
                Value::Object(o) => (
                    o.get("pattern").cloned().unwrap_or(Value::Null),
                    o.get("required").cloned().unwrap_or(Value::Null),
                ),
                other => {
                    return Err(self.err(id, format!("`secondaryFiles` entry {other} is neither a pattern nor an object with one")));
                }
            };
            let mut required = match self.eval(&required, &self_, id, "secondaryFiles.required")? {
                Value::Bool(b) => b,
                Value::Null => false,
                other => {
                    return Err(self.err(
                        id,
                        format!("`secondaryFiles.required` gave {other}, not true or false"),
                    ));
                }
            };
            let names: Vec<Value> = match &pattern {
                Value::String(p) if !has_expression(p) => {
                    let p = match p.strip_suffix('?') {
                        Some(rest) => {
                            required = false;
                            rest
                        }
                        None => p.as_str(),
                    };
                    vec![json!(substitute(&basename, p))]
                }
                other => match self.eval(other, &self_, id, "secondaryFiles.pattern")? {
                    Value::Array(a) => a,
                    v => vec![v],
                },
            };
            for n in names {
                let sf_path = match &n {
                    Value::Null => continue,
                    Value::String(s) if s.is_empty() => continue,
                    Value::String(s) => dir.join(s),
                    Value::Object(o) => match (o.get("path"), o.get("location")) {
                        (Some(Value::String(p)), _) => dir.join(p),
                        (_, Some(Value::String(l))) => match l.strip_prefix("file://") {
                            Some(rest) => fsobj::decode(rest),
                            None => dir.join(fsobj::decode(l)),
                        },
                        _ => {
                            return Err(self.err(
                                id,
                                format!("a secondary file without `path` or `location`: {n}"),
                            ));
                        }
                    },
                    other => {
                        return Err(self.err(
                            id,
                            format!(
                                "`secondaryFiles` gave {other}, not a file name or a File/Directory"
                            ),
                        ));
                    }
                };
                if fs_err::symlink_metadata(&sf_path).is_err() {
                    if required {
                        return Err(self.err(
                            id,
                            format!(
                                "the required secondary file `{}` of `{}` is missing",
                                sf_path.display(),
                                path.display()
                            ),
                        ));
                    }
                    continue;
                }
                let sf_text = sf_path.to_string_lossy();
                if found
                    .iter()
                    .any(|f| f.get("path").and_then(Value::as_str) == Some(&*sf_text))
                {
                    continue;
                }
                let mut obj = fsobj::object(&sf_path, Listing::Deep, &self.roots)
                    .map_err(|m| self.err(id, m))?;
                if let Value::Object(given) = &n
                    && let Some(b) = given.get("basename")
                {
                    obj.insert("basename".into(), b.clone());
                }
                found.push(Value::Object(obj));
            }
        }
        primary.insert("secondaryFiles".into(), Value::Array(found));
        Ok(())
    }

    /// Complete every File and Directory in an output value: each path checked against the
    /// output directory and the inputs, `location`/`path`/`basename`/… from it, `checksum`
    /// and `size` where missing, and a full `listing` where missing.
    fn finish(&self, v: &mut Value) -> Result<(), String> {
        match v {
            Value::Array(items) => {
                for i in items {
                    self.finish(i)?;
                }
            }
            Value::Object(o) if is_fs_object(o) => {
                let path = match (o.get("path"), o.get("location")) {
                    (Some(Value::String(p)), _) => PathBuf::from(p),
                    (_, Some(Value::String(l))) => self.resolve_location(l)?,
                    _ => {
                        return Err(format!(
                            "a File or Directory without a path: {}",
                            Value::Object(o.clone())
                        ));
                    }
                };
                self.roots.check(&path)?;
                let path = match o.get("basename") {
                    Some(Value::String(b)) if !path.is_dir() => self.renamed(&path, b)?,
                    _ => path,
                };
                let is_dir = o.get("class") == Some(&json!("Directory"));
                if is_dir != path.is_dir() {
                    return Err(format!(
                        "`{}` is a {}, but the output gives it as a {}",
                        path.display(),
                        if path.is_dir() { "directory" } else { "file" },
                        if is_dir { "Directory" } else { "File" },
                    ));
                }
                let mut fresh = if is_dir {
                    fsobj::dir_object(&path, Listing::None, &self.roots)?
                } else if o.contains_key("checksum") && o.contains_key("size") {
                    // Found by a glob just now: only the names to refresh.
                    fsobj::file_names(&path)
                } else {
                    fsobj::file_object(&path)?
                };
                // A Directory keeps the basename the output chose (Files were renamed).
                if let Some(Value::String(b)) = o.get("basename")
                    && is_dir
                {
                    fresh.insert("basename".into(), json!(b));
                }
                for (k, val) in fresh {
                    o.insert(k, val);
                }
                if is_dir && !o.contains_key("listing") {
                    let listing = fsobj::list(&path, Listing::Deep, &self.roots)?;
                    o.insert("listing".into(), Value::Array(listing));
                }
                for key in ["listing", "secondaryFiles"] {
                    if let Some(inner) = o.get_mut(key) {
                        self.finish(inner)?;
                    }
                }
            }
            Value::Object(o) => {
                for (_, i) in o.iter_mut() {
                    self.finish(i)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The file at `path` under the name `basename` an output gave it (a secondary file
    /// expression may rename): the same file when the names agree, else a link (or copy)
    /// of it named so, next to it in the output directory, or in the output directory for an
    /// input.
    fn renamed(&self, path: &Path, basename: &str) -> Result<PathBuf, String> {
        if path.file_name().is_some_and(|n| n == basename) {
            return Ok(path.to_path_buf());
        }
        if basename.is_empty() || basename.contains('/') || basename == "." || basename == ".." {
            return Err(format!(
                "`{}` is given the basename `{basename}`, which is not a file name",
                path.display()
            ));
        }
        let dir = match path.parent() {
            Some(d) if path.starts_with(self.outdir) => d,
            _ => self.outdir,
        };
        let target = dir.join(basename);
        if fs_err::symlink_metadata(&target).is_ok() {
            let same = fs_err::canonicalize(&target).ok() == fs_err::canonicalize(path).ok();
            return if same {
                Ok(target)
            } else {
                Err(format!(
                    "`{}` is given the basename `{basename}`, but `{}` already exists",
                    path.display(),
                    target.display()
                ))
            };
        }
        if fs_err::hard_link(path, &target).is_err() {
            fs_err::copy(path, &target).map_err(|e| e.to_string())?;
        }
        Ok(target)
    }

    /// The value must be of the declared type (a File output that found a directory fails;
    /// a whole float for an `int` becomes the integer).
    fn check_type(&self, v: &mut Value, ty: &Value, id: &str) -> Result<(), CwlError> {
        if conforms(v, ty) {
            return Ok(());
        }
        let items = ty
            .get("items")
            .filter(|_| ty.get("type") == Some(&json!("array")));
        let got = match (&*v, items) {
            (Value::Array(list), Some(item_ty)) => {
                match list
                    .iter()
                    .enumerate()
                    .find(|(_, i)| !conforms(&mut (*i).clone(), item_ty))
                {
                    Some((n, bad)) => format!("{} as item {n}", describe(bad)),
                    None => describe(v),
                }
            }
            _ => describe(v),
        };
        Err(self.err(
            id,
            format!("is declared {}, but the run gave {got}", type_name(ty)),
        ))
    }
}

/// A value as an error message names it: a File/Directory by class and path.
fn describe(v: &Value) -> String {
    match v {
        Value::Object(o) if is_fs_object(o) => format!(
            "a {} (`{}`)",
            o.get("class").and_then(Value::as_str).unwrap_or_default(),
            o.get("path").and_then(Value::as_str).unwrap_or_default()
        ),
        Value::Null => "no value: its glob matched nothing, or it has no outputBinding and the \
                        tool wrote no cwl.output.json"
            .to_string(),
        other => other.to_string(),
    }
}

/// Whether a declared type takes one File/Directory (unwrapped from the glob's list), and
/// whether it allows null.
fn single_optional(ty: &Value) -> (bool, bool) {
    match ty {
        Value::String(s) => (matches!(s.as_str(), "File" | "Directory"), s == "null"),
        Value::Array(u) => (
            u.iter()
                .any(|t| matches!(t.as_str(), Some("File" | "Directory"))),
            u.iter().any(|t| t.as_str() == Some("null")),
        ),
        _ => (false, false),
    }
}

fn record_fields(ty: &Value) -> Option<&Vec<Value>> {
    if ty.get("type").and_then(Value::as_str) == Some("record") {
        ty.get("fields").and_then(Value::as_array)
    } else {
        None
    }
}

/// What counts as "no value" for an optional output: null, `[]`, `{}` (not 0, "" or false).
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn truthy(v: Option<&Value>) -> bool {
    v.and_then(Value::as_bool).unwrap_or(false)
}

fn is_fs_object(o: &Map<String, Value>) -> bool {
    matches!(
        o.get("class").and_then(Value::as_str),
        Some("File" | "Directory")
    )
}

/// The File objects at the top of an output value (it, or the items of a list).
fn each_file_mut<'v>(v: &'v mut Value, out: &mut Vec<&'v mut Map<String, Value>>) {
    match v {
        Value::Object(o) if o.get("class").and_then(Value::as_str) == Some("File") => out.push(o),
        Value::Array(items) => {
            for i in items {
                if let Value::Object(o) = i
                    && o.get("class").and_then(Value::as_str) == Some("File")
                {
                    out.push(o);
                }
            }
        }
        _ => {}
    }
}

/// A secondary file name from a pattern: each leading `^` removes one extension of the
/// primary's name, the rest is appended.
fn substitute(basename: &str, pattern: &str) -> String {
    let mut name = basename;
    let mut rest = pattern;
    while let Some(r) = rest.strip_prefix('^') {
        rest = r;
        if let Some(i) = name.rfind('.') {
            name = &name[..i];
        }
    }
    format!("{name}{rest}")
}

/// A `format` with a `$namespaces` prefix expanded to its IRI.
fn expand(format: &str, namespaces: &BTreeMap<String, String>) -> String {
    if let Some((prefix, rest)) = format.split_once(':')
        && let Some(iri) = namespaces.get(prefix)
    {
        return format!("{iri}{rest}");
    }
    format.to_string()
}

/// Whether `v` is a value of the canonical CWL type `ty`; a whole float for an `int`/`long`
/// is made the integer on the way.
fn conforms(v: &mut Value, ty: &Value) -> bool {
    match ty {
        Value::String(s) => match s.as_str() {
            "null" => v.is_null(),
            "boolean" => v.is_boolean(),
            "int" | "long" => {
                if let Some(f) = v.as_f64()
                    && v.is_f64()
                    && f.fract() == 0.0
                    && f.abs() < 9.0e15
                {
                    *v = json!(f as i64);
                }
                v.is_i64() || v.is_u64()
            }
            "float" | "double" => v.is_number(),
            "string" => v.is_string(),
            "File" | "stdout" | "stderr" => class_is(v, "File"),
            "Directory" => class_is(v, "Directory"),
            "Any" => !v.is_null(),
            // A name norm did not resolve: nothing to check it against.
            _ => true,
        },
        Value::Array(union) => union.iter().any(|t| conforms(v, t)),
        Value::Object(t) => match t.get("type").and_then(Value::as_str) {
            Some("array") => {
                let items = t.get("items").unwrap_or(&Value::Null);
                match v {
                    Value::Array(a) => a.iter_mut().all(|i| conforms(i, items)),
                    _ => false,
                }
            }
            Some("record") => {
                let Value::Object(o) = v else { return false };
                t.get("fields")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .all(|f| {
                        let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
                        let fty = f.get("type").unwrap_or(&Value::Null);
                        let field = o.entry(name.to_string()).or_insert(Value::Null);
                        conforms(field, fty)
                    })
            }
            Some("enum") => match v.as_str() {
                Some(s) => t
                    .get("symbols")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .any(|sym| {
                        sym == s
                            || sym.ends_with(&format!("/{s}"))
                            || sym.ends_with(&format!("#{s}"))
                    }),
                None => false,
            },
            // `{"type": "File"}` and the like.
            Some(_) => match t.get("type") {
                Some(inner) => conforms(v, inner),
                None => true,
            },
            None => true,
        },
        _ => true,
    }
}

fn class_is(v: &Value, class: &str) -> bool {
    v.get("class").and_then(Value::as_str) == Some(class)
}

/// A type as CWL spells it, for messages.
fn type_name(ty: &Value) -> String {
    match ty {
        Value::String(s) => s.clone(),
        Value::Array(u) => u.iter().map(type_name).collect::<Vec<_>>().join(" or "),
        Value::Object(t) => match t.get("type").and_then(Value::as_str) {
            Some("array") => format!("{}[]", type_name(t.get("items").unwrap_or(&Value::Null))),
            Some(other) => other.to_string(),
            None => ty.to_string(),
        },
        other => other.to_string(),
    }
}
