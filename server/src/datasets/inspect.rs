//! Inspecting a table: its columns, their inferred types and missing values, its rows, the
//! first few rows — read once through the dataset's handle. CSV and TSV are streamed;
//! spreadsheets (`.xlsx`, `.xlsm`, `.xls`, `.ods`, through calamine) are read whole (they are
//! zip or compound files) and described sheet by sheet, the first sheet's columns in detail
//! (what pandas-based CLIs read by default). Column names follow pandas' rules for
//! spreadsheets, so the names a client sends are the ones the CLI sees: an empty header cell
//! is `Unnamed: <index>`, a repeated name gets `.1`, `.2`, …

use std::io::Read;
use std::ops::Range;

use schemars::JsonSchema;
use scimcp_core::hash::HashingReader;
use serde::Serialize;

use super::resolved::ResolvedDataset;
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
    /// How many different values the column holds, when at most [`DISTINCT_CAP`] (a label
    /// column's classes); absent when more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distinct_values: Option<u64>,
}

/// Distinct values are counted up to this many per column (hashes, so a wide table costs
/// a few bytes per column).
pub const DISTINCT_CAP: usize = 20;

/// The distinct values of one column seen so far, as hashes; `None` once over the cap.
#[derive(Debug, Clone, Default)]
struct Distinct(Option<Vec<u64>>);

impl Distinct {
    fn new() -> Distinct {
        Distinct(Some(Vec::new()))
    }

    fn see(&mut self, text: &str) {
        use std::hash::{Hash, Hasher};
        let Some(seen) = &mut self.0 else { return };
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let h = h.finish();
        if let Err(at) = seen.binary_search(&h) {
            if seen.len() >= DISTINCT_CAP {
                self.0 = None;
            } else {
                seen.insert(at, h);
            }
        }
    }

    fn count(&self) -> Option<u64> {
        self.0.as_ref().map(|s| s.len() as u64)
    }
}

/// One sheet of a spreadsheet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SheetInfo {
    pub name: String,
    /// Data rows (below the header row).
    pub rows: u64,
    pub columns: usize,
}

/// What `inspect_dataset` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Inspection {
    pub dataset: ResolvedDataset,
    /// For a spreadsheet, every sheet; the columns below are the first sheet's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sheets: Vec<SheetInfo>,
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
    let mut inspection = match spreadsheet_kind(&dataset.file_name) {
        Some(_) => {
            let mut bytes = Vec::new();
            hashing
                .read_to_end(&mut bytes)
                .map_err(|e| unreadable(format!("cannot read dataset '{reference}': {e}")))?;
            inspect_workbook(bytes, &dataset, sample_rows, sample_columns)?
        }
        None => {
            let delimiter = if dataset.file_name.to_ascii_lowercase().ends_with(".tsv") {
                b'\t'
            } else {
                b','
            };
            inspect_csv(
                &mut hashing,
                &dataset,
                sample_rows,
                sample_columns,
                delimiter,
            )?
        }
    };
    let (sha256, size) = hashing
        .finish()
        .map_err(|e| unreadable(format!("cannot read dataset '{reference}': {e}")))?;
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

/// The CSV part of [`inspect`].
fn inspect_csv(
    source: impl Read,
    dataset: &ResolvedDataset,
    sample_rows: usize,
    sample_columns: Range<usize>,
    delimiter: u8,
) -> Result<Inspection, ToolError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .delimiter(delimiter)
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
    let mut distinct = vec![Distinct::new(); headers.len()];
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
            distinct[i].see(cell);
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
        .zip(distinct)
        .map(|(((name, kind), missing), distinct)| ColumnInfo {
            name: name.chars().take(MAX_NAME_CHARS).collect(),
            inferred_type: kind.unwrap_or(ColumnType::Empty),
            missing,
            distinct_values: distinct.count(),
        })
        .collect();
    Ok(Inspection {
        sheets: Vec::new(),
        row_count: rows,
        column_count: headers.len(),
        columns,
        sample_rows: samples,
        dataset: dataset.clone(),
    })
}

/// `Some` when the file name says spreadsheet.
fn spreadsheet_kind(file_name: &str) -> Option<&'static str> {
    let ext = file_name.rsplit_once('.')?.1.to_ascii_lowercase();
    ["xlsx", "xlsm", "xls", "ods"]
        .into_iter()
        .find(|e| *e == ext)
}

/// The spreadsheet part of [`inspect`]: every sheet's size, the first sheet in detail.
fn inspect_workbook(
    bytes: Vec<u8>,
    dataset: &ResolvedDataset,
    sample_rows: usize,
    sample_columns: Range<usize>,
) -> Result<Inspection, ToolError> {
    use calamine::Reader as _;
    let unreadable_book =
        |e: &dyn std::fmt::Display| {
            ToolError::new(
            ErrorCode::DatasetUnreadable,
            format!("dataset '{}' is not a readable spreadsheet: {e}", dataset.reference),
            "pass an .xlsx, .xls or .ods file that opens in a spreadsheet program, or a CSV file",
        )
        .field("dataset")
        };
    let mut book = calamine::open_workbook_auto_from_rs(std::io::Cursor::new(bytes))
        .map_err(|e| unreadable_book(&e))?;
    let names = book.sheet_names();
    let mut sheets = Vec::new();
    let mut first = None;
    for name in &names {
        let range = book
            .worksheet_range(name)
            .map_err(|e| unreadable_book(&e))?;
        let (height, width) = range.get_size();
        let offset = range.start().map_or(0, |(_, c)| c as usize);
        sheets.push(SheetInfo {
            name: name.clone(),
            rows: height.saturating_sub(1) as u64,
            columns: width + offset,
        });
        if first.is_none() {
            first = Some(range);
        }
    }
    let Some(range) = first else {
        return Err(unreadable_book(&"it has no sheet"));
    };
    let offset = range.start().map_or(0, |(_, c)| c as usize);
    let mut rows = range.rows();
    let header: Vec<String> = rows
        .next()
        .map(|r| {
            std::iter::repeat_n(String::new(), offset)
                .chain(r.iter().map(cell_text))
                .collect()
        })
        .unwrap_or_default();
    if header.is_empty() {
        return Err(unreadable(format!(
            "dataset '{}' is empty",
            dataset.reference
        )));
    }
    if header.len() > MAX_COLUMNS {
        return Err(ToolError::new(
            ErrorCode::DatasetTooLarge,
            format!(
                "dataset '{}' has {} columns; at most {MAX_COLUMNS} can be analysed",
                dataset.reference,
                header.len()
            ),
            "select the columns you need into a narrower file",
        )
        .field("dataset"));
    }
    let names = pandas_names(&header);
    let mut kinds: Vec<Option<ColumnType>> = vec![None; names.len()];
    let mut missing = vec![0u64; names.len()];
    let mut distinct = vec![Distinct::new(); names.len()];
    let mut count = 0u64;
    let mut samples = Vec::new();
    for row in rows {
        count += 1;
        for i in 0..names.len() {
            let cell = i.checked_sub(offset).and_then(|j| row.get(j));
            match cell.map(|c| (cell_type(c), c)) {
                None | Some((None, _)) => missing[i] += 1,
                Some((Some(t), c)) => {
                    kinds[i] = Some(widen(kinds[i], t));
                    distinct[i].see(&cell_text(c));
                }
            }
        }
        if samples.len() < sample_rows {
            samples.push(
                (0..names.len())
                    .skip(sample_columns.start)
                    .take(sample_columns.len())
                    .map(|i| {
                        i.checked_sub(offset)
                            .and_then(|j| row.get(j))
                            .map(cell_text)
                            .unwrap_or_default()
                            .chars()
                            .take(MAX_CELL_CHARS)
                            .collect()
                    })
                    .collect(),
            );
        }
    }
    let columns = names
        .iter()
        .zip(kinds)
        .zip(missing)
        .zip(distinct)
        .map(|(((name, kind), missing), distinct)| ColumnInfo {
            name: name.chars().take(MAX_NAME_CHARS).collect(),
            inferred_type: kind.unwrap_or(ColumnType::Empty),
            missing,
            distinct_values: distinct.count(),
        })
        .collect();
    Ok(Inspection {
        dataset: dataset.clone(),
        sheets,
        row_count: count,
        column_count: names.len(),
        columns,
        sample_rows: samples,
    })
}

/// A cell's type, `None` when it is empty.
fn cell_type(cell: &calamine::Data) -> Option<ColumnType> {
    use calamine::Data;
    match cell {
        Data::Empty => None,
        Data::String(s) if s.trim().is_empty() => None,
        Data::Int(_) => Some(ColumnType::Integer),
        Data::Float(f) if f.fract() == 0.0 && f.is_finite() => Some(ColumnType::Integer),
        Data::Float(_) => Some(ColumnType::Number),
        Data::Bool(_) => Some(ColumnType::Boolean),
        _ => Some(ColumnType::String),
    }
}

/// A cell as text (numbers shortest round-trip, integral floats without `.0`).
fn cell_text(cell: &calamine::Data) -> String {
    use calamine::Data;
    match cell {
        Data::Empty => String::new(),
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
        other => other.to_string(),
    }
}

/// pandas' column names for a spreadsheet header: `Unnamed: <index>` for an empty cell, and
/// `.1`, `.2`, … appended to repeated names.
fn pandas_names(header: &[String]) -> Vec<String> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    header
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let base = if h.trim().is_empty() {
                format!("Unnamed: {i}")
            } else {
                h.clone()
            };
            let n = seen.entry(base.clone()).or_insert(0);
            let name = if *n == 0 {
                base.clone()
            } else {
                format!("{base}.{n}")
            };
            *n += 1;
            name
        })
        .collect()
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
            source: super::super::resolved::DatasetSource::File,
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
