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
    pub content: String,
    /// How run paths substituted into `content` are escaped: `json` (json, yaml and toml
    /// files: inside strings) or `none` (text files).
    #[serde(default, skip_serializing_if = "is_text")]
    pub escape: Escape,
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
