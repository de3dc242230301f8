//! Scenario files: one analysis, described twice — once as the MCP request an AI client
//! sends, once as the command line a scientist types — plus what both must agree on.
//!
//! The direct command line is written out literally in the file. It is never derived from
//! the server's planner: if it were, a planner bug would produce the same wrong command on
//! both sides and parity would prove nothing. The only substitutions are a small, fixed set
//! of placeholders for paths that differ per machine ([`DIRECT_PLACEHOLDERS`]).
//!
//! Format (see `parity/scenarios/README.md` for a worked example):
//!
//! ```toml
//! description = "…"
//! adapter = "refsci"
//! workflow = "regression"
//! expect = "succeeded"            # succeeded | failed | cancelled
//! metrics_file = "metrics.json"   # default
//! timeout_s = 600                 # default, per side
//!
//! [request]                       # the MCP request (validate_analysis / start_analysis)
//! dataset = "data/diabetes.csv"   # optional for a workflow that takes only named inputs
//! inputs = { ligand = "vina/examples/aspirin.pdbqt" }   # below the adapters directory
//! parameters = { target = "target", model = "ridge" }
//!
//! [direct]                        # what a scientist types
//! program = "{python}"            # default: the runtime's interpreter
//! argv = ["-m", "refsci", "regress", "--data", "{datasets}/diabetes.csv", "--out", "{out}"]
//! stdin = []                      # answers to interactive prompts, one per line
//! cwd = "{work}"                  # default
//! env = {}                        # added to the inherited environment
//! stdout = "alignment.fasta"      # the command's stdout saved as {out}/alignment.fasta
//! stderr = "log.txt"              # the same for stderr
//!
//! platforms = ["linux", "macos"]  # default: every platform
//!
//! [tolerance]                     # recorded evidence vs now; floats only
//! rtol = 1e-9                     # default Tolerance::DEFAULT
//! atol = 1e-12
//! fields = { "metrics.silhouette" = { rtol = 1e-7 } }
//!
//! [compare]                       # artifact globs → json | csv | text | hash | presence
//! "*.png" = "presence"            # default: by extension (json, csv/tsv, text), else hash
//!
//! [[normalize]]                   # never applied unless declared here
//! pattern = '^\d+\n$'
//! replacement = "[PID]\n"
//! artifacts = ["worker.pid"]      # artifact globs whose text is normalized before hashing
//! stderr = false                  # also normalize the error line
//!
//! [cancel]                        # only with expect = "cancelled"
//! when_stdout_contains = "sleeping"
//! after_s = 0.5
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use crate::content::CompareMode;
use crate::error::Error;
use crate::tolerance::{self, Tolerance, Tolerances};

/// The placeholders a direct command line may use, and what each stands for.
pub const DIRECT_PLACEHOLDERS: &[(&str, &str)] = &[
    (
        "{python}",
        "the interpreter of the scientific runtime (--python)",
    ),
    (
        "{datasets}",
        "a directory holding the adapter's exported built-in datasets",
    ),
    (
        "{work}",
        "the direct run's private working directory (the default cwd)",
    ),
    (
        "{out}",
        "the direct run's output directory ({work}/out), whose files are the artifacts",
    ),
    (
        "{adapters}",
        "the adapters directory (--adapters), which the request's `inputs` paths are relative to",
    ),
];

/// How the analysis must end on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    /// Exit status 0 directly; `succeeded` through MCP.
    Succeeded,
    /// The same non-zero exit code on both sides; `failed` through MCP.
    Failed,
    /// Ended on request: killed directly, `cancel_run` through MCP.
    Cancelled,
}

impl Expect {
    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Succeeded => "succeeded",
            Expect::Failed => "failed",
            Expect::Cancelled => "cancelled",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    description: String,
    adapter: String,
    workflow: String,
    expect: Expect,
    #[serde(default = "default_metrics_file")]
    metrics_file: String,
    #[serde(default = "default_timeout")]
    timeout_s: u64,
    request: RawRequest,
    direct: RawDirect,
    #[serde(default)]
    platforms: Vec<String>,
    #[serde(default)]
    tolerance: RawTolerance,
    #[serde(default)]
    compare: BTreeMap<String, RawCompare>,
    /// Artifact globs the CLI itself does not reproduce run to run (e.g. probabilities that
    /// move by an ULP): in the same-run comparison their floats get the tolerance too.
    #[serde(default)]
    nondeterministic: Vec<String>,
    #[serde(default)]
    normalize: Vec<RawNormalize>,
    #[serde(default)]
    cancel: Option<RawCancel>,
}

fn default_metrics_file() -> String {
    "metrics.json".to_string()
}

fn default_timeout() -> u64 {
    600
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTolerance {
    rtol: Option<f64>,
    atol: Option<f64>,
    #[serde(default)]
    fields: BTreeMap<String, RawFieldTolerance>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFieldTolerance {
    rtol: Option<f64>,
    atol: Option<f64>,
}

/// The comparison modes a scenario may declare (`metrics` is implied by `metrics_file`).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RawCompare {
    Json,
    Csv,
    Text,
    Cells,
    Hash,
    Presence,
}

impl From<RawCompare> for CompareMode {
    fn from(c: RawCompare) -> CompareMode {
        match c {
            RawCompare::Json => CompareMode::Json,
            RawCompare::Csv => CompareMode::Csv,
            RawCompare::Text => CompareMode::Text,
            RawCompare::Cells => CompareMode::Cells,
            RawCompare::Hash => CompareMode::Hash,
            RawCompare::Presence => CompareMode::Presence,
        }
    }
}

/// The platforms a scenario may be limited to.
pub const PLATFORMS: &[&str] = &["linux", "macos", "windows"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequest {
    #[serde(default)]
    dataset: Option<String>,
    /// Named file inputs: one path or a list of paths per input id, relative to the adapters
    /// directory.
    #[serde(default)]
    inputs: BTreeMap<String, RawInput>,
    #[serde(default)]
    parameters: toml::Table,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum RawInput {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDirect {
    #[serde(default = "default_program")]
    program: String,
    argv: Vec<String>,
    #[serde(default)]
    stdin: Vec<String>,
    #[serde(default = "default_cwd")]
    cwd: String,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    file: Vec<RawFile>,
    /// Where the command's stdout goes, under `{out}` (a scientist's `> out/FILE`).
    #[serde(default)]
    stdout: Option<String>,
    /// Where the command's stderr goes, under `{out}` (`2> out/FILE`).
    #[serde(default)]
    stderr: Option<String>,
}

/// A file the scientist writes (or copies) into the working directory before the command.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    /// Relative to `{work}`.
    path: String,
    /// The file's exact text.
    content: Option<String>,
    /// Or a file to copy (placeholders allowed, e.g. `{datasets}/table.xlsx`).
    copy: Option<String>,
}

fn default_program() -> String {
    "{python}".to_string()
}

fn default_cwd() -> String {
    "{work}".to_string()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNormalize {
    pattern: String,
    replacement: String,
    #[serde(default)]
    artifacts: Vec<String>,
    #[serde(default)]
    stderr: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCancel {
    when_stdout_contains: String,
    #[serde(default)]
    after_s: f64,
}

/// A loaded, validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file stem: `[a-z0-9][a-z0-9_-]*`, no `__` (it names the snapshot).
    pub name: String,
    pub path: PathBuf,
    pub description: String,
    pub adapter: String,
    pub workflow: String,
    pub expect: Expect,
    pub metrics_file: String,
    pub timeout_s: u64,
    /// The MCP request's `dataset`, when the workflow takes one.
    pub dataset: Option<String>,
    /// The MCP request's `inputs`, by input id: paths relative to the adapters directory,
    /// sent as written (the gate copies each file to the same relative path below the
    /// server's start directory).
    pub inputs: BTreeMap<String, InputPaths>,
    /// The MCP request's `parameters` (a JSON object).
    pub parameters: Value,
    pub direct: Direct,
    /// The operating systems it runs on (empty: every one).
    pub platforms: Vec<String>,
    pub tolerance: Tolerances,
    /// Declared comparison modes, by artifact glob, in file order.
    pub compare: Vec<(GlobMatcher, CompareMode)>,
    /// Artifacts the CLI does not reproduce byte for byte within one machine.
    pub nondeterministic: Vec<GlobMatcher>,
    pub normalize: Vec<Normalize>,
    pub cancel: Option<Cancel>,
}

/// The direct command line, with placeholders still in place.
#[derive(Debug, Clone)]
pub struct Direct {
    /// The program (default `{python}`, the runtime's interpreter).
    pub program: String,
    /// Everything after the program.
    pub argv: Vec<String>,
    pub stdin: Vec<String>,
    pub cwd: String,
    pub env: BTreeMap<String, String>,
    /// Files written into `{work}` before the command runs.
    pub files: Vec<DirectFile>,
    /// `{out}`-relative files that receive the command's stdout and stderr.
    pub stdout: Option<String>,
    pub stderr: Option<String>,
}

/// One request input: a single path or a list (an input of kind `files`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputPaths {
    One(String),
    Many(Vec<String>),
}

impl InputPaths {
    /// Every path, in order.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            InputPaths::One(p) => vec![p.as_str()],
            InputPaths::Many(ps) => ps.iter().map(String::as_str).collect(),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            InputPaths::One(p) => Value::String(p.clone()),
            InputPaths::Many(ps) => Value::from(ps.clone()),
        }
    }
}

/// A file of the direct side's working directory.
#[derive(Debug, Clone)]
pub struct DirectFile {
    pub path: String,
    pub source: FileSource,
}

/// Where a [`DirectFile`]'s bytes come from.
#[derive(Debug, Clone)]
pub enum FileSource {
    Content(String),
    Copy(String),
}

/// One declared normalization: `pattern` → `replacement` (regex syntax, `$1` groups).
#[derive(Debug, Clone)]
pub struct Normalize {
    pub pattern: Regex,
    pub replacement: String,
    pub artifacts: Vec<GlobMatcher>,
    pub stderr: bool,
}

/// When to cancel: once stdout shows `when_stdout_contains`, after `after_s` more seconds.
#[derive(Debug, Clone)]
pub struct Cancel {
    pub when_stdout_contains: String,
    pub after_s: f64,
}

impl Scenario {
    /// The MCP request object for `validate_analysis` and `start_analysis`.
    pub fn request(&self) -> Value {
        let mut request = serde_json::json!({
            "workflow": self.workflow,
            "parameters": self.parameters,
        });
        if let Some(dataset) = &self.dataset {
            request["dataset"] = Value::String(dataset.clone());
        }
        if !self.inputs.is_empty() {
            request["inputs"] = self
                .inputs
                .iter()
                .map(|(id, p)| (id.clone(), p.to_json()))
                .collect::<serde_json::Map<_, _>>()
                .into();
        }
        request
    }

    /// How artifact `path` compares with recorded evidence: the first declared glob that
    /// matches it, else what its extension implies.
    pub fn compare_mode(&self, path: &str) -> CompareMode {
        self.compare
            .iter()
            .find(|(glob, _)| glob.is_match(path))
            .map_or_else(|| CompareMode::by_extension(path), |(_, mode)| *mode)
    }

    /// Is artifact `path` one the CLI does not reproduce run to run?
    pub fn is_nondeterministic(&self, path: &str) -> bool {
        self.nondeterministic.iter().any(|g| g.is_match(path))
    }

    /// Does the scenario run on operating system `os` (`std::env::consts::OS`)?
    pub fn runs_on(&self, os: &str) -> bool {
        self.platforms.is_empty() || self.platforms.iter().any(|p| p == os)
    }

    /// Apply every normalization that covers artifact `path` to its text. `None` when no
    /// declared normalization covers it (its raw bytes are compared).
    pub fn normalize_artifact(&self, path: &str, bytes: &[u8]) -> Option<Vec<u8>> {
        let rules: Vec<&Normalize> = self
            .normalize
            .iter()
            .filter(|n| n.artifacts.iter().any(|g| g.is_match(path)))
            .collect();
        if rules.is_empty() {
            return None;
        }
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        for rule in rules {
            text = rule
                .pattern
                .replace_all(&text, rule.replacement.as_str())
                .into_owned();
        }
        Some(text.into_bytes())
    }

    /// Apply every normalization declared for the error line.
    pub fn normalize_stderr(&self, line: &str) -> String {
        let mut text = line.to_string();
        for rule in self.normalize.iter().filter(|n| n.stderr) {
            text = rule
                .pattern
                .replace_all(&text, rule.replacement.as_str())
                .into_owned();
        }
        text
    }
}

/// Is `p` a non-empty relative path of plain components (no root, `.` or `..`)?
fn plain_relative(p: &str) -> bool {
    let rel = Path::new(p);
    !p.is_empty()
        && !rel.is_absolute()
        && !p.starts_with(['/', '\\'])
        && rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// Is `name` usable as a scenario (and snapshot) name?
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && !name.contains("__")
}

/// Load and validate one scenario file.
pub fn load(path: &Path) -> Result<Scenario, Error> {
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !valid_name(&name) {
        return Err(Error::invalid(
            path,
            "file name",
            "must be [a-z0-9][a-z0-9_-]* without `__` (it names the snapshot); rename the file",
        ));
    }
    let text = fs_err::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let raw: RawScenario = toml::from_str(&text).map_err(|e| Error::ScenarioSyntax {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let parameters = serde_json::to_value(&raw.request.parameters)
        .map_err(|e| Error::invalid(path, "request.parameters", e.to_string()))?;
    if raw.direct.argv.is_empty() {
        return Err(Error::invalid(
            path,
            "direct.argv",
            "is empty; write the arguments a scientist types after the interpreter",
        ));
    }
    let mut inputs = BTreeMap::new();
    for (id, input) in &raw.request.inputs {
        let value = match input {
            RawInput::One(p) => InputPaths::One(p.clone()),
            RawInput::Many(ps) => InputPaths::Many(ps.clone()),
        };
        if value.paths().is_empty() {
            return Err(Error::invalid(
                path,
                format!("request.inputs.{id}"),
                "is an empty list: give at least one path",
            ));
        }
        for p in value.paths() {
            if !plain_relative(p) {
                return Err(Error::invalid(
                    path,
                    format!("request.inputs.{id}"),
                    format!(
                        "{p:?} must be a plain relative path below the adapters directory (e.g. \"vina/examples/receptor.pdbqt\"), without `..`"
                    ),
                ));
            }
        }
        inputs.insert(id.clone(), value);
    }
    if raw.request.dataset.is_none() && inputs.is_empty() && raw.request.parameters.is_empty() {
        return Err(Error::invalid(
            path,
            "request",
            "names no dataset, no inputs and no parameters: say what the analysis runs on",
        ));
    }
    for (field, target) in [
        ("direct.stdout", &raw.direct.stdout),
        ("direct.stderr", &raw.direct.stderr),
    ] {
        if let Some(t) = target
            && !plain_relative(t)
        {
            return Err(Error::invalid(
                path,
                field,
                "must be a plain relative path inside {out} (the artifact's path)",
            ));
        }
    }
    if raw.direct.stdout.is_some() && raw.direct.stdout == raw.direct.stderr {
        return Err(Error::invalid(
            path,
            "direct.stderr",
            "names the same file as direct.stdout; give each stream its own file",
        ));
    }
    let fields = [
        ("direct.program", &vec![raw.direct.program.clone()]),
        ("direct.argv", &raw.direct.argv),
        ("direct.stdin", &raw.direct.stdin),
        ("direct.cwd", &vec![raw.direct.cwd.clone()]),
    ];
    for (field, values) in fields {
        for value in values {
            check_placeholders(path, field, value)?;
        }
    }
    let tolerance = tolerances(path, &raw.tolerance)?;
    let mut compare = Vec::new();
    for (glob, mode) in &raw.compare {
        let matcher = Glob::new(glob)
            .map_err(|e| Error::invalid(path, format!("compare.{glob:?}"), e.to_string()))?
            .compile_matcher();
        compare.push((matcher, CompareMode::from(*mode)));
    }
    let nondeterministic = raw
        .nondeterministic
        .iter()
        .map(|g| {
            Glob::new(g)
                .map(|g| g.compile_matcher())
                .map_err(|e| Error::invalid(path, "nondeterministic", e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut files = Vec::new();
    for (i, f) in raw.direct.file.iter().enumerate() {
        let field = format!("direct.file[{i}]");
        let source = match (&f.content, &f.copy) {
            (Some(text), None) => FileSource::Content(text.clone()),
            (None, Some(from)) => {
                check_placeholders(path, &field, from)?;
                FileSource::Copy(from.clone())
            }
            _ => {
                return Err(Error::invalid(
                    path,
                    field,
                    "give exactly one of `content` (the file's text) or `copy` (a file to copy)",
                ));
            }
        };
        if !plain_relative(&f.path) {
            return Err(Error::invalid(
                path,
                format!("direct.file[{i}].path"),
                "must be a plain relative path inside {work}",
            ));
        }
        files.push(DirectFile {
            path: f.path.clone(),
            source,
        });
    }
    for p in &raw.platforms {
        if !PLATFORMS.contains(&p.as_str()) {
            return Err(Error::invalid(
                path,
                "platforms",
                format!("{p:?} is not a platform; use {}", PLATFORMS.join(", ")),
            ));
        }
    }
    let mut normalize = Vec::new();
    for (i, n) in raw.normalize.iter().enumerate() {
        let pattern = Regex::new(&n.pattern)
            .map_err(|e| Error::invalid(path, format!("normalize[{i}].pattern"), e.to_string()))?;
        if n.artifacts.is_empty() && !n.stderr {
            return Err(Error::invalid(
                path,
                format!("normalize[{i}]"),
                "applies to nothing: list `artifacts` globs and/or set `stderr = true`",
            ));
        }
        let artifacts = n
            .artifacts
            .iter()
            .map(|g| {
                Glob::new(g).map(|g| g.compile_matcher()).map_err(|e| {
                    Error::invalid(path, format!("normalize[{i}].artifacts"), e.to_string())
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        normalize.push(Normalize {
            pattern,
            replacement: n.replacement.clone(),
            artifacts,
            stderr: n.stderr,
        });
    }
    let cancel = match (raw.expect, raw.cancel) {
        (Expect::Cancelled, Some(c)) => {
            if !c.after_s.is_finite() || c.after_s < 0.0 || c.when_stdout_contains.is_empty() {
                return Err(Error::invalid(
                    path,
                    "cancel",
                    "needs a non-empty `when_stdout_contains` and a non-negative `after_s`",
                ));
            }
            Some(Cancel {
                when_stdout_contains: c.when_stdout_contains,
                after_s: c.after_s,
            })
        }
        (Expect::Cancelled, None) => {
            return Err(Error::invalid(
                path,
                "cancel",
                "is required with expect = \"cancelled\": say when to cancel",
            ));
        }
        (_, Some(_)) => {
            return Err(Error::invalid(
                path,
                "cancel",
                "is only allowed with expect = \"cancelled\"",
            ));
        }
        (_, None) => None,
    };
    Ok(Scenario {
        name,
        path: path.to_path_buf(),
        description: raw.description,
        adapter: raw.adapter,
        workflow: raw.workflow,
        expect: raw.expect,
        metrics_file: raw.metrics_file,
        timeout_s: raw.timeout_s,
        dataset: raw.request.dataset,
        inputs,
        parameters,
        direct: Direct {
            program: raw.direct.program,
            argv: raw.direct.argv,
            stdin: raw.direct.stdin,
            cwd: raw.direct.cwd,
            env: raw.direct.env,
            files,
            stdout: raw.direct.stdout,
            stderr: raw.direct.stderr,
        },
        platforms: raw.platforms,
        tolerance,
        compare,
        nondeterministic,
        normalize,
        cancel,
    })
}

/// The scenario's tolerances: its default (else [`Tolerance::DEFAULT`]) and per-field
/// overrides, each value finite and non-negative.
fn tolerances(path: &Path, raw: &RawTolerance) -> Result<Tolerances, Error> {
    let check = |field: String, v: Option<f64>, fallback: f64| -> Result<f64, Error> {
        match v {
            Some(v) if !tolerance::valid(v) => Err(Error::invalid(
                path,
                field,
                "must be a finite, non-negative number",
            )),
            Some(v) => Ok(v),
            None => Ok(fallback),
        }
    };
    let default = Tolerance {
        rtol: check("tolerance.rtol".into(), raw.rtol, Tolerance::DEFAULT.rtol)?,
        atol: check("tolerance.atol".into(), raw.atol, Tolerance::DEFAULT.atol)?,
    };
    let mut fields = BTreeMap::new();
    for (name, t) in &raw.fields {
        let at = |k: &str| format!("tolerance.fields.{name:?}.{k}");
        if !(name.starts_with("metrics")
            || name.starts_with("reported")
            || name.starts_with("artifacts["))
        {
            return Err(Error::invalid(
                path,
                format!("tolerance.fields.{name:?}"),
                "names no field: write a field as differences name it, e.g. \"metrics.r2\" or \"artifacts[predictions.csv].prediction\"",
            ));
        }
        fields.insert(
            name.clone(),
            Tolerance {
                rtol: check(at("rtol"), t.rtol, default.rtol)?,
                atol: check(at("atol"), t.atol, default.atol)?,
            },
        );
    }
    Ok(Tolerances { default, fields })
}

/// Refuse `{name}` placeholders outside [`DIRECT_PLACEHOLDERS`], so a typo fails loudly
/// instead of reaching the CLI as literal text.
fn check_placeholders(path: &Path, field: &str, value: &str) -> Result<(), Error> {
    let mut rest = value;
    while let Some(start) = rest.find('{') {
        let after = &rest[start..];
        let Some(end) = after.find('}') else { break };
        let candidate = &after[..=end];
        let inner = &candidate[1..candidate.len() - 1];
        let looks_like_placeholder =
            !inner.is_empty() && inner.chars().all(|c| c.is_ascii_lowercase() || c == '_');
        if looks_like_placeholder && !DIRECT_PLACEHOLDERS.iter().any(|(p, _)| *p == candidate) {
            let known: Vec<&str> = DIRECT_PLACEHOLDERS.iter().map(|(p, _)| *p).collect();
            return Err(Error::invalid(
                path,
                field,
                format!(
                    "uses unknown placeholder {candidate} in {value:?}; known: {}",
                    known.join(", ")
                ),
            ));
        }
        rest = &after[end + 1..];
    }
    Ok(())
}

/// Load every `*.toml` in `dir`, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>, Error> {
    let mut paths = Vec::new();
    for entry in fs_err::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            paths.push(path);
        }
    }
    if paths.is_empty() {
        return Err(Error::NoScenarios {
            dir: dir.to_path_buf(),
        });
    }
    paths.sort();
    paths.iter().map(|p| load(p)).collect()
}

/// Substitute the direct placeholders in `value`.
pub fn expand(value: &str, values: &BTreeMap<&str, String>) -> String {
    let mut out = value.to_string();
    for (key, replacement) in values {
        out = out.replace(key, replacement);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        fs_err::write(&path, text).unwrap();
        path
    }

    const GOOD: &str = r#"
description = "d"
adapter = "refsci"
workflow = "regression"
expect = "succeeded"
[request]
dataset = "data/diabetes.csv"
parameters = { target = "target", params = { alpha = 0.5 } }
[direct]
argv = ["-m", "refsci", "regress", "--data", "{datasets}/diabetes.csv", "--params", "{\"alpha\":0.5}", "--out", "{out}"]
"#;

    #[test]
    fn a_good_scenario_loads_with_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let s = load(&write(dir.path(), "ridge_alpha.toml", GOOD)).unwrap();
        assert_eq!(s.name, "ridge_alpha");
        assert_eq!(s.metrics_file, "metrics.json");
        assert_eq!(s.direct.cwd, "{work}");
        assert_eq!(
            s.request(),
            serde_json::json!({"workflow": "regression", "dataset": "data/diabetes.csv",
                "parameters": {"target": "target", "params": {"alpha": 0.5}}})
        );
    }

    #[test]
    fn unknown_fields_placeholders_and_names_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = load(&write(
            dir.path(),
            "a.toml",
            &format!("{GOOD}\ncolour = \"red\"\n"),
        ))
        .unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
        let e = load(&write(
            dir.path(),
            "b.toml",
            &GOOD.replace("{out}", "{output}"),
        ))
        .unwrap_err();
        assert!(e.to_string().contains("{output}"), "{e}");
        let e = load(&write(dir.path(), "Bad__Name.toml", GOOD)).unwrap_err();
        assert!(e.to_string().contains("file name"), "{e}");
        let e = load(&write(
            dir.path(),
            "c.toml",
            &format!("{GOOD}\n[cancel]\nwhen_stdout_contains = \"x\"\n"),
        ))
        .unwrap_err();
        assert!(e.to_string().contains("only allowed"), "{e}");
    }

    const INPUTS: &str = r#"
description = "d"
adapter = "vina"
workflow = "dock"
expect = "succeeded"
[request]
inputs = { receptor = "vina/examples/receptor.pdbqt", ligands = ["vina/examples/a.pdbqt", "vina/examples/b.pdbqt"] }
parameters = { center_x = 1.5 }
[direct]
program = "vina"
argv = ["--receptor", "inputs/receptor/receptor.pdbqt", "--out", "out/poses.pdbqt"]
stdout = "scores.txt"
[[direct.file]]
path = "inputs/receptor/receptor.pdbqt"
copy = "{adapters}/vina/examples/receptor.pdbqt"
"#;

    #[test]
    fn a_scenario_with_named_inputs_needs_no_dataset_and_keeps_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let s = load(&write(dir.path(), "dock.toml", INPUTS)).unwrap();
        assert_eq!(s.dataset, None);
        assert_eq!(s.direct.stdout.as_deref(), Some("scores.txt"));
        assert_eq!(s.direct.stderr, None);
        assert_eq!(
            s.request(),
            serde_json::json!({"workflow": "dock", "parameters": {"center_x": 1.5},
                "inputs": {"receptor": "vina/examples/receptor.pdbqt",
                           "ligands": ["vina/examples/a.pdbqt", "vina/examples/b.pdbqt"]}})
        );
        assert_eq!(
            s.inputs["ligands"].paths(),
            ["vina/examples/a.pdbqt", "vina/examples/b.pdbqt"]
        );
    }

    #[test]
    fn input_paths_and_stream_files_must_stay_inside_their_directories() {
        let dir = tempfile::tempdir().unwrap();
        for (bad, field) in [
            (
                INPUTS.replace("\"vina/examples/a.pdbqt\"", "\"../secret.pdbqt\""),
                "request.inputs.ligands",
            ),
            (
                INPUTS.replace(
                    "\"vina/examples/receptor.pdbqt\", ligands",
                    "\"/etc/receptor.pdbqt\", ligands",
                ),
                "request.inputs.receptor",
            ),
            (
                INPUTS.replace("stdout = \"scores.txt\"", "stdout = \"../scores.txt\""),
                "direct.stdout",
            ),
            (
                INPUTS.replace(
                    "stdout = \"scores.txt\"",
                    "stdout = \"s.txt\"\nstderr = \"s.txt\"",
                ),
                "direct.stderr",
            ),
            (
                INPUTS.replace(
                    "ligands = [\"vina/examples/a.pdbqt\", \"vina/examples/b.pdbqt\"]",
                    "ligands = []",
                ),
                "request.inputs.ligands",
            ),
        ] {
            assert_ne!(bad, INPUTS, "{field}: the edit did not apply");
            let e = load(&write(dir.path(), "bad.toml", &bad)).unwrap_err();
            assert!(e.to_string().contains(field), "{field}: {e}");
        }
        let e = load(&write(
            dir.path(),
            "typo.toml",
            &INPUTS.replace("{adapters}", "{adapter}"),
        ))
        .unwrap_err();
        assert!(e.to_string().contains("{adapter}"), "{e}");
    }

    #[test]
    fn normalization_applies_only_where_declared() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!(
            "{GOOD}\n[[normalize]]\npattern = '^\\d+'\nreplacement = \"[PID]\"\nartifacts = [\"*.pid\"]\n"
        );
        let s = load(&write(dir.path(), "n.toml", &text)).unwrap();
        assert_eq!(
            s.normalize_artifact("worker.pid", b"4242\n").unwrap(),
            b"[PID]\n"
        );
        assert_eq!(s.normalize_artifact("metrics.json", b"4242"), None);
        assert_eq!(s.normalize_stderr("4242"), "4242");
    }
}
