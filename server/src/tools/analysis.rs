//! `validate_analysis` and `start_analysis`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use crate::envelope::{ErrorCode, ToolError};
use crate::request::{AnalysisRequest, StartRequest};
use crate::runs::state::RunState;
use crate::server::ServerContext;
use crate::validate::{Validation, validate as validate_request};

/// `start_analysis` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StartOutput {
    pub run_id: String,
    pub state: RunState,
    pub validation_id: String,
    pub plan_sha256: String,
    pub dataset_sha256: String,
    pub next_action: String,
}

pub(super) async fn validate(
    ctx: &ServerContext,
    req: AnalysisRequest,
) -> Result<Validation, ToolError> {
    validate_request(
        &ctx.adapter,
        &ctx.validators,
        &ctx.datasets,
        &ctx.runtime,
        &req,
    )
    .await
}

pub(super) async fn start(
    ctx: &Arc<ServerContext>,
    req: StartRequest,
) -> Result<StartOutput, ToolError> {
    let analysis = req.analysis();
    // Validated afresh: the dataset is re-hashed now, so bytes changed since an earlier
    // validate_analysis are caught before any process exists.
    let validation = validate_request(
        &ctx.adapter,
        &ctx.validators,
        &ctx.datasets,
        &ctx.runtime,
        &analysis,
    )
    .await?;
    if let Some(given) = &req.validation_id
        && given != &validation.validation_id
    {
        return Err(ToolError::new(
            ErrorCode::StaleValidation,
            format!("validation {given} no longer matches: the request, the dataset bytes or the plan changed (now {})", validation.validation_id),
            "call validate_analysis again, review the new plan, then start with its validation_id",
        )
        .field("validation_id"));
    }
    let request = serde_json::to_value(&analysis).expect("request serializes");
    let status = ctx.runs.start(&validation, &request)?;
    Ok(StartOutput {
        run_id: status.run_id.clone(),
        state: status.state,
        validation_id: validation.validation_id,
        plan_sha256: validation.plan_sha256,
        dataset_sha256: validation.dataset.sha256,
        next_action: format!("call get_run_result with run_id \"{}\"", status.run_id),
    })
}
