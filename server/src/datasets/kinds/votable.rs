//! VOTable (IVOA's XML table format): its tables, the first table's fields and rows, through
//! quick-xml's streaming reader. A VOTable is kind `file` (it is XML, shown by its first
//! lines); these facts come beside.

use schemars::JsonSchema;
use serde::Serialize;

use super::error::ContentError;
use super::shown::shown;
/// Fields listed.
const MAX_FIELDS: usize = 100;
/// Bytes of a VOTable parsed; past them the counts are lower bounds (`complete: false`).
pub const MAX_VOTABLE_BYTES: u64 = 64 << 20;

/// What a VOTable holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VotableFacts {
    /// `TABLE` elements.
    pub tables: u64,
    /// The first table's `FIELD`s, in order (at most 100).
    pub fields: Vec<VotableField>,
    /// The first table's `TR` rows (TABLEDATA serialization; 0 for BINARY or FITS streams).
    pub rows: u64,
    /// False when the file is larger than what was parsed (64 MiB): counts are lower bounds.
    #[serde(skip_serializing_if = "is_true")]
    pub complete: bool,
}

fn is_true(b: &bool) -> bool {
    *b
}

/// One `FIELD` of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VotableField {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datatype: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// The facts of the VOTable in `bytes` (the first [`MAX_VOTABLE_BYTES`] of the file;
/// `complete` says whether that was all of it).
pub fn describe(bytes: &[u8], complete: bool) -> Result<VotableFacts, ContentError> {
    use quick_xml::XmlVersion;
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(bytes);
    let mut buf = Vec::new();
    let mut facts = VotableFacts {
        tables: 0,
        fields: Vec::new(),
        rows: 0,
        complete,
    };
    let mut saw_votable = false;
    loop {
        let event = match reader.read_event_into(&mut buf) {
            Ok(e) => e,
            // A cut file ends mid-element: what was read stands.
            Err(_) if !complete => break,
            Err(e) => {
                return Err(ContentError::Malformed(format!(
                    "not well-formed XML at byte {}: {e}",
                    reader.buffer_position()
                )));
            }
        };
        match event {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                "VOTABLE" => saw_votable = true,
                "TABLE" => facts.tables += 1,
                "FIELD" if facts.tables == 1 && facts.fields.len() < MAX_FIELDS => {
                    let attr = |key: &str| {
                        e.try_get_attribute(key).ok().flatten().and_then(|a| {
                            a.normalized_value(XmlVersion::Implicit1_0)
                                .ok()
                                .map(|v| shown(&v, 80))
                        })
                    };
                    facts.fields.push(VotableField {
                        name: attr("name").unwrap_or_default(),
                        datatype: attr("datatype"),
                        unit: attr("unit"),
                    });
                }
                "TR" if facts.tables == 1 => facts.rows += 1,
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !saw_votable {
        return Err(ContentError::malformed("no VOTABLE element found"));
    }
    Ok(facts)
}
