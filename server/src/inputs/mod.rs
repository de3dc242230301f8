//! Named file inputs of a request (`inputs: {"<id>": <ref> | [<ref>, …]}`): each reference
//! resolved to confined, hashed files ([`resolve`]), bound into the plan as [`PlannedInput`]s,
//! copied into the run's `inputs/<id>/` and re-verified at its end ([`copy`]).
//!
//! A reference is a path (confined exactly like a dataset), a path with the SHA-256 the
//! client expects, or an artifact of an earlier run of this server's runs directory,
//! identified by the hash its result recorded: so a chain of runs has provenance end to end.

pub(crate) mod copy;
mod reference;
pub(crate) mod resolve;
mod resolved;

pub use crate::plan::PlannedInput;
pub use crate::workflow_reads::takes_dataset;
pub use reference::{InputRef, InputValue, RequestInputs};
pub use resolve::resolve_inputs;
pub use resolved::{ResolvedInput, hashed_view};

/// The dataset reference the request must resolve: required by a workflow that reads a
/// table, refused by one that takes only named inputs (a table it never reads would be
/// copied and bound into the plan for nothing, and suggest it mattered).
pub fn dataset_reference<'r>(
    workflow: &scimcp_core::Workflow,
    dataset: Option<&'r str>,
    inputs: &RequestInputs,
) -> Result<Option<&'r str>, crate::envelope::ToolError> {
    use crate::envelope::{ErrorCode, ToolError};
    // Input ids first: a request naming inputs the workflow lacks is wrong whatever its
    // dataset, and says so before any file is read.
    resolve::check_ids(workflow, inputs)?;
    match (dataset, takes_dataset(workflow)) {
        (Some(reference), true) => Ok(Some(reference)),
        (None, true) => Err(ToolError::new(
            ErrorCode::InvalidRequest,
            format!(
                "workflow '{}' reads a table, and no dataset was given",
                workflow.id
            ),
            "pass dataset: a reference from list_datasets (builtin:<id> or the path of a CSV file)",
        )
        .field("dataset")),
        (Some(_), false) => Err(ToolError::new(
            ErrorCode::InvalidRequest,
            format!(
                "workflow '{}' reads no table; its files are named inputs",
                workflow.id
            ),
            "drop dataset and pass the files as inputs: {\"<input id>\": \"<path>\"}",
        )
        .field("dataset")
        .allowed(workflow.inputs.iter().map(|i| format!("inputs.{}", i.id)))),
        (None, false) => Ok(None),
    }
}

/// The dataset's copy (`inputs/<file name>`) and the inputs' (`inputs/<id>/…`) share a
/// directory: a dataset named like an input would collide with its directory.
pub fn check_dataset_apart(
    dataset: Option<&crate::datasets::ResolvedDataset>,
    inputs: &[ResolvedInput],
) -> Result<(), crate::envelope::ToolError> {
    let Some(dataset) = dataset else {
        return Ok(());
    };
    match inputs.iter().find(|i| i.id == dataset.file_name) {
        None => Ok(()),
        Some(i) => Err(crate::envelope::ToolError::new(
            crate::envelope::ErrorCode::InvalidRequest,
            format!(
                "the dataset's file name '{}' is the id of input '{}'; their copies would collide in the run",
                dataset.file_name, i.id
            ),
            "rename the dataset file (e.g. give it its .csv extension)",
        )
        .field("dataset")),
    }
}
