//! `list_datasets` and `inspect_dataset`.

use schemars::JsonSchema;
use serde::Serialize;

use crate::datasets::{ColumnInfo, DatasetEntry, ResolvedDataset};
use crate::envelope::ToolError;
use crate::paging::Page;
use crate::request::{DatasetsRequest, InspectRequest};
use crate::server::ServerContext;

/// `list_datasets` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DatasetsOutput {
    /// Datasets sorted by reference, paged.
    pub datasets: Page<DatasetEntry>,
    /// Directories datasets may come from.
    pub allowed_roots: Vec<String>,
    /// Why some datasets could not be listed (e.g. the runtime cannot export built-ins).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `inspect_dataset` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InspectOutput {
    pub dataset: ResolvedDataset,
    /// For a spreadsheet, every sheet (name, data rows, columns); the columns below are the
    /// first sheet's, which is what a CLI reads unless told otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sheets: Vec<crate::datasets::SheetInfo>,
    pub row_count: u64,
    pub column_count: usize,
    /// A page of the columns, in file order.
    pub columns: Page<ColumnInfo>,
    /// The first rows, restricted to the columns of this page, each cell cut to 120 characters.
    pub sample_rows: Vec<Vec<String>>,
}

pub(super) async fn list(
    ctx: &ServerContext,
    req: DatasetsRequest,
) -> Result<DatasetsOutput, ToolError> {
    let (datasets, notes) = ctx.datasets.list(&ctx.runtime).await;
    let limit = crate::paging::page_limit("limit", req.limit, 50, req.detail, 100, 1000)?;
    Ok(DatasetsOutput {
        datasets: Page::of(&datasets, req.offset, limit),
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
) -> Result<InspectOutput, ToolError> {
    let resolved = ctx.datasets.resolve(&req.dataset, &ctx.runtime).await?;
    let rows = crate::paging::in_range(
        "sample_rows",
        usize::from(req.sample_rows),
        0,
        10,
        "samples are a glimpse; read the file for more",
    )?;
    let limit =
        crate::paging::page_limit("column_limit", req.column_limit, 50, req.detail, 100, 2000)?;
    let offset = req.column_offset;
    let sample_columns = offset..offset.saturating_add(limit);
    let max = ctx.datasets.max_bytes();
    let full = tokio::task::spawn_blocking(move || {
        crate::datasets::inspect(resolved, rows, sample_columns, max)
    })
    .await
    .map_err(|e| ToolError::internal(format!("inspection panicked: {e}")))??;
    let columns = Page::of(&full.columns, req.column_offset, limit);
    let sample_rows = full.sample_rows;
    Ok(InspectOutput {
        sheets: full.sheets,
        dataset: full.dataset,
        row_count: full.row_count,
        column_count: full.column_count,
        columns,
        sample_rows,
    })
}
