//! Inspecting a table: its columns, their inferred types and missing values, its rows, the
//! first few rows — read once, streamed, through the dataset's handle.

use std::io::Read;
use std::ops::Range;

use schemars::JsonSchema;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::ResolvedDataset;
use crate::envelope::{ErrorCode, ToolError};

/// Longest cell text shown in samples.
const MAX_CELL_CHARS: usize = 120;
/// Longest column name reported.
const MAX_NAME_CHARS: usize = 256;

/// The inferred type of a CSV column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ColumnType {
    Integer,
    Number,
    Boolean,
    String,
    /// Every cell is empty.
    Empty,
}

/// One column of an inspected table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ColumnInfo {
    pub name: String,
    pub inferred_type: ColumnType,
    /// Empty cells.
    pub missing: u64,
}

/// What `inspect_dataset` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Inspection {
    pub dataset: ResolvedDataset,
    pub row_count: u64,
    pub column_count: usize,
    pub columns: Vec<ColumnInfo>,
    /// The first rows, restricted to the requested columns, each cell cut to 120 characters.
    pub sample_rows: Vec<Vec<String>>,
}

/// Read the whole table once through one handle (opened again below its root, capped at the
/// size limit): header, per-column types and missing counts, rows, and the first
/// `sample_rows` rows restricted to the columns in `sample_columns`. The dataset's hash and
/// size in the answer are those of the bytes inspected.
pub fn inspect(
    mut dataset: ResolvedDataset,
    sample_rows: usize,
    sample_columns: Range<usize>,
    max_bytes: u64,
) -> Result<Inspection, ToolError> {
    let mut opened = dataset.reopen(max_bytes)?;
    let reference = dataset.reference.clone();
    let reader = opened
        .capped(&reference, max_bytes)
        .map_err(|e| unreadable(format!("cannot read dataset '{reference}': {e}")))?;
    let mut hashing = HashingReader::new(reader);
    let mut inspection = inspect_csv(&mut hashing, &dataset, sample_rows, sample_columns)?;
    let (sha256, size) = hashing.finish();
    dataset.sha256 = sha256;
    dataset.size_bytes = size;
    inspection.dataset = dataset;
    Ok(inspection)
}

fn unreadable(msg: String) -> ToolError {
    ToolError::new(
        ErrorCode::DatasetUnreadable,
        msg,
        "pass a comma-separated UTF-8 file with a header row",
    )
    .field("dataset")
}

/// Tables wider than this are refused: every column costs memory while a table is read, and
/// no client can use more.
pub const MAX_COLUMNS: usize = 65_536;

/// A reader that hashes what passes through it (to the end, so the hash covers the file).
struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    total: u64,
}

impl<R: Read> HashingReader<R> {
    fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hasher: Sha256::new(),
            total: 0,
        }
    }

    fn finish(mut self) -> (String, u64) {
        // Whatever the parser did not need is still part of the file.
        let _ = std::io::copy(&mut self, &mut std::io::sink());
        (hex::encode(self.hasher.finalize()), self.total)
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.total += n as u64;
        Ok(n)
    }
}

/// The CSV part of [`inspect`].
fn inspect_csv(
    source: impl Read,
    dataset: &ResolvedDataset,
    sample_rows: usize,
    sample_columns: Range<usize>,
) -> Result<Inspection, ToolError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(source);
    let headers = reader
        .headers()
        .map_err(|e| {
            unreadable(format!(
                "dataset '{}' has no readable header row: {e}",
                dataset.reference
            ))
        })?
        .clone();
    if headers.is_empty() {
        return Err(unreadable(format!(
            "dataset '{}' is empty",
            dataset.reference
        )));
    }
    if headers.len() > MAX_COLUMNS {
        return Err(ToolError::new(
            ErrorCode::DatasetTooLarge,
            format!(
                "dataset '{}' has {} columns; at most {MAX_COLUMNS} can be analysed",
                dataset.reference,
                headers.len()
            ),
            "select the columns you need into a narrower file",
        )
        .field("dataset"));
    }
    let mut kinds: Vec<Option<ColumnType>> = vec![None; headers.len()];
    let mut missing = vec![0u64; headers.len()];
    let mut rows = 0u64;
    let mut samples = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map(|p| p.line()).unwrap_or(rows + 2);
                return Err(unreadable(format!(
                    "dataset '{}' is not valid CSV at line {line}: {e}",
                    dataset.reference
                )));
            }
        }
        rows += 1;
        for (i, cell) in record.iter().enumerate() {
            let cell = cell.trim();
            if cell.is_empty() {
                missing[i] += 1;
                continue;
            }
            kinds[i] = Some(widen(kinds[i], classify(cell)));
        }
        if samples.len() < sample_rows {
            samples.push(
                record
                    .iter()
                    .skip(sample_columns.start)
                    .take(sample_columns.len())
                    .map(|c| c.chars().take(MAX_CELL_CHARS).collect())
                    .collect(),
            );
        }
    }
    let columns = headers
        .iter()
        .zip(kinds)
        .zip(missing)
        .map(|((name, kind), missing)| ColumnInfo {
            name: name.chars().take(MAX_NAME_CHARS).collect(),
            inferred_type: kind.unwrap_or(ColumnType::Empty),
            missing,
        })
        .collect();
    Ok(Inspection {
        row_count: rows,
        column_count: headers.len(),
        columns,
        sample_rows: samples,
        dataset: dataset.clone(),
    })
}

fn classify(cell: &str) -> ColumnType {
    if cell.parse::<i64>().is_ok() {
        ColumnType::Integer
    } else if cell.parse::<f64>().is_ok() {
        ColumnType::Number
    } else if cell.eq_ignore_ascii_case("true") || cell.eq_ignore_ascii_case("false") {
        ColumnType::Boolean
    } else {
        ColumnType::String
    }
}

fn widen(current: Option<ColumnType>, next: ColumnType) -> ColumnType {
    use ColumnType::*;
    match (current, next) {
        (None, n) => n,
        (Some(c), n) if c == n => c,
        (Some(Integer), Number) | (Some(Number), Integer) => Number,
        _ => String,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(path: std::path::PathBuf) -> ResolvedDataset {
        ResolvedDataset {
            reference: "t.csv".into(),
            source: super::super::DatasetSource::File,
            path: path.clone(),
            file_name: "t.csv".into(),
            size_bytes: 0,
            sha256: String::new(),
            root: path.parent().unwrap().to_path_buf(),
            relative: path.file_name().unwrap().into(),
        }
    }

    #[test]
    fn inspect_infers_types_and_counts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        fs_err::write(&path, "a,b,c,d\n1,2.5,x,true\n2,,y,false\n3,4,,TRUE\n").unwrap();
        let i = inspect(resolved(path), 2, 0..100, 1 << 20).unwrap();
        assert_eq!(i.row_count, 3);
        let types: Vec<_> = i.columns.iter().map(|c| c.inferred_type).collect();
        assert_eq!(
            types,
            vec![
                ColumnType::Integer,
                ColumnType::Number,
                ColumnType::String,
                ColumnType::Boolean
            ]
        );
        assert_eq!(i.columns[1].missing, 1);
        assert_eq!(i.sample_rows.len(), 2);
    }

    #[test]
    fn ragged_csv_is_unreadable_with_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        fs_err::write(&path, "a,b\n1,2\n3\n").unwrap();
        let e = inspect(resolved(path), 0, 0..100, 1 << 20).unwrap_err();
        assert_eq!(e.code, ErrorCode::DatasetUnreadable);
        assert!(e.message.contains("line 3"), "{}", e.message);
    }
}
