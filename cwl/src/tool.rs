//! A CWL CommandLineTool into an adapter with one workflow, `run`.
//!
//! The command line is built the way CWL builds it (baseCommand, then `arguments` and bound
//! inputs sorted by `position`), but as manifest templates: each value is a validated
//! parameter or a named input, never text for a shell. What the manifest model cannot express
//! faithfully is refused, naming the field.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use scimcp_core::manifest::{Adapter, ManifestError, RUN_VALUES};
use serde_json::{Value, json};

use crate::CwlError;
use crate::doc::{self, Doc};
use crate::refs::{self, Target};
use crate::types::CwlType;

/// The one workflow a CWL tool becomes.
pub const WORKFLOW_ID: &str = "run";

/// The operator's choices for CWL features that are off by default.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {}

/// A loaded tool: the adapter, and how CWL's inputs and outputs map onto it (what cwl-run
/// needs to build a request from a job and an output object from a result).
#[derive(Debug, Clone)]
pub struct CwlTool {
    pub adapter: Adapter,
    pub inputs: Vec<InputMapping>,
    pub outputs: Vec<OutputMapping>,
    /// `$namespaces`, for expanding `format` IRIs.
    pub namespaces: BTreeMap<String, String>,
    /// The tool document's directory (defaults' locations are relative to it).
    pub dir: PathBuf,
}

/// Where one CWL input goes in the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputBinding {
    /// `parameters.<name>`.
    Param(String),
    /// `inputs.<id>` (a File, Directory or File array).
    Input(String),
}

#[derive(Debug, Clone)]
pub struct InputMapping {
    pub cwl_id: String,
    pub ty: CwlType,
    pub optional: bool,
    /// The CWL `default` (for a File, with `location` made absolute against the tool).
    pub default: Option<Value>,
    pub binding: InputBinding,
}

#[derive(Debug, Clone)]
pub struct OutputMapping {
    pub cwl_id: String,
    /// The artifact id in the run's result.
    pub artifact: String,
    pub ty: CwlType,
    pub optional: bool,
    /// The expanded format IRI.
    pub format: Option<String>,
    pub load_contents: bool,
}

/// Read, map and validate the CWL document at `path`.
pub fn load(path: &Path, _options: LoadOptions) -> Result<CwlTool, CwlError> {
    let doc = doc::read(path)?;
    Mapper::new(&doc)?.map()
}

/// Names a manifest accepts: `[a-z_][a-z0-9_]*` for parameters, `[a-z][a-z0-9_]*` for ids.
pub(crate) fn sanitize(id: &str, taken: &mut BTreeSet<String>) -> String {
    let short = id.rsplit(['#', '/']).next().unwrap_or(id);
    let mut s: String = short
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        s = format!("p_{s}");
    }
    if RUN_VALUES.contains(&s.as_str()) || s == "options" || s == "null" || s == "input" {
        s = format!("cwl_{s}");
    }
    s.truncate(60);
    let mut candidate = s.clone();
    let mut n = 2;
    while !taken.insert(candidate.clone()) {
        candidate = format!("{s}_{n}");
        n += 1;
    }
    candidate
}

/// A literal CWL argument as template text (braces doubled).
fn literal(s: &str) -> String {
    s.replace('{', "{{").replace('}', "}}")
}

/// A CWL list-or-map of named entries (`inputs`, `outputs`) as (id, body) pairs.
fn entries(v: Option<&Value>, what: &str, doc: &Doc) -> Result<Vec<(String, Value)>, CwlError> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => Ok(map
            .iter()
            .map(|(k, v)| {
                let body = match v {
                    Value::Object(_) => v.clone(),
                    other => json!({ "type": other }),
                };
                (k.clone(), body)
            })
            .collect()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                let id = item
                    .get("id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| doc.invalid(what, what, "an entry without an `id`"))?;
                Ok((id.trim_start_matches('#').to_string(), item.clone()))
            })
            .collect(),
        Some(_) => Err(doc.invalid(what, what, "must be a list or a map")),
    }
}

/// Requirements or hints as (class, body) pairs.
fn requirement_list(v: Option<&Value>) -> Vec<(String, Value)> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| Some((i.get("class")?.as_str()?.to_string(), i.clone())))
            .collect(),
        Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        _ => Vec::new(),
    }
}

/// One element of the command line before sorting.
struct Entry {
    position: i64,
    /// Arguments before inputs at the same position, each in its own order.
    group: u8,
    tiebreak: String,
    index: usize,
    pieces: Vec<Piece>,
}

enum Piece {
    Fixed(String),
    Opt { param: String, flag: String },
}

struct Mapper<'d> {
    doc: &'d Doc,
    root: &'d serde_json::Map<String, Value>,
    targets: BTreeMap<String, Target>,
    names: BTreeSet<String>,
    inputs: Vec<InputMapping>,
    properties: serde_json::Map<String, Value>,
    required: Vec<String>,
    file_inputs: Vec<Value>,
    notes: Vec<ManifestError>,
}

const TOP_LEVEL_KEYS: &[&str] = &[
    "class",
    "cwlVersion",
    "id",
    "label",
    "doc",
    "intent",
    "inputs",
    "outputs",
    "baseCommand",
    "arguments",
    "stdin",
    "stdout",
    "stderr",
    "requirements",
    "hints",
    "successCodes",
    "temporaryFailCodes",
    "permanentFailCodes",
    "$namespaces",
    "$schemas",
];

impl<'d> Mapper<'d> {
    fn new(doc: &'d Doc) -> Result<Mapper<'d>, CwlError> {
        let root = doc
            .root
            .as_object()
            .ok_or_else(|| doc.invalid("", "", "the document is not a mapping"))?;
        if root.contains_key("$graph") {
            return Err(doc.unsupported(
                "$graph",
                "$graph",
                "packed documents ($graph) are not supported yet",
            ));
        }
        match root.get("cwlVersion").and_then(Value::as_str) {
            Some("v1.0" | "v1.1" | "v1.2") => {}
            Some(other) => {
                return Err(doc.invalid(
                    "cwlVersion",
                    "cwlVersion",
                    format!("`{other}` is not v1.0, v1.1 or v1.2"),
                ));
            }
            None => {
                return Err(doc.invalid(
                    "cwlVersion",
                    "class",
                    "missing; this runner reads v1.0 to v1.2",
                ));
            }
        }
        match root.get("class").and_then(Value::as_str) {
            Some("CommandLineTool") => {}
            Some(other) => {
                return Err(doc.unsupported(
                    "class",
                    "class",
                    format!("only CommandLineTool documents are served, not {other}"),
                ));
            }
            None => return Err(doc.invalid("class", "cwlVersion", "missing")),
        }
        for key in root.keys() {
            if !TOP_LEVEL_KEYS.contains(&key.as_str()) && !key.contains(':') {
                return Err(if key.starts_with('$') {
                    doc.unsupported(
                        key,
                        key,
                        "schema-salad directives ($import, $include, $mixin) are not supported yet",
                    )
                } else {
                    doc.invalid(key, key, "not a CommandLineTool field")
                });
            }
        }
        Ok(Mapper {
            doc,
            root,
            targets: BTreeMap::new(),
            names: BTreeSet::new(),
            inputs: Vec::new(),
            properties: serde_json::Map::new(),
            required: Vec::new(),
            file_inputs: Vec::new(),
            notes: Vec::new(),
        })
    }

    fn note(&mut self, field: &str, near: &str, message: String) {
        self.notes.push(ManifestError {
            file: self.doc.path.clone(),
            line: self.doc.line_of(near),
            column: None,
            field: field.to_string(),
            message,
            hint: None,
        });
    }

    fn map(mut self) -> Result<CwlTool, CwlError> {
        let doc = self.doc;
        let dir = doc.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let namespaces: BTreeMap<String, String> = self
            .root
            .get("$namespaces")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();

        // Requirements first: they decide what the rest may use.
        let mut env = serde_json::Map::new();
        let mut resources = serde_json::Map::new();
        let mut input_files = Vec::new();
        let mut network = false;
        let mut timeout: Option<u64> = None;
        let mut iwd: Vec<Value> = Vec::new();
        for (hint, list) in [(false, "requirements"), (true, "hints")] {
            for (class, body) in requirement_list(self.root.get(list)) {
                let field = format!("{list}.{class}");
                match class.as_str() {
                    "InlineJavascriptRequirement" => {
                        if !hint && body.get("expressionLib").is_some() {
                            return Err(doc.unsupported(&field, "expressionLib", "JavaScript (expressionLib) is not supported yet"));
                        }
                    }
                    "EnvVarRequirement" => {
                        let defs = match body.get("envDef") {
                            Some(Value::Array(items)) => items
                                .iter()
                                .map(|d| (d.get("envName").cloned(), d.get("envValue").cloned()))
                                .collect::<Vec<_>>(),
                            Some(Value::Object(m)) => m
                                .iter()
                                .map(|(k, v)| (Some(Value::String(k.clone())), Some(v.clone())))
                                .collect(),
                            _ => return Err(doc.invalid(&field, "envDef", "needs envDef")),
                        };
                        for (name, value) in defs {
                            let (Some(Value::String(name)), Some(Value::String(value))) = (name, value) else {
                                return Err(doc.invalid(&field, "envDef", "each envDef needs a text envName and envValue"));
                            };
                            if refs::has_reference(&value) {
                                return Err(doc.unsupported(&format!("{field}.envDef.{name}"), &name, "an environment value with a reference is not supported yet"));
                            }
                            env.insert(name, Value::String(value.replace("\\$(", "$(")));
                        }
                    }
                    "ResourceRequirement" => {
                        for (key, target, divisor) in [("coresMin", "cpus", 1.0), ("ramMin", "memory_mb", 1.0)] {
                            match body.get(key) {
                                None => {}
                                Some(v) if v.is_number() => {
                                    let n = (v.as_f64().unwrap_or(1.0) / divisor).ceil().max(1.0) as u64;
                                    resources.insert(target.into(), json!(n));
                                }
                                Some(_) => return Err(doc.unsupported(&format!("{field}.{key}"), key, "a resource given by an expression is not supported yet")),
                            }
                        }
                    }
                    "InitialWorkDirRequirement" => {
                        if hint {
                            self.note(&field, "InitialWorkDirRequirement", "InitialWorkDirRequirement under hints is applied as a requirement".into());
                        }
                        match body.get("listing") {
                            Some(Value::Array(items)) => iwd.extend(items.iter().cloned()),
                            _ => return Err(doc.unsupported(&format!("{field}.listing"), "listing", "a listing that is not a list of entries is not supported yet")),
                        }
                    }
                    "NetworkAccess" => {
                        if body.get("networkAccess") == Some(&Value::Bool(true)) {
                            network = true;
                        } else if body.get("networkAccess").is_some_and(|v| !v.is_boolean()) {
                            return Err(doc.unsupported(&field, "networkAccess", "networkAccess given by an expression is not supported yet"));
                        }
                    }
                    "ToolTimeLimit" => match body.get("timelimit") {
                        Some(v) if v.as_u64().is_some() => {
                            let t = v.as_u64().unwrap_or(0);
                            if t > 0 {
                                timeout = Some(t);
                            }
                        }
                        _ => return Err(doc.unsupported(&field, "timelimit", "a timelimit given by an expression is not supported yet")),
                    },
                    "DockerRequirement" if hint => self.note(
                        &field,
                        "DockerRequirement",
                        "DockerRequirement under hints is ignored: scimcp runs the tool from this computer's PATH, in its sandbox, not in a container".into(),
                    ),
                    "DockerRequirement" => {
                        return Err(doc.unsupported(&field, "DockerRequirement", "containers are not supported: scimcp runs the tool from PATH in its own sandbox; move DockerRequirement to hints if the tool is installed here"));
                    }
                    "SoftwareRequirement" | "WorkReuse" | "LoadListingRequirement" => self.note(
                        &field,
                        &class,
                        format!("{class} is informational here and is not applied"),
                    ),
                    "ShellCommandRequirement" if hint => self.note(&field, &class, "ShellCommandRequirement under hints is ignored; arguments are passed without a shell".into()),
                    _ if hint => self.note(&field, &class, format!("the hint {class} is not known to scimcp and is ignored")),
                    _ => {
                        return Err(doc.unsupported(&field, &class, format!("{class} is not supported yet")));
                    }
                }
            }
        }

        // Inputs: the schema, the named file inputs, and what references may name.
        let cwl_inputs = entries(self.root.get("inputs"), "inputs", doc)?;
        for (id, body) in &cwl_inputs {
            self.map_input(id, body, &dir)?;
        }

        // The command line.
        let mut entries_cl: Vec<Entry> = Vec::new();
        let base: Vec<String> = match self.root.get("baseCommand") {
            None => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        doc.invalid("baseCommand", "baseCommand", "items must be text")
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(doc.invalid(
                    "baseCommand",
                    "baseCommand",
                    "must be text or a list of text",
                ));
            }
        };
        if let Some(args) = self.root.get("arguments") {
            let args = args
                .as_array()
                .ok_or_else(|| doc.invalid("arguments", "arguments", "must be a list"))?;
            for (i, a) in args.iter().enumerate() {
                let field = format!("arguments[{i}]");
                let (position, pieces) = match a {
                    Value::String(s) => (0, vec![Piece::Fixed(self.template(&field, s)?)]),
                    Value::Object(o) => {
                        let position = self.position(&field, o)?;
                        let value = match o.get("valueFrom") {
                            Some(Value::String(s)) => self.template(&field, s)?,
                            Some(_) => {
                                return Err(doc.unsupported(
                                    &format!("{field}.valueFrom"),
                                    "valueFrom",
                                    "a valueFrom that is not text is not supported yet",
                                ));
                            }
                            None => {
                                return Err(doc.invalid(
                                    &field,
                                    "arguments",
                                    "an argument binding needs valueFrom",
                                ));
                            }
                        };
                        (position, self.prefixed(&field, o, value)?)
                    }
                    _ => return Err(doc.invalid(&field, "arguments", "must be text or a binding")),
                };
                entries_cl.push(Entry {
                    position,
                    group: 0,
                    tiebreak: String::new(),
                    index: i,
                    pieces,
                });
            }
        }
        for (i, (id, body)) in cwl_inputs.iter().enumerate() {
            if let Some(binding) = body.get("inputBinding") {
                let field = format!("inputs.{id}.inputBinding");
                let o = binding
                    .as_object()
                    .ok_or_else(|| doc.invalid(&field, id, "must be a mapping"))?;
                let position = self.position(&field, o)?;
                let pieces = self.input_pieces(&field, id, o)?;
                entries_cl.push(Entry {
                    position,
                    group: 1,
                    tiebreak: id.clone(),
                    index: i,
                    pieces,
                });
            }
        }
        entries_cl.sort_by(|a, b| {
            (a.position, a.group, &a.tiebreak, a.index).cmp(&(
                b.position,
                b.group,
                &b.tiebreak,
                b.index,
            ))
        });

        let mut command: Vec<String> = base.iter().map(|s| literal(s)).collect();
        let mut options = Vec::new();
        let mut options_at: Option<usize> = None;
        let mut options_closed = false;
        for piece in entries_cl.into_iter().flat_map(|e| e.pieces) {
            match piece {
                Piece::Fixed(t) => {
                    if options_at.is_some() {
                        options_closed = true;
                    }
                    command.push(t);
                }
                Piece::Opt { param, flag } => {
                    if options_closed {
                        return Err(doc.unsupported("inputBinding.position", "position", "optional inputs without defaults that are not next to each other on the command line cannot be planned yet"));
                    }
                    if options_at.is_none() {
                        options_at = Some(command.len());
                        command.push("{options}".into());
                    }
                    options.push(json!({"param": param, "flag": flag}));
                }
            }
        }
        if command.is_empty() {
            return Err(doc.invalid(
                "baseCommand",
                "baseCommand",
                "the tool has neither baseCommand nor arguments",
            ));
        }
        let executable = command.remove(0);
        if executable.contains('{') || executable.starts_with("{options}") {
            return Err(doc.unsupported(
                "baseCommand",
                "baseCommand",
                "a tool whose program is given by a reference is not supported",
            ));
        }
        let executable = executable.replace("{{", "{").replace("}}", "}");

        // InitialWorkDir entries: text files written into the working directory.
        for (i, item) in iwd.iter().enumerate() {
            let field = format!("requirements.InitialWorkDirRequirement.listing[{i}]");
            let (Some(Value::String(name)), Some(Value::String(entry))) =
                (item.get("entryname"), item.get("entry"))
            else {
                return Err(doc.unsupported(
                    &field,
                    "listing",
                    "only entries with a literal entryname and a text entry are supported yet",
                ));
            };
            if refs::has_reference(name) || name.contains("..") || name.starts_with('/') {
                return Err(doc.unsupported(
                    &format!("{field}.entryname"),
                    name,
                    "an entryname must be a literal relative name",
                ));
            }
            let trimmed = entry.trim();
            if trimmed.starts_with("$(") && trimmed.ends_with(')') && !trimmed[2..].contains("$(") {
                // A whole-value reference stages a file or an object, not text.
                return Err(doc.unsupported(
                    &format!("{field}.entry"),
                    name,
                    "staging an input by reference into the working directory is not supported yet",
                ));
            }
            input_files.push(
                json!({"path": name, "format": "text", "template": self.template(&field, entry)?}),
            );
        }

        // Outputs and the streams.
        let mut artifacts = Vec::new();
        let mut outputs = Vec::new();
        let mut artifact_ids = BTreeSet::new();
        let stream_name = |key: &str| -> Result<Option<String>, CwlError> {
            match self.root.get(key) {
                None => Ok(None),
                Some(Value::String(s)) if !refs::has_reference(s) && !s.contains('/') => {
                    Ok(Some(s.clone()))
                }
                Some(_) => Err(doc.unsupported(
                    key,
                    key,
                    "a stream file name given by a reference is not supported yet",
                )),
            }
        };
        if self.root.contains_key("stdin") {
            return Err(doc.unsupported(
                "stdin",
                "stdin",
                "feeding a file to the tool's standard input is not supported yet",
            ));
        }
        let stdout = stream_name("stdout")?;
        let stderr = stream_name("stderr")?;
        let mut streams_used = BTreeSet::new();
        for (id, body) in entries(self.root.get("outputs"), "outputs", doc)? {
            let field = format!("outputs.{id}");
            let (ty, optional) = CwlType::parse(body.get("type").unwrap_or(&Value::Null))
                .map_err(|m| doc.unsupported(&format!("{field}.type"), &id, m))?;
            let artifact = sanitize(&id, &mut artifact_ids);
            let binding = body.get("outputBinding").and_then(Value::as_object);
            let mut load_contents = false;
            if let Some(b) = binding {
                for key in b.keys() {
                    match key.as_str() {
                        "glob" => {}
                        "loadContents" => {
                            load_contents = b.get("loadContents") == Some(&Value::Bool(true))
                        }
                        "outputEval" => {
                            return Err(doc.unsupported(
                                &format!("{field}.outputBinding.outputEval"),
                                "outputEval",
                                "outputEval is not supported yet",
                            ));
                        }
                        other => {
                            return Err(doc.unsupported(
                                &format!("{field}.outputBinding.{other}"),
                                other,
                                "not supported yet",
                            ));
                        }
                    }
                }
            }
            if body.get("secondaryFiles").is_some() {
                return Err(doc.unsupported(
                    &format!("{field}.secondaryFiles"),
                    "secondaryFiles",
                    "secondaryFiles are not supported yet",
                ));
            }
            let format = match body.get("format") {
                None => None,
                Some(Value::String(f)) if !refs::has_reference(f) => Some(expand(f, &namespaces)),
                Some(_) => {
                    return Err(doc.unsupported(
                        &format!("{field}.format"),
                        "format",
                        "a format given by a reference is not supported yet",
                    ));
                }
            };
            let glob = binding.and_then(|b| b.get("glob"));
            let (base, path, required, array) = match (&ty, glob) {
                (CwlType::Stdout | CwlType::Stderr, _) => {
                    let (key, given) = if ty == CwlType::Stdout {
                        ("stdout", &stdout)
                    } else {
                        ("stderr", &stderr)
                    };
                    if !streams_used.insert(key) {
                        return Err(doc.unsupported(
                            &field,
                            &id,
                            format!("a second output of the tool's {key} is not supported yet"),
                        ));
                    }
                    let name = given.clone().unwrap_or_else(|| format!("{artifact}.{key}"));
                    (key, name, true, false)
                }
                (CwlType::File | CwlType::Array(_), Some(Value::String(g))) => {
                    if let CwlType::Array(inner) = &ty
                        && **inner != CwlType::File
                    {
                        return Err(doc.unsupported(
                            &format!("{field}.type"),
                            &id,
                            "only File and File[] outputs are supported yet",
                        ));
                    }
                    if refs::has_reference(g) {
                        return Err(doc.unsupported(
                            &format!("{field}.outputBinding.glob"),
                            "glob",
                            "a glob given by a reference is not supported yet",
                        ));
                    }
                    if g.starts_with('/') || g.split('/').any(|p| p == "..") {
                        return Err(doc.invalid(
                            &format!("{field}.outputBinding.glob"),
                            "glob",
                            "a glob must stay inside the output directory",
                        ));
                    }
                    let array = matches!(ty, CwlType::Array(_));
                    match (Some(g) == stdout.as_ref(), Some(g) == stderr.as_ref()) {
                        (true, _) if streams_used.insert("stdout") => {
                            ("stdout", g.clone(), !optional, array)
                        }
                        (_, true) if streams_used.insert("stderr") => {
                            ("stderr", g.clone(), !optional, array)
                        }
                        _ => ("work", g.clone(), !optional && !array, array),
                    }
                }
                (CwlType::File | CwlType::Array(_), Some(_)) => {
                    return Err(doc.unsupported(
                        &format!("{field}.outputBinding.glob"),
                        "glob",
                        "a list of globs is not supported yet",
                    ));
                }
                _ => {
                    return Err(doc.unsupported(&format!("{field}.type"), &id, "only File, File[], stdout and stderr outputs with a glob are supported yet"));
                }
            };
            let mut a = json!({
                "id": artifact,
                "path": path,
                "media_type": "application/octet-stream",
                "required": required,
                "base": base,
                "allow_empty": true,
            });
            if array || (!required && path.contains(['*', '?', '[', '{'])) {
                a["min_count"] = json!(0);
            }
            artifacts.push(a);
            outputs.push(OutputMapping {
                cwl_id: id.clone(),
                artifact,
                ty,
                optional,
                format,
                load_contents,
            });
        }
        // A named stream no output reads is still the tool's: keep it, as CWL writes it.
        for (key, name) in [("stdout", &stdout), ("stderr", &stderr)] {
            if let Some(name) = name
                && !streams_used.contains(key)
            {
                let id = sanitize(&format!("{key}_file"), &mut artifact_ids);
                artifacts.push(json!({"id": id, "path": name, "media_type": "text/plain", "required": true, "base": key, "allow_empty": true}));
            }
        }

        if let Some(codes) = self.root.get("successCodes")
            && codes != &json!([0])
        {
            return Err(doc.unsupported(
                "successCodes",
                "successCodes",
                "success on an exit status other than 0 is not supported yet",
            ));
        }

        let stem = doc
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut name: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        name = format!("cwl-{}", name.trim_matches('-'));
        name.truncate(64);
        let name = name.trim_end_matches('-').to_string();
        let summary = [self.root.get("label"), self.root.get("doc")]
            .into_iter()
            .flatten()
            .find_map(|v| {
                v.as_str()
                    .map(|s| s.lines().next().unwrap_or("").trim().to_string())
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| {
                format!(
                    "CWL CommandLineTool {}",
                    doc.path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                )
            });
        let summary: String = summary.chars().take(480).collect();

        let mut schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": Value::Object(self.properties.clone()),
        });
        if !self.required.is_empty() {
            schema["required"] = json!(self.required);
        }
        let mut workflow = json!({
            "id": WORKFLOW_ID,
            "summary": summary,
            "parameters": "parameters.json",
            "argv": command,
        });
        if !options.is_empty() {
            workflow["options"] = json!(options);
        }
        if self.file_inputs.is_empty() {
            // A CWL tool reads only what its inputs name: never the request's dataset.
            workflow["reads_dataset"] = json!(false);
        } else {
            workflow["input"] = json!(self.file_inputs);
        }
        if !input_files.is_empty() {
            workflow["input_file"] = json!(input_files);
        }
        if !artifacts.is_empty() {
            workflow["artifact"] = json!(artifacts);
        }
        if !env.is_empty() {
            workflow["env"] = Value::Object(env);
        }
        if !resources.is_empty() {
            workflow["resources"] = Value::Object(resources);
        }
        if network {
            workflow["sandbox"] = json!({"network": true});
        }
        let mut manifest = json!({
            "schema_version": 1,
            "name": name,
            "version": "0.1.0",
            "summary": summary,
            "runtime": {"kind": "executable", "executable": executable},
            "workflow": [workflow],
        });
        if let Some(t) = timeout {
            manifest["limits"] = json!({"run_timeout_s": t.min(3600)});
        }
        let toml = toml::to_string(&manifest).map_err(|e| {
            doc.invalid(
                "",
                "",
                format!("the generated manifest does not serialize: {e}"),
            )
        })?;
        let files = vec![(
            "parameters.json".to_string(),
            serde_json::to_string_pretty(&schema).unwrap_or_default(),
        )];
        let adapter = scimcp_core::manifest::load_generated(
            &toml,
            &files,
            &doc.path,
            std::mem::take(&mut self.notes),
        )
        .map_err(|errors| CwlError::Manifest {
            path: doc.path.clone(),
            errors,
        })?;
        Ok(CwlTool {
            adapter,
            inputs: self.inputs,
            outputs,
            namespaces,
            dir,
        })
    }

    fn position(&self, field: &str, o: &serde_json::Map<String, Value>) -> Result<i64, CwlError> {
        match o.get("position") {
            None => Ok(0),
            Some(v) if v.as_i64().is_some() => Ok(v.as_i64().unwrap_or(0)),
            Some(_) => Err(self.doc.unsupported(
                &format!("{field}.position"),
                "position",
                "a position given by an expression is not supported yet",
            )),
        }
    }

    fn template(&self, field: &str, s: &str) -> Result<String, CwlError> {
        refs::translate(s, &self.targets).map_err(|p| self.doc.unsupported(field, s, p.0))
    }

    /// `prefix`/`separate` around a value that is always present.
    fn prefixed(
        &self,
        field: &str,
        o: &serde_json::Map<String, Value>,
        value: String,
    ) -> Result<Vec<Piece>, CwlError> {
        let separate = o.get("separate").and_then(Value::as_bool).unwrap_or(true);
        Ok(match o.get("prefix").and_then(Value::as_str) {
            None => vec![Piece::Fixed(value)],
            Some(p) if refs::has_reference(p) => {
                return Err(self.doc.unsupported(
                    &format!("{field}.prefix"),
                    p,
                    "a prefix with a reference is not supported",
                ));
            }
            Some(p) if separate => vec![Piece::Fixed(literal(p)), Piece::Fixed(value)],
            Some(p) => vec![Piece::Fixed(format!("{}{value}", literal(p)))],
        })
    }

    fn map_input(&mut self, id: &str, body: &Value, dir: &Path) -> Result<(), CwlError> {
        let doc = self.doc;
        let field = format!("inputs.{id}");
        let (ty, nullable) = CwlType::parse(body.get("type").unwrap_or(&Value::Null))
            .map_err(|m| doc.unsupported(&format!("{field}.type"), id, m))?;
        for key in ["secondaryFiles", "loadContents", "loadListing"] {
            if body
                .get(key)
                .is_some_and(|v| v != &Value::Bool(false) && v != "no_listing")
            {
                return Err(doc.unsupported(
                    &format!("{field}.{key}"),
                    id,
                    format!("{key} on an input is not supported yet"),
                ));
            }
        }
        let default = body
            .get("default")
            .filter(|d| !d.is_null())
            .map(crate::values::plain_number);
        let name = sanitize(id, &mut self.names);
        let summary = body
            .get("doc")
            .or_else(|| body.get("label"))
            .and_then(Value::as_str)
            .map(|s| s.chars().take(480).collect::<String>())
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| format!("CWL input {id}"));
        if ty.is_file_like() {
            let kind = match &ty {
                CwlType::File => "file",
                CwlType::Directory => "directory",
                CwlType::Array(inner) if **inner == CwlType::File => "files",
                _ => {
                    return Err(doc.unsupported(
                        &format!("{field}.type"),
                        id,
                        "arrays of directories or nested arrays of files are not supported yet",
                    ));
                }
            };
            let default = match default {
                Some(d) => Some(
                    absolute_location(d, dir)
                        .map_err(|m| doc.invalid(&format!("{field}.default"), id, m))?,
                ),
                None => None,
            };
            let required = !nullable && default.is_none();
            self.file_inputs.push(json!({"id": name, "summary": summary, "formats": [scimcp_core::manifest::ANY_FORMAT], "kind": kind, "required": required}));
            self.targets
                .insert(id.to_string(), Target::Input { id: name.clone() });
            self.inputs.push(InputMapping {
                cwl_id: id.to_string(),
                ty,
                optional: nullable,
                default,
                binding: InputBinding::Input(name),
            });
            return Ok(());
        }
        let mut schema = ty.json_schema().ok_or_else(|| {
            doc.unsupported(
                &format!("{field}.type"),
                id,
                "this input type is not supported yet",
            )
        })?;
        schema["description"] = Value::String(summary);
        let boolean = ty == CwlType::Boolean;
        let always = match &default {
            Some(d) => {
                schema["default"] = d.clone();
                true
            }
            // An absent boolean and false give the same command line.
            None if boolean && nullable => {
                schema["default"] = Value::Bool(false);
                true
            }
            None if nullable => false,
            None => {
                self.required.push(name.clone());
                true
            }
        };
        self.properties.insert(name.clone(), schema);
        self.targets.insert(
            id.to_string(),
            Target::Param {
                name: name.clone(),
                always,
            },
        );
        self.inputs.push(InputMapping {
            cwl_id: id.to_string(),
            ty,
            optional: nullable,
            default,
            binding: InputBinding::Param(name),
        });
        Ok(())
    }

    fn input_pieces(
        &self,
        field: &str,
        id: &str,
        o: &serde_json::Map<String, Value>,
    ) -> Result<Vec<Piece>, CwlError> {
        let doc = self.doc;
        for key in o.keys() {
            if ![
                "position",
                "prefix",
                "separate",
                "valueFrom",
                "shellQuote",
                "itemSeparator",
                "loadContents",
            ]
            .contains(&key.as_str())
            {
                return Err(doc.invalid(
                    &format!("{field}.{key}"),
                    key,
                    "not an inputBinding field",
                ));
            }
        }
        if o.get("loadContents") == Some(&Value::Bool(true)) {
            return Err(doc.unsupported(
                &format!("{field}.loadContents"),
                "loadContents",
                "loadContents on an input is not supported yet",
            ));
        }
        if o.contains_key("itemSeparator") {
            return Err(doc.unsupported(
                &format!("{field}.itemSeparator"),
                "itemSeparator",
                "joining array items with itemSeparator is not supported yet",
            ));
        }
        let mapping = self
            .inputs
            .iter()
            .find(|m| m.cwl_id == id)
            .expect("mapped before its binding");
        let target = self.targets.get(id).expect("mapped");
        let prefix = o.get("prefix").and_then(Value::as_str);
        let separate = o.get("separate").and_then(Value::as_bool).unwrap_or(true);
        if let Some(v) = o.get("valueFrom") {
            let Value::String(s) = v else {
                return Err(doc.unsupported(
                    &format!("{field}.valueFrom"),
                    "valueFrom",
                    "a valueFrom that is not text is not supported yet",
                ));
            };
            let present = match target {
                Target::Param { always, .. } => *always,
                Target::Input { .. } => !mapping.optional || mapping.default.is_some(),
            };
            if !present || mapping.ty == CwlType::Boolean {
                return Err(doc.unsupported(
                    &format!("{field}.valueFrom"),
                    "valueFrom",
                    "valueFrom on an input that may be absent (or a boolean) is not supported yet",
                ));
            }
            let value = self.template(&format!("{field}.valueFrom"), s)?;
            return self.prefixed(field, o, value);
        }
        match (target, &mapping.ty) {
            (Target::Param { name, .. }, CwlType::Boolean) => match prefix {
                None => Ok(Vec::new()),
                Some(p) if p.contains([',', '=', '{', '}', '|', ':']) || refs::has_reference(p) => {
                    Err(doc.unsupported(
                        &format!("{field}.prefix"),
                        p,
                        "a boolean flag with `, = { } | :` in it is not supported yet",
                    ))
                }
                Some(p) => Ok(vec![Piece::Fixed(format!(
                    "{{{name}|map:true={p},false=}}"
                ))]),
            },
            (Target::Param { .. }, CwlType::Array(_)) => Err(doc.unsupported(
                field,
                id,
                "arrays of values on the command line are not supported yet",
            )),
            (Target::Param { name, always: true }, _) => {
                self.prefixed(field, o, format!("{{{name}}}"))
            }
            (
                Target::Param {
                    name,
                    always: false,
                },
                _,
            ) => match prefix {
                Some(p) if separate && !refs::has_reference(p) => Ok(vec![Piece::Opt {
                    param: name.clone(),
                    flag: p.to_string(),
                }]),
                _ => Err(doc.unsupported(
                    field,
                    id,
                    "an optional input with no default is supported only with a separate prefix",
                )),
            },
            (Target::Input { id: input }, ty) => {
                let value = format!("{{input.{input}}}");
                let may_be_absent = mapping.optional && mapping.default.is_none();
                match prefix {
                    Some(_) if matches!(ty, CwlType::Array(_)) => Err(doc.unsupported(
                        &format!("{field}.prefix"),
                        "prefix",
                        "a prefix before an array of files is not supported yet",
                    )),
                    Some(_) if separate && may_be_absent => Err(doc.unsupported(
                        &format!("{field}.prefix"),
                        "prefix",
                        "a separate prefix before an optional file is not supported yet",
                    )),
                    _ => self.prefixed(field, o, value),
                }
            }
        }
    }
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

/// A File/Directory default with its `location`/`path` made absolute against the tool.
fn absolute_location(mut v: Value, dir: &Path) -> Result<Value, String> {
    match &mut v {
        Value::Array(items) => {
            for i in items.iter_mut() {
                *i = absolute_location(i.take(), dir)?;
            }
        }
        Value::Object(o) => {
            let loc = o
                .get("location")
                .or_else(|| o.get("path"))
                .and_then(Value::as_str)
                .map(str::to_string);
            if let Some(loc) = loc {
                let path = crate::values::location_path(&loc, dir);
                o.remove("location");
                o.insert("path".into(), Value::String(path.display().to_string()));
            } else if !o.contains_key("contents") {
                return Err("a File default needs a location, a path or contents".into());
            }
        }
        _ => return Err("a File default must be a File object".into()),
    }
    Ok(v)
}

#[cfg(test)]
mod tests;
