//! FITS files: every header/data unit (HDU) through fitsrs, with its type, shape, BITPIX and
//! a bounded set of descriptive header keys. Data units are skipped, never read.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};

use fitsrs::card::Value;
use fitsrs::hdu::header::Header;
use schemars::JsonSchema;
use serde::Serialize;

use super::error::ContentError;
use super::shown::shown;
/// HDUs described; a file with more says how many it has.
const MAX_HDUS: usize = 64;
/// Column names (TTYPEn) listed per table.
const MAX_COLUMNS: usize = 50;
/// The longest header fitsrs may read between two data units: 1000 blocks, 36,000 cards.
/// A header without END would otherwise be read to the end of the file, card by card.
const MAX_HEADER_BYTES: u64 = 2880 * 1000;
/// Header keys reported when present: what a person asks first about an observation.
const KEYS: &[&str] = &[
    "EXTNAME", "OBJECT", "TELESCOP", "INSTRUME", "OBSERVER", "DATE-OBS", "MJD-OBS", "EXPTIME",
    "FILTER", "BUNIT", "BSCALE", "BZERO", "EQUINOX", "RADESYS", "CTYPE1", "CTYPE2", "CUNIT1",
    "CUNIT2", "ORIGIN",
];

/// What a FITS file holds.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FitsFacts {
    pub hdu_count: u64,
    /// The HDUs in file order (at most 64).
    pub hdus: Vec<HduFacts>,
    /// The file ends before the data its headers announce (named by HDU index).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_at_hdu: Option<u64>,
}

/// One header/data unit.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HduFacts {
    /// 0 for the primary HDU.
    pub index: u64,
    /// `primary`, `image`, `bintable` or `ascii_table`.
    #[serde(rename = "type")]
    pub hdu_type: String,
    pub bitpix: i64,
    /// NAXIS1, NAXIS2, … (for a table: bytes per row, rows).
    pub shape: Vec<u64>,
    /// Tables: rows and fields (TFIELDS), and the first field names (TTYPEn).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
    /// Bytes of the data unit (without padding).
    pub data_bytes: u64,
    /// The keys of [`KEYS`] this header has, with their values.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, serde_json::Value>,
}

/// A reader that fitsrs may "seek" forward on: the bytes skipped are read and dropped, so a
/// hashing reader below still sees the whole file, and nothing needs to be in memory.
/// Headers are capped at [`MAX_HEADER_BYTES`] between two skips.
struct Forward<R> {
    inner: R,
    position: u64,
    since_skip: u64,
}

impl<R> std::fmt::Debug for Forward<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Forward({})", self.position)
    }
}

impl<R: Read> Read for Forward<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.since_skip >= MAX_HEADER_BYTES {
            return Err(std::io::Error::other(format!(
                "a header runs past {MAX_HEADER_BYTES} bytes without its END card"
            )));
        }
        let n = self.inner.read(buf)?;
        self.position += n as u64;
        self.since_skip += n as u64;
        Ok(n)
    }
}

impl<R: Read> Seek for Forward<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let skip = match pos {
            SeekFrom::Current(n) if n >= 0 => n as u64,
            SeekFrom::Start(to) if to >= self.position => to - self.position,
            _ => {
                return Err(std::io::Error::other("a FITS reader asked to go backwards"));
            }
        };
        if skip > 0 {
            let skipped = std::io::copy(&mut (&mut self.inner).take(skip), &mut std::io::sink())?;
            self.position += skipped;
            self.since_skip = 0;
        }
        Ok(self.position)
    }
}

/// Every HDU of a FITS file.
pub fn describe(reader: &mut impl Read) -> Result<FitsFacts, ContentError> {
    let mut forward = Forward {
        inner: reader,
        position: 0,
        since_skip: 0,
    };
    let mut hdus = Vec::new();
    let mut count = 0u64;
    let mut ends = Vec::new();
    {
        let fits = fitsrs::Fits::from_reader(&mut forward);
        for hdu in fits {
            let hdu = hdu.map_err(|e| {
                ContentError::Malformed(format!(
                    "HDU {count} is not valid FITS: {}",
                    shown(&e.to_string(), 300)
                ))
            })?;
            let mut facts = match &hdu {
                fitsrs::HDU::Primary(h) => one(count, "primary", h.get_header()),
                fitsrs::HDU::XImage(h) => one(count, "image", h.get_header()),
                fitsrs::HDU::XBinaryTable(h) => one(count, "bintable", h.get_header()),
                fitsrs::HDU::XASCIITable(h) => one(count, "ascii_table", h.get_header()),
            };
            facts.data_bytes = hdu.get_data_unit_byte_size();
            ends.push(
                hdu.get_data_unit_byte_offset()
                    .saturating_add(facts.data_bytes),
            );
            if hdus.len() < MAX_HDUS {
                hdus.push(facts);
            }
            count += 1;
        }
    }
    if count == 0 {
        return Err(ContentError::malformed(
            "no FITS header found; a FITS file starts with a 'SIMPLE  =' card",
        ));
    }
    let end = forward.position;
    let truncated_at_hdu = ends.iter().position(|e| *e > end).map(|i| i as u64);
    Ok(FitsFacts {
        hdu_count: count,
        hdus,
        truncated_at_hdu,
    })
}

/// One HDU's facts from its header.
fn one<X>(index: u64, hdu_type: &str, header: &Header<X>) -> HduFacts {
    let int = |key: &str| match header.get(key) {
        Some(Value::Integer { value, .. }) => Some(*value),
        _ => None,
    };
    let naxis = int("NAXIS").unwrap_or(0).clamp(0, 999);
    let shape = (1..=naxis)
        .map(|i| int(&format!("NAXIS{i}")).unwrap_or(0).max(0) as u64)
        .collect::<Vec<_>>();
    let table = hdu_type.ends_with("table");
    let fields = int("TFIELDS").filter(|_| table).map(|n| n.max(0) as u64);
    let columns = fields
        .map(|n| {
            (1..=n.min(MAX_COLUMNS as u64))
                .filter_map(|i| match header.get(&format!("TTYPE{i}")) {
                    Some(Value::String { value, .. }) => Some(shown(value.trim(), 80)),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let keys = KEYS
        .iter()
        .filter_map(|k| {
            let v = match header.get(k)? {
                Value::Integer { value, .. } => serde_json::json!(value),
                Value::Float { value, .. } => serde_json::json!(value),
                Value::Logical { value, .. } => serde_json::json!(value),
                Value::String { value, .. } => serde_json::json!(shown(value.trim(), 120)),
                Value::Undefined | Value::Invalid(_) => return None,
            };
            Some((k.to_string(), v))
        })
        .collect();
    HduFacts {
        index,
        hdu_type: hdu_type.to_string(),
        bitpix: int("BITPIX").unwrap_or(0),
        rows: table.then(|| shape.get(1).copied().unwrap_or(0)),
        shape,
        fields,
        columns,
        data_bytes: 0,
        keys,
    }
}
