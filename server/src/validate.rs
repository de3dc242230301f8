//! Strict validation of an analysis request: workflow, parameters against the workflow's
//! schema (every problem reported with its field), defaults, dataset checks, readiness, and
//! the compiled plan with its hashes. Nothing here starts the scientific CLI.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use schemars::JsonSchema;
use scimcp_core::hash::{canonical_sha256, sha256_hex};
use scimcp_core::manifest::{COLUMN_KEYWORD, InputFileFormat};
use scimcp_core::{Adapter, Template, Workflow};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::datasets::{ColumnType, DatasetCatalog, ResolvedDataset};
use crate::envelope::{ErrorCode, Issue, ToolError};
use crate::plan::{self, Plan};
use crate::request::AnalysisRequest;
use crate::runtime::ScientificRuntime;
use crate::workflow_reads::uses_columns;

/// Parameter validators, one per workflow, each compiled on the first request for its
/// workflow: compiling them all before the first `tools/list` delayed every server start,
/// and a session rarely uses more than one or two workflows. (Every schema already compiled
/// once when the manifest was loaded and checked.)
pub struct Validators(
    HashMap<String, OnceLock<Result<jsonschema::Validator, jsonschema::ValidationError<'static>>>>,
);

impl std::fmt::Debug for Validators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

impl Validators {
    /// One slot per workflow of `adapter`, nothing compiled yet.
    pub fn new(adapter: &Adapter) -> Validators {
        Validators(
            adapter
                .manifest
                .workflows
                .iter()
                .map(|wf| (wf.id.clone(), OnceLock::new()))
                .collect(),
        )
    }

    /// The compiled validator of `workflow` (compiled now if this is its first request).
    fn get(&self, workflow: &Workflow) -> Result<&jsonschema::Validator, ToolError> {
        let slot = self.0.get(&workflow.id).ok_or_else(|| {
            ToolError::internal(format!("no validator slot for workflow {}", workflow.id))
        })?;
        slot.get_or_init(|| jsonschema::validator_for(&workflow.parameters_schema))
            .as_ref()
            .map_err(|e| {
                ToolError::internal(format!(
                    "workflow {}: its parameter schema does not compile: {e}",
                    workflow.id
                ))
            })
    }
}

/// A request that passed validation.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct Validation {
    /// This session's one-time confirmation of this exact request, dataset bytes and plan
    /// (valid 15 minutes, on this server): pass it to start_analysis, which starts one run
    /// with it.
    pub validation_id: String,
    /// True when the server can start this analysis now.
    pub ready: bool,
    /// Why the analysis cannot start yet (empty when ready).
    pub blockers: Vec<Issue>,
    pub workflow: String,
    /// The parameters after schema defaults were applied.
    pub resolved_parameters: Map<String, Value>,
    /// The table the run reads, for workflows that take one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<ResolvedDataset>,
    /// The named file inputs, each file checked and hashed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<crate::inputs::ResolvedInput>,
    pub request_sha256: String,
    pub plan_sha256: String,
    pub adapter_sha256: String,
    #[serde(serialize_with = "crate::plan::serialize_shown")]
    pub plan: Plan,
    /// What a run of the plan starts in on this server that is not part of the plan or its
    /// hash: the run sandbox's mode and each protection as this machine applies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::sandbox_policy::PlannedEnvironment>,
}

/// Validate `req` completely. Errors are request problems; environment problems are
/// blockers on an otherwise valid result.
pub async fn validate(
    adapter: &Adapter,
    validators: &Validators,
    datasets: &DatasetCatalog,
    runtime: &ScientificRuntime,
    req: &AnalysisRequest,
) -> Result<Validation, ToolError> {
    let Some(workflow) = adapter.workflow(&req.workflow) else {
        return Err(ToolError::new(
            ErrorCode::UnknownWorkflow,
            format!(
                "adapter '{}' has no workflow '{}'",
                adapter.manifest.name, req.workflow
            ),
            "pick one of the allowed workflows (get_capabilities describes each)",
        )
        .field("workflow")
        .allowed(adapter.workflow_ids()));
    };
    let validator = validators.get(workflow)?;
    let instance = Value::Object(req.parameters.clone());
    let issues: Vec<Issue> = validator
        .iter_errors(&instance)
        .map(|e| issue_of(&e, &workflow.parameters_schema))
        .collect();
    if !issues.is_empty() {
        let first = issues[0].clone();
        return Err(ToolError::new(
            ErrorCode::InvalidParameters,
            format!(
                "{} parameter problem(s) for workflow '{}': {}",
                issues.len(),
                workflow.id,
                first.message
            ),
            format!(
                "fix the listed fields; get_capabilities(workflow=\"{}\") gives the exact schema",
                workflow.id
            ),
        )
        .field(first.field.clone())
        .allowed(first.allowed.clone())
        .issues(issues));
    }
    let mut resolved = with_defaults(&req.parameters, &workflow.parameters_schema);
    integers_as_integers(&mut resolved, &workflow.parameters_schema);
    check_shape_preserving(&resolved, workflow)?;
    // An engine's workflow takes its files inside the parameters: they are staged as named
    // inputs of a per-request copy of the workflow, then confined and hashed like any other.
    let engine_stage = match (&adapter.engine, &workflow.engine) {
        (Some(engine), Some(_)) => Some(crate::plan_engine::stage(
            engine,
            workflow,
            &resolved,
            &req.inputs,
        )?),
        (None, Some(name)) => {
            return Err(ToolError::internal(format!(
                "workflow '{}' needs the '{name}' engine, which this adapter was loaded without",
                workflow.id
            )));
        }
        _ => None,
    };
    let (input_workflow, request_inputs) = match &engine_stage {
        Some((w, i)) => (w, i),
        None => (workflow, &req.inputs),
    };
    let dataset = match crate::inputs::dataset_reference(
        input_workflow,
        req.dataset.as_deref(),
        request_inputs,
    )? {
        Some(reference) => Some(datasets.resolve(reference, runtime).await?),
        None => None,
    };
    if let Some(expected) = &req.expected_dataset_sha256
        && let Some(dataset) = &dataset
        && !expected.eq_ignore_ascii_case(&dataset.sha256)
    {
        return Err(ToolError::new(
            ErrorCode::DatasetChanged,
            format!(
                "dataset '{}' has sha256 {}, not the expected {expected}",
                dataset.reference, dataset.sha256
            ),
            "check that this is the intended file, or drop expected_dataset_sha256",
        )
        .field("expected_dataset_sha256"));
    }
    let limits = adapter.manifest.effective_limits();
    let inputs = crate::inputs::resolve_inputs(
        input_workflow,
        request_inputs,
        datasets,
        crate::inputs::resolve::InputLimits {
            max_bytes: limits.max_dataset_bytes,
            max_files: limits.max_artifacts,
        },
    )
    .await?;
    crate::inputs::check_dataset_apart(dataset.as_ref(), &inputs)?;
    let planned_inputs: Vec<_> = inputs.iter().map(|i| i.planned()).collect();
    let mut blockers = Vec::new();
    // A stepped workflow's programs are bound per step (`plan_steps::bind`).
    let (program, launch) = if workflow.steps.is_empty() {
        crate::plan_steps::workflow_command(adapter, workflow, runtime).unwrap_or_else(|issue| {
            blockers.push(issue);
            let launch = adapter.manifest.workflow_program(workflow).launch.to_vec();
            (String::new(), launch)
        })
    } else {
        (String::new(), Vec::new())
    };
    let columns = match &dataset {
        Some(dataset) if uses_columns(workflow) => {
            Some(check_columns(workflow, &resolved, dataset, datasets.max_bytes()).await?)
        }
        _ => None,
    };
    let env = runtime.run_env(&adapter.manifest, workflow);
    let mut plan = crate::plan_compile::compile(
        adapter,
        workflow,
        &resolved,
        dataset.as_ref(),
        &planned_inputs,
        columns.as_deref(),
        &program,
        &launch,
        env,
    )?;
    if let (Some(engine), Some(_)) = (&adapter.engine, &engine_stage) {
        let staged = crate::plan_engine::staged(&inputs);
        let command = crate::plan_engine::command(engine, &resolved, &staged)?;
        crate::plan_engine::apply(&mut plan, command);
    }
    blockers.extend(crate::plan_steps::bind(
        &mut plan, adapter, workflow, runtime,
    ));
    blockers.extend(crate::sandbox_policy::unavailable(plan.sandbox.as_ref()));
    let plan_sha256 = plan.sha256();
    let mut hashed = serde_json::json!({
        "workflow": workflow.id,
        "parameters": Value::Object(resolved.clone()),
    });
    // Only what the request has: a request without inputs hashes as it always did.
    if let Some(reference) = &req.dataset {
        hashed["dataset"] = Value::String(reference.clone());
    }
    if !inputs.is_empty() {
        hashed["inputs"] = crate::inputs::hashed_view(&inputs);
    }
    let request_sha256 = canonical_sha256(&hashed);
    let mut bound = format!(
        "{}\n{request_sha256}\n{}\n{plan_sha256}",
        adapter.sha256(),
        dataset.as_ref().map_or("", |d| d.sha256.as_str())
    );
    for file in inputs.iter().flat_map(|i| &i.files) {
        bound.push('\n');
        bound.push_str(&file.planned.sha256);
    }
    let validation_id = format!("val-{}", &sha256_hex(bound.as_bytes())[..16]);
    Ok(Validation {
        validation_id,
        ready: blockers.is_empty(),
        blockers,
        workflow: workflow.id.clone(),
        resolved_parameters: resolved,
        dataset,
        inputs,
        request_sha256,
        plan_sha256,
        adapter_sha256: adapter.sha256().to_string(),
        environment: Some(crate::sandbox_policy::planned_environment(
            plan.sandbox.as_ref(),
        )),
        plan,
    })
}

/// Top-level schema defaults filled in for absent parameters.
fn with_defaults(params: &Map<String, Value>, schema: &Value) -> Map<String, Value> {
    let mut out = params.clone();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if !out.contains_key(name)
                && let Some(default) = prop.get("default")
            {
                out.insert(name.clone(), default.clone());
            }
        }
    }
    out
}

/// Read the dataset's header, column types and missing values, and check every parameter
/// marked as columns against them, before any process exists: each named column must
/// exist, be numeric when the schema says `numeric`, and have no missing value when it
/// says `complete`. Returns the column names in file order.
async fn check_columns(
    workflow: &Workflow,
    params: &Map<String, Value>,
    dataset: &ResolvedDataset,
    max_bytes: u64,
) -> Result<Vec<String>, ToolError> {
    let resolved = dataset.clone();
    let inspection =
        tokio::task::spawn_blocking(move || crate::datasets::inspect(resolved, 0, 0..0, max_bytes))
            .await
            .map_err(|e| {
                ToolError::internal(format!("reading the dataset's columns panicked: {e}"))
            })??;
    let columns = &inspection.columns;
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    let Some(props) = workflow
        .parameters_schema
        .get("properties")
        .and_then(Value::as_object)
    else {
        return Ok(names);
    };
    for (param, schema) in props {
        let Some(rule) = schema.get(COLUMN_KEYWORD) else {
            continue;
        };
        let Some(value) = params.get(param) else {
            continue;
        };
        let chosen: Vec<&str> = match value {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let numeric = rule
            .get("numeric")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let max_distinct = rule.get("max_distinct").and_then(Value::as_u64);
        let complete = rule
            .get("complete")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        for name in chosen {
            let field = format!("parameters.{param}");
            let Some(column) = columns.iter().find(|c| c.name == name) else {
                return Err(ToolError::new(
                    ErrorCode::InvalidParameters,
                    format!(
                        "dataset '{}' has no column '{name}' (parameter '{param}')",
                        dataset.reference
                    ),
                    "pick columns the dataset has (inspect_dataset lists them)",
                )
                .field(field)
                .allowed(names.iter().take(200).cloned()));
            };
            if numeric
                && !matches!(
                    column.inferred_type,
                    ColumnType::Integer | ColumnType::Number
                )
            {
                return Err(ToolError::new(
                    ErrorCode::InvalidParameters,
                    format!(
                        "column '{name}' of dataset '{}' is {:?}, not numeric (parameter '{param}')",
                        dataset.reference, column.inferred_type
                    ),
                    "pick numeric columns (inspect_dataset shows each column's type)",
                )
                .field(field));
            }
            if let Some(max) = max_distinct
                && column.distinct_values.is_none_or(|n| n > max)
            {
                let found = column
                    .distinct_values
                    .map_or_else(|| "more than 20".to_string(), |n| n.to_string());
                return Err(ToolError::new(
                    ErrorCode::InvalidParameters,
                    format!(
                        "column '{name}' of dataset '{}' holds {found} different values (parameter '{param}'); this workflow takes at most {max}",
                        dataset.reference
                    ),
                    "pick a column with fewer classes (inspect_dataset shows distinct_values)",
                )
                .field(field));
            }
            if complete && column.missing > 0 {
                return Err(ToolError::new(
                    ErrorCode::InvalidParameters,
                    format!(
                        "column '{name}' of dataset '{}' has {} missing value(s) (parameter '{param}'); this workflow needs complete columns",
                        dataset.reference, column.missing
                    ),
                    "pick columns without missing values, or fill the gaps in the data first",
                )
                .field(field));
            }
        }
    }
    Ok(names)
}

/// A number the schema types as an integer is one, even when a client wrote it `1.0`: the
/// plan, its hash and the command line then all say `1`, which is what the CLI parses.
fn integers_as_integers(params: &mut Map<String, Value>, schema: &Value) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, value) in params.iter_mut() {
        let Some(prop) = props.get(name) else {
            continue;
        };
        let integer = match prop.get("type") {
            Some(Value::String(t)) => t == "integer",
            Some(Value::Array(ts)) => {
                ts.iter().any(|t| t == "integer") && !ts.iter().any(|t| t == "number")
            }
            _ => false,
        };
        match value {
            Value::Number(n) if integer && n.is_f64() => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                // The schema already accepted it as an integer, so it has no fraction.
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    *value = Value::from(f as i64);
                }
            }
            Value::Object(inner) => integers_as_integers(inner, prop),
            _ => {}
        }
    }
}

/// Placeholders whose value becomes one line of what the CLI reads: a stdin answer or a
/// line of a text input file.
fn line_bound_placeholders(workflow: &Workflow) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut add = |text: &str| {
        if let Ok(t) = Template::parse(text) {
            names.extend(t.placeholders().map(str::to_string));
        }
    };
    for answer in &workflow.stdin {
        add(answer);
    }
    for file in &workflow.input_files {
        if file.format == InputFileFormat::Text
            && let Some(text) = file.template.as_str()
        {
            add(text);
        }
    }
    names
}

/// The plan must describe exactly what the CLI receives: a value bound for a line (a stdin
/// answer, a text file's line) may not carry a line break that would add lines the plan does
/// not show, and no value may carry NUL (no argument, file or pipe can hold it).
fn check_shape_preserving(
    params: &Map<String, Value>,
    workflow: &Workflow,
) -> Result<(), ToolError> {
    fn has_nul(v: &Value) -> bool {
        match v {
            Value::String(s) => s.contains('\0'),
            Value::Array(a) => a.iter().any(has_nul),
            Value::Object(o) => o.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
            _ => false,
        }
    }
    fn has_run_path(v: &Value) -> bool {
        match v {
            Value::String(s) => s.contains("{work_dir}") || s.contains("{state_dir}"),
            Value::Array(a) => a.iter().any(has_run_path),
            Value::Object(o) => o.values().any(has_run_path),
            _ => false,
        }
    }
    for (name, value) in params {
        if has_run_path(value) {
            return Err(ToolError::new(
                ErrorCode::InvalidParameters,
                format!("parameter '{name}' contains {{work_dir}} or {{state_dir}}, text the server substitutes with run paths"),
                "remove the braces from the value",
            )
            .field(format!("parameters.{name}")));
        }
        if has_nul(value) {
            return Err(ToolError::new(
                ErrorCode::InvalidParameters,
                format!("parameter '{name}' contains a NUL character"),
                "remove the NUL character from the value",
            )
            .field(format!("parameters.{name}")));
        }
    }
    for name in line_bound_placeholders(workflow) {
        let Some(value) = params.get(&name) else {
            continue;
        };
        let text = plan::value_text(value);
        if text.contains(['\n', '\r']) {
            return Err(ToolError::new(
                ErrorCode::InvalidParameters,
                format!(
                    "parameter '{name}' contains a line break; workflow '{}' writes it as one line of the CLI's input, where a line break would add answers the plan does not show",
                    workflow.id
                ),
                "send the value on one line",
            )
            .field(format!("parameters.{name}")));
        }
    }
    Ok(())
}

fn issue_of(e: &jsonschema::ValidationError<'_>, schema: &Value) -> Issue {
    let pointer = e.instance_path().to_string();
    let base: String = pointer
        .trim_start_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .fold(String::from("parameters"), |acc, seg| {
            format!("{acc}.{seg}")
        });
    let enum_of = |field: &str| -> Vec<String> {
        schema
            .pointer(&format!("/properties/{field}/enum"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    match e.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let name = unexpected.first().cloned().unwrap_or_default();
            let allowed = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            Issue {
                field: format!("{base}.{name}"),
                message: format!(
                    "unknown parameter '{}' (the schema is strict)",
                    unexpected.join("', '")
                ),
                allowed,
            }
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            Issue {
                field: format!("{base}.{name}"),
                message: format!("missing required parameter '{name}'"),
                allowed: enum_of(name),
            }
        }
        ValidationErrorKind::Enum { options } => Issue {
            field: base,
            message: format!("{} is not one of the allowed values", e.instance()),
            allowed: options
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), String::from))
                        .collect()
                })
                .unwrap_or_default(),
        },
        _ => Issue {
            field: base,
            message: e.to_string(),
            allowed: Vec::new(),
        },
    }
}
