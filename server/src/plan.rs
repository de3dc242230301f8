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
    ArtifactSpec, Filter, InputFileFormat, NULL, Placeholder, SuccessSpec, Template, Workflow,
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
    /// How run paths substituted into `content` are escaped: `json` (json, yaml and toml
    /// files: inside strings) or `none` (text files).
    #[serde(default, skip_serializing_if = "is_text")]
    pub escape: Escape,
}

/// How a substituted run path is written into a file's content.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Escape {
    #[default]
    None,
    Json,
}

fn is_text(e: &Escape) -> bool {
    *e == Escape::None
}

/// The absolute paths a plan names only symbolically (`{work_dir}`, `{state_dir}`), so that
/// it and its hash are the same on every machine.
#[derive(Debug, Clone)]
pub struct RunPaths {
    pub work_dir: std::path::PathBuf,
    pub state_dir: std::path::PathBuf,
}

impl RunPaths {
    /// `text` with the run values substituted, escaped as `escape` says.
    pub fn substitute(&self, text: &str, escape: Escape) -> String {
        if !text.contains("{work_dir}") && !text.contains("{state_dir}") {
            return text.to_string();
        }
        let written = |p: &std::path::Path| {
            let raw = p.to_string_lossy().into_owned();
            match escape {
                Escape::None => raw,
                Escape::Json => {
                    let quoted = serde_json::to_string(&raw).expect("a string serializes");
                    quoted[1..quoted.len() - 1].to_string()
                }
            }
        };
        text.replace("{work_dir}", &written(&self.work_dir))
            .replace("{state_dir}", &written(&self.state_dir))
    }
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
    /// The table the run reads, for workflows that take one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<PlannedDataset>,
    /// The named file inputs, each file with its copy's path and SHA-256.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<crate::inputs::PlannedInput>,
    /// Artifacts the run must produce, as the manifest declares them.
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub artifacts: Vec<ArtifactSpec>,
    /// What success means beyond exit status 0, when the workflow says (a value in a JSON
    /// file the CLI writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub success: Option<SuccessSpec>,
    /// Values read from the run's text outputs into `reported` (`[[workflow.metric]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub metrics: Vec<scimcp_core::manifest::MetricSpec>,
    /// Success predicates checked after exit 0 (`[[workflow.require]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub requires: Vec<scimcp_core::manifest::RequireSpec>,
    pub timeout_s: u64,
    /// Each step of a stepped workflow, in order (absent for a single program).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<crate::plan_steps::PlannedStep>,
    /// The identity of every program the run starts (absent for a python runtime's
    /// interpreter, which the runtime probe identifies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub programs: Vec<scimcp_core::program_identity::ProgramIdentity>,
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

/// Renders templates for one run: run values, parameters, and their filters.
struct Renderer<'a> {
    params: &'a serde_json::Map<String, Value>,
    /// The dataset copy's path, when the run has a dataset.
    run_path: Option<String>,
    /// The named inputs given (an optional input left out is absent).
    inputs: &'a [crate::inputs::PlannedInput],
    /// The dataset's column names, in file order (for the column filters).
    columns: Option<&'a [String]>,
}

impl Renderer<'_> {
    /// The text of `p`: a run value, or a parameter through its filters.
    fn text(&self, p: &Placeholder) -> Result<String, String> {
        if let Some(id) = p.input_id() {
            return Ok(self.input_paths(id).unwrap_or_default().join(" "));
        }
        match p.name.as_str() {
            "dataset" => {
                return self
                    .run_path
                    .clone()
                    .ok_or_else(|| "the run has no dataset".to_string());
            }
            "output_dir" => return Ok(OUTPUT_DIR.to_string()),
            // Absolute paths stay symbolic in the plan; the run substitutes them.
            name @ ("work_dir" | "state_dir") => return Ok(format!("{{{name}}}")),
            _ => {}
        }
        let value = self.value(&p.name)?;
        if p.filters.is_empty() {
            return Ok(value_text(value));
        }
        let mut current = value.clone();
        for f in &p.filters {
            current = Value::String(self.filter(&p.name, f, &current)?);
        }
        Ok(current.as_str().unwrap_or_default().to_string())
    }

    /// The copies `{input.<id>}` stands for; `None` when the input was left out.
    fn input_paths(&self, id: &str) -> Option<Vec<String>> {
        self.inputs
            .iter()
            .find(|i| i.id == id)
            .map(crate::inputs::PlannedInput::rendered)
    }

    /// One argument (or stdin line) template rendered to what the CLI receives: nothing when
    /// it names an optional input that was left out, and one per file when it names a
    /// `files` input (`--ligand={input.ligands}` → `--ligand=a`, `--ligand=b`).
    fn expand(&self, text: &str) -> Result<Vec<String>, String> {
        let t = Template::parse(text).map_err(|e| e.to_string())?;
        let mut lists: Vec<(&str, Vec<String>)> = Vec::new();
        for id in t.placeholder_parts().filter_map(Placeholder::input_id) {
            let Some(paths) = self.input_paths(id) else {
                return Ok(Vec::new());
            };
            if paths.len() != 1 && !lists.iter().any(|(i, _)| *i == id) {
                lists.push((id, paths));
            }
        }
        match lists.as_slice() {
            [] => Ok(vec![t.render(|p| self.text(p))?]),
            [(id, paths)] => paths
                .iter()
                .map(|path| {
                    t.render(|p| match p.input_id() {
                        Some(i) if i == *id => Ok(path.clone()),
                        _ => self.text(p),
                    })
                })
                .collect(),
            _ => Err(format!(
                "the template {text:?} names several inputs with several files; one argument can repeat for one list only"
            )),
        }
    }

    fn value(&self, name: &str) -> Result<&Value, String> {
        self.params
            .get(name)
            .ok_or_else(|| format!("parameter '{name}' has no value"))
    }

    fn filter(&self, name: &str, f: &Filter, value: &Value) -> Result<String, String> {
        Ok(match f {
            Filter::Text => value_text(value),
            Filter::Json => canonical_json(value),
            Filter::Count => value.as_array().map_or(1, Vec::len).to_string(),
            Filter::Map(pairs) => {
                let key = value_text(value);
                pairs
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| {
                        format!("parameter '{name}' = {key:?} has no entry in its map")
                    })?
            }
            Filter::Positions(also) => {
                let columns = self.columns.ok_or("the dataset's columns are not known")?;
                let mut all = positions(&names_of(value), columns)?;
                for other in also {
                    all.extend(positions(&names_of(self.value(other)?), columns)?);
                }
                all.sort_unstable();
                all.dedup();
                all.iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            }
            Filter::PositionsIn(sources) => {
                let columns = self.columns.ok_or("the dataset's columns are not known")?;
                // The subset: every column the sources name, in file order (how a CLI that
                // selects columns by position numbers them afterwards).
                let mut subset = Vec::new();
                for source in sources {
                    subset.extend(positions(&names_of(self.value(source)?), columns)?);
                }
                subset.sort_unstable();
                subset.dedup();
                let wanted = positions(&names_of(value), columns)?;
                wanted
                    .iter()
                    .map(|w| {
                        subset
                            .iter()
                            .position(|s| s == w)
                            .map(|i| (i + 1).to_string())
                            .ok_or_else(|| {
                                format!(
                                    "column {} of '{name}' is not among {}",
                                    columns[w - 1],
                                    sources.join(", ")
                                )
                            })
                    })
                    .collect::<Result<Vec<_>, _>>()?
                    .join("; ")
            }
        })
    }

    #[cfg(test)]
    fn render(&self, text: &str) -> Result<String, String> {
        Template::parse(text)
            .map_err(|e| e.to_string())?
            .render(|p| self.text(p))
    }

    /// Substitute placeholders inside a structured template. A string that is exactly one
    /// parameter placeholder without filters keeps the parameter's typed value (so
    /// `"{seed}"` stays a number); `{null}` is JSON null; with a filter, it is text.
    fn structured(&self, template: &Value) -> Result<Value, String> {
        Ok(match template {
            Value::String(s) => {
                let t = Template::parse(s).map_err(|e| e.to_string())?;
                match t.sole_placeholder() {
                    Some(p) if p.name == NULL => Value::Null,
                    // A list input is a JSON list of its copies; one left out is null.
                    Some(p) if p.input_id().is_some() => {
                        let id = p.input_id().unwrap_or_default();
                        match (
                            self.input_paths(id),
                            self.inputs.iter().find(|i| i.id == id),
                        ) {
                            (Some(paths), Some(i))
                                if i.kind == scimcp_core::manifest::InputKind::Files =>
                            {
                                Value::Array(paths.into_iter().map(Value::String).collect())
                            }
                            (Some(paths), _) => Value::String(paths.join(" ")),
                            (None, _) => Value::Null,
                        }
                    }
                    Some(p) if !p.yields_text() && self.params.contains_key(&p.name) => {
                        self.params[&p.name].clone()
                    }
                    _ => Value::String(t.render(|p| self.text(p))?),
                }
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.structured(v))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), self.structured(v)?)))
                    .collect::<Result<_, String>>()?,
            ),
            other => other.clone(),
        })
    }
}

/// Column names in a parameter's value: one name, or a list of them.
fn names_of(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().map(value_text).collect(),
        other => vec![value_text(other)],
    }
}

/// 1-based positions of `names` among `columns`.
fn positions(names: &[String], columns: &[String]) -> Result<Vec<usize>, String> {
    names
        .iter()
        .map(|n| {
            columns
                .iter()
                .position(|c| c == n)
                .map(|i| i + 1)
                .ok_or_else(|| format!("the dataset has no column '{n}'"))
        })
        .collect()
}

/// Compile `workflow` with resolved `params` on `dataset` into a plan. `columns` is the
/// dataset's header when the workflow's templates need it (column filters).
#[allow(clippy::too_many_arguments)]
pub fn compile(
    adapter: &Adapter,
    workflow: &Workflow,
    params: &serde_json::Map<String, Value>,
    dataset: Option<&ResolvedDataset>,
    inputs: &[crate::inputs::PlannedInput],
    columns: Option<&[String]>,
    program: &str,
    launch: &[String],
    env: BTreeMap<String, String>,
) -> Result<Plan, String> {
    let run_path = dataset.map(|d| format!("{INPUTS_DIR}/{}", d.file_name));
    let renderer = Renderer {
        params,
        run_path: run_path.clone(),
        inputs,
        columns,
    };
    let mut args: Vec<String> = launch.to_vec();
    args.extend(crate::plan_argv::assemble(
        &workflow.argv,
        crate::plan_argv::options(&workflow.options, params),
        |arg| renderer.expand(arg),
    )?);
    let mut stdin = Vec::new();
    for line in &workflow.stdin {
        stdin.extend(renderer.expand(line)?);
    }
    let mut input_files = Vec::new();
    for spec in &workflow.input_files {
        let rendered = renderer.structured(&spec.template)?;
        let content = match spec.format {
            InputFileFormat::Json | InputFileFormat::Yaml => {
                let mut s = serde_json::to_string_pretty(&rendered).map_err(|e| e.to_string())?;
                s.push('\n');
                s
            }
            InputFileFormat::Toml => toml::to_string(&rendered)
                .map_err(|e| format!("input file {} cannot be TOML: {e}", spec.path))?,
            // A text template that is one placeholder keeps its parameter's typed value
            // above; here it is written as text (`0.1`, `true`), never dropped.
            InputFileFormat::Text => value_text(&rendered),
        };
        input_files.push(PlannedFile {
            path: spec.path.clone(),
            content,
            escape: if spec.format == InputFileFormat::Text {
                Escape::None
            } else {
                Escape::Json
            },
        });
    }
    Ok(Plan {
        adapter: adapter.manifest.name.clone(),
        adapter_version: adapter.manifest.version.clone(),
        adapter_sha256: adapter.sha256().to_string(),
        workflow: workflow.id.clone(),
        program: program.to_string(),
        args,
        stdin,
        input_files,
        env,
        env_passthrough: ENV_PASSTHROUGH.iter().map(|s| s.to_string()).collect(),
        working_dir: "work".into(),
        output_dir: OUTPUT_DIR.into(),
        dataset: dataset
            .zip(run_path)
            .map(|(dataset, run_path)| PlannedDataset {
                reference: dataset.reference.clone(),
                run_path,
                sha256: dataset.sha256.clone(),
                size_bytes: dataset.size_bytes,
            }),
        inputs: inputs.to_vec(),
        artifacts: workflow.artifacts.clone(),
        success: workflow.success.clone(),
        metrics: workflow.metrics.clone(),
        requires: workflow.requires.clone(),
        timeout_s: adapter.manifest.effective_limits().run_timeout_s,
        steps: crate::plan_steps::compile(adapter, workflow, params, &|t| renderer.expand(t))?,
        programs: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn renderer<'a>(
        params: &'a serde_json::Map<String, Value>,
        columns: &'a [String],
    ) -> Renderer<'a> {
        Renderer {
            params,
            run_path: Some("inputs/Data 1.xlsx".into()),
            inputs: &[],
            columns: Some(columns),
        }
    }

    fn fixture() -> (serde_json::Map<String, Value>, Vec<String>) {
        let params = json!({
            "features": ["MGO", "SIO2"],
            "target": "NA2O",
            "identifier": "SAMPLE",
            "tol": 0.0005,
            "seed": 7,
            "bootstrap": true,
            "label": null,
        });
        let columns = ["SAMPLE", "SIO2", "TIO2", "MGO", "NA2O"]
            .map(String::from)
            .to_vec();
        (params.as_object().unwrap().clone(), columns)
    }

    #[test]
    fn filters_turn_typed_values_into_the_text_a_cli_expects() {
        let (params, columns) = fixture();
        let r = renderer(&params, &columns);
        let cases = [
            ("{tol|text}", "0.0005"),
            ("{seed}", "7"),
            ("{bootstrap|map:true=1,false=2}", "1"),
            ("{features|count}", "2"),
            ("{features|json}", r#"["MGO","SIO2"]"#),
            // File order, 1-based, whatever order the client named them in.
            ("{features|positions}", "2; 4"),
            ("{features|positions:target,identifier}", "1; 2; 4; 5"),
            // Among the selected columns (SIO2, MGO, NA2O): the target is the third.
            ("{target|positions_in:features,target}", "3"),
            ("--data={dataset}", "--data=inputs/Data 1.xlsx"),
            ("{work_dir}/plan.json", "{work_dir}/plan.json"),
            ("{{literal}}", "{literal}"),
        ];
        for (template, want) in cases {
            assert_eq!(r.render(template).unwrap(), want, "{template}");
        }
    }

    #[test]
    fn filter_mistakes_name_the_parameter_or_column() {
        let (mut params, columns) = fixture();
        params.insert("bootstrap".into(), json!("maybe"));
        params.insert("target".into(), json!("NOPE"));
        let r = renderer(&params, &columns);
        let e = r.render("{bootstrap|map:true=1,false=2}").unwrap_err();
        assert!(e.contains("'bootstrap'") && e.contains("maybe"), "{e}");
        let e = r.render("{target|positions}").unwrap_err();
        assert!(e.contains("NOPE"), "{e}");
        let e = r.render("{identifier|positions_in:features}").unwrap_err();
        assert!(e.contains("SAMPLE") && e.contains("features"), "{e}");
        let e = r.render("{absent}").unwrap_err();
        assert!(e.contains("'absent'"), "{e}");
    }

    #[test]
    fn structured_templates_keep_types_and_write_null() {
        let (params, columns) = fixture();
        let r = renderer(&params, &columns);
        let template = json!({
            "seed": "{seed}",
            "seed_text": "{seed|text}",
            "tol": "{tol}",
            "nothing": "{null}",
            "label": "{label}",
            "answers": ["{bootstrap|map:true=1,false=2}", "{features|positions}", 3],
            "paths": {"plan": "{work_dir}/plan.json", "data": "{dataset}"},
        });
        assert_eq!(
            r.structured(&template).unwrap(),
            json!({
                "seed": 7,
                "seed_text": "7",
                "tol": 0.0005,
                "nothing": null,
                "label": null,
                "answers": ["1", "2; 4", 3],
                "paths": {"plan": "{work_dir}/plan.json", "data": "inputs/Data 1.xlsx"},
            })
        );
    }

    #[test]
    fn run_paths_are_substituted_escaped_for_the_file_format() {
        let paths = RunPaths {
            work_dir: std::path::PathBuf::from(r#"C:\Users\Ada "A"\work"#),
            state_dir: std::path::PathBuf::from("/srv/state"),
        };
        assert_eq!(
            paths.substitute("{work_dir}/plan.json", Escape::None),
            r#"C:\Users\Ada "A"\work/plan.json"#
        );
        let json_text = format!(
            "{{\"p\": \"{}\", \"s\": \"{}\"}}",
            "{work_dir}/plan.json", "{state_dir}"
        );
        let written = paths.substitute(&json_text, Escape::Json);
        let back: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(back["p"], r#"C:\Users\Ada "A"\work/plan.json"#);
        assert_eq!(back["s"], "/srv/state");
        assert_eq!(paths.substitute("no paths", Escape::Json), "no paths");
    }
}
