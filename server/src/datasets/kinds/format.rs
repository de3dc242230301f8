//! The formats a data file may be in, by name and by first bytes: the table every other part
//! of `kinds` (and listing, and the named inputs' media types) reads a file's kind from.

use std::io::BufRead;

use schemars::JsonSchema;
use serde::Serialize;

use super::structure;
use super::text;

/// Bytes looked at to recognise a file by its content.
pub(super) const SNIFF_BYTES: usize = 8192;

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
pub(super) const FASTQ: Format = format(FileKind::Sequences, "fastq", "text/x-fastq");
const PDB: Format = format(FileKind::Structure, "pdb", "chemical/x-pdb");
pub(super) const PDBQT: Format = format(FileKind::Structure, "pdbqt", "chemical/x-pdbqt");
pub(super) const MMCIF: Format = format(FileKind::Structure, "mmcif", "chemical/x-mmcif");
const FITS: Format = format(FileKind::Fits, "fits", "application/fits");
pub(super) const VOTABLE: Format = format(FileKind::File, "votable", "application/x-votable+xml");
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

/// Peek at the first bytes of `reader` without consuming them.
pub fn head(reader: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let buf = reader.fill_buf()?;
    Ok(buf[..buf.len().min(SNIFF_BYTES)].to_vec())
}
