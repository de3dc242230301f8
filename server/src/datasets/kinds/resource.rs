//! A run's artifact of a known scientific kind, read as an MCP resource: the same facts
//! `inspect_dataset` gives, as an extra JSON content beside the artifact's own (which is a
//! bare size-and-hash description for a binary file such as FITS).

use std::io::BufReader;
use std::path::Path;

use rmcp::model::ResourceContents;
use scimcp_core::hash::HashingReader;

use super::describe::describe;
use super::format::{FileKind, by_name, head, sniff};

/// The facts of the artifact at `path` below `dir` when its name says sequences, structure
/// or FITS; `None` for other files, or when the file cannot be read as recorded (its own
/// content already says why). Read confined, no further than `size_bytes`, and only when
/// its bytes still hash to `sha256`.
pub fn artifact_facts(
    uri: &str,
    dir: &Path,
    path: &str,
    size_bytes: u64,
    sha256: &str,
) -> Option<ResourceContents> {
    let known = by_name(path)?;
    if !matches!(
        known.kind,
        FileKind::Sequences | FileKind::Structure | FileKind::Fits
    ) {
        return None;
    }
    let mut opened =
        crate::datasets::open::open_confined(dir, Path::new(path), path, size_bytes).ok()?;
    let capped = opened.capped(path, size_bytes).ok()?;
    let mut reader = BufReader::with_capacity(64 * 1024, HashingReader::new(capped));
    let first = head(&mut reader).ok()?;
    let facts = describe(sniff(path, &first), &mut reader);
    let (hash, _) = reader.into_inner().finish().ok()?;
    if hash != sha256 {
        return None;
    }
    let body = match facts {
        Ok(facts) => serde_json::json!({ "path": path, "facts": facts }),
        Err(e) => serde_json::json!({ "path": path, "kind": known.kind, "problem": e.to_string() }),
    };
    let text = serde_json::to_string_pretty(&body).ok()?;
    Some(ResourceContents::text(text, uri).with_mime_type("application/json"))
}
