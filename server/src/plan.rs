//! Compiling a validated request into a deterministic plan: the exact argv, stdin answers,
//! input files, environment and expected artifacts, with a hash over all of it.
//!
//! The run values are paths relative to the run's working directory (`inputs/<file>` and
//! `output`), so the same request on the same dataset bytes always compiles to the same plan.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use scimcp_core::Adapter;
use scimcp_core::hash::{canonical_json, canonical_sha256_of};
use scimcp_core::manifest::{
    ArtifactSpec, InputFileFormat, OptionFormat, Template, TemplatePart, Workflow,
};
use scimcp_core::run_env::{ENV_PASSTHROUGH, FIXED_RUN_ENV};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::datasets::ResolvedDataset;

/// The run's output directory, relative to its working directory.
pub const OUTPUT_DIR: &str = "output";
/// The directory the dataset copy lives in, relative to the working directory.
pub const INPUTS_DIR: &str = "inputs";

/// Variables every run gets, whatever the server's environment says (the suite's
/// reproducibility settings, [`scimcp_core::run_env::FIXED_RUN_ENV`]).
pub fn fixed_env() -> BTreeMap<String, String> {
    FIXED_RUN_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A file written into the working directory before the process starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedFile {
    pub path: String,
    pub content: String,
}

/// The dataset as the plan binds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedDataset {
    pub reference: String,
    /// Where the run's copy lives, relative to the working directory.
    pub run_path: String,
    pub sha256: String,
    pub size_bytes: u64,
}

/// Everything a run will do, decided before it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Plan {
    pub adapter: String,
    pub adapter_version: String,
    pub adapter_sha256: String,
    pub workflow: String,
    /// The program started (the runtime's interpreter or executable).
    pub program: String,
    /// Every argument after the program.
    pub args: Vec<String>,
    /// Lines written to the process's stdin, in order, then stdin is closed.
    pub stdin: Vec<String>,
    pub input_files: Vec<PlannedFile>,
    /// Variables set for the process (besides the passthrough names).
    pub env: BTreeMap<String, String>,
    /// Variables copied from the server's environment when present.
    pub env_passthrough: Vec<String>,
    /// Working directory, relative to the run directory.
    pub working_dir: String,
    pub output_dir: String,
    pub dataset: PlannedDataset,
    /// Artifacts the run must produce, as the manifest declares them.
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub artifacts: Vec<ArtifactSpec>,
    pub timeout_s: u64,
}

impl Plan {
    /// SHA-256 of the plan's canonical JSON.
    pub fn sha256(&self) -> String {
        canonical_sha256_of(self)
    }
}

/// Text of a parameter value on a command line: strings as-is, numbers and booleans in
/// JSON form, objects and arrays as canonical JSON, null as nothing.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Object(_) | Value::Array(_) => canonical_json(value),
        other => other.to_string(),
    }
}

/// Compile `workflow` with resolved `params` on `dataset` into a plan.
pub fn compile(
    adapter: &Adapter,
    workflow: &Workflow,
    params: &serde_json::Map<String, Value>,
    dataset: &ResolvedDataset,
    program: &str,
    launch: &[String],
    env: BTreeMap<String, String>,
) -> Result<Plan, String> {
    let run_path = format!("{INPUTS_DIR}/{}", dataset.file_name);
    let lookup = |name: &str| -> Result<String, String> {
        match name {
            "dataset" => Ok(run_path.clone()),
            "output_dir" => Ok(OUTPUT_DIR.to_string()),
            other => params
                .get(other)
                .map(value_text)
                .ok_or_else(|| format!("parameter '{other}' has no value")),
        }
    };
    let render = |text: &str| -> Result<String, String> {
        Template::parse(text)
            .map_err(|e| e.to_string())?
            .render(lookup)
    };
    let mut args: Vec<String> = launch.to_vec();
    for arg in &workflow.argv {
        args.push(render(arg)?);
    }
    for opt in &workflow.options {
        let Some(value) = params.get(&opt.param).filter(|v| !v.is_null()) else {
            continue;
        };
        match opt.format {
            OptionFormat::Switch => {
                if value.as_bool() == Some(true) {
                    args.push(opt.flag.clone());
                }
            }
            OptionFormat::Value => {
                args.push(opt.flag.clone());
                args.push(value_text(value));
            }
            OptionFormat::Json => {
                args.push(opt.flag.clone());
                args.push(canonical_json(value));
            }
        }
    }
    let stdin = workflow
        .stdin
        .iter()
        .map(|l| render(l))
        .collect::<Result<Vec<_>, _>>()?;
    let mut input_files = Vec::new();
    for spec in &workflow.input_files {
        let rendered = render_value(&spec.template, &lookup, params)?;
        let content = match spec.format {
            InputFileFormat::Json | InputFileFormat::Yaml => {
                let mut s = serde_json::to_string_pretty(&rendered).map_err(|e| e.to_string())?;
                s.push('\n');
                s
            }
            InputFileFormat::Toml => toml::to_string(&rendered)
                .map_err(|e| format!("input file {} cannot be TOML: {e}", spec.path))?,
            InputFileFormat::Text => rendered.as_str().unwrap_or_default().to_string(),
        };
        input_files.push(PlannedFile {
            path: spec.path.clone(),
            content,
        });
    }
    Ok(Plan {
        adapter: adapter.manifest.name.clone(),
        adapter_version: adapter.manifest.version.clone(),
        adapter_sha256: adapter.sha256.clone(),
        workflow: workflow.id.clone(),
        program: program.to_string(),
        args,
        stdin,
        input_files,
        env,
        env_passthrough: ENV_PASSTHROUGH.iter().map(|s| s.to_string()).collect(),
        working_dir: "work".into(),
        output_dir: OUTPUT_DIR.into(),
        dataset: PlannedDataset {
            reference: dataset.reference.clone(),
            run_path,
            sha256: dataset.sha256.clone(),
            size_bytes: dataset.size_bytes,
        },
        artifacts: workflow.artifacts.clone(),
        timeout_s: adapter.manifest.effective_limits().run_timeout_s,
    })
}

/// Substitute placeholders inside a structured template. A string that is exactly one
/// parameter placeholder takes the parameter's typed value (so `"{seed}"` stays a number).
fn render_value(
    template: &Value,
    lookup: &impl Fn(&str) -> Result<String, String>,
    params: &serde_json::Map<String, Value>,
) -> Result<Value, String> {
    Ok(match template {
        Value::String(s) => {
            let t = Template::parse(s).map_err(|e| e.to_string())?;
            if let [TemplatePart::Placeholder(name)] = t.parts.as_slice()
                && let Some(v) = params.get(name)
            {
                v.clone()
            } else {
                Value::String(t.render(lookup)?)
            }
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| render_value(v, lookup, params))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), render_value(v, lookup, params)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}
