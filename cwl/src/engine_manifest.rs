//! The manifest a CWL tool served by the engine becomes: one workflow (`run`) whose
//! parameter schema is the tool's inputs as JSON Schema, whose program is the tool's fixed
//! argv\[0\] (looked up on PATH, hashed and shown like any adapter's), with the limits,
//! resources and network the tool's requirements state. What the engine cannot serve is
//! refused here, at load, naming the CWL field and line.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use scimcp_core::manifest::{Adapter, ManifestError};
use serde_json::{Map, Value, json};

use crate::CwlError;
use crate::doc;
use crate::engine::{CwlEngine, EngineOptions, Parts, WORKFLOW_ID, engine_of, param_names};

/// Requirement classes the engine implements (in `requirements` or `hints`).
const IMPLEMENTED: &[&str] = &[
    "InlineJavascriptRequirement",
    "SchemaDefRequirement",
    "EnvVarRequirement",
    "ResourceRequirement",
    "InitialWorkDirRequirement",
    "NetworkAccess",
    "ToolTimeLimit",
    "LoadListingRequirement",
    "InplaceUpdateRequirement",
];
/// Classes that only inform (what to install, caching), ignored with a note.
const INFORMATIONAL: &[&str] = &["SoftwareRequirement", "WorkReuse"];

pub(crate) fn adapter(
    path: &Path,
    tool: Value,
    options: EngineOptions,
) -> Result<(Adapter, Arc<CwlEngine>), CwlError> {
    let doc = doc::read(path)?;
    let mut notes = Vec::new();
    let note = |notes: &mut Vec<ManifestError>, field: &str, message: String| {
        notes.push(ManifestError {
            file: doc.path.clone(),
            line: doc.line_of(field.rsplit('.').next().unwrap_or(field)),
            column: None,
            field: field.to_string(),
            message,
            hint: None,
        });
    };
    let mut plan_notes = Vec::new();
    let mut inline_js = false;
    let mut lib = Vec::new();
    let mut shell = false;
    let mut network = false;
    let mut timeout: Option<u64> = None;
    let mut resources = Map::new();
    for (is_hint, list) in [(false, "requirements"), (true, "hints")] {
        for req in tool
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let class = req.get("class").and_then(Value::as_str).unwrap_or("");
            let field = format!("{list}.{class}");
            match class {
                "DockerRequirement" if !is_hint && options.no_container => {
                    let text = crate::job_requirements::container_note(&field, req);
                    note(&mut notes, &field, text.clone());
                    plan_notes.push(text);
                }
                "DockerRequirement" if !is_hint => {
                    return Err(doc.unsupported(
                        &field,
                        "DockerRequirement",
                        "containers are not supported: scimcp runs the tool from PATH in its own sandbox; if the tool is installed here, start the server with --cwl-no-container (every plan then says so) or move DockerRequirement to hints",
                    ));
                }
                "DockerRequirement" => note(
                    &mut notes,
                    &field,
                    "ignored: the tool runs from PATH in scimcp's sandbox, not in a container"
                        .into(),
                ),
                "ShellCommandRequirement" if options.allow_shell => shell = true,
                "ShellCommandRequirement" if !is_hint => {
                    return Err(doc.unsupported(
                        &field,
                        "ShellCommandRequirement",
                        "the tool's command line is run by a shell, which this server does not allow: start it with --cwl-allow-shell to run it through /bin/sh -c (shown in every plan)",
                    ));
                }
                "ShellCommandRequirement" => note(
                    &mut notes,
                    &field,
                    "ignored: the command line is run without a shell".into(),
                ),
                "InlineJavascriptRequirement" => {
                    inline_js = true;
                    for item in req
                        .get("expressionLib")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        match item {
                            Value::String(s) => lib.push(s.clone()),
                            other => {
                                return Err(doc.invalid(
                                    &format!("{field}.expressionLib"),
                                    "expressionLib",
                                    format!("an entry is not JavaScript text: {other}"),
                                ));
                            }
                        }
                    }
                }
                "NetworkAccess" => {
                    network = match req.get("networkAccess") {
                        Some(Value::Bool(b)) => *b,
                        Some(Value::String(s)) if !crate::expr::has_expression(s) => s == "true",
                        // An expression: granted (the sandbox cannot decide per job).
                        Some(Value::String(_)) => true,
                        _ => false,
                    } || network;
                }
                "ToolTimeLimit" => {
                    if let Some(t) = req.get("timelimit").and_then(Value::as_u64) {
                        // 0 means no limit: the suite's own ceiling applies.
                        timeout = Some(if t == 0 { 3600 } else { t.min(3600) });
                    }
                }
                "ResourceRequirement" => {
                    if let Some(c) = req.get("coresMin").and_then(Value::as_f64) {
                        resources.insert("cpus".into(), json!(c.ceil().max(1.0) as u64));
                    }
                    if let Some(r) = req.get("ramMin").and_then(Value::as_f64) {
                        resources.insert("memory_mb".into(), json!(r.ceil().max(1.0) as u64));
                    }
                }
                c if IMPLEMENTED.contains(&c) => {}
                c if INFORMATIONAL.contains(&c) => {
                    note(&mut notes, &field, "informational here: ignored".into())
                }
                _ if is_hint => note(&mut notes, &field, "an unknown hint: ignored".into()),
                other => {
                    return Err(doc.unsupported(
                        &field,
                        other,
                        format!("the requirement {other} is not supported"),
                    ));
                }
            }
        }
    }
    let programs = if shell {
        crate::program::Programs {
            first: "sh".to_string(),
            others: Vec::new(),
        }
    } else {
        crate::program::of_tool(&tool, &doc, inline_js, options.allow_shell)?
    };
    let names = param_names(&tool);
    let schema = parameter_schema(&tool, &names);
    let summary = summary_of(&tool, path);
    let name = {
        let mut taken = std::collections::BTreeSet::new();
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "cwl_tool".into());
        crate::engine::sanitize(&stem, &mut taken).replace('_', "-")
    };
    let mut workflow = json!({
        "id": WORKFLOW_ID,
        "summary": summary,
        "parameters": "parameters.json",
        "engine": "cwl",
        "reads_dataset": false,
    });
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
        "runtime": {"kind": "executable", "executable": programs.first},
        "workflow": [workflow],
    });
    if !programs.others.is_empty() {
        // The other programs the tool's expression may choose, resolved and hashed at start
        // like the runtime's; the plan names the one a request's command starts.
        let mut taken = std::collections::BTreeSet::from(["runtime".to_string()]);
        let table: Map<String, Value> = programs
            .others
            .iter()
            .map(|p| {
                let id = crate::engine::sanitize(p, &mut taken).replace('_', "-");
                (id, json!({"executable": p}))
            })
            .collect();
        manifest["programs"] = Value::Object(table);
    }
    if let Some(t) = timeout {
        manifest["limits"] = json!({"run_timeout_s": t});
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
    let adapter = scimcp_core::manifest::load_generated(&toml, &files, &doc.path, notes).map_err(
        |errors| CwlError::Manifest {
            path: doc.path.clone(),
            errors,
        },
    )?;
    let namespaces = tool
        .get("$namespaces")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect::<BTreeMap<_, _>>()
        })
        .unwrap_or_default();
    let engine = Arc::new(engine_of(Parts {
        tool,
        path: path.to_path_buf(),
        namespaces,
        names,
        inline_js,
        lib,
        programs,
        shell,
        plan_notes,
        no_container: options.no_container,
    }));
    let adapter = adapter.with_engine(engine.clone());
    Ok((adapter, engine))
}

fn summary_of(tool: &Value, path: &Path) -> String {
    let text = ["label", "doc"]
        .iter()
        .filter_map(|k| match tool.get(*k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(a)) => a.first().and_then(Value::as_str).map(str::to_string),
            _ => None,
        })
        .map(|s| s.lines().next().unwrap_or("").trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| {
            format!(
                "CWL CommandLineTool {}",
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            )
        });
    text.chars().take(480).collect()
}

/// The tool's inputs as a strict object schema (parameter names per [`param_names`]).
fn parameter_schema(tool: &Value, names: &crate::engine::ParamNames) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let inputs: Vec<&Value> = tool
        .get("inputs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    for (param, id) in &names.pairs {
        let Some(input) = inputs
            .iter()
            .find(|i| i.get("id").and_then(Value::as_str) == Some(id))
        else {
            continue;
        };
        let ty = input.get("type").unwrap_or(&Value::Null);
        let mut prop = type_schema(ty);
        let doc = ["label", "doc"]
            .iter()
            .filter_map(|k| input.get(*k).and_then(Value::as_str))
            .next()
            .map(str::to_string);
        let desc = match doc {
            Some(d) => format!("CWL input `{id}`: {d}"),
            None => format!("CWL input `{id}`"),
        };
        if let Some(o) = prop.as_object_mut() {
            o.insert("description".into(), json!(desc));
        }
        let optional = accepts_null(ty) || input.get("default").is_some_and(|d| !d.is_null());
        if !optional {
            required.push(param.clone());
        }
        properties.insert(param.clone(), prop);
    }
    properties.insert(
        crate::job_requirements::PARAM.into(),
        crate::job_requirements::schema(),
    );
    let mut schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": false,
        "properties": properties,
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

fn accepts_null(ty: &Value) -> bool {
    match ty {
        Value::String(s) => s == "null" || s == "Any",
        Value::Array(a) => a.iter().any(accepts_null),
        _ => false,
    }
}

fn file_schema(class: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "class": {"const": class},
            "path": {"type": "string"},
            "location": {"type": "string"},
            "basename": {"type": "string"},
            "contents": {"type": "string"},
            "format": {"type": "string"},
            "listing": {"type": "array"},
            "secondaryFiles": {"type": "array"},
        },
        "required": ["class"],
        "additionalProperties": true,
    })
}

/// A canonical CWL type ([`crate::norm`]) as JSON Schema.
fn type_schema(ty: &Value) -> Value {
    match ty {
        Value::String(s) => match s.as_str() {
            "null" => json!({"type": "null"}),
            "boolean" => json!({"type": "boolean"}),
            "int" | "long" => json!({"type": "integer"}),
            "float" | "double" => json!({"type": "number"}),
            "string" => json!({"type": "string"}),
            "File" => file_schema("File"),
            "Directory" => file_schema("Directory"),
            _ => json!({}),
        },
        Value::Array(members) => {
            json!({"anyOf": members.iter().map(type_schema).collect::<Vec<_>>()})
        }
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("array") => {
                json!({"type": "array", "items": type_schema(o.get("items").unwrap_or(&Value::Null))})
            }
            Some("enum") => {
                let symbols: Vec<Value> = o
                    .get("symbols")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|s| json!(crate::norm::short_name(s)))
                    .collect();
                json!({"enum": symbols})
            }
            Some("record") => {
                let mut props = Map::new();
                let mut req = Vec::new();
                for f in o
                    .get("fields")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(name) = f.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let fty = f.get("type").unwrap_or(&Value::Null);
                    if !accepts_null(fty) {
                        req.push(json!(name));
                    }
                    props.insert(name.to_string(), type_schema(fty));
                }
                json!({"type": "object", "properties": props, "required": req, "additionalProperties": false})
            }
            _ => type_schema(o.get("type").unwrap_or(&Value::Null)),
        },
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_file(dir: &Path, text: &str) -> std::path::PathBuf {
        let p = dir.join("tool.cwl");
        fs_err::write(&p, text).unwrap();
        p
    }

    const HEAD: &str = "cwlVersion: v1.2\nclass: CommandLineTool\ninputs: []\noutputs: []\n";

    #[test]
    fn what_cannot_be_served_is_refused_naming_the_field_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let docker = format!(
            "{HEAD}baseCommand: echo\nrequirements:\n  DockerRequirement:\n    dockerPull: alpine\n"
        );
        let e =
            crate::engine::load_engine(&tool_file(dir.path(), &docker), EngineOptions::default())
                .unwrap_err();
        assert!(e.is_unsupported(), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("tool.cwl:7") && text.contains("requirements.DockerRequirement"),
            "{text}"
        );
        assert!(text.contains("--cwl-no-container"), "{text}");
        // The operator's --cwl-no-container: served from PATH, said in the adapter's warnings
        // and in every command the engine builds (so in every plan).
        let (adapter, engine) = crate::engine::load_engine(
            &tool_file(dir.path(), &docker),
            EngineOptions {
                no_container: true,
                ..EngineOptions::default()
            },
        )
        .unwrap();
        assert!(
            adapter
                .warnings
                .iter()
                .any(|w| w.to_string().contains("`alpine`")),
            "{:?}",
            adapter.warnings
        );
        let command = scimcp_core::manifest::CommandEngine::command(
            engine.as_ref(),
            &serde_json::Map::new(),
            &[],
        )
        .unwrap();
        assert_eq!(command.program, "echo");
        assert!(
            command.notes.len() == 1
                && command.notes[0].contains("`alpine`")
                && command.notes[0].contains("--cwl-no-container"),
            "{:?}",
            command.notes
        );

        let shell =
            format!("{HEAD}baseCommand: echo\nrequirements:\n  ShellCommandRequirement: {{}}\n");
        let path = tool_file(dir.path(), &shell);
        let e = crate::engine::load_engine(&path, EngineOptions::default()).unwrap_err();
        assert!(
            e.is_unsupported() && e.to_string().contains("--cwl-allow-shell"),
            "{e}"
        );
        let (adapter, _) = crate::engine::load_engine(
            &path,
            EngineOptions {
                allow_shell: true,
                ..EngineOptions::default()
            },
        )
        .unwrap();
        assert_eq!(adapter.manifest.runtime.executable.as_deref(), Some("sh"));

        let dynamic = format!("{HEAD}arguments: [$(inputs.x)]\n");
        let e =
            crate::engine::load_engine(&tool_file(dir.path(), &dynamic), EngineOptions::default())
                .unwrap_err();
        assert!(
            e.is_unsupported() && e.to_string().contains("baseCommand"),
            "{e}"
        );
    }

    /// io-file-or-files.cwl's shape: no baseCommand, the whole command from JavaScript.
    const CHOSEN: &str = "cwlVersion: v1.2\nclass: CommandLineTool\nrequirements:\n  InlineJavascriptRequirement: {}\ninputs:\n  n: int\noutputs: []\nbaseCommand: []\narguments:\n  - valueFrom: |\n      ${ if (inputs.n == 0) { return ['echo', 'no_inputs']; } if (inputs.n == 1) { return ['cat', 'x']; } return ['no_such_program_here', 'x']; }\n";

    #[test]
    fn a_program_an_expression_chooses_is_one_of_its_literals_on_path_resolved_at_load() {
        use scimcp_core::manifest::CommandEngine;
        let dir = tempfile::tempdir().unwrap();
        let (adapter, engine) =
            crate::engine::load_engine(&tool_file(dir.path(), CHOSEN), EngineOptions::default())
                .unwrap();
        let m = &adapter.manifest;
        // Declared, so the server resolves and hashes both at start; `no_inputs` and the
        // missing program are literals but not programs here.
        assert_eq!(m.runtime.executable.as_deref(), Some("echo"));
        let declared: Vec<&str> = m.programs.values().map(|p| p.executable.as_str()).collect();
        assert_eq!(declared, vec!["cat"], "{:?}", m.programs);

        let job = |n: i64| serde_json::json!({"n": n}).as_object().unwrap().clone();
        let c = engine.command(&job(0), &[]).unwrap();
        assert_eq!(
            (c.program.as_str(), c.args.clone()),
            ("echo", vec!["no_inputs".to_string()])
        );
        let c = engine.command(&job(1), &[]).unwrap();
        assert_eq!(
            (c.program.as_str(), c.args.clone()),
            ("cat", vec!["x".to_string()])
        );
        // A command starting with anything else is refused before any run.
        let e = engine.command(&job(2), &[]).unwrap_err();
        assert!(
            e.message.contains("no_such_program_here") && e.message.contains("echo, cat"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_shell_line_an_expression_builds_runs_only_through_the_allowed_shell() {
        let dir = tempfile::tempdir().unwrap();
        // The program is a shell named by the expression: without ShellCommandRequirement and
        // the operator's flag it is no candidate, and the refusal says what to do.
        let bash = format!(
            "{HEAD}requirements:\n  InlineJavascriptRequirement: {{}}\nbaseCommand: []\narguments:\n  - valueFrom: $(['bash', '-c', 'echo hi'])\n"
        );
        let e = crate::engine::load_engine(&tool_file(dir.path(), &bash), EngineOptions::default())
            .unwrap_err();
        let text = e.to_string();
        assert!(e.is_unsupported(), "{text}");
        assert!(
            text.contains("tool.cwl:8")
                && text.contains("arguments")
                && text.contains("--cwl-allow-shell"),
            "{text}"
        );
        // Declaring ShellCommandRequirement on a server that allows it: the program is the
        // shell, fixed before any request, and the line runs through `sh -c`.
        let shell_line = format!(
            "{HEAD}requirements:\n  InlineJavascriptRequirement: {{}}\n  ShellCommandRequirement: {{}}\nbaseCommand: []\narguments:\n  - valueFrom: $('echo hi')\n    shellQuote: false\n"
        );
        let path = tool_file(dir.path(), &shell_line);
        let e = crate::engine::load_engine(&path, EngineOptions::default()).unwrap_err();
        assert!(e.to_string().contains("--cwl-allow-shell"), "{e}");
        let options = EngineOptions {
            allow_shell: true,
            ..EngineOptions::default()
        };
        let (adapter, engine) = crate::engine::load_engine(&path, options).unwrap();
        assert_eq!(adapter.manifest.runtime.executable.as_deref(), Some("sh"));
        assert!(adapter.manifest.programs.is_empty());
        use scimcp_core::manifest::CommandEngine;
        let c = engine.command(&serde_json::Map::new(), &[]).unwrap();
        assert_eq!(
            (c.program.as_str(), c.args.clone()),
            ("sh", vec!["-c".to_string(), "echo hi".to_string()])
        );
        // Without JavaScript an expression cannot choose: refused naming baseCommand.
        let plain = format!("{HEAD}baseCommand: []\narguments: [$(inputs.x)]\n");
        let e =
            crate::engine::load_engine(&tool_file(dir.path(), &plain), EngineOptions::default())
                .unwrap_err();
        assert!(
            e.is_unsupported() && e.to_string().contains("baseCommand"),
            "{e}"
        );
    }

    #[test]
    fn the_parameter_schema_is_the_tool_inputs_strict_with_names_a_manifest_accepts() {
        let dir = tempfile::tempdir().unwrap();
        let text = "cwlVersion: v1.2\nclass: CommandLineTool\nbaseCommand: cat\ninputs:\n  in-File: File\n  count: int?\n  mode:\n    type: {type: enum, symbols: [fast, slow]}\n    default: fast\noutputs: []\n";
        let (adapter, engine) =
            crate::engine::load_engine(&tool_file(dir.path(), text), EngineOptions::default())
                .unwrap();
        let schema = &adapter.manifest.workflows[0].parameters_schema;
        assert_eq!(schema["additionalProperties"], false, "{schema:#}");
        assert_eq!(
            schema["required"],
            serde_json::json!(["in_file"]),
            "{schema:#}"
        );
        assert_eq!(
            schema["properties"]["mode"]["enum"],
            serde_json::json!(["fast", "slow"])
        );
        assert_eq!(
            schema["properties"]["in_file"]["properties"]["class"]["const"],
            "File"
        );
        let params = serde_json::json!({"in_file": {"class": "File", "path": "/x"}});
        let job = engine.names.job(params.as_object().unwrap());
        assert!(job.contains_key("in-File"), "{job:?}");
        assert_eq!(adapter.manifest.workflows[0].engine.as_deref(), Some("cwl"));
    }
}
