//! Plans of an adapter whose commands an engine builds (a CWL tool; see
//! [`scimcp_core::manifest::CommandEngine`]): the files the request's parameters name are
//! staged exactly like named inputs (confined, hashed, copied into `inputs/<id>/`, checked
//! again at the end), then the engine builds the command from the staged copies and the plan
//! records it. The run starts the same resolved program as any other plan, never a shell.

use std::sync::Arc;

use scimcp_core::manifest::{
    ANY_FORMAT, CommandEngine, EngineCommand, EngineError, InputKind, InputSpec, StagedGroup,
    Workflow,
};
use serde_json::{Map, Value};

use crate::envelope::{ErrorCode, ToolError};
use crate::inputs::{InputValue, RequestInputs, ResolvedInput};
use crate::plan::{Escape, Plan, PlannedFile};

/// Where the engine's output object is written in the working directory (an artifact of
/// every engine run, so a client and `cwl-run` read it with its hash).
pub const OUTPUTS_FILE: &str = ".scimcp/outputs.json";
/// The artifact id of [`OUTPUTS_FILE`].
pub const OUTPUTS_ARTIFACT: &str = "outputs";

fn refused(e: EngineError) -> ToolError {
    let field = e.field.clone().unwrap_or_else(|| "parameters".to_string());
    ToolError::new(ErrorCode::InvalidParameters, e.message, e.hint).field(field)
}

/// The workflow with the engine's stage groups as its named inputs, and the request's
/// inputs for them: what [`crate::inputs::resolve_inputs`] confines, hashes and plans.
pub(crate) fn stage(
    engine: &Arc<dyn CommandEngine>,
    workflow: &Workflow,
    params: &Map<String, Value>,
    given: &RequestInputs,
) -> Result<(Workflow, RequestInputs), ToolError> {
    if !given.is_empty() {
        return Err(ToolError::new(
            ErrorCode::InvalidRequest,
            format!(
                "workflow '{}' takes its files inside parameters, not as named inputs",
                workflow.id
            ),
            "drop inputs and give each file where the tool's parameter schema has it: {\"class\": \"File\", \"path\": \"<path>\"}",
        )
        .field("inputs"));
    }
    let groups = engine.stage(params).map_err(refused)?;
    let mut staged = workflow.clone();
    let mut inputs = RequestInputs::new();
    for g in groups {
        staged.inputs.push(InputSpec {
            id: g.id.clone(),
            summary: "a file the parameters name".into(),
            formats: vec![ANY_FORMAT.to_string()],
            kind: g.kind,
            required: true,
            min_count: None,
            max_count: None,
        });
        let refs = g
            .paths
            .into_iter()
            .map(crate::inputs::InputRef::Path)
            .collect::<Vec<_>>();
        let value = match (g.kind, refs.len()) {
            (InputKind::Files, _) | (_, 0) => InputValue::Many(refs),
            _ => InputValue::One(refs.into_iter().next().expect("one reference")),
        };
        inputs.insert(g.id, value);
    }
    Ok((staged, inputs))
}

/// What the engine needs of the staged inputs: each file's confined source and its copy.
pub(crate) fn staged(inputs: &[ResolvedInput]) -> Vec<StagedGroup> {
    inputs
        .iter()
        .map(|i| {
            let planned = i.planned();
            StagedGroup {
                id: i.id.clone(),
                kind: i.kind,
                files: i
                    .files
                    .iter()
                    .map(|f| (f.path.clone(), f.planned.run_path.clone()))
                    .collect(),
                dir: planned.run_path,
            }
        })
        .collect()
}

/// The engine's command for `params` on `staged`.
pub(crate) fn command(
    engine: &Arc<dyn CommandEngine>,
    params: &Map<String, Value>,
    staged: &[StagedGroup],
) -> Result<EngineCommand, ToolError> {
    engine.command(params, staged).map_err(refused)
}

/// `plan` (compiled from the workflow, which has no argv of its own) with the engine's
/// command: its arguments after the resolved program and its launch prefix, its text files,
/// and the command itself for the run and the outputs step.
///
/// The text files move into `plan.input_files` rather than being kept twice: the run writes
/// those, and an answer shows a large one by its size and hash only
/// ([`crate::plan::serialize_shown`]).
pub(crate) fn apply(plan: &mut Plan, mut command: EngineCommand) {
    plan.args.extend(command.args.iter().cloned());
    for (path, content) in std::mem::take(&mut command.files) {
        plan.input_files
            .push(PlannedFile::new(path, content, Escape::None));
    }
    for (k, v) in &command.env {
        plan.env.insert(k.clone(), v.clone());
    }
    if let Some(t) = command.timeout_s {
        plan.timeout_s = plan.timeout_s.min(t);
    }
    plan.artifacts.push(outputs_artifact());
    plan.engine = Some(command);
}

fn outputs_artifact() -> scimcp_core::manifest::ArtifactSpec {
    serde_json::from_value(serde_json::json!({
        "id": OUTPUTS_ARTIFACT,
        "path": OUTPUTS_FILE,
        "media_type": "application/json",
        "base": "work",
    }))
    .expect("a valid artifact spec")
}

/// True when `exit_code` means success for an engine plan (its declared codes, else 0).
pub(crate) fn is_success(command: &EngineCommand, exit_code: i32) -> bool {
    if command.success_codes.is_empty() {
        exit_code == 0
    } else {
        command.success_codes.contains(&exit_code)
    }
}
