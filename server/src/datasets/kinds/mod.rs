//! What kind of file a data file is, and what can be said about it without a CLI: tables
//! (read by [`super::inspect`]), sequences, molecular structures, FITS, and any other file.
//!
//! The kind comes from the extension first (a client names files for what they are), then
//! from the first bytes (FITS' `SIMPLE  =`, FASTA's `>`, PDB records…), so an extensionless or
//! `.txt` file is still recognised, and nothing that is not a table is ever read as CSV.
//! Every reader streams through one bounded handle: memory stays within a few per-record
//! caps whatever the file holds, and the whole file is hashed on the way.

//!
//! This file only dispatches: the format table is [`format`], the readers' dispatch
//! [`describe`], their errors [`error`]; the kind files import those, never this one.

mod describe;
mod error;
mod fits;
mod format;
mod resource;
mod sequences;
mod shown;
pub(crate) mod structure;
mod text;
mod votable;

use std::io::BufReader;

use scimcp_core::hash::HashingReader;

use super::inspect::{Inspection, inspect};
use super::resolved::ResolvedDataset;
use crate::envelope::{ErrorCode, ToolError};

pub use describe::{FileInspection, describe};
pub use error::KindError;
pub use fits::FitsFacts;
pub use format::{FileKind, Format, by_name, head, media_types, sniff};
pub use resource::artifact_facts;
pub use sequences::SequenceFacts;
pub use structure::StructureFacts;
pub use text::FileFacts;

/// What `inspect_dataset` found: a table, or the facts of another kind of file.
#[derive(Debug)]
pub enum Inspected {
    Table(Format, Inspection),
    Other(ResolvedDataset, Box<FileInspection>),
}

/// Inspect a resolved dataset by its kind: a table through [`inspect`], anything else
/// through [`describe`], read once through one handle opened again below its root. The
/// dataset's hash and size in the answer are those of the bytes inspected.
pub fn inspect_dataset(
    mut dataset: ResolvedDataset,
    sample_rows: usize,
    sample_columns: std::ops::Range<usize>,
    max_bytes: u64,
) -> Result<Inspected, ToolError> {
    if let Some(f) = by_name(&dataset.file_name).filter(|f| f.kind == FileKind::Table) {
        return inspect(dataset, sample_rows, sample_columns, max_bytes)
            .map(|i| Inspected::Table(f, i));
    }
    let reference = dataset.reference.clone();
    let unreadable = |e: &dyn std::fmt::Display| {
        ToolError::new(
            ErrorCode::DatasetUnreadable,
            format!("cannot read dataset '{reference}': {e}"),
            "check the file",
        )
        .field("dataset")
    };
    let mut opened = dataset.reopen(max_bytes)?;
    let capped = opened
        .capped(&reference, max_bytes)
        .map_err(|e| unreadable(&e))?;
    let mut reader = BufReader::with_capacity(64 * 1024, HashingReader::new(capped));
    let head = head(&mut reader).map_err(|e| unreadable(&e))?;
    let format = sniff(&dataset.file_name, &head);
    let facts = describe(format, &mut reader).map_err(|e| invalid(&reference, &e))?;
    let (sha256, size) = reader.into_inner().finish().map_err(|e| unreadable(&e))?;
    dataset.sha256 = sha256;
    dataset.size_bytes = size;
    Ok(Inspected::Other(dataset, Box::new(facts)))
}

/// A file of a known format whose content is not that format.
fn invalid(reference: &str, e: &KindError) -> ToolError {
    let name = match e.format {
        "fasta" => "FASTA",
        "fastq" => "FASTQ",
        "pdb" => "PDB",
        "pdbqt" => "PDBQT",
        "mmcif" => "mmCIF",
        "fits" => "FITS",
        "votable" => "VOTable",
        other => other,
    };
    ToolError::new(
        ErrorCode::DatasetUnreadable,
        format!("dataset '{reference}' is not valid {name}: {}", e.error),
        "check the file with the program that wrote it; a file's kind comes from its extension, then its first bytes, so rename it if the extension is wrong",
    )
    .field("dataset")
}

#[cfg(test)]
mod tests;
