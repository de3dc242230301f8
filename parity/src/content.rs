//! What an artifact holds, kept in the evidence so that recorded evidence can be compared
//! with a new run by content, not only by bytes.
//!
//! Two runs of one commit on two machines give artifacts whose bytes differ whenever a
//! float's last digit does, so an artifact's SHA-256 alone cannot tell a harmless rounding
//! difference from a real change. The evidence therefore keeps, beside the hash, the
//! content of every artifact that can be compared field by field: JSON files as their
//! value, CSV files as their cells (text, exactly as written), other text as its lines.
//! Binary artifacts compare by hash, or only by presence where a scenario says their bytes
//! legitimately vary (a plot rendered with the platform's fonts).
//!
//! The comparison rules live in [`compare_content`]: every string, label, key, integer,
//! column name, row count and shape compares exactly; only floats get a tolerance.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diff::{FieldDiff, Numeric, show_float};
use crate::tolerance::{Tolerance, Tolerances};

/// How an artifact compares with its recorded evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareMode {
    /// The scenario's metrics file: compared through the evidence's `metrics`.
    Metrics,
    /// A JSON document, value by value.
    Json,
    /// A CSV table: column names, row count and every cell.
    Csv,
    /// Text, line by line (CRLF and LF are the same line ending).
    Text,
    /// A spreadsheet (`.xlsx`, `.xls`, `.ods`): every sheet's cells, compared like a CSV
    /// table's; its bytes (which embed the time it was written) are not compared.
    Cells,
    /// The bytes' SHA-256 only.
    Hash,
    /// Only that the artifact exists.
    Presence,
}

impl CompareMode {
    /// The mode a file's name implies when the scenario declares none.
    pub fn by_extension(path: &str) -> CompareMode {
        let ext = path
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "json" => CompareMode::Json,
            "csv" | "tsv" => CompareMode::Csv,
            "txt" | "log" | "md" | "pid" | "tex" | "yaml" | "yml" | "toml" => CompareMode::Text,
            "xlsx" | "xlsm" | "xls" | "ods" => CompareMode::Cells,
            _ => CompareMode::Hash,
        }
    }
}

/// Artifacts larger than this keep only their hash: evidence is meant to be read in a
/// review, and a table this large belongs in the scenario as `hash` or `presence`.
pub const MAX_EMBEDDED_BYTES: usize = 1024 * 1024;

/// The content kept for one artifact.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Content {
    /// How the artifact compares (absent in snapshots of format 1, which kept hashes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<CompareMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
    /// The header row, then every data row, each cell's text exactly as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<Vec<Vec<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<Vec<String>>,
    /// A spreadsheet's sheets, each a table like `csv`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheets: Option<Vec<Sheet>>,
}

/// One sheet of a spreadsheet: its name and its rows, every cell as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sheet {
    pub name: String,
    pub rows: Vec<Vec<String>>,
}

/// Every sheet of a spreadsheet file (`None` when it does not read as one). Numbers are
/// written shortest round-trip, integral ones without a fraction, so a value compares the
/// same way a CSV cell does.
pub fn sheets_of(bytes: &[u8]) -> Option<Vec<Sheet>> {
    use calamine::{Data, Reader as _};
    let mut book =
        calamine::open_workbook_auto_from_rs(std::io::Cursor::new(bytes.to_vec())).ok()?;
    let mut sheets = Vec::new();
    for name in book.sheet_names() {
        let range = book.worksheet_range(&name).ok()?;
        let rows = range
            .rows()
            .map(|row| {
                row.iter()
                    .map(|cell| match cell {
                        Data::Empty => String::new(),
                        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => {
                            format!("{}", *f as i64)
                        }
                        Data::Float(f) => show_float(*f),
                        other => other.to_string(),
                    })
                    .collect()
            })
            .collect();
        sheets.push(Sheet { name, rows });
    }
    Some(sheets)
}

impl Content {
    /// The content of a spreadsheet, from its sheets.
    pub fn from_sheets(sheets: Vec<Sheet>) -> Content {
        Content {
            compare: Some(CompareMode::Cells),
            sheets: Some(sheets),
            ..Content::default()
        }
    }

    /// Extract the content of `bytes` for `mode`. Content that cannot be read the way the
    /// mode says (a `.json` that is not JSON, a table too large to keep) falls back to a
    /// weaker mode, which the evidence records.
    pub fn extract(path: &str, mode: CompareMode, bytes: &[u8]) -> Content {
        let keep = |mode| Content {
            compare: Some(mode),
            ..Content::default()
        };
        match mode {
            CompareMode::Metrics | CompareMode::Hash | CompareMode::Presence => keep(mode),
            // Read by `sheets_of` when the file is a spreadsheet; otherwise only its hash.
            CompareMode::Cells => keep(CompareMode::Hash),
            _ if bytes.len() > MAX_EMBEDDED_BYTES => keep(CompareMode::Hash),
            CompareMode::Json => match serde_json::from_slice::<Value>(bytes) {
                Ok(v) => Content {
                    compare: Some(CompareMode::Json),
                    json: Some(v),
                    ..Content::default()
                },
                Err(_) => Content::extract(path, CompareMode::Text, bytes),
            },
            CompareMode::Csv => match read_csv(path, bytes) {
                Some(rows) => Content {
                    compare: Some(CompareMode::Csv),
                    csv: Some(rows),
                    ..Content::default()
                },
                None => Content::extract(path, CompareMode::Text, bytes),
            },
            CompareMode::Text => match std::str::from_utf8(bytes) {
                Ok(text) => Content {
                    compare: Some(CompareMode::Text),
                    text: Some(text.lines().map(str::to_string).collect()),
                    ..Content::default()
                },
                Err(_) => keep(CompareMode::Hash),
            },
        }
    }
}

/// Every record of a CSV (or, for `.tsv`, tab-separated) file, header first; `None` when it
/// is not UTF-8 CSV.
fn read_csv(path: &str, bytes: &[u8]) -> Option<Vec<Vec<String>>> {
    let delimiter = if path.to_ascii_lowercase().ends_with(".tsv") {
        b'\t'
    } else {
        b','
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .from_reader(bytes);
    let mut rows = Vec::new();
    for record in reader.records() {
        rows.push(record.ok()?.iter().map(str::to_string).collect());
    }
    Some(rows)
}

/// At most this many differences are reported per artifact; the rest are counted.
const MAX_DIFFS_PER_ARTIFACT: usize = 20;

/// Differences found while comparing recorded content with new content.
#[derive(Debug, Default)]
pub struct ContentComparison {
    /// Beyond tolerance, or not numeric at all: the evidence no longer holds.
    pub drift: Vec<FieldDiff>,
    /// Floats that differ within their tolerance: reported, never failing.
    pub tolerated: Vec<Numeric>,
    /// Tolerated floats beyond the ones kept in `tolerated`.
    pub tolerated_more: usize,
    /// Drift beyond the ones kept in `drift`, per artifact.
    drift_more: usize,
}

/// How many tolerated differences are kept in full (the rest are counted).
pub const MAX_TOLERATED_KEPT: usize = 50;

impl ContentComparison {
    fn drift(&mut self, field: String, recorded: String, now: String, numeric: Option<Numeric>) {
        if self.drift.len() >= MAX_DIFFS_PER_ARTIFACT {
            self.drift_more += 1;
            return;
        }
        self.drift.push(FieldDiff {
            field,
            left: recorded,
            right: now,
            numeric,
        });
    }

    fn tolerated(&mut self, n: Numeric) {
        if self.tolerated.len() >= MAX_TOLERATED_KEPT {
            self.tolerated_more += 1;
        } else {
            self.tolerated.push(n);
        }
    }

    /// Close one artifact's comparison: say how many differences were left out.
    pub fn finish(mut self, field: &str) -> ContentComparison {
        if self.drift_more > 0 {
            self.drift.push(FieldDiff {
                field: field.to_string(),
                left: "(recorded)".into(),
                right: format!("{} more differences not shown", self.drift_more),
                numeric: None,
            });
            self.drift_more = 0;
        }
        self
    }

    /// Fold another comparison's findings into this one.
    pub fn absorb(&mut self, other: ContentComparison) {
        self.drift.extend(other.drift);
        for t in other.tolerated {
            self.tolerated(t);
        }
        self.tolerated_more += other.tolerated_more;
    }
}

/// Compare two JSON values below `field` by the rules in the module documentation.
pub fn compare_values(
    field: &str,
    recorded: &Value,
    now: &Value,
    tolerances: &Tolerances,
    out: &mut ContentComparison,
) {
    match (recorded, now) {
        (Value::Number(r), Value::Number(n)) => {
            let integers = !r.is_f64() && !n.is_f64();
            if integers || !(r.is_f64() && n.is_f64()) {
                if r != n {
                    out.drift(field.to_string(), r.to_string(), n.to_string(), None);
                }
                return;
            }
            let (r, n) = (
                r.as_f64().unwrap_or(f64::NAN),
                n.as_f64().unwrap_or(f64::NAN),
            );
            compare_floats(field, r, n, tolerances.for_field(field), 0.0, out);
        }
        (Value::Array(r), Value::Array(n)) => {
            if r.len() != n.len() {
                out.drift(
                    format!("{field}.length"),
                    r.len().to_string(),
                    n.len().to_string(),
                    None,
                );
                return;
            }
            for (i, (r, n)) in r.iter().zip(n).enumerate() {
                compare_values(&format!("{field}[{i}]"), r, n, tolerances, out);
            }
        }
        (Value::Object(r), Value::Object(n)) => {
            for key in r.keys().chain(n.keys().filter(|k| !r.contains_key(*k))) {
                let sub = format!("{field}.{key}");
                match (r.get(key), n.get(key)) {
                    (Some(r), Some(n)) => compare_values(&sub, r, n, tolerances, out),
                    (r, n) => out.drift(sub, presence(r), presence(n), None),
                }
            }
        }
        (r, n) => {
            if r != n {
                out.drift(field.to_string(), compact(r), compact(n), None);
            }
        }
    }
}

/// Compare two floats with `tolerance`, widened by `allowance` (a printed cell's own
/// rounding, see [`print_rounding`]); the report shows the field's tolerance.
fn compare_floats(
    field: &str,
    r: f64,
    n: f64,
    tolerance: Tolerance,
    allowance: f64,
    out: &mut ContentComparison,
) {
    if r.to_bits() == n.to_bits() {
        return;
    }
    let widened = Tolerance {
        atol: tolerance.atol + allowance,
        ..tolerance
    };
    let check = widened.check(r, n);
    let numeric = Numeric {
        field: field.to_string(),
        recorded: r,
        now: n,
        abs_err: check.abs_err,
        rel_err: check.rel_err,
        tolerance,
        within: check.within,
    };
    if check.within {
        out.tolerated(numeric);
    } else {
        out.drift(
            field.to_string(),
            show_float(r),
            show_float(n),
            Some(numeric),
        );
    }
}

/// Compare recorded CSV rows with new ones: the header row (column names) and the row
/// count exactly, then every cell.
pub fn compare_csv(
    field: &str,
    recorded: &[Vec<String>],
    now: &[Vec<String>],
    tolerances: &Tolerances,
    out: &mut ContentComparison,
) {
    let header = |rows: &[Vec<String>]| rows.first().cloned().unwrap_or_default();
    let (rh, nh) = (header(recorded), header(now));
    if rh != nh {
        out.drift(format!("{field}.columns"), rh.join(","), nh.join(","), None);
        return;
    }
    if recorded.len() != now.len() {
        out.drift(
            format!("{field}.rows"),
            recorded.len().saturating_sub(1).to_string(),
            now.len().saturating_sub(1).to_string(),
            None,
        );
        return;
    }
    for (i, (r, n)) in recorded.iter().zip(now).enumerate().skip(1) {
        let row = i - 1;
        if r.len() != n.len() {
            out.drift(
                format!("{field}.row[{row}].cells"),
                r.len().to_string(),
                n.len().to_string(),
                None,
            );
            continue;
        }
        for (j, (rc, nc)) in r.iter().zip(n).enumerate() {
            if rc == nc {
                continue;
            }
            let column = rh
                .get(j)
                .map_or_else(|| format!("column {j}"), Clone::clone);
            let cell = format!("{field}.{column}[{row}]");
            match (cell_number(rc), cell_number(nc)) {
                (Some(CellNumber::Float(a)), Some(CellNumber::Float(b)))
                | (Some(CellNumber::Float(a)), Some(CellNumber::Integer(b)))
                | (Some(CellNumber::Integer(a)), Some(CellNumber::Float(b))) => {
                    let t = tolerances.for_field(&cell);
                    let allowance = print_rounding(rc, nc, t.rtol, a.abs().max(b.abs()));
                    compare_floats(&cell, a, b, t, allowance, out);
                }
                _ => out.drift(cell, rc.clone(), nc.clone(), None),
            }
        }
    }
}

/// How far two printed cells may differ because the CLI printed them with few digits: one
/// unit in the last printed place of the more precise cell, when that unit is itself below
/// ten times the relative tolerance. A float printed with 10 significant digits whose true
/// value sits on a rounding boundary flips its last digit on another CPU; that is the last
/// ULP made visible, not a change. A coarse print (`2.5` against `2.6`) gets no allowance.
fn print_rounding(a: &str, b: &str, rtol: f64, scale: f64) -> f64 {
    let unit = match (last_place(a), last_place(b)) {
        (Some(x), Some(y)) => x.min(y),
        _ => return 0.0,
    };
    if unit <= 10.0 * rtol * scale {
        unit * (1.0 + 1e-9)
    } else {
        0.0
    }
}

/// The value of one unit in the last printed digit of a decimal (`1160.142574` → 1e-6,
/// `1.5e-3` → 1e-4).
fn last_place(cell: &str) -> Option<f64> {
    let t = cell.trim().to_ascii_lowercase();
    let (mantissa, exponent) = match t.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (t.as_str(), 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, f)| f.len() as i32);
    Some(10f64.powi(exponent - decimals))
}

/// A cell that holds a number: an integer (digits only, so a label or a count) or a float.
enum CellNumber {
    Integer(f64),
    Float(f64),
}

fn cell_number(cell: &str) -> Option<CellNumber> {
    let t = cell.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().ok().map(CellNumber::Integer);
    }
    let lower = t.to_ascii_lowercase();
    let looks_numeric = !lower.is_empty()
        && (lower.bytes().any(|b| b.is_ascii_digit())
            || matches!(
                lower.trim_start_matches(['-', '+']),
                "nan" | "inf" | "infinity"
            ));
    if !looks_numeric {
        return None;
    }
    t.parse::<f64>().ok().map(CellNumber::Float)
}

/// Compare recorded sheets with new ones: the sheet names exactly, each sheet like a CSV
/// table (its first row as the header).
pub fn compare_sheets(
    field: &str,
    recorded: &[Sheet],
    now: &[Sheet],
    tolerances: &Tolerances,
    out: &mut ContentComparison,
) {
    let names = |s: &[Sheet]| s.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    if names(recorded) != names(now) {
        out.drift(
            format!("{field}.sheets"),
            names(recorded).join(","),
            names(now).join(","),
            None,
        );
        return;
    }
    for (r, n) in recorded.iter().zip(now) {
        compare_csv(
            &format!("{field}.sheet[{}]", r.name),
            &r.rows,
            &n.rows,
            tolerances,
            out,
        );
    }
}

/// Compare recorded text lines with new ones, exactly.
pub fn compare_text(field: &str, recorded: &[String], now: &[String], out: &mut ContentComparison) {
    if recorded.len() != now.len() {
        out.drift(
            format!("{field}.lines"),
            recorded.len().to_string(),
            now.len().to_string(),
            None,
        );
    }
    if let Some((i, (r, n))) = recorded
        .iter()
        .zip(now)
        .enumerate()
        .find(|(_, (r, n))| r != n)
    {
        out.drift(
            format!("{field}.line[{}]", i + 1),
            r.clone(),
            n.clone(),
            None,
        );
    }
}

fn presence(v: Option<&Value>) -> String {
    if v.is_some() { "present" } else { "absent" }.to_string()
}

pub fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("JSON value serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cmp(r: &Value, n: &Value) -> ContentComparison {
        let mut out = ContentComparison::default();
        compare_values("metrics", r, n, &Tolerances::default(), &mut out);
        out
    }

    #[test]
    fn integers_strings_and_shapes_compare_exactly_floats_within_tolerance() {
        let r = json!({"r2": 0.35940880381708906, "n": 111, "classes": ["a", "b"], "m": [[1, 2]]});
        let same =
            json!({"r2": 0.3594088038170893, "n": 111, "classes": ["a", "b"], "m": [[1, 2]]});
        let out = cmp(&r, &same);
        assert!(out.drift.is_empty(), "{:?}", out.drift);
        assert_eq!(out.tolerated.len(), 1);
        assert_eq!(out.tolerated[0].field, "metrics.r2");

        let cases = [
            json!({"r2": 0.35940880381708906 * (1.0 + 1e-6), "n": 111, "classes": ["a", "b"], "m": [[1, 2]]}),
            json!({"r2": 0.35940880381708906, "n": 112, "classes": ["a", "b"], "m": [[1, 2]]}),
            json!({"r2": 0.35940880381708906, "n": 111, "classes": ["a", "c"], "m": [[1, 2]]}),
            json!({"r2": 0.35940880381708906, "n": 111, "classes": ["a", "b"], "m": [[1, 2, 3]]}),
            json!({"r2": 0.35940880381708906, "n": 111, "classes": ["a", "b"]}),
            json!({"r2": 0.35940880381708906, "n": 111.0, "classes": ["a", "b"], "m": [[1, 2]]}),
        ];
        let fields = [
            "metrics.r2",
            "metrics.n",
            "metrics.classes[1]",
            "metrics.m[0].length",
            "metrics.m",
            "metrics.n",
        ];
        for (case, field) in cases.iter().zip(fields) {
            let out = cmp(&r, case);
            assert_eq!(out.drift.len(), 1, "{case}: {:?}", out.drift);
            assert_eq!(out.drift[0].field, field);
        }
        let beyond = &cmp(&r, &cases[0]).drift[0];
        let n = beyond.numeric.as_ref().unwrap();
        assert!(!n.within && (n.rel_err - 1e-6).abs() < 1e-8);
    }

    #[test]
    fn csv_cells_labels_columns_and_rows() {
        let rows = |v: &[&[&str]]| -> Vec<Vec<String>> {
            v.iter()
                .map(|r| r.iter().map(|c| c.to_string()).collect())
                .collect()
        };
        let r = rows(&[
            &["row", "label", "score"],
            &["0", "setosa", "0.2962945923"],
            &["1", "2", "1e-3"],
        ]);
        let t = Tolerances::default();
        let run = |n: &Vec<Vec<String>>| {
            let mut out = ContentComparison::default();
            compare_csv("artifacts[p.csv]", &r, n, &t, &mut out);
            out
        };
        let mut within = r.clone();
        within[1][2] = "0.2962945923000001".into();
        within[2][2] = "0.001".into();
        let out = run(&within);
        assert!(out.drift.is_empty(), "{:?}", out.drift);
        assert_eq!(out.tolerated.len(), 1, "1e-3 and 0.001 are the same float");

        let mut label = r.clone();
        label[1][1] = "versicolor".into();
        assert_eq!(run(&label).drift[0].field, "artifacts[p.csv].label[0]");
        let mut int = r.clone();
        int[2][1] = "3".into();
        assert_eq!(run(&int).drift[0].field, "artifacts[p.csv].label[1]");
        // One unit in the 10th significant digit with a leading 1: 1e-9 relative, on the
        // edge of rtol, and over it once the subtraction rounds. Print rounding covers it.
        let ten_digits = rows(&[&["a"], &["100.0000001"]]);
        let mut flipped = ten_digits.clone();
        flipped[1][0] = "100.0000002".into();
        let mut out = ContentComparison::default();
        compare_csv("c", &ten_digits, &flipped, &t, &mut out);
        assert!(
            out.drift.is_empty(),
            "a flipped 10th digit is print rounding: {:?}",
            out.drift
        );
        let mut coarse = rows(&[&["a"], &["2.5"]]);
        let mut out = ContentComparison::default();
        let before = coarse.clone();
        coarse[1][0] = "2.6".into();
        compare_csv("c", &before, &coarse, &t, &mut out);
        assert_eq!(out.drift.len(), 1, "a coarse print gets no allowance");
        let mut cell = r.clone();
        cell[1][2] = "0.2962946".into();
        let d = run(&cell);
        assert_eq!(d.drift[0].field, "artifacts[p.csv].score[0]");
        assert!(d.drift[0].numeric.is_some());
        let mut col = r.clone();
        col[0][2] = "Score".into();
        assert_eq!(run(&col).drift[0].field, "artifacts[p.csv].columns");
        let mut fewer = r.clone();
        fewer.pop();
        assert_eq!(run(&fewer).drift[0].field, "artifacts[p.csv].rows");
    }

    #[test]
    fn content_falls_back_when_it_cannot_be_read_as_declared() {
        let c = Content::extract("a.json", CompareMode::Json, b"{\"a\": 1}");
        assert_eq!(c.json, Some(json!({"a": 1})));
        let c = Content::extract("a.json", CompareMode::Json, b"not json");
        assert_eq!(c.compare, Some(CompareMode::Text));
        let c = Content::extract("a.csv", CompareMode::Csv, b"a,b\r\n1,2\r\n");
        assert_eq!(
            c.csv,
            Some(vec![
                vec!["a".to_string(), "b".into()],
                vec!["1".into(), "2".into()]
            ])
        );
        let c = Content::extract("a.bin", CompareMode::Text, &[0xff, 0xfe]);
        assert_eq!(c.compare, Some(CompareMode::Hash));
        let big = vec![b'a'; MAX_EMBEDDED_BYTES + 1];
        assert_eq!(
            Content::extract("a.txt", CompareMode::Text, &big).compare,
            Some(CompareMode::Hash)
        );
        assert_eq!(CompareMode::by_extension("plot.PNG"), CompareMode::Hash);
        assert_eq!(CompareMode::by_extension("x.tsv"), CompareMode::Csv);
    }
}
