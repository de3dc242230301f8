//! One canonical shape for a CommandLineTool, so the per-job engine (command line, inputs,
//! outputs) reads one form instead of every spelling CWL allows:
//! - `inputs`/`outputs`: arrays of objects whose `id` is the short name;
//! - types: `T?` → `["null", T]`, `T[]` → `{"type": "array", "items": T}`, unions flattened,
//!   record `fields` an array of objects with a short `name`, enum `symbols` short, and every
//!   SchemaDefRequirement name (`Name`, `#Name`, `file.yml#Name`) replaced by its definition;
//! - `requirements`/`hints`: arrays of objects with `class`;
//! - `baseCommand`: an array of strings; `arguments`: an array (strings or bindings).
//!
//! [`load`] also reads what a document refers to: `$import` / `$include` (relative to the
//! document that names them), a `$graph` (its `#main`, or its only CommandLineTool), and
//! `file.yml#Name` types defined in another file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::CwlError;
use crate::doc;

/// How deep `$import`s and named types may nest: real documents use one or two levels, so
/// more means a cycle.
const MAX_DEPTH: usize = 32;

/// The file stdout goes to when an output has type `stdout` and the tool names no `stdout`.
pub const STDOUT_NAME: &str = "cwl-stdout";
/// Likewise for `stderr`.
pub const STDERR_NAME: &str = "cwl-stderr";

/// The type names CWL defines itself (never looked up as SchemaDefRequirement names).
const BUILTIN_TYPES: &[&str] = &[
    "null",
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "string",
    "File",
    "Directory",
    "Any",
    "stdout",
    "stderr",
    "stdin",
];

/// Read the CWL document at `path`, resolve `$import`, `$include` and `$graph`, and
/// [`normalize`] the CommandLineTool in it.
pub fn load(path: &Path) -> Result<Value, CwlError> {
    let d = doc::read(path)?;
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let root = resolve_directives(d.root, &dir, path, 0)?;
    let cx = Cx {
        path: path.to_path_buf(),
        dir: Some(dir),
        text: Some(d.text),
    };
    cx.normalize(&root)
}

/// The CommandLineTool in `doc` (already parsed, with no `$import`/`$include` left) in the
/// canonical shape. A `$graph` document gives its `#main` (or its only CommandLineTool).
pub fn normalize(doc: &Value) -> Result<Value, CwlError> {
    Cx {
        path: PathBuf::new(),
        dir: None,
        text: None,
    }
    .normalize(doc)
}

/// The short name of a CWL identifier: `#main/in` → `in`, `file.cwl#x` → `x`, `a` → `a`.
pub fn short_name(id: &str) -> &str {
    match id.rsplit_once('#') {
        Some((_, frag)) => frag.rsplit('/').next().unwrap_or(frag),
        None => id,
    }
}

/// Where errors point, and where relative references are read from.
struct Cx {
    path: PathBuf,
    /// The document's directory; `None` for a document given as a value (no file reads).
    dir: Option<PathBuf>,
    text: Option<String>,
}

impl Cx {
    fn line_of(&self, needle: &str) -> Option<usize> {
        let text = self.text.as_ref()?;
        let d = doc::Doc {
            path: self.path.clone(),
            text: text.clone(),
            root: Value::Null,
        };
        d.line_of(needle)
    }

    fn invalid(&self, field: &str, near: &str, message: impl Into<String>) -> CwlError {
        CwlError::Invalid {
            path: self.path.clone(),
            line: self.line_of(near),
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn unsupported(&self, field: &str, near: &str, message: impl Into<String>) -> CwlError {
        CwlError::Unsupported {
            path: self.path.clone(),
            line: self.line_of(near),
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn normalize(&self, doc: &Value) -> Result<Value, CwlError> {
        let root = doc
            .as_object()
            .ok_or_else(|| self.invalid("", "", "the document is not a mapping"))?;
        let tool = match root.get("$graph") {
            Some(graph) => self.pick_from_graph(root, graph)?,
            None => root.clone(),
        };
        self.tool(tool)
    }

    /// `#main` of a packed document, else its only CommandLineTool; the document's
    /// `cwlVersion`, `$namespaces` and `$schemas` apply to it.
    fn pick_from_graph(
        &self,
        root: &Map<String, Value>,
        graph: &Value,
    ) -> Result<Map<String, Value>, CwlError> {
        let items = graph
            .as_array()
            .ok_or_else(|| self.invalid("$graph", "$graph", "must be a list of processes"))?;
        let objects: Vec<&Map<String, Value>> = items.iter().filter_map(Value::as_object).collect();
        let main = objects
            .iter()
            .find(|o| o.get("id").and_then(Value::as_str).map(short_name) == Some("main"));
        let chosen = match main {
            Some(m) => *m,
            None => {
                let tools: Vec<&&Map<String, Value>> = objects
                    .iter()
                    .filter(|o| o.get("class").and_then(Value::as_str) == Some("CommandLineTool"))
                    .collect();
                match tools.as_slice() {
                    [one] => **one,
                    [] => {
                        return Err(self.unsupported(
                            "$graph",
                            "$graph",
                            "it holds no CommandLineTool (only CommandLineTools are served)",
                        ));
                    }
                    _ => {
                        return Err(self.invalid(
                            "$graph",
                            "$graph",
                            "several CommandLineTools and none has the id `main`; give the tool as FILE#ID",
                        ));
                    }
                }
            }
        };
        let mut tool = chosen.clone();
        for key in ["cwlVersion", "$namespaces", "$schemas"] {
            if let (Some(v), false) = (root.get(key), tool.contains_key(key)) {
                tool.insert(key.to_string(), v.clone());
            }
        }
        Ok(tool)
    }

    fn tool(&self, mut tool: Map<String, Value>) -> Result<Value, CwlError> {
        match tool.get("cwlVersion").and_then(Value::as_str) {
            Some("v1.0" | "v1.1" | "v1.2") => {}
            Some(other) => {
                return Err(self.invalid(
                    "cwlVersion",
                    "cwlVersion",
                    format!("`{other}` is not v1.0, v1.1 or v1.2"),
                ));
            }
            None => {
                return Err(self.invalid(
                    "cwlVersion",
                    "class",
                    "missing; this runner reads v1.0 to v1.2",
                ));
            }
        }
        match tool.get("class").and_then(Value::as_str) {
            Some("CommandLineTool") => {}
            Some(other) => {
                return Err(self.unsupported(
                    "class",
                    "class",
                    format!("only CommandLineTool documents are served, not {other}"),
                ));
            }
            None => return Err(self.invalid("class", "cwlVersion", "missing")),
        }
        if let Some(key) = tool.keys().find(|k| {
            k.starts_with('$') && !["$namespaces", "$schemas", "$base"].contains(&k.as_str())
        }) {
            return Err(self.unsupported(
                key,
                key,
                "a schema-salad directive left in the document (read it with norm::load so $import/$include are resolved; $mixin is not supported)",
            ));
        }
        let mut requirements = self.requirement_list(tool.get("requirements"), "requirements")?;
        let mut hints = self.requirement_list(tool.get("hints"), "hints")?;
        if let Some(dir) = &self.dir {
            for r in requirements.iter_mut().chain(hints.iter_mut()) {
                if r["class"] == "InitialWorkDirRequirement"
                    && let Some(listing) = r.get_mut("listing")
                    && listing.is_array()
                {
                    absolute_locations(listing, dir);
                }
            }
        }
        let schemas = self.schema_defs(&requirements)?;
        let inputs = self.parameters(tool.get("inputs"), "inputs", &schemas)?;
        let outputs = self.parameters(tool.get("outputs"), "outputs", &schemas)?;
        let base_command = match tool.get("baseCommand") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![Value::String(s.clone())],
            Some(Value::Array(items)) => {
                if let Some(bad) = items.iter().find(|i| !i.is_string()) {
                    return Err(self.invalid(
                        "baseCommand",
                        "baseCommand",
                        format!("every element must be a string, not {bad}"),
                    ));
                }
                items.clone()
            }
            Some(other) => {
                return Err(self.invalid(
                    "baseCommand",
                    "baseCommand",
                    format!("must be a string or a list of strings, not {other}"),
                ));
            }
        };
        let arguments = match tool.get("arguments") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.clone(),
            Some(other) => {
                return Err(self.invalid(
                    "arguments",
                    "arguments",
                    format!("must be a list, not {other}"),
                ));
            }
        };
        let mut inputs = inputs;
        // The `stdin` input shortcut is a File that becomes the tool's `stdin` (CWL v1.2
        // CommandLineTool `stdin` type doc).
        for i in &mut inputs {
            if i["type"] == "stdin" {
                let id = i["id"].as_str().unwrap_or_default().to_string();
                i["type"] = json!("File");
                if tool.get("stdin").is_some_and(|s| !s.is_null()) {
                    return Err(self.invalid(
                        "stdin",
                        "stdin",
                        format!("both `stdin` and an input of type stdin (`{id}`)"),
                    ));
                }
                tool.insert("stdin".into(), json!(format!("$(inputs.{id}.path)")));
            }
        }
        // The `stdout`/`stderr` output shortcuts name no file: give them fixed names (cwltool
        // picks random ones), without an extension so no `*.txt` glob catches them.
        for (kind, name) in [("stdout", STDOUT_NAME), ("stderr", STDERR_NAME)] {
            let used = outputs.iter().any(|o| o["type"] == kind);
            if used && tool.get(kind).is_none_or(Value::is_null) {
                tool.insert(kind.into(), json!(name));
            }
        }
        tool.insert("inputs".into(), Value::Array(inputs));
        tool.insert("outputs".into(), Value::Array(outputs));
        tool.insert("requirements".into(), Value::Array(requirements));
        tool.insert("hints".into(), Value::Array(hints));
        tool.insert("baseCommand".into(), Value::Array(base_command));
        tool.insert("arguments".into(), Value::Array(arguments));
        Ok(Value::Object(tool))
    }

    /// `requirements`/`hints` as a list of objects with `class` (map form `{Class: body}`).
    fn requirement_list(&self, v: Option<&Value>, what: &str) -> Result<Vec<Value>, CwlError> {
        match v {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::Object(o) if o.get("class").is_some_and(Value::is_string) => {
                        Ok(item.clone())
                    }
                    other => Err(self.invalid(
                        what,
                        what,
                        format!("every entry must be an object with a `class`, not {other}"),
                    )),
                })
                .collect(),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(class, body)| {
                    let mut o = match body {
                        Value::Object(o) => o.clone(),
                        Value::Null => Map::new(),
                        other => {
                            return Err(self.invalid(
                                &format!("{what}.{class}"),
                                class,
                                format!("must be an object, not {other}"),
                            ));
                        }
                    };
                    o.insert("class".into(), Value::String(class.clone()));
                    Ok(Value::Object(o))
                })
                .collect(),
            Some(other) => {
                Err(self.invalid(what, what, format!("must be a list or a map, not {other}")))
            }
        }
    }

    /// The named types of SchemaDefRequirement, by short name (still in their written form).
    fn schema_defs(&self, requirements: &[Value]) -> Result<BTreeMap<String, Value>, CwlError> {
        let mut out = BTreeMap::new();
        for req in requirements {
            if req.get("class").and_then(Value::as_str) != Some("SchemaDefRequirement") {
                continue;
            }
            let types = req.get("types").and_then(Value::as_array).ok_or_else(|| {
                self.invalid(
                    "requirements.SchemaDefRequirement.types",
                    "SchemaDefRequirement",
                    "must be a list of named types",
                )
            })?;
            for t in types {
                let name = t.get("name").and_then(Value::as_str).ok_or_else(|| {
                    self.invalid(
                        "requirements.SchemaDefRequirement.types",
                        "SchemaDefRequirement",
                        format!("a type without a `name`: {t}"),
                    )
                })?;
                out.insert(short_name(name).to_string(), t.clone());
            }
        }
        Ok(out)
    }

    /// `inputs`/`outputs` as a list of objects with short `id`s and canonical types.
    fn parameters(
        &self,
        v: Option<&Value>,
        what: &str,
        schemas: &BTreeMap<String, Value>,
    ) -> Result<Vec<Value>, CwlError> {
        let pairs: Vec<(String, Value)> = match v {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), body_of(v))).collect(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    let id = item.get("id").and_then(Value::as_str).ok_or_else(|| {
                        self.invalid(what, what, format!("an entry without an `id`: {item}"))
                    })?;
                    Ok((id.to_string(), item.clone()))
                })
                .collect::<Result<_, CwlError>>()?,
            Some(other) => {
                return Err(self.invalid(
                    what,
                    what,
                    format!("must be a list or a map, not {other}"),
                ));
            }
        };
        pairs
            .into_iter()
            .map(|(id, mut body)| {
                let short = short_name(&id).to_string();
                let field = format!("{what}.{short}");
                let o = body
                    .as_object_mut()
                    .ok_or_else(|| self.invalid(&field, &short, "must be an object or a type"))?;
                o.insert("id".into(), Value::String(short.clone()));
                let ty = o
                    .get("type")
                    .cloned()
                    .ok_or_else(|| self.invalid(&field, &short, "has no `type`"))?;
                let ty = self.canonical_type(&ty, schemas, &field, &short, 0)?;
                o.insert("type".into(), ty);
                Ok(body)
            })
            .collect()
    }

    /// A CWL type in canonical form (see the module doc).
    fn canonical_type(
        &self,
        t: &Value,
        schemas: &BTreeMap<String, Value>,
        field: &str,
        near: &str,
        depth: usize,
    ) -> Result<Value, CwlError> {
        if depth > MAX_DEPTH {
            return Err(self.invalid(
                field,
                near,
                "types nest too deeply (a named type refers to itself?)",
            ));
        }
        match t {
            Value::String(s) => self.type_name(s, schemas, field, near, depth),
            Value::Array(members) => {
                let mut out: Vec<Value> = Vec::new();
                for m in members {
                    let c = self.canonical_type(m, schemas, field, near, depth + 1)?;
                    let parts = match c {
                        Value::Array(inner) => inner,
                        one => vec![one],
                    };
                    for p in parts {
                        if !out.contains(&p) {
                            out.push(p);
                        }
                    }
                }
                Ok(match <[Value; 1]>::try_from(out) {
                    Ok([one]) => one,
                    Err(many) => Value::Array(many),
                })
            }
            Value::Object(o) => {
                let mut o = o.clone();
                let kind = o.get("type").cloned();
                match kind.as_ref().and_then(Value::as_str) {
                    Some("array") => {
                        let items = o.get("items").ok_or_else(|| {
                            self.invalid(field, near, "an array type without `items`")
                        })?;
                        let items = self.canonical_type(items, schemas, field, near, depth + 1)?;
                        o.insert("items".into(), items);
                    }
                    Some("record") => {
                        let fields =
                            self.record_fields(o.get("fields"), schemas, field, near, depth)?;
                        o.insert("fields".into(), Value::Array(fields));
                    }
                    Some("enum") => {
                        let symbols =
                            o.get("symbols").and_then(Value::as_array).ok_or_else(|| {
                                self.invalid(field, near, "an enum type without `symbols`")
                            })?;
                        let symbols = symbols
                            .iter()
                            .map(|s| {
                                s.as_str()
                                    .map(|s| Value::String(short_name(s).to_string()))
                                    .ok_or_else(|| {
                                        self.invalid(
                                            field,
                                            near,
                                            format!("an enum symbol that is not text: {s}"),
                                        )
                                    })
                            })
                            .collect::<Result<Vec<_>, _>>()?;
                        o.insert("symbols".into(), Value::Array(symbols));
                    }
                    _ => {
                        // `{type: File?}` and the like: a type wrapped in an object.
                        if let Some(inner) = kind.filter(|_| o.len() == 1) {
                            return self.canonical_type(&inner, schemas, field, near, depth + 1);
                        }
                        return Err(self.invalid(field, near, format!("not a CWL type: {t}")));
                    }
                }
                Ok(Value::Object(o))
            }
            other => Err(self.invalid(field, near, format!("not a CWL type: {other}"))),
        }
    }

    fn record_fields(
        &self,
        fields: Option<&Value>,
        schemas: &BTreeMap<String, Value>,
        field: &str,
        near: &str,
        depth: usize,
    ) -> Result<Vec<Value>, CwlError> {
        let pairs: Vec<(String, Value)> = match fields {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), body_of(v))).collect(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|f| {
                    let name = f.get("name").and_then(Value::as_str).ok_or_else(|| {
                        self.invalid(field, near, format!("a record field without a `name`: {f}"))
                    })?;
                    Ok((name.to_string(), f.clone()))
                })
                .collect::<Result<_, CwlError>>()?,
            Some(other) => {
                return Err(self.invalid(
                    field,
                    near,
                    format!("record `fields` must be a list or a map, not {other}"),
                ));
            }
        };
        pairs
            .into_iter()
            .map(|(name, mut body)| {
                let short = short_name(&name).to_string();
                let inner_field = format!("{field}.{short}");
                let o = body.as_object_mut().ok_or_else(|| {
                    self.invalid(&inner_field, near, "must be an object or a type")
                })?;
                o.insert("name".into(), Value::String(short));
                let ty = o.get("type").cloned().ok_or_else(|| {
                    self.invalid(&inner_field, near, "a record field without a `type`")
                })?;
                let ty = self.canonical_type(&ty, schemas, &inner_field, near, depth + 1)?;
                o.insert("type".into(), ty);
                Ok(body)
            })
            .collect()
    }

    fn type_name(
        &self,
        s: &str,
        schemas: &BTreeMap<String, Value>,
        field: &str,
        near: &str,
        depth: usize,
    ) -> Result<Value, CwlError> {
        if let Some(inner) = s.strip_suffix('?') {
            let inner = self.type_name(inner, schemas, field, near, depth + 1)?;
            let mut members = vec![json!("null")];
            match inner {
                Value::Array(m) => members.extend(m.into_iter().filter(|v| v != "null")),
                one => members.push(one),
            }
            return Ok(Value::Array(members));
        }
        if let Some(inner) = s.strip_suffix("[]") {
            let items = self.type_name(inner, schemas, field, near, depth + 1)?;
            return Ok(json!({"type": "array", "items": items}));
        }
        if BUILTIN_TYPES.contains(&s) {
            return Ok(Value::String(s.to_string()));
        }
        let name = short_name(s);
        if let Some(def) = schemas.get(name) {
            let mut c = self.canonical_type(def, schemas, field, near, depth + 1)?;
            if let Some(o) = c.as_object_mut() {
                o.insert("name".into(), Value::String(name.to_string()));
            }
            return Ok(c);
        }
        if let Some((file, _)) = s.split_once('#').filter(|(f, _)| !f.is_empty())
            && let Some(def) = self.external_type(file, name)?
        {
            return self.canonical_type(&def, schemas, field, near, depth + 1);
        }
        Err(self.invalid(
            field,
            near,
            format!("`{s}` is neither a CWL type nor a name in SchemaDefRequirement"),
        ))
    }

    /// A named type `name` in another document (a SchemaDefRequirement, a list of types or
    /// one type), relative to this one.
    fn external_type(&self, file: &str, name: &str) -> Result<Option<Value>, CwlError> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        let path = crate::values::location_path(file, dir);
        let d = doc::read(&path)?;
        let root = resolve_directives(d.root, path.parent().unwrap_or(dir), &path, 0)?;
        let candidates: Vec<Value> = match root {
            Value::Array(items) => items,
            Value::Object(ref o) => match o.get("types").and_then(Value::as_array) {
                Some(types) => types.clone(),
                None => vec![root.clone()],
            },
            _ => Vec::new(),
        };
        Ok(candidates
            .into_iter()
            .find(|t| t.get("name").and_then(Value::as_str).map(short_name) == Some(name)))
    }
}

/// A map-form entry's body: an object as it is, anything else (a type name, a union) as
/// `{type: …}`. An object that is itself an array/record/enum type is a type too.
fn body_of(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let is_type = matches!(
                o.get("type").and_then(Value::as_str),
                Some("array" | "record" | "enum")
            ) && (o.contains_key("items")
                || o.contains_key("fields")
                || o.contains_key("symbols"));
            if is_type {
                json!({ "type": v })
            } else {
                v.clone()
            }
        }
        other => json!({ "type": other }),
    }
}

/// File and Directory literals written in the tool (InitialWorkDirRequirement listings) name
/// their `location` relative to the tool document; the job that uses them does not know
/// where that is, so it becomes an absolute path here.
fn absolute_locations(v: &mut Value, dir: &Path) {
    match v {
        Value::Object(o) => {
            if matches!(
                o.get("class").and_then(Value::as_str),
                Some("File" | "Directory")
            ) && let Some(Value::String(loc)) = o.get_mut("location")
                && !loc.contains("://")
                && !loc.contains("$(")
                && !loc.contains("${")
            {
                *loc = crate::values::location_path(loc, dir).display().to_string();
            }
            for (_, child) in o.iter_mut() {
                absolute_locations(child, dir);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| absolute_locations(i, dir)),
        _ => {}
    }
}

/// Replace every `{$import: file}` with that file's document and every `{$include: file}`
/// with its text, each relative to the document that names it.
fn resolve_directives(v: Value, dir: &Path, path: &Path, depth: usize) -> Result<Value, CwlError> {
    if depth > MAX_DEPTH {
        return Err(CwlError::Invalid {
            path: path.to_path_buf(),
            line: None,
            field: "$import".into(),
            message: "documents import each other too deeply (a cycle?)".into(),
        });
    }
    match v {
        Value::Object(o) => {
            if o.len() == 1 {
                if let Some(Value::String(target)) = o.get("$import") {
                    let p = crate::values::location_path(target, dir);
                    let d = doc::read(&p)?;
                    let sub_dir = p.parent().unwrap_or(dir).to_path_buf();
                    return resolve_directives(d.root, &sub_dir, &p, depth + 1);
                }
                if let Some(Value::String(target)) = o.get("$include") {
                    let p = crate::values::location_path(target, dir);
                    let text = fs_err::read_to_string(&p).map_err(|source| CwlError::Read {
                        path: p.clone(),
                        source,
                    })?;
                    return Ok(Value::String(text));
                }
            }
            if o.contains_key("$mixin") {
                return Err(CwlError::Unsupported {
                    path: path.to_path_buf(),
                    line: None,
                    field: "$mixin".into(),
                    message: "schema-salad `$mixin` is not supported; write the fields out".into(),
                });
            }
            let mut out = Map::new();
            for (k, v) in o {
                out.insert(k, resolve_directives(v, dir, path, depth)?);
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => Ok(Value::Array(
            items
                .into_iter()
                .map(|i| resolve_directives(i, dir, path, depth))
                .collect::<Result<_, _>>()?,
        )),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/cwl/tests")
            .join(name)
    }

    fn input<'a>(tool: &'a Value, id: &str) -> &'a Value {
        tool["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id)
            .unwrap()
    }

    #[test]
    fn map_forms_and_type_shorthands_become_one_shape() {
        let doc = json!({
            "cwlVersion": "v1.0", "class": "CommandLineTool", "baseCommand": "echo",
            "inputs": {
                "a": "File?", "b": "string[]", "c": "int[]?",
                "d": {"type": "boolean", "inputBinding": {"prefix": "-d"}},
                "e": {"type": "enum", "symbols": ["#e/x", "y"]},
            },
            "outputs": [{"id": "#out", "type": "stdout"}],
            "requirements": {"InlineJavascriptRequirement": {}},
            "hints": {"DockerRequirement": {"dockerPull": "alpine"}},
        });
        let t = normalize(&doc).unwrap();
        assert_eq!(input(&t, "a")["type"], json!(["null", "File"]));
        assert_eq!(
            input(&t, "b")["type"],
            json!({"type": "array", "items": "string"})
        );
        assert_eq!(
            input(&t, "c")["type"],
            json!(["null", {"type": "array", "items": "int"}])
        );
        assert_eq!(input(&t, "d")["inputBinding"], json!({"prefix": "-d"}));
        assert_eq!(
            input(&t, "e")["type"],
            json!({"type": "enum", "symbols": ["x", "y"]})
        );
        assert_eq!(t["outputs"], json!([{"id": "out", "type": "stdout"}]));
        assert_eq!(t["baseCommand"], json!(["echo"]));
        assert_eq!(t["stdout"], STDOUT_NAME);
        assert!(t.get("stderr").is_none());
        assert_eq!(t["arguments"], json!([]));
        assert_eq!(
            t["requirements"],
            json!([{"class": "InlineJavascriptRequirement"}])
        );
        assert_eq!(t["hints"][0]["class"], "DockerRequirement");
    }

    #[test]
    fn schema_def_names_are_inlined_recursively() {
        let t = load(&suite("nested_types.cwl")).unwrap();
        let ty = &input(&t, "my_person")["type"];
        assert_eq!(ty["type"], "record");
        assert_eq!(ty["fields"][0]["name"], "name");
        assert_eq!(ty["fields"][0]["type"]["type"], "record");
        assert_eq!(
            ty["fields"][0]["type"]["fields"][1],
            json!({"name": "last", "type": "string"})
        );
        assert_eq!(ty["fields"][1], json!({"name": "age", "type": "int"}));

        let t = load(&suite("anon_enum_inside_array_inside_schemadef.cwl")).unwrap();
        let ty = &input(&t, "first")["type"];
        assert_eq!(ty["fields"][1]["name"], "species");
        assert_eq!(ty["fields"][1]["type"][0], "null");
        assert_eq!(
            ty["fields"][1]["type"][1]["symbols"],
            json!(["homo_sapiens", "mus_musculus"])
        );
    }

    #[test]
    fn imports_and_external_type_references_are_read() {
        let t = load(&suite("schemadef-tool.cwl")).unwrap();
        assert_eq!(t["requirements"][0]["class"], "SchemaDefRequirement");
        let ty = &input(&t, "hello")["type"];
        assert_eq!(ty["type"], "record");
        assert_eq!(ty["fields"][1], json!({"name": "b", "type": "string"}));
        assert_eq!(
            input(&t, "hello")["inputBinding"]["valueFrom"],
            "$(self.a)/$(self.b)"
        );

        let t = load(&suite("cat-tool-shortcut.cwl")).unwrap();
        assert_eq!(input(&t, "file1")["type"], "File");
        assert_eq!(t["stdin"], "$(inputs.file1.path)");

        let t = load(&suite("iwd/iwd-fileobjs1.cwl")).unwrap();
        let listing = &t["requirements"][0]["listing"];
        let loc = listing[0]["location"].as_str().unwrap();
        assert!(
            Path::new(loc).is_absolute() && loc.ends_with("loadContents/inp-filelist.txt"),
            "{loc}"
        );

        let t = load(&suite("imported-hint.cwl")).unwrap();
        assert_eq!(t["hints"][0]["class"], "EnvVarRequirement");

        let t = load(&suite("template-tool.cwl")).unwrap();
        let lib = &t["requirements"][0]["expressionLib"];
        assert!(lib[0].as_str().unwrap().contains("_.template"), "{lib}");

        let t = load(&suite("params2.cwl")).unwrap();
        assert!(t["outputs"].as_array().unwrap().len() > 5);
    }

    #[test]
    fn graph_documents_give_main_or_the_only_tool() {
        for f in ["echo-tool-packed.cwl", "echo-tool-packed2.cwl"] {
            let t = load(&suite(f)).unwrap();
            assert_eq!(t["id"].as_str().map(short_name), Some("main"), "{f}");
            assert_eq!(t["baseCommand"], json!(["echo"]), "{f}");
            assert_eq!(t["cwlVersion"], "v1.2");
            assert_eq!(input(&t, "in")["type"], "Any");
        }
        let one = json!({"cwlVersion": "v1.2", "$graph": [
            {"class": "CommandLineTool", "id": "#t", "inputs": [{"id": "#t/x", "type": "int"}], "outputs": []}
        ]});
        assert_eq!(normalize(&one).unwrap()["inputs"][0]["id"], "x");
    }

    #[test]
    fn what_is_not_a_tool_is_refused() {
        let bad_version = json!({"cwlVersion": "draft-3", "class": "CommandLineTool"});
        assert!(matches!(
            normalize(&bad_version),
            Err(CwlError::Invalid { .. })
        ));
        let workflow = json!({"cwlVersion": "v1.2", "class": "Workflow"});
        assert!(normalize(&workflow).unwrap_err().is_unsupported());
        let unknown = json!({"cwlVersion": "v1.2", "class": "CommandLineTool",
            "inputs": {"x": "Nope"}, "outputs": []});
        let e = normalize(&unknown).unwrap_err().to_string();
        assert!(e.contains("Nope") && e.contains("inputs.x"), "{e}");
        let recursive = json!({"cwlVersion": "v1.2", "class": "CommandLineTool",
            "requirements": [{"class": "SchemaDefRequirement", "types": [
                {"name": "loop", "type": "record", "fields": [{"name": "x", "type": "loop"}]}]}],
            "inputs": {"x": "loop"}, "outputs": []});
        assert!(normalize(&recursive).is_err());
    }

    #[test]
    fn every_suite_tool_normalizes() {
        let dir = suite("");
        let mut count = 0;
        for entry in fs_err::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().is_none_or(|e| e != "cwl") {
                continue;
            }
            let text = fs_err::read_to_string(&p).unwrap();
            if !text.contains("CommandLineTool") || text.contains("class: Workflow") {
                continue;
            }
            match load(&p) {
                Ok(t) => {
                    assert!(
                        t["inputs"].is_array() && t["baseCommand"].is_array(),
                        "{}",
                        p.display()
                    );
                    count += 1;
                }
                Err(e) => panic!("{}: {e}", p.display()),
            }
        }
        assert!(count > 100, "only {count} tools");
    }
}
