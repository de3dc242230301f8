//! [`Checker`]: the errors and warnings found in one manifest text, each placed by its field
//! path ([`Seg`]s) at a line and column of the text. Every section's check writes through it.

use std::fmt::Write as _;
use std::path::PathBuf;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::manifest::error::{ManifestError, line_col};

/// A problem in a JSON document a manifest names (a parameter schema), placed by JSON
/// pointer: (pointer, message, hint).
pub(super) type Problem = (String, String, Option<String>);

/// A step in a field path.
#[derive(Debug, Clone)]
pub(super) enum Seg {
    Key(&'static str),
    Index(usize),
}

fn path_string(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// Collects errors against one manifest text, placing each by its field path.
pub(super) struct Checker<'t> {
    file: PathBuf,
    text: &'t str,
    /// The document with spans, parsed again only when a problem needs a line number (a
    /// second parse at every load was a tenth of a server's start).
    doc: std::cell::OnceCell<Option<Spanned<DeTable<'t>>>>,
    /// An embedded adapter: its progress patterns and schemas are the binary's own text,
    /// compiled by core's tests (`embedded_schemas_and_patterns_compile`), not at each load.
    pub(super) embedded: bool,
    pub(super) errors: Vec<ManifestError>,
    pub(super) warnings: Vec<ManifestError>,
}

impl<'t> Checker<'t> {
    pub(super) fn new(file: PathBuf, text: &'t str, embedded: bool) -> Self {
        Checker {
            file,
            text,
            doc: std::cell::OnceCell::new(),
            embedded,
            errors: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn span_of(&self, path: &[Seg]) -> Option<std::ops::Range<usize>> {
        let doc = self
            .doc
            .get_or_init(|| DeTable::parse(self.text).ok())
            .as_ref()?;
        let mut span = doc.span();
        let mut table: Option<&DeTable<'_>> = Some(doc.get_ref());
        let mut array: Option<&[Spanned<DeValue<'_>>]> = None;
        for seg in path {
            let next: Option<&Spanned<DeValue<'_>>> = match (seg, table, array) {
                (Seg::Key(k), Some(t), _) => t
                    .iter()
                    .find(|(key, _)| key.get_ref().as_ref() == *k)
                    .map(|(_, v)| v),
                (Seg::Index(i), _, Some(a)) => a.get(*i),
                _ => None,
            };
            let Some(value) = next else { break };
            span = value.span();
            table = None;
            array = None;
            match value.get_ref() {
                DeValue::Table(t) => table = Some(t),
                DeValue::Array(a) => array = Some(a),
                _ => {}
            }
        }
        Some(span)
    }

    pub(super) fn error(&mut self, path: &[Seg], message: impl Into<String>, hint: Option<String>) {
        let (line, column) = match self.span_of(path) {
            Some(span) => {
                let (l, c) = line_col(self.text, span.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        self.errors.push(ManifestError {
            file: self.file.clone(),
            line,
            column,
            field: path_string(path),
            message: message.into(),
            hint,
        });
    }
}
