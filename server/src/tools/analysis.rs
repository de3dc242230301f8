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
    let v = validate_request(
        &ctx.adapter,
        &ctx.validators,
        &ctx.datasets,
        &ctx.runtime,
        &req,
    )
    .await?;
    ctx.remember_validation(&v);
    Ok(v)
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
        if let Some(then) = ctx.recalled_dataset(given)
            && then.sha256 != validation.dataset.sha256
        {
            return Err(ToolError::new(
                ErrorCode::DatasetChanged,
                format!(
                    "dataset '{}' changed since validation {given}: sha256 was {}, now {}",
                    then.reference, then.sha256, validation.dataset.sha256
                ),
                "call validate_analysis again so the new bytes are checked, review the plan, then start with the new validation_id",
            )
            .field("dataset"));
        }
        return Err(ToolError::new(
            ErrorCode::StaleValidation,
            format!(
                "validation {given} does not match this request: the request, the dataset bytes or the plan differ (now {})",
                validation.validation_id
            ),
            "call validate_analysis again, review the new plan, then start with its validation_id",
        )
        .field("validation_id"));
    }
    let request = serde_json::to_value(&analysis).expect("request serializes");
    // The runtime identity goes into the run manifest; a runtime that cannot be probed is
    // recorded as unknown rather than blocking a run the plan says can start.
    let probe = ctx.runtime.probe().await.ok();
    let status = ctx.runs.start(&validation, &request, probe)?;
    Ok(StartOutput {
        run_id: status.run_id.clone(),
        state: status.state,
        validation_id: validation.validation_id,
        plan_sha256: validation.plan_sha256,
        dataset_sha256: validation.dataset.sha256,
        next_action: format!("call get_run_result with run_id \"{}\"", status.run_id),
    })
}
