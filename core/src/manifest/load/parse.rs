//! The first pass: strict TOML into the typed [`Manifest`], every structural problem
//! reported at once (serde stops at its first).

use std::path::Path;

use super::structure;
use crate::manifest::error::{ManifestError, ManifestErrors, line_col};
use crate::manifest::types::Manifest;

pub(super) fn parse_strict(text: &str, file: &Path) -> Result<Manifest, ManifestErrors> {
    let located = |span: Option<std::ops::Range<usize>>| match span {
        Some(s) => {
            let (l, c) = line_col(text, s.start);
            (Some(l), Some(c))
        }
        None => (None, None),
    };
    let de = toml::Deserializer::parse(text).map_err(|e| {
        let (line, column) = located(e.span());
        ManifestErrors(vec![ManifestError {
            file: file.to_path_buf(),
            line,
            column,
            field: String::new(),
            message: format!("not valid TOML: {}", e.message().trim()),
            hint: Some("fix the syntax at this position".into()),
        }])
    })?;
    serde_path_to_error::deserialize::<_, Manifest>(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        let (line, column) = located(inner.span());
        let first = ManifestError {
            file: file.to_path_buf(),
            line,
            column,
            field: if field == "." { String::new() } else { field },
            message: inner.message().trim().to_string(),
            hint: Some(
                "see docs/adapter-manifest.md for every key, its type and whether it is required"
                    .into(),
            ),
        };
        // Serde stops at its first error; the structural pass finds the others too.
        ManifestErrors(structure::every_problem(text, file, first))
    })
}
