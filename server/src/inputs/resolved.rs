//! The inputs as validation checked them: each file with its planned record, its source
//! path and how to open it again the same way, and what the request hash binds of them.

use std::path::PathBuf;

use schemars::JsonSchema;
use scimcp_core::manifest::{INPUTS_DIR, InputKind};
use serde::{Deserialize, Serialize};

use crate::plan::{PlannedInput, PlannedInputFile};

/// A checked input file and how to open it again the same way (below its root, no link
/// followed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResolvedInputFile {
    /// The planned record (reference, run path, hash, size, origin).
    #[serde(flatten)]
    pub planned: PlannedInputFile,
    /// Absolute path of the source file.
    pub path: PathBuf,
    #[serde(skip)]
    #[schemars(skip)]
    pub root: PathBuf,
    #[serde(skip)]
    #[schemars(skip)]
    pub relative: PathBuf,
}

/// A checked input: what validation shows and the run copies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResolvedInput {
    pub id: String,
    #[schemars(with = "String")]
    pub kind: InputKind,
    pub files: Vec<ResolvedInputFile>,
}

impl ResolvedInput {
    pub fn planned(&self) -> PlannedInput {
        PlannedInput {
            id: self.id.clone(),
            kind: self.kind,
            run_path: (self.kind == InputKind::Directory).then(|| input_dir(&self.id)),
            files: self.files.iter().map(|f| f.planned.clone()).collect(),
        }
    }
}

/// `inputs/<id>`, relative to the working directory.
pub fn input_dir(id: &str) -> String {
    format!("{INPUTS_DIR}/{id}")
}

/// What the request hash binds of the inputs: each file's reference and SHA-256, so changed
/// bytes change the hash even when the references are the same.
pub fn hashed_view(inputs: &[ResolvedInput]) -> serde_json::Value {
    serde_json::Value::Object(
        inputs
            .iter()
            .map(|i| {
                let files: Vec<serde_json::Value> = i
                    .files
                    .iter()
                    .map(|f| {
                        serde_json::json!({
                            "reference": f.planned.reference,
                            "sha256": f.planned.sha256,
                        })
                    })
                    .collect();
                (i.id.clone(), serde_json::Value::Array(files))
            })
            .collect(),
    )
}
