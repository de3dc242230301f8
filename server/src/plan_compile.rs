//! Compiling a validated request into a deterministic [`Plan`]: the argv, stdin answers and
//! input files rendered from the workflow's templates (run values, parameters and their
//! filters), the steps of a stepped workflow, the environment and the expected artifacts.
//!
//! A template that cannot be rendered is a [`PlanError`] (in `plan_error.rs`) naming the
//! parameter, column or file; validation reports it as an internal error (the manifest's load
//! check and the request's schema check make it rare).

use std::collections::BTreeMap;

use scimcp_core::Adapter;
use scimcp_core::hash::canonical_json;
use scimcp_core::manifest::{Filter, InputFileFormat, NULL, Placeholder, Template, Workflow};
use scimcp_core::run_env::ENV_PASSTHROUGH;
use serde_json::Value;

use crate::datasets::ResolvedDataset;
use crate::plan::{
    Escape, INPUTS_DIR, OUTPUT_DIR, Plan, PlannedDataset, PlannedFile, PlannedInput, value_text,
};
use crate::plan_error::PlanError;

/// Renders templates for one run: run values, parameters, and their filters.
struct Renderer<'a> {
    params: &'a serde_json::Map<String, Value>,
    /// The dataset copy's path, when the run has a dataset.
    run_path: Option<String>,
    /// The named inputs given (an optional input left out is absent).
    inputs: &'a [PlannedInput],
    /// The dataset's column names, in file order (for the column filters).
    columns: Option<&'a [String]>,
}

impl Renderer<'_> {
    /// The text of `p`: a run value, or a parameter through its filters.
    fn text(&self, p: &Placeholder) -> Result<String, PlanError> {
        if let Some(id) = p.input_id() {
            return Ok(self.input_paths(id).unwrap_or_default().join(" "));
        }
        match p.name.as_str() {
            "dataset" => {
                return self.run_path.clone().ok_or(PlanError::NoDataset);
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
            .map(PlannedInput::rendered)
    }

    /// One argument (or stdin line) template rendered to what the CLI receives: nothing when
    /// it names an optional input that was left out, and one per file when it names a
    /// `files` input (`--ligand={input.ligands}` → `--ligand=a`, `--ligand=b`).
    fn expand(&self, text: &str) -> Result<Vec<String>, PlanError> {
        let t = Template::parse(text).map_err(PlanError::template)?;
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
            _ => Err(PlanError::SeveralLists {
                template: text.to_string(),
            }),
        }
    }

    fn value(&self, name: &str) -> Result<&Value, PlanError> {
        self.params.get(name).ok_or_else(|| PlanError::NoValue {
            name: name.to_string(),
        })
    }

    fn filter(&self, name: &str, f: &Filter, value: &Value) -> Result<String, PlanError> {
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
                    .ok_or_else(|| PlanError::NoMapEntry {
                        name: name.to_string(),
                        key: key.clone(),
                    })?
            }
            Filter::Positions(also) => {
                let columns = self.columns.ok_or(PlanError::ColumnsUnknown)?;
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
                let columns = self.columns.ok_or(PlanError::ColumnsUnknown)?;
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
                            .ok_or_else(|| PlanError::NotAmong {
                                column: columns[w - 1].clone(),
                                name: name.to_string(),
                                sources: sources.join(", "),
                            })
                    })
                    .collect::<Result<Vec<_>, _>>()?
                    .join("; ")
            }
        })
    }

    #[cfg(test)]
    fn render(&self, text: &str) -> Result<String, PlanError> {
        Template::parse(text)
            .map_err(PlanError::template)?
            .render(|p| self.text(p))
    }

    /// Substitute placeholders inside a structured template. A string that is exactly one
    /// parameter placeholder without filters keeps the parameter's typed value (so
    /// `"{seed}"` stays a number); `{null}` is JSON null; with a filter, it is text.
    fn structured(&self, template: &Value) -> Result<Value, PlanError> {
        Ok(match template {
            Value::String(s) => {
                let t = Template::parse(s).map_err(PlanError::template)?;
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
                    .collect::<Result<_, PlanError>>()?,
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
fn positions(names: &[String], columns: &[String]) -> Result<Vec<usize>, PlanError> {
    names
        .iter()
        .map(|n| {
            columns
                .iter()
                .position(|c| c == n)
                .map(|i| i + 1)
                .ok_or_else(|| PlanError::NoColumn { column: n.clone() })
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
    inputs: &[PlannedInput],
    columns: Option<&[String]>,
    program: &str,
    launch: &[String],
    env: BTreeMap<String, String>,
) -> Result<Plan, PlanError> {
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
                let mut s =
                    serde_json::to_string_pretty(&rendered).map_err(|source| PlanError::Json {
                        path: spec.path.clone(),
                        source,
                    })?;
                s.push('\n');
                s
            }
            InputFileFormat::Toml => {
                toml::to_string(&rendered).map_err(|source| PlanError::Toml {
                    path: spec.path.clone(),
                    source,
                })?
            }
            // A text template that is one placeholder keeps its parameter's typed value
            // above; here it is written as text (`0.1`, `true`), never dropped.
            InputFileFormat::Text => value_text(&rendered),
        };
        input_files.push(PlannedFile::new(
            spec.path.clone(),
            content,
            if spec.format == InputFileFormat::Text {
                Escape::None
            } else {
                Escape::Json
            },
        ));
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
        sandbox: crate::sandbox_policy::declared(workflow),
        engine: None,
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
        let e = r
            .render("{bootstrap|map:true=1,false=2}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'bootstrap'") && e.contains("maybe"), "{e}");
        let e = r.render("{target|positions}").unwrap_err().to_string();
        assert!(e.contains("NOPE"), "{e}");
        let e = r
            .render("{identifier|positions_in:features}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("SAMPLE") && e.contains("features"), "{e}");
        let e = r.render("{absent}").unwrap_err().to_string();
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
}
