//! Named file inputs of a workflow (`[[workflow.input]]`): files a client passes by name,
//! beside or instead of the tabular dataset, each confined, copied into the run and hashed.

use serde::{Deserialize, Serialize};

/// The prefix of a placeholder that names an input: `{input.receptor}`.
pub const INPUT_PLACEHOLDER_PREFIX: &str = "input.";

/// The format that accepts every file name: for front ends whose tool descriptions type a
/// file input only as "a file" (a CWL `File` without `format`), so no extension can be listed.
pub const ANY_FORMAT: &str = "*";

/// Where a run's copies of the inputs live, relative to its working directory.
pub const INPUTS_DIR: &str = "inputs";

/// `[[workflow.input]]`: one named file input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// `[a-z][a-z0-9_]*`, unique in the workflow; the request's `inputs` key.
    pub id: String,
    /// What the file is, for a client choosing one.
    pub summary: String,
    /// Accepted formats: file extensions (lower case, no dot, e.g. `pdbqt`, `tar.gz`) or
    /// media types (`chemical/x-pdb`).
    pub formats: Vec<String>,
    #[serde(default, skip_serializing_if = "InputKind::is_file")]
    pub kind: InputKind,
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub required: bool,
    /// For `kind = "files"`: fewest files accepted (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_count: Option<u32>,
    /// For `kind = "files"`: most files accepted (default: the adapter's `max_artifacts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_count: Option<u32>,
}

/// What one input holds.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// Exactly one file.
    #[default]
    File,
    /// A list of files, rendered as one argument per file.
    Files,
    /// A directory, copied whole (every file in it must have an accepted format).
    Directory,
}

impl InputKind {
    pub fn is_file(&self) -> bool {
        *self == InputKind::File
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            InputKind::File => "file",
            InputKind::Files => "files",
            InputKind::Directory => "directory",
        }
    }
}

impl InputSpec {
    /// Fewest files a `files` input accepts when given.
    pub fn min_files(&self) -> u32 {
        self.min_count.unwrap_or(1)
    }

    /// Does `file_name` (or its media type `media_type`, when known) have a format this input
    /// accepts? Extensions compare case-insensitively and may have several parts (`tar.gz`).
    pub fn accepts(&self, file_name: &str, media_type: Option<&str>) -> bool {
        let lower = file_name.to_ascii_lowercase();
        self.formats.iter().any(|f| {
            if f == ANY_FORMAT {
                true
            } else if f.contains('/') {
                media_type.is_some_and(|m| m.eq_ignore_ascii_case(f))
            } else {
                lower
                    .strip_suffix(f.as_str())
                    .is_some_and(|stem| stem.len() > 1 && stem.ends_with('.'))
            }
        })
    }
}

/// The input id a placeholder name refers to: `input.ligand` → `ligand`.
pub fn input_placeholder_id(name: &str) -> Option<&str> {
    name.strip_prefix(INPUT_PLACEHOLDER_PREFIX)
}

fn default_true() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(formats: &[&str]) -> InputSpec {
        InputSpec {
            id: "x".into(),
            summary: "x".into(),
            formats: formats.iter().map(|s| s.to_string()).collect(),
            kind: InputKind::File,
            required: true,
            min_count: None,
            max_count: None,
        }
    }

    #[test]
    fn accepts_extensions_and_media_types() {
        let s = spec(&["pdbqt", "tar.gz", "chemical/x-pdb"]);
        assert!(s.accepts("lig.PDBQT", None));
        assert!(s.accepts("db.tar.gz", None));
        assert!(!s.accepts("pdbqt", None));
        assert!(!s.accepts("lig.xpdbqt", None));
        assert!(!s.accepts("lig.pdb", None));
        assert!(s.accepts("lig.ent", Some("chemical/x-pdb")));
        assert!(spec(&["*"]).accepts("no-extension", None));
    }

    #[test]
    fn defaults_stay_out_of_the_canonical_form() {
        let s: InputSpec =
            toml::from_str("id = \"a\"\nsummary = \"s\"\nformats = [\"fa\"]\n").unwrap();
        assert!(s.required);
        assert_eq!(s.kind, InputKind::File);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json.as_object().unwrap().len(), 3);
    }
}
