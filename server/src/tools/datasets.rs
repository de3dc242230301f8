//! `list_datasets` and `inspect_dataset`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use super::handler::{Call, ToolHandler};
use crate::context::ServerContext;
use crate::datasets::kinds::{self, FileKind};
use crate::datasets::{ColumnInfo, DatasetEntry, ResolvedDataset};
use crate::envelope::ToolError;
use crate::paging::Page;
use crate::request::{DatasetsRequest, InspectRequest};

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
    /// What kind of file it is: `table`, `sequences`, `structure`, `fits` or `file`. Only a
    /// table has rows and columns; each other kind has its own facts below.
    pub kind: FileKind,
    /// The format recognised (`csv`, `xlsx`, `fasta`, `fastq`, `pdb`, `pdbqt`, `mmcif`,
    /// `fits`, `votable`, `text`, …, `unknown`), by extension first, then by content.
    pub format: String,
    pub media_type: String,
    /// For a spreadsheet, every sheet (name, data rows, columns); the columns below are the
    /// first sheet's, which is what a CLI reads unless told otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sheets: Vec<crate::datasets::SheetInfo>,
    /// Tables: data rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column_count: Option<usize>,
    /// Tables: a page of the columns, in file order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub columns: Option<Page<ColumnInfo>>,
    /// Tables: the first rows, restricted to the columns of this page, each cell cut to 120
    /// characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_rows: Option<Vec<Vec<String>>>,
    /// FASTA/FASTQ: records, lengths, alphabet, first ids (FASTQ: quality range).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequences: Option<kinds::SequenceFacts>,
    /// PDB/PDBQT/mmCIF: models, chains, residues, atoms, elements, bounding box.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structure: Option<kinds::StructureFacts>,
    /// FITS: every HDU's type, shape, BITPIX and descriptive header keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fits: Option<kinds::FitsFacts>,
    /// Any other file: whether it is text, its line count and first lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<kinds::FileFacts>,
}

/// The `list_datasets` tool.
pub(super) struct ListDatasets;

impl ToolHandler for ListDatasets {
    const NAME: &'static str = "list_datasets";
    const DESCRIPTION: &'static str = "Data files the server may read: the adapter's built-in datasets (`builtin:<id>`) and the files at the top of the allowed directories whose format a workflow accepts (tables for workflows that read a dataset, the formats of named inputs), each with its kind and the inputs that accept it. Pass a `reference` as `dataset` or as an input.";
    const READ_ONLY: bool = true;
    type Request = DatasetsRequest;
    type Output = DatasetsOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        _call: &Call,
        req: DatasetsRequest,
    ) -> Result<DatasetsOutput, ToolError> {
        list(ctx, req).await
    }
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

/// The `inspect_dataset` tool.
pub(super) struct InspectDataset;

impl ToolHandler for InspectDataset {
    const NAME: &'static str = "inspect_dataset";
    const DESCRIPTION: &'static str = "What one data file is and holds, with its size and SHA-256: its `kind` and format (by extension, then content), and for a table its columns (inferred types, missing counts), rows and first rows; for FASTA/FASTQ the records, lengths and alphabet; for PDB/PDBQT/mmCIF the models, chains, residues, atoms, elements and bounding box; for FITS every HDU's type, shape and header keys; for any other file whether it is text and its first lines. A non-table is never read as CSV.";
    const READ_ONLY: bool = true;
    type Request = InspectRequest;
    type Output = InspectOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        _call: &Call,
        req: InspectRequest,
    ) -> Result<InspectOutput, ToolError> {
        inspect(ctx, req).await
    }
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
    let inspected = tokio::task::spawn_blocking(move || {
        kinds::inspect_dataset(resolved, rows, sample_columns, max)
    })
    .await
    .map_err(|e| ToolError::internal(format!("inspection panicked: {e}")))??;
    Ok(match inspected {
        kinds::Inspected::Table(format, full) => InspectOutput {
            kind: FileKind::Table,
            format: format.name.to_string(),
            media_type: format.media_type.to_string(),
            columns: Some(Page::of(&full.columns, req.column_offset, limit)),
            sheets: full.sheets,
            dataset: full.dataset,
            row_count: Some(full.row_count),
            column_count: Some(full.column_count),
            sample_rows: Some(full.sample_rows),
            sequences: None,
            structure: None,
            fits: None,
            file: None,
        },
        kinds::Inspected::Other(dataset, facts) => InspectOutput {
            dataset,
            kind: facts.kind,
            format: facts.format,
            media_type: facts.media_type,
            sheets: Vec::new(),
            row_count: None,
            column_count: None,
            columns: None,
            sample_rows: None,
            sequences: facts.sequences,
            structure: facts.structure,
            fits: facts.fits,
            file: facts.file,
        },
    })
}
