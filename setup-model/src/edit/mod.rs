//! Format-preserving edits of one entry in a client's configuration file.
//!
//! Each editor changes only the scimcp entry at `container… / name` and leaves every other
//! byte alone: other keys, comments, indentation and line endings. None of them ever
//! replaces a file it cannot parse: the caller gets a [`EditError::Syntax`] with the line
//! and column instead.
//!
//! A UTF-8 byte order mark at the start of a file (Windows editors write one) is set aside
//! before parsing and put back in front of the edited text, so such a file is edited like any
//! other and keeps its mark.

mod error;
mod json;
mod slot;
mod toml;
mod yaml;

pub use error::EditError;
pub use slot::Slot;

use serde_json::Value as Json;

use crate::entry::Entry;

/// How a client's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// JSON, edited through a concrete syntax tree, so JSONC comments and trailing commas
    /// survive (VS Code, Zed and Gemini files have them; strict-JSON files are unaffected).
    Json,
    /// TOML through `toml_edit` (Codex).
    Toml,
    /// One entry of a YAML mapping, edited as a bounded block of text (Goose).
    Yaml,
    /// A YAML file that belongs to scimcp entirely (a Continue block file): the entry is
    /// the whole document and removing it removes the file.
    OwnedYaml,
}

/// The UTF-8 byte order mark.
const BOM: &str = "\u{feff}";

/// `text` split into its byte order mark (or `""`) and the rest.
fn split_bom(text: &str) -> (&'static str, &str) {
    match text.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", text),
    }
}

impl Format {
    /// The entry currently in `text`, as JSON; `None` when it is absent.
    pub fn read(self, text: &str, slot: Slot<'_>) -> Result<Option<Json>, EditError> {
        let (_, text) = split_bom(text);
        match self {
            Format::Json => json::read(text, slot),
            Format::Toml => toml::read(text, slot),
            Format::Yaml => yaml::read(text, slot),
            Format::OwnedYaml => yaml::read_document(text),
        }
    }

    /// `text` with the entry set to `entry` (added or replaced in place).
    pub fn set(self, text: &str, slot: Slot<'_>, entry: &Entry) -> Result<String, EditError> {
        let (bom, text) = split_bom(text);
        let out = match self {
            Format::Json => json::set(text, slot, entry),
            Format::Toml => toml::set(text, slot, entry),
            Format::Yaml => yaml::set(text, slot, entry),
            Format::OwnedYaml => Ok(yaml::render_document(entry)),
        }?;
        Ok(format!("{bom}{out}"))
    }

    /// `text` without the entry; `None` when what is left is nothing at all (an owned file,
    /// or a document holding only the now-empty container), so a file scimcp created can go.
    pub fn remove(self, text: &str, slot: Slot<'_>) -> Result<(String, bool), EditError> {
        let (bom, text) = split_bom(text);
        let (out, empty) = match self {
            Format::Json => json::remove(text, slot),
            Format::Toml => toml::remove(text, slot),
            Format::Yaml => yaml::remove(text, slot),
            Format::OwnedYaml => Ok((String::new(), true)),
        }?;
        Ok((format!("{bom}{out}"), empty))
    }

    /// `text` without the object at `keys` when it is empty: a container scimcp created for
    /// its entry, once the entry is gone. Anything else is returned unchanged.
    pub fn remove_empty(self, text: &str, keys: &[&str]) -> Result<String, EditError> {
        let (bom, body) = split_bom(text);
        let out = match self {
            Format::Json => json::remove_empty(body, keys),
            Format::Toml => toml::remove_empty(body, keys),
            Format::Yaml => yaml::remove_empty(body, keys),
            Format::OwnedYaml => return Ok(text.to_string()),
        }?;
        Ok(format!("{bom}{out}"))
    }

    /// The object whose `"id"` is `id` in the top-level list `list` (VS Code's `inputs`);
    /// `None` when it is absent. Only JSON files have such lists.
    pub fn read_item(self, text: &str, list: &str, id: &str) -> Result<Option<Json>, EditError> {
        let (_, text) = split_bom(text);
        match self {
            Format::Json => json::read_item(text, list, id),
            _ => Err(no_lists(self)),
        }
    }

    /// `text` with the object whose `"id"` is `id` in the top-level list `list` set to
    /// `value` (replaced in place, or appended; the list is created when missing).
    pub fn set_item(
        self,
        text: &str,
        list: &str,
        id: &str,
        value: &Entry,
    ) -> Result<String, EditError> {
        let (bom, text) = split_bom(text);
        match self {
            Format::Json => json::set_item(text, list, id, value).map(|t| format!("{bom}{t}")),
            _ => Err(no_lists(self)),
        }
    }

    /// `text` without the object whose `"id"` is `id` in the top-level list `list`, and
    /// without the list when nothing is left in it.
    pub fn remove_item(self, text: &str, list: &str, id: &str) -> Result<String, EditError> {
        let (bom, body) = split_bom(text);
        match self {
            Format::Json => json::remove_item(body, list, id).map(|t| format!("{bom}{t}")),
            _ => Err(no_lists(self)),
        }
    }

    /// The whole document as JSON (`null` for an empty file), to compare two versions of a
    /// file by meaning.
    pub fn document(self, text: &str) -> Result<Json, EditError> {
        let (_, text) = split_bom(text);
        match self {
            Format::Json => json::document(text),
            Format::Toml => toml::document(text),
            Format::Yaml | Format::OwnedYaml => yaml::document(text),
        }
    }

    /// Parse the whole file (after writing it, to verify it).
    pub fn check(self, text: &str) -> Result<(), EditError> {
        let (_, text) = split_bom(text);
        match self {
            Format::Json => json::check(text),
            Format::Toml => toml::check(text),
            Format::Yaml | Format::OwnedYaml => yaml::check(text),
        }
    }
}

/// The error for a list operation on a format without lists (a client bug, not a user's).
fn no_lists(format: Format) -> EditError {
    EditError::Shape(format!(
        "scimcp keeps list items only in JSON files, not in {format:?} files"
    ))
}

#[cfg(test)]
mod tests;
