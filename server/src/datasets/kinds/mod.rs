//! What kind of file a data file is, and what can be said about it without a CLI: tables
//! (read by [`super::inspect`]), sequences, molecular structures, FITS, and any other file.
//!
//! The kind comes from the extension first (a client names files for what they are), then
//! from the first bytes (FITS' `SIMPLE  =`, FASTA's `>`, PDB records…), so an extensionless or
//! `.txt` file is still recognised, and nothing that is not a table is ever read as CSV.
//! Every reader streams through one bounded handle: memory stays within a few per-record
//! caps whatever the file holds, and the whole file is hashed on the way.

mod fits;
mod resource;
mod sequences;
pub(crate) mod structure;
mod text;
mod votable;

use std::io::{BufRead, BufReader, Read};

use schemars::JsonSchema;
use scimcp_core::hash::HashingReader;
use serde::Serialize;

use crate::envelope::{ErrorCode, ToolError};

pub use fits::{FitsFacts, HduFacts};
pub use resource::artifact_facts;
pub use sequences::{Alphabet, QualityFacts, SequenceFacts};
pub use structure::{BoundingBox, StructureFacts};
pub use text::FileFacts;
pub use votable::{VotableFacts, VotableField};

/// Bytes looked at to recognise a file by its content.
const SNIFF_BYTES: usize = 8192;

/// The kinds of data file `inspect_dataset` tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// CSV, TSV or a spreadsheet: columns and rows.
    Table,
    /// FASTA or FASTQ: records, lengths, alphabet.
    Sequences,
    /// PDB, PDBQT or mmCIF: models, chains, residues, atoms, coordinates.
    Structure,
    /// FITS: header/data units, shapes, header keys.
    Fits,
    /// Anything else: size, hash, media type and, for text, its first lines.
    File,
}

/// A recognised format: its kind, a short name and a media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub kind: FileKind,
    /// `csv`, `fasta`, `pdbqt`, `fits`, `votable`, … (`unknown` when nothing matched).
    pub name: &'static str,
    pub media_type: &'static str,
}

const fn format(kind: FileKind, name: &'static str, media_type: &'static str) -> Format {
    Format {
        kind,
        name,
        media_type,
    }
}

/// Extensions (lower case, no dot) and the format each names.
const BY_EXTENSION: &[(&str, Format)] = &[
    ("csv", format(FileKind::Table, "csv", "text/csv")),
    (
        "tsv",
        format(FileKind::Table, "tsv", "text/tab-separated-values"),
    ),
    (
        "xlsx",
        format(
            FileKind::Table,
            "xlsx",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
    ),
    (
        "xlsm",
        format(
            FileKind::Table,
            "xlsm",
            "application/vnd.ms-excel.sheet.macroenabled.12",
        ),
    ),
    (
        "xls",
        format(FileKind::Table, "xls", "application/vnd.ms-excel"),
    ),
    (
        "ods",
        format(
            FileKind::Table,
            "ods",
            "application/vnd.oasis.opendocument.spreadsheet",
        ),
    ),
    ("fasta", FASTA),
    ("fa", FASTA),
    ("fas", FASTA),
    ("fna", FASTA),
    ("ffn", FASTA),
    ("faa", FASTA),
    ("frn", FASTA),
    ("mpfa", FASTA),
    ("fastq", FASTQ),
    ("fq", FASTQ),
    ("pdb", PDB),
    ("ent", PDB),
    ("pdbqt", PDBQT),
    ("cif", MMCIF),
    ("mmcif", MMCIF),
    ("fits", FITS),
    ("fit", FITS),
    ("fts", FITS),
    ("vot", VOTABLE),
    ("votable", VOTABLE),
    ("xml", XML),
    ("json", format(FileKind::File, "json", "application/json")),
    ("txt", format(FileKind::File, "text", "text/plain")),
    ("log", format(FileKind::File, "text", "text/plain")),
    (
        "sdf",
        format(FileKind::File, "sdf", "chemical/x-mdl-sdfile"),
    ),
    ("mol2", format(FileKind::File, "mol2", "chemical/x-mol2")),
    ("png", format(FileKind::File, "png", "image/png")),
    ("svg", format(FileKind::File, "svg", "image/svg+xml")),
];

const FASTA: Format = format(FileKind::Sequences, "fasta", "text/x-fasta");
const FASTQ: Format = format(FileKind::Sequences, "fastq", "text/x-fastq");
const PDB: Format = format(FileKind::Structure, "pdb", "chemical/x-pdb");
const PDBQT: Format = format(FileKind::Structure, "pdbqt", "chemical/x-pdbqt");
const MMCIF: Format = format(FileKind::Structure, "mmcif", "chemical/x-mmcif");
const FITS: Format = format(FileKind::Fits, "fits", "application/fits");
const VOTABLE: Format = format(FileKind::File, "votable", "application/x-votable+xml");
const XML: Format = format(FileKind::File, "xml", "application/xml");
const TEXT: Format = format(FileKind::File, "text", "text/plain");
const BINARY: Format = format(FileKind::File, "unknown", "application/octet-stream");

/// The format a file name's extension names, if it names one this server knows.
pub fn by_name(file_name: &str) -> Option<Format> {
    let ext = file_name.rsplit_once('.')?.1.to_ascii_lowercase();
    BY_EXTENSION
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, f)| *f)
}

/// The media types a file name's format goes by: its own, then others in use for it
/// (FITS is registered both as `application/fits` and `image/fits`; a VOTable is XML).
pub fn media_types(file_name: &str) -> Vec<&'static str> {
    let Some(f) = by_name(file_name) else {
        return Vec::new();
    };
    let mut out = vec![f.media_type];
    match f {
        FITS => out.push("image/fits"),
        VOTABLE => out.push("application/xml"),
        _ => {}
    }
    out
}

/// The format of a file: by its name when that names one, otherwise by its first bytes.
pub fn sniff(file_name: &str, head: &[u8]) -> Format {
    match by_name(file_name) {
        // `.xml`, `.txt`, `.log` say little: what is inside decides.
        Some(f) if (f.kind == FileKind::File && f.media_type.starts_with("text/")) || f == XML => {
            by_content(head).unwrap_or(f)
        }
        Some(f) => f,
        None => by_content(head).unwrap_or(if text::looks_like_text(head) {
            TEXT
        } else {
            BINARY
        }),
    }
}

/// The format the first bytes of a file show, when they show one.
fn by_content(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"SIMPLE  =") {
        return Some(FITS);
    }
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with("<?xml") || trimmed.starts_with("<VOTABLE") {
        return Some(if text.contains("<VOTABLE") {
            VOTABLE
        } else {
            XML
        });
    }
    if trimmed.starts_with('>') {
        return Some(FASTA);
    }
    if trimmed.starts_with('@') {
        // A FASTQ record's third line starts with `+`.
        let third = trimmed.lines().nth(2).unwrap_or_default();
        return third.starts_with('+').then_some(FASTQ);
    }
    if trimmed.starts_with("data_") {
        return Some(MMCIF);
    }
    let records = [
        "ATOM  ", "HETATM", "REMARK", "MODEL ", "HEADER", "CRYST1", "ROOT", "COMPND",
    ];
    let first = trimmed.lines().next().unwrap_or_default();
    if records.iter().any(|r| first.starts_with(r)) {
        return Some(if structure::looks_like_pdbqt(&text) {
            PDBQT
        } else {
            PDB
        });
    }
    None
}

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

/// Why a file could not be described: what is wrong, where, in its own terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindError {
    pub format: &'static str,
    pub message: String,
}

impl std::fmt::Display for KindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}

/// Describe a file of format `format` (not a table) from `source`, read to its end (so a
/// hashing reader under it sees every byte). Parsers of outside crates run under
/// `catch_unwind`: a hostile file must give an error, never take the server down.
pub fn describe(format: Format, source: impl Read) -> Result<FileInspection, KindError> {
    let mut reader = BufReader::with_capacity(64 * 1024, source);
    let fail = |message: String| KindError {
        format: format.name,
        message,
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
                .map_err(|e| fail(e.to_string()))?;
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
    std::io::copy(&mut reader, &mut std::io::sink()).map_err(|e| fail(e.to_string()))?;
    Ok(out)
}

/// What `inspect_dataset` found: a table, or the facts of another kind of file.
#[derive(Debug)]
pub enum Inspected {
    Table(Format, super::Inspection),
    Other(super::ResolvedDataset, Box<FileInspection>),
}

/// Inspect a resolved dataset by its kind: a table through [`super::inspect`], anything else
/// through [`describe`], read once through one handle opened again below its root. The
/// dataset's hash and size in the answer are those of the bytes inspected.
pub fn inspect_dataset(
    mut dataset: super::ResolvedDataset,
    sample_rows: usize,
    sample_columns: std::ops::Range<usize>,
    max_bytes: u64,
) -> Result<Inspected, ToolError> {
    if let Some(f) = by_name(&dataset.file_name).filter(|f| f.kind == FileKind::Table) {
        return super::inspect(dataset, sample_rows, sample_columns, max_bytes)
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
        format!("dataset '{reference}' is not valid {name}: {}", e.message),
        "check the file with the program that wrote it; a file's kind comes from its extension, then its first bytes, so rename it if the extension is wrong",
    )
    .field("dataset")
}

/// Peek at the first bytes of `reader` without consuming them.
pub fn head(reader: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let buf = reader.fill_buf()?;
    Ok(buf[..buf.len().min(SNIFF_BYTES)].to_vec())
}

/// Run a parser from another crate, turning a panic into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err("the file is malformed (its parser gave up on it)".to_string()))
}

/// Text a file supplied, safe to show: no control or bidi characters, at most `max` chars.
fn shown(text: &str, max: usize) -> String {
    scimcp_core::manifest::safe_text(&text.replace('\t', " "))
        .chars()
        .take(max)
        .collect()
}

#[cfg(test)]
mod tests;
