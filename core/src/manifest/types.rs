//! The manifest's data model. The same types deserialize the TOML (strictly) and serialize
//! the canonical JSON form.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::limits::Limits;

/// The JSON Schema keyword that marks a parameter as naming dataset columns (a string, or
/// an array of strings): `{"x-scimcp-column": {"numeric": true, "complete": true}}`. The
/// server checks the names against the dataset's header before any process starts:
/// each must exist, be numeric when `numeric`, and have no missing value when `complete`.
pub const COLUMN_KEYWORD: &str = "x-scimcp-column";

/// A whole adapter manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub schema_version: u32,
    /// `[a-z][a-z0-9-]*`: the adapter's name, used in `--adapter NAME` and client entries.
    pub name: String,
    /// Semver of the adapter (not of the scientific CLI).
    pub version: String,
    pub summary: String,
    pub runtime: Runtime,
    /// Bounds for this adapter's runs; omitted bounds take the suite defaults.
    #[serde(default)]
    pub limits: PartialLimits,
    /// How to materialize the CLI's built-in datasets, if it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datasets: Option<DatasetsSpec>,
    /// More programs than the runtime's, by id (`[programs.<id>]`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub programs: BTreeMap<String, ProgramSpec>,
    #[serde(rename = "workflow", default)]
    pub workflows: Vec<Workflow>,
}

impl Manifest {
    /// The bounds in force: the manifest's own where given, the suite defaults elsewhere.
    pub fn effective_limits(&self) -> Limits {
        let d = Limits::DEFAULT;
        let l = &self.limits;
        Limits {
            run_timeout_s: l.run_timeout_s.unwrap_or(d.run_timeout_s),
            max_pending_runs: l.max_pending_runs.unwrap_or(d.max_pending_runs),
            max_concurrent_runs: l.max_concurrent_runs.unwrap_or(d.max_concurrent_runs),
            max_dataset_bytes: l.max_dataset_bytes.unwrap_or(d.max_dataset_bytes),
            max_artifacts: l.max_artifacts.unwrap_or(d.max_artifacts),
            max_artifact_bytes: l.max_artifact_bytes.unwrap_or(d.max_artifact_bytes),
            max_log_bytes: l.max_log_bytes.unwrap_or(d.max_log_bytes),
        }
    }
}

/// Bounds as written in a manifest: each optional, each at most the suite default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PartialLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_timeout_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pending_runs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_runs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_dataset_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_artifacts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_artifact_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_log_bytes: Option<u64>,
}

/// How the scientific runtime is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeKind {
    /// A Python interpreter with pinned requirements; argv = interpreter + `launch` + workflow argv.
    Python,
    /// A standalone program; argv = `executable` + `launch` + workflow argv.
    Executable,
}

/// The scientific runtime, kept separate from the MCP runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Runtime {
    pub kind: RuntimeKind,
    /// Interpreter requirement for `kind = "python"`, e.g. `">=3.10, <3.14"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// Program name or path for `kind = "executable"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// Exact pins (`name==version`) to provision.
    #[serde(default)]
    pub requirements: Vec<String>,
    /// The distribution whose installed files form the runtime identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// A source tree of `package` shipped in the bundle (relative to the bundle root, the
    /// directory holding `adapters/`), installed after the pins; absent when the package
    /// comes from an index through `requirements`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_source: Option<String>,
    /// Arguments after the interpreter or executable, before the workflow's argv.
    #[serde(default)]
    pub launch: Vec<String>,
    /// Install every requirement from a prebuilt wheel, never by building from source
    /// (`--only-binary :all:`): a source build needs compilers and libraries a scientist's
    /// computer rarely has, and half-fails in ways that are hard to explain.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary_only: bool,
    /// Modules that must import for the runtime to be usable (the complete import path).
    #[serde(default)]
    pub import_check: Vec<String>,
    /// Native prerequisites, per platform.
    #[serde(default)]
    pub native: Vec<NativeRequirement>,
    /// Fixed environment variables every run of every workflow gets (e.g. numerical
    /// threading pinned to one thread, so results do not depend on the core count).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// How to ask `executable` its version (`kind = "executable"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<VersionProbe>,
    /// The package that provides `executable`, per package manager (the remedy when missing).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub provided_by: BTreeMap<String, String>,
    /// `false` when `executable` cannot take paths with spaces (default: true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths_with_spaces: Option<bool>,
}

/// A native library or program the runtime needs on some platforms (e.g. libomp on macOS).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NativeRequirement {
    pub name: String,
    /// `linux`, `macos`, `windows`; empty means every platform.
    #[serde(default)]
    pub platforms: Vec<String>,
}

/// Where the CLI's built-in datasets come from: an export command that writes them into
/// `{output_dir}`, or data files shipped inside the runtime's package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatasetsSpec {
    /// Arguments after the launch prefix that write the built-in datasets into `{output_dir}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub export: Vec<String>,
    /// A directory inside the runtime's package (relative to the package's import directory,
    /// e.g. `data_mining/data/dataset` of `geochemistrypi`) holding the data files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_dir: Option<String>,
    /// Built-in dataset ids and their file names in `package_dir` (default: every data file,
    /// its id the lower-case stem).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub files: std::collections::BTreeMap<String, String>,
}

/// One analysis the CLI can run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workflow {
    /// `[a-z][a-z0-9_]*`
    pub id: String,
    pub summary: String,
    /// Path of the strict JSON Schema of the parameters, relative to the manifest.
    pub parameters: String,
    /// The schema itself, read at load time (part of the canonical form and hash).
    #[serde(default, skip_deserializing)]
    pub parameters_schema: serde_json::Value,
    /// Arguments after the launch prefix; `{placeholders}` take validated values. Absent
    /// only in a workflow with `[[workflow.step]]`s (still serialized, so manifests written
    /// before steps keep their canonical form).
    #[serde(default)]
    pub argv: Vec<String>,
    /// The program this workflow runs: a `[programs.<id>]` id (default: the runtime's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// Replaces the program's launch arguments for this workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<Vec<String>>,
    /// Several programs run in order in one working directory (`[[workflow.step]]`);
    /// such a workflow has no top-level argv, options or stdin.
    #[serde(rename = "step", default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepSpec>,
    #[serde(default)]
    pub options: Vec<OptionSpec>,
    /// Ordered answers to the CLI's interactive prompts.
    #[serde(default)]
    pub stdin: Vec<String>,
    #[serde(rename = "input_file", default)]
    pub input_files: Vec<InputFileSpec>,
    /// Named file inputs (`[[workflow.input]]`), beside or instead of the dataset.
    #[serde(rename = "input", default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<super::inputs::InputSpec>,
    #[serde(rename = "artifact", default)]
    pub artifacts: Vec<ArtifactSpec>,
    /// Fixed environment variables for this workflow's runs, on top of `runtime.env`
    /// (a name set in both takes this value).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// What success means beyond exit status 0: a value in a JSON file the CLI writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<SuccessSpec>,
    /// How to read the CLI's own progress lines (absent: only state and time are reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<super::progress::ProgressSpec>,
    /// What one run needs from a batch scheduler (the Slurm executor); the local executor
    /// ignores it. Absent from the canonical form when not given, so manifests without it
    /// keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// Values read into `reported` after the run (`[[workflow.metric]]`).
    #[serde(rename = "metric", default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<super::outputs::MetricSpec>,
    /// Success predicates checked after exit 0 (`[[workflow.require]]`).
    #[serde(rename = "require", default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<super::outputs::RequireSpec>,
    /// What this workflow's CLI may reach beyond the sandbox's defaults
    /// (`[workflow.sandbox]`). Absent from the canonical form when not given, so manifests
    /// without it keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxSpec>,
    /// `false`: the workflow reads no table even though it declares no named inputs (a tool
    /// that takes only parameters, such as a CWL tool with no File input). Absent (the
    /// default), such a workflow reads the request's dataset, as every workflow before named
    /// inputs did; absent from the canonical form, so manifests without it keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_dataset: Option<bool>,
    /// The command engine that builds this workflow's command per request (`cwl`), instead
    /// of `argv`/`options`/`stdin` (see [`super::engine`]). Only a front end that attaches
    /// the engine sets it; absent from the canonical form otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
}

/// `[workflow.sandbox]`: the grants one workflow's CLI needs on top of what every run gets
/// (the runtime read-only, its run directory and the adapter's state directory read-write).
/// The process limits and no-new-privileges are not here: a manifest cannot loosen them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxSpec {
    /// TCP connect and bind are allowed only when true.
    #[serde(default)]
    pub network: bool,
    /// Grant `/dev/shm` read-write (POSIX semaphores of Python's multiprocessing).
    #[serde(default)]
    pub shared_memory: bool,
    /// Paths the CLI may read: absolute, or `~/…` under the user's home.
    #[serde(default)]
    pub read_only: Vec<String>,
    /// Paths the CLI may read and write: absolute, or `~/…` under the user's home.
    #[serde(default)]
    pub read_write: Vec<String>,
}

/// `[workflow.resources]`: CPUs, memory and wall-clock time one run asks a scheduler for.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Resources {
    /// CPUs for the CLI's process (Slurm `--cpus-per-task`); default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// Memory in MiB (Slurm `--mem`); default: the cluster's per-CPU default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Wall-clock minutes (Slurm `--time`); default: the run timeout rounded up to minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_min: Option<u32>,
}

impl Resources {
    /// Most CPUs one run may ask for.
    pub const MAX_CPUS: u32 = 1024;
    /// Most memory one run may ask for: 16 TiB.
    pub const MAX_MEMORY_MB: u64 = 16 * 1024 * 1024;

    /// CPUs a job asks for: the declared count, else one.
    pub fn job_cpus(&self) -> u32 {
        self.cpus.unwrap_or(1)
    }

    /// Minutes a job asks for: the declared limit, else the run timeout rounded up to whole
    /// minutes (the scheduler's unit), at least one. The server's executor submits with it
    /// and the doctor compares it with the partition's limit, so both must use this.
    pub fn job_time_limit_min(&self, run_timeout_s: u64) -> u64 {
        self.time_limit_min
            .map(u64::from)
            .unwrap_or_else(|| run_timeout_s.div_ceil(60))
            .max(1)
    }
}

/// A run succeeds only when the JSON file `json` (relative to the working directory) holds
/// `equals` at `pointer`; otherwise it fails with the text found at the `message` pointers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuccessSpec {
    pub json: String,
    /// A JSON pointer (RFC 6901), e.g. `/status`.
    pub pointer: String,
    pub equals: serde_json::Value,
    /// JSON pointers whose values, joined by `: `, say why a run failed.
    #[serde(default)]
    pub message: Vec<String>,
}

impl Manifest {
    /// The variables the manifest fixes for runs of `workflow`: `runtime.env`, then the
    /// workflow's own `env` over it.
    pub fn run_env(&self, workflow: &Workflow) -> BTreeMap<String, String> {
        let mut env = self.runtime.env.clone();
        env.extend(workflow.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        env
    }
}

/// An optional parameter passed as a flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionSpec {
    pub param: String,
    pub flag: String,
    #[serde(default)]
    pub format: OptionFormat,
}

/// How an option's value is written on the command line.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OptionFormat {
    /// `--flag VALUE` with the value as text (strings as-is, numbers in JSON form).
    #[default]
    Value,
    /// `--flag JSON` with the value as canonical compact JSON.
    Json,
    /// `--flag` alone, when the boolean value is true.
    Switch,
}

/// A file the CLI reads, rendered into the run directory before the process starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputFileSpec {
    /// Relative to the run's working directory.
    pub path: String,
    pub format: InputFileFormat,
    /// Structure rendered with placeholders substituted (a string for `text`).
    pub template: serde_json::Value,
}

/// The file format of an [`InputFileSpec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputFileFormat {
    Json,
    Toml,
    /// Written as JSON, which every YAML 1.2 parser reads.
    Yaml,
    Text,
}

/// An output the run is expected to produce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactSpec {
    pub id: String,
    /// Relative to the run's output directory; may be a glob.
    pub path: String,
    pub media_type: String,
    #[serde(default = "default_true")]
    pub required: bool,
    /// Keys that must be present in a JSON artifact.
    #[serde(default)]
    pub json_keys: Vec<String>,
    /// For globs: fewest matches accepted (default 1 when required, else 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_count: Option<u32>,
    /// For globs: most matches accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_count: Option<u32>,
    /// Where `path` is relative to: the run's output directory (default), or its working
    /// directory, for a CLI that writes its results where it chooses.
    #[serde(default, skip_serializing_if = "ArtifactBase::is_output")]
    pub base: ArtifactBase,
    /// For `base = "stdout" | "stderr"` in a workflow with steps: the step whose stream this
    /// is (default: the last step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// Accept a 0-byte file. Without it an empty *required* artifact is a problem: a CLI
    /// that exits 0 having written nothing has not produced its result.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_empty: bool,
}

/// The directory an artifact's path is relative to.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactBase {
    #[default]
    Output,
    Work,
    /// The CLI's complete standard output, saved as `output/<path>`.
    Stdout,
    /// The CLI's complete standard error, saved as `output/<path>`.
    Stderr,
}

impl ArtifactBase {
    pub fn is_output(&self) -> bool {
        *self == ArtifactBase::Output
    }

    /// True for the stream bases, whose file the server writes (under the output directory).
    pub fn is_stream(&self) -> bool {
        matches!(self, ArtifactBase::Stdout | ArtifactBase::Stderr)
    }

    /// The directory the file lies in: a stream's copy is written into the output directory.
    pub fn directory(self) -> ArtifactBase {
        if self.is_stream() {
            ArtifactBase::Output
        } else {
            self
        }
    }
}

impl ArtifactSpec {
    /// True when `path` contains glob syntax.
    pub fn is_glob(&self) -> bool {
        self.path.contains(['*', '?', '[', '{'])
    }
}

fn default_true() -> bool {
    true
}

// Several programs per adapter and several steps per workflow. Every field is optional and
// absent from the canonical form when unused, so manifests written before these keys keep
// their hash.

/// `[programs.<id>]`: a program other than the runtime's, run by workflows or steps that
/// name it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgramSpec {
    /// A name looked up on PATH when the server starts (for a python runtime, first in the
    /// interpreter's scripts directory), or an absolute path.
    pub executable: String,
    /// Arguments between the program and a workflow's or step's argv.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launch: Vec<String>,
    /// How to ask the program its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<VersionProbe>,
    /// The package that provides the program, per package manager (the remedy when missing).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub provided_by: BTreeMap<String, String>,
    /// `false` for a program that cannot take paths with spaces: a run whose working or
    /// state directory has one is refused at validation (default: true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths_with_spaces: Option<bool>,
}

/// `version = { args = […], pattern = '…(?P<version>…)…' }`: the program run with `args`
/// (bounded in time and output); the first match of `pattern` in its stdout, then its
/// stderr, gives the version as group `version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VersionProbe {
    #[serde(default)]
    pub args: Vec<String>,
    pub pattern: String,
}

/// `[[workflow.step]]`: one program run of a workflow that runs several in order, in one
/// working directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// `[a-z][a-z0-9_]*`, unique in the workflow; named in the result as `failed_step`.
    pub id: String,
    /// A `[programs.<id>]` id or `runtime` (default: the workflow's program).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// Replaces the program's launch arguments for this step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<Vec<String>>,
    /// Arguments after the launch prefix; `{placeholders}` as in a workflow's argv.
    pub argv: Vec<String>,
    /// Optional parameters passed as flags to this step (a workflow with steps has no
    /// top-level options: each option belongs to the step whose program reads it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<OptionSpec>,
    /// Ordered answers to this step's interactive prompts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stdin: Vec<String>,
}
