//! The plan: everything a run will do, decided before it starts (the exact argv, stdin
//! answers, input files, environment and expected artifacts), with a hash over all of it.
//! `plan_compile.rs` compiles a validated request into one; the runs read it.
//!
//! The run values are paths relative to the run's working directory (`inputs/<file>` and
//! `output`), so the same request on the same dataset bytes always compiles to the same plan.
//! This file holds the record only and imports nothing of the crate, so the compiler, the
//! inputs, the runtime and the runs can all name it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use scimcp_core::hash::{canonical_json, canonical_sha256_of};
use scimcp_core::manifest::{ArtifactSpec, InputKind, SuccessSpec};
use scimcp_core::run_env::FIXED_RUN_ENV;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The run's output directory, relative to its working directory.
pub const OUTPUT_DIR: &str = "output";
/// The directory the dataset copy lives in, relative to the working directory.
pub const INPUTS_DIR: &str = "inputs";

/// Variables every run gets, whatever the server's environment says (the suite's
/// reproducibility settings, [`scimcp_core::run_env::FIXED_RUN_ENV`]).
pub fn fixed_env() -> BTreeMap<String, String> {
    FIXED_RUN_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A file written into the working directory before the process starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedFile {
    pub path: String,
    /// The file's text; in an answer, only its first [`SHOWN_HEAD_BYTES`] when
    /// `content_bytes` is present (the plan the run executes holds all of it).
    pub content: String,
    /// How run paths substituted into `content` are escaped: `json` (json, yaml and toml
    /// files: inside strings) or `none` (text files).
    #[serde(default, skip_serializing_if = "is_text")]
    pub escape: Escape,
    /// Present only in an answer whose `content` is cut short: the whole text's size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_bytes: Option<u64>,
    /// With `content_bytes`: the SHA-256 of the whole text (what the plan hash covers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_sha256: Option<String>,
}

impl PlannedFile {
    /// A file of `content` at `path`, escaped as `escape`.
    pub fn new(path: String, content: String, escape: Escape) -> PlannedFile {
        PlannedFile {
            path,
            content,
            escape,
            content_bytes: None,
            content_sha256: None,
        }
    }
}

/// Files whose text is larger are shown by size, SHA-256 and head in answers: a CWL tool's
/// InitialWorkDir may write megabytes (a JSON dump of its inputs), which would push
/// `validate_analysis` past the answer ceiling although the plan itself is fine.
pub const SHOWN_FILE_BYTES: usize = 4096;
/// How much of such a file an answer shows.
pub const SHOWN_HEAD_BYTES: usize = 1024;

/// Serializes a plan as an answer shows it: as stored, but each planned file of more than
/// [`SHOWN_FILE_BYTES`] cut to its head with its size and SHA-256 beside it. `plan_sha256`
/// stays the hash of the whole plan, which the server keeps and runs.
pub fn serialize_shown<S: serde::Serializer>(plan: &Plan, s: S) -> Result<S::Ok, S::Error> {
    if plan
        .input_files
        .iter()
        .all(|f| f.content.len() <= SHOWN_FILE_BYTES)
    {
        return plan.serialize(s);
    }
    let mut shown = plan.clone();
    for f in &mut shown.input_files {
        if f.content.len() > SHOWN_FILE_BYTES {
            f.content_bytes = Some(f.content.len() as u64);
            f.content_sha256 = Some(scimcp_core::hash::sha256_hex(f.content.as_bytes()));
            let mut end = SHOWN_HEAD_BYTES;
            while !f.content.is_char_boundary(end) {
                end -= 1;
            }
            f.content.truncate(end);
        }
    }
    shown.serialize(s)
}

/// How a substituted run path is written into a file's content.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Escape {
    #[default]
    None,
    Json,
}

fn is_text(e: &Escape) -> bool {
    *e == Escape::None
}

/// The absolute paths a plan names only symbolically (`{work_dir}`, `{state_dir}`), so that
/// it and its hash are the same on every machine.
#[derive(Debug, Clone)]
pub struct RunPaths {
    pub work_dir: std::path::PathBuf,
    pub state_dir: std::path::PathBuf,
}

impl RunPaths {
    /// `text` with the run values substituted, escaped as `escape` says.
    pub fn substitute(&self, text: &str, escape: Escape) -> String {
        if !text.contains("{work_dir}") && !text.contains("{state_dir}") {
            return text.to_string();
        }
        let written = |p: &std::path::Path| {
            let raw = p.to_string_lossy().into_owned();
            match escape {
                Escape::None => raw,
                Escape::Json => {
                    let quoted = serde_json::to_string(&raw).expect("a string serializes");
                    quoted[1..quoted.len() - 1].to_string()
                }
            }
        };
        text.replace("{work_dir}", &written(&self.work_dir))
            .replace("{state_dir}", &written(&self.state_dir))
    }
}

/// The dataset as the plan binds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedDataset {
    pub reference: String,
    /// Where the run's copy lives, relative to the working directory.
    pub run_path: String,
    pub sha256: String,
    pub size_bytes: u64,
}

/// Everything a run will do, decided before it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Plan {
    pub adapter: String,
    pub adapter_version: String,
    pub adapter_sha256: String,
    pub workflow: String,
    /// The program started (the runtime's interpreter or executable).
    pub program: String,
    /// Every argument after the program.
    pub args: Vec<String>,
    /// Lines written to the process's stdin, in order, then stdin is closed.
    pub stdin: Vec<String>,
    pub input_files: Vec<PlannedFile>,
    /// Variables set for the process (besides the passthrough names).
    pub env: BTreeMap<String, String>,
    /// Variables copied from the server's environment when present.
    pub env_passthrough: Vec<String>,
    /// Working directory, relative to the run directory.
    pub working_dir: String,
    pub output_dir: String,
    /// The table the run reads, for workflows that take one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<PlannedDataset>,
    /// The named file inputs, each file with its copy's path and SHA-256.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<PlannedInput>,
    /// Artifacts the run must produce, as the manifest declares them.
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub artifacts: Vec<ArtifactSpec>,
    /// What success means beyond exit status 0, when the workflow says (a value in a JSON
    /// file the CLI writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub success: Option<SuccessSpec>,
    /// Values read from the run's text outputs into `reported` (`[[workflow.metric]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub metrics: Vec<scimcp_core::manifest::MetricSpec>,
    /// Success predicates checked after exit 0 (`[[workflow.require]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub requires: Vec<scimcp_core::manifest::RequireSpec>,
    pub timeout_s: u64,
    /// Each step of a stepped workflow, in order (absent for a single program).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<PlannedStep>,
    /// The identity of every program the run starts (absent for a python runtime's
    /// interpreter, which the runtime probe identifies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub programs: Vec<scimcp_core::program_identity::ProgramIdentity>,
    /// What the workflow's `[workflow.sandbox]` grants its CLI beyond the defaults (absent
    /// when it declares nothing, so plans of such workflows keep their hash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<PlannedSandbox>,
    /// The command an engine built for this request (a CWL tool's): its stdin file, stream
    /// files, exit statuses and job, which the run and the outputs step read. Absent for
    /// template workflows, so their plans keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<scimcp_core::manifest::EngineCommand>,
}

/// A workflow's declared sandbox grants, as the plan records them (`~/…` unexpanded: the
/// run expands it against the home it runs under).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedSandbox {
    pub network: bool,
    pub shared_memory: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_write: Vec<String>,
}

impl Plan {
    /// SHA-256 of the plan's canonical JSON.
    pub fn sha256(&self) -> String {
        canonical_sha256_of(self)
    }
}

/// Text of a parameter value on a command line: strings as-is, numbers and booleans in
/// JSON form, objects and arrays as canonical JSON, null as nothing.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Object(_) | Value::Array(_) => canonical_json(value),
        other => other.to_string(),
    }
}

/// One step of a stepped plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedStep {
    pub id: String,
    /// The program id: `runtime` or a `[programs.<id>]`.
    pub program_id: String,
    /// The executable started (resolved when the server started).
    pub program: String,
    /// Every argument after the program (launch prefix, argv, options).
    pub args: Vec<String>,
    /// Lines written to the step's stdin, then it is closed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stdin: Vec<String>,
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_shows_a_large_planned_file_by_head_size_and_hash_and_keeps_the_plan_hash() {
        let big = "é".repeat(SHOWN_FILE_BYTES); // two bytes a char: the cut must not split one
        let plan: Plan = serde_json::from_value(serde_json::json!({
            "adapter": "a", "adapter_version": "0.1.0", "adapter_sha256": "x", "workflow": "w",
            "program": "cat", "args": [], "stdin": [], "env": {}, "env_passthrough": [],
            "input_files": [{"path": "small.txt", "content": "hi"}, {"path": "big.json", "content": big}],
            "working_dir": "work", "output_dir": "output", "artifacts": [], "timeout_s": 5
        }))
        .unwrap();
        let mut out = Vec::new();
        serialize_shown(&plan, &mut serde_json::Serializer::new(&mut out)).unwrap();
        let shown: Value = serde_json::from_slice(&out).unwrap();
        let files = shown["input_files"].as_array().unwrap();
        assert_eq!(files[0]["content"], "hi");
        assert!(files[0].get("content_bytes").is_none());
        let head = files[1]["content"].as_str().unwrap();
        assert!(head.len() <= SHOWN_HEAD_BYTES && head.len() > SHOWN_HEAD_BYTES - 2);
        assert_eq!(files[1]["content_bytes"], big.len());
        assert_eq!(
            files[1]["content_sha256"],
            scimcp_core::hash::sha256_hex(big.as_bytes())
        );
        // The plan itself, as stored and hashed, keeps every byte.
        assert_eq!(plan.input_files[1].content, big);
        let stored: Value = serde_json::to_value(&plan).unwrap();
        assert_eq!(stored["input_files"][1]["content"], big.as_str());
        assert!(stored["input_files"][1].get("content_bytes").is_none());
    }

    #[test]
    fn run_paths_are_substituted_escaped_for_the_file_format() {
        let paths = RunPaths {
            work_dir: std::path::PathBuf::from(r#"C:\Users\Ada "A"\work"#),
            state_dir: std::path::PathBuf::from("/srv/state"),
        };
        assert_eq!(
            paths.substitute("{work_dir}/plan.json", Escape::None),
            r#"C:\Users\Ada "A"\work/plan.json"#
        );
        let json_text = format!(
            "{{\"p\": \"{}\", \"s\": \"{}\"}}",
            "{work_dir}/plan.json", "{state_dir}"
        );
        let written = paths.substitute(&json_text, Escape::Json);
        let back: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(back["p"], r#"C:\Users\Ada "A"\work/plan.json"#);
        assert_eq!(back["s"], "/srv/state");
        assert_eq!(paths.substitute("no paths", Escape::Json), "no paths");
    }
}
