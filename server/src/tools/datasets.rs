//! `list_datasets` and `inspect_dataset`.

use schemars::JsonSchema;
use serde::Serialize;

use crate::datasets::{DatasetEntry, Inspection, inspect_csv};
use crate::envelope::ToolError;
use crate::request::InspectRequest;
use crate::server::ServerContext;

/// `list_datasets` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DatasetsOutput {
    pub datasets: Vec<DatasetEntry>,
    /// Directories datasets may come from.
    pub allowed_roots: Vec<String>,
    /// Why some datasets could not be listed (e.g. the runtime cannot export built-ins).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `inspect_dataset` output.
pub type InspectOutput = Inspection;

pub(super) async fn list(ctx: &ServerContext) -> Result<DatasetsOutput, ToolError> {
    let (datasets, notes) = ctx.datasets.list(&ctx.runtime).await;
    Ok(DatasetsOutput {
        datasets,
        allowed_roots: ctx
            .datasets
            .roots()
            .iter()
            .map(|r| r.display().to_string())
            .collect(),
        notes,
    })
}

pub(super) async fn inspect(
    ctx: &ServerContext,
    req: InspectRequest,
) -> Result<Inspection, ToolError> {
    let resolved = ctx.datasets.resolve(&req.dataset, &ctx.runtime).await?;
    let rows = usize::from(req.sample_rows.min(10));
    tokio::task::spawn_blocking(move || inspect_csv(resolved, rows))
        .await
        .map_err(|e| ToolError::internal(format!("inspection panicked: {e}")))?
}
