//! Describing a file that is not a table: each kind's reader, chosen by format, reading the
//! file to its end.

use std::io::{BufReader, Read};

use schemars::JsonSchema;
use serde::Serialize;

use super::error::{ContentError, KindError};
use super::fits::{self, FitsFacts};
use super::format::{FASTQ, FileKind, Format, MMCIF, PDBQT, VOTABLE};
use super::sequences::{self, SequenceFacts};
use super::structure::{self, StructureFacts};
use super::text::{self, FileFacts};
use super::votable;

/// What a file that is not a table holds: the facts of its kind.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileInspection {
    pub kind: FileKind,
    /// The format recognised (`fasta`, `pdbqt`, `fits`, `votable`, `text`, `unknown`, …).
    pub format: String,
    pub media_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequences: Option<SequenceFacts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structure: Option<StructureFacts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fits: Option<FitsFacts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<FileFacts>,
}

/// Describe a file of format `format` (not a table) from `source`, read to its end (so a
/// hashing reader under it sees every byte). Parsers of outside crates run under
/// `catch_unwind`: a hostile file must give an error, never take the server down.
pub fn describe(format: Format, source: impl Read) -> Result<FileInspection, KindError> {
    let mut reader = BufReader::with_capacity(64 * 1024, source);
    let fail = |error: ContentError| KindError {
        format: format.name,
        error,
    };
    let mut out = FileInspection {
        kind: format.kind,
        format: format.name.to_string(),
        media_type: format.media_type.to_string(),
        sequences: None,
        structure: None,
        fits: None,
        file: None,
    };
    match format.kind {
        FileKind::Sequences if format == FASTQ => {
            out.sequences = Some(guarded(|| sequences::fastq(&mut reader)).map_err(fail)?);
        }
        FileKind::Sequences => out.sequences = Some(sequences::fasta(&mut reader).map_err(fail)?),
        FileKind::Structure if format == PDBQT => {
            out.structure = Some(structure::pdbqt(&mut reader).map_err(fail)?);
        }
        FileKind::Structure => {
            let mmcif = format == MMCIF;
            out.structure =
                Some(guarded(|| structure::with_pdbtbx(&mut reader, mmcif)).map_err(fail)?);
        }
        FileKind::Fits => out.fits = Some(guarded(|| fits::describe(&mut reader)).map_err(fail)?),
        FileKind::File if format == VOTABLE => {
            // The XML is parsed from memory (at most 64 MiB); the lines are counted to the end.
            let mut head = Vec::new();
            (&mut reader)
                .take(votable::MAX_VOTABLE_BYTES + 1)
                .read_to_end(&mut head)
                .map_err(|e| fail(e.into()))?;
            let complete = head.len() as u64 <= votable::MAX_VOTABLE_BYTES;
            let facts = votable::describe(&head, complete).map_err(fail)?;
            let mut rest = BufReader::new(std::io::Cursor::new(head).chain(&mut reader));
            let mut file = text::describe(&mut rest).map_err(fail)?;
            file.votable = Some(facts);
            out.file = Some(file);
        }
        FileKind::File | FileKind::Table => {
            out.file = Some(text::describe(&mut reader).map_err(fail)?);
        }
    }
    // The rest (past what a parser needed) still goes through the hash.
    std::io::copy(&mut reader, &mut std::io::sink()).map_err(|e| fail(e.into()))?;
    Ok(out)
}

/// Run a parser from another crate, turning a panic into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T, ContentError>) -> Result<T, ContentError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(ContentError::malformed(
            "the file is malformed (its parser gave up on it)",
        ))
    })
}
