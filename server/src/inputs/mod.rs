//! Named file inputs of a request (`inputs: {"<id>": <ref> | [<ref>, …]}`): each reference
//! resolved to confined, hashed files ([`resolve`]), bound into the plan as [`PlannedInput`]s,
//! copied into the run's `inputs/<id>/` and re-verified at its end ([`copy`]).
//!
//! A reference is a path (confined exactly like a dataset), a path with the SHA-256 the
//! client expects, or an artifact of an earlier run of this server's runs directory,
//! identified by the hash its result recorded: so a chain of runs has provenance end to end.

pub(crate) mod copy;
pub(crate) mod resolve;

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use scimcp_core::manifest::{INPUTS_DIR, InputKind};
use serde::{Deserialize, Serialize};

pub use resolve::resolve_inputs;

/// One file reference of a request's `inputs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum InputRef {
    /// The path of a file (or, for a directory input, a directory) inside an allowed
    /// directory, absolute or relative to the server's start directory.
    Path(String),
    /// A path, refused unless its bytes hash to `sha256`.
    Hashed(HashedPath),
    /// An artifact of an earlier run, refused unless its file still hashes to the value the
    /// run's result recorded.
    Run(RunArtifact),
}

/// `{ "path": …, "sha256": … }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HashedPath {
    pub path: String,
    /// Hex SHA-256 the file must have.
    pub sha256: String,
}

/// `{ "run_id": "run-…", "artifact": "<artifact id>" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArtifact {
    /// The run id start_analysis returned for the earlier run.
    pub run_id: String,
    /// The id of one of its declared artifacts (get_run_result lists them).
    pub artifact: String,
}

/// The value of one input: a reference, or a list of them (for `kind = "files"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum InputValue {
    One(InputRef),
    Many(Vec<InputRef>),
}

// Read by hand, not `untagged`: serde reads a struct from a sequence too, so `["a", "b"]`
// would pass for `{path: "a", sha256: "b"}`; and a wrong shape deserves a message saying
// which shapes there are.
impl<'de> Deserialize<'de> for InputRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(d)?;
        let shapes = "an input reference is a path string, {\"path\", \"sha256\"} or {\"run_id\", \"artifact\"}";
        match value {
            serde_json::Value::String(path) => Ok(InputRef::Path(path)),
            serde_json::Value::Object(map) if map.contains_key("run_id") => {
                serde_json::from_value(serde_json::Value::Object(map))
                    .map(InputRef::Run)
                    .map_err(|e| D::Error::custom(format!("{e}; {shapes}")))
            }
            serde_json::Value::Object(map) if map.contains_key("path") => {
                serde_json::from_value(serde_json::Value::Object(map))
                    .map(InputRef::Hashed)
                    .map_err(|e| D::Error::custom(format!("{e}; {shapes}")))
            }
            other => Err(D::Error::custom(format!("{shapes}, not {other}"))),
        }
    }
}

impl<'de> Deserialize<'de> for InputValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Array(items) => items
                .into_iter()
                .map(|v| serde_json::from_value(v).map_err(D::Error::custom))
                .collect::<Result<_, _>>()
                .map(InputValue::Many),
            one => serde_json::from_value(one)
                .map(InputValue::One)
                .map_err(D::Error::custom),
        }
    }
}

impl InputValue {
    pub fn refs(&self) -> Vec<&InputRef> {
        match self {
            InputValue::One(r) => vec![r],
            InputValue::Many(rs) => rs.iter().collect(),
        }
    }
}

/// A request's `inputs`, by input id.
pub type RequestInputs = BTreeMap<String, InputValue>;

/// Where a file of an input came from, when an earlier run produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FromRun {
    pub run_id: String,
    pub artifact: String,
    /// The artifact's path in that run's records (relative to its output directory).
    pub path: String,
}

/// One file of an input, as the plan binds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedInputFile {
    /// The reference as the client gave it (a path, or `run-…:<artifact>`).
    pub reference: String,
    /// Where the run's copy lives, relative to the working directory.
    pub run_path: String,
    pub sha256: String,
    pub size_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_run: Option<FromRun>,
}

/// One named input, as the plan binds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedInput {
    pub id: String,
    /// `file`, `files` or `directory`.
    #[schemars(with = "String")]
    pub kind: InputKind,
    /// What `{input.<id>}` renders for a directory (`inputs/<id>`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_path: Option<String>,
    pub files: Vec<PlannedInputFile>,
}

impl PlannedInput {
    /// The arguments `{input.<id>}` stands for: the directory, or each file's copy.
    pub fn rendered(&self) -> Vec<String> {
        match &self.run_path {
            Some(dir) => vec![dir.clone()],
            None => self.files.iter().map(|f| f.run_path.clone()).collect(),
        }
    }
}

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

/// Does `workflow` read a table? Yes when it uses `{dataset}` or column features, and
/// when it declares no named inputs (every workflow before named inputs took a dataset).
pub fn takes_dataset(workflow: &scimcp_core::Workflow) -> bool {
    if workflow.inputs.is_empty() || crate::validate::uses_columns(workflow) {
        return true;
    }
    let mut texts: Vec<String> = workflow
        .argv
        .iter()
        .chain(&workflow.stdin)
        .chain(workflow.steps.iter().flat_map(|s| &s.argv))
        .cloned()
        .collect();
    for f in &workflow.input_files {
        collect_strings(&f.template, &mut texts);
    }
    texts.iter().any(|t| {
        scimcp_core::Template::parse(t).is_ok_and(|t| t.placeholders().any(|p| p == "dataset"))
    })
}

fn collect_strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// The dataset reference the request must resolve: required by a workflow that reads a
/// table, refused by one that takes only named inputs (a table it never reads would be
/// copied and bound into the plan for nothing, and suggest it mattered).
pub fn dataset_reference<'r>(
    workflow: &scimcp_core::Workflow,
    req: &'r crate::request::AnalysisRequest,
) -> Result<Option<&'r str>, crate::envelope::ToolError> {
    use crate::envelope::{ErrorCode, ToolError};
    // Input ids first: a request naming inputs the workflow lacks is wrong whatever its
    // dataset, and says so before any file is read.
    resolve::check_ids(workflow, &req.inputs)?;
    match (req.dataset.as_deref(), takes_dataset(workflow)) {
        (Some(reference), true) => Ok(Some(reference)),
        (None, true) => Err(ToolError::new(
            ErrorCode::InvalidRequest,
            format!(
                "workflow '{}' reads a table, and no dataset was given",
                workflow.id
            ),
            "pass dataset: a reference from list_datasets (builtin:<id> or the path of a CSV file)",
        )
        .field("dataset")),
        (Some(_), false) => Err(ToolError::new(
            ErrorCode::InvalidRequest,
            format!(
                "workflow '{}' reads no table; its files are named inputs",
                workflow.id
            ),
            "drop dataset and pass the files as inputs: {\"<input id>\": \"<path>\"}",
        )
        .field("dataset")
        .allowed(workflow.inputs.iter().map(|i| format!("inputs.{}", i.id)))),
        (None, false) => Ok(None),
    }
}

/// The dataset's copy (`inputs/<file name>`) and the inputs' (`inputs/<id>/…`) share a
/// directory: a dataset named like an input would collide with its directory.
pub fn check_dataset_apart(
    dataset: Option<&crate::datasets::ResolvedDataset>,
    inputs: &[ResolvedInput],
) -> Result<(), crate::envelope::ToolError> {
    let Some(dataset) = dataset else {
        return Ok(());
    };
    match inputs.iter().find(|i| i.id == dataset.file_name) {
        None => Ok(()),
        Some(i) => Err(crate::envelope::ToolError::new(
            crate::envelope::ErrorCode::InvalidRequest,
            format!(
                "the dataset's file name '{}' is the id of input '{}'; their copies would collide in the run",
                dataset.file_name, i.id
            ),
            "rename the dataset file (e.g. give it its .csv extension)",
        )
        .field("dataset")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_read_by_shape_and_a_list_is_never_a_hashed_path() {
        let v: InputValue = serde_json::from_value(json!(["a.fa", "b.fa"])).unwrap();
        assert_eq!(
            v,
            InputValue::Many(vec![
                InputRef::Path("a.fa".into()),
                InputRef::Path("b.fa".into())
            ])
        );
        let v: InputValue =
            serde_json::from_value(json!({"path": "a.fa", "sha256": "ab"})).unwrap();
        assert!(matches!(v, InputValue::One(InputRef::Hashed(_))));
        let v: InputValue =
            serde_json::from_value(json!({"run_id": "run-1", "artifact": "db"})).unwrap();
        assert!(matches!(v, InputValue::One(InputRef::Run(_))));
        for bad in [
            json!(7),
            json!({"path": "a.fa"}),
            json!({"run_id": "run-1", "artifact": "db", "extra": 1}),
            json!({"file": "a.fa"}),
        ] {
            let e = serde_json::from_value::<InputValue>(bad.clone()).unwrap_err();
            assert!(
                e.to_string()
                    .contains("an input reference is a path string"),
                "{bad}: {e}"
            );
        }
    }
}
