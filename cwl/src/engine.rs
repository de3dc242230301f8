//! The per-job CWL engine: a CommandLineTool served as an adapter whose one workflow's
//! command is built for each request by CWL's own rules ([`crate::command`]) from the job the
//! request carries ([`crate::inputs`]), and whose outputs are read by CWL's output rules
//! ([`crate::collect`]). The manifest generated here says what the server offers (the
//! parameter schema, the program, the limits and the sandbox); [`CwlEngine`] implements
//! [`CommandEngine`] for the rest.
//!
//! A request's parameters are the CWL job with each input id made a parameter name (see
//! [`ParamNames`]); a File or Directory is `{"class": "File", "path": …}` (or `location`).
//! Every file the job names is staged by the server (confined, copied, hashed), and the
//! command names only the copies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use scimcp_core::manifest::{
    Adapter, CommandEngine, EngineCommand, EngineError, EngineLink, InputKind, RUN_VALUES,
    StageGroup, StagedGroup,
};
use serde_json::{Map, Value, json};

use crate::CwlError;
use crate::command::{self, WorkdirEntry};
use crate::expr::Expressions;

/// The one workflow a CWL tool becomes.
pub const WORKFLOW_ID: &str = "run";

/// CWL's output directory, the tool's working directory: below the run's working
/// directory, apart from the staged inputs and the server's own directories (a glob of `*`
/// must find only what the tool wrote).
pub const OUTDIR: &str = "out";
/// Where a run's CWL temporary directory is, in its working directory (one the server
/// creates for every run, outside the output directory).
const TMPDIR: &str = "{work_dir}/tmp";
/// Where File and Directory literals of a job are written in the working directory.
const LITERALS: &str = "literals";

/// What the operator allows a CWL tool beyond the defaults.
#[derive(Debug, Clone, Copy, Default)]
pub struct EngineOptions {
    /// Run `ShellCommandRequirement` tools through `/bin/sh -c` (shown in every plan).
    pub allow_shell: bool,
    /// Serve tools that require a container (`DockerRequirement` under `requirements`) from
    /// PATH instead, as cwltool's `--no-container` does; every plan says so.
    pub no_container: bool,
}

/// A CWL input id and the parameter name a manifest allows for it.
#[derive(Debug, Clone)]
pub struct ParamNames {
    /// (parameter name, CWL input id), in the tool's order.
    pub pairs: Vec<(String, String)>,
}

impl ParamNames {
    fn of(tool: &Value) -> ParamNames {
        let mut taken = std::collections::BTreeSet::new();
        let pairs = tool
            .get("inputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|i| i.get("id").and_then(Value::as_str))
            .map(|id| (sanitize(id, &mut taken), id.to_string()))
            .collect();
        ParamNames { pairs }
    }

    /// The CWL job for a request's parameters.
    pub fn job(&self, params: &Map<String, Value>) -> Map<String, Value> {
        self.pairs
            .iter()
            .filter_map(|(p, id)| params.get(p).map(|v| (id.clone(), v.clone())))
            .collect()
    }

    /// The request's parameters for a CWL job.
    pub fn params(&self, job: &Map<String, Value>) -> Map<String, Value> {
        self.pairs
            .iter()
            .filter_map(|(p, id)| job.get(id).map(|v| (p.clone(), v.clone())))
            .collect()
    }
}

/// A loaded CWL tool and its engine.
#[derive(Debug)]
pub struct CwlEngine {
    /// The tool in canonical form ([`crate::norm`]).
    pub tool: Value,
    pub path: PathBuf,
    pub dir: PathBuf,
    pub namespaces: BTreeMap<String, String>,
    pub names: ParamNames,
    inline_js: bool,
    lib: Vec<String>,
    /// The programs a command may start with (the manifest's, resolved and hashed at start).
    programs: crate::program::Programs,
    shell: bool,
    /// What the operator's options changed about how the tool runs, shown in every plan.
    plan_notes: Vec<String>,
    /// `--cwl-no-container`: a job's DockerRequirement is served from PATH too.
    no_container: bool,
    /// The files the tool's own InitialWorkDir listing names literally (canonical paths).
    fixed_sources: Vec<PathBuf>,
    fingerprint: String,
}

/// The tool one request's job runs with: the served tool with the job's `cwl:requirements`
/// over its own ([`crate::job_requirements`]), and the expressions that follow from it.
struct ForJob {
    tool: Value,
    exprs: Expressions,
    /// The job's requirements as checked, recorded in the plan (and so in its hash).
    requirements: Vec<Value>,
}

impl ForJob {
    fn job_sets(&self, class: &str) -> bool {
        self.requirements
            .iter()
            .any(|r| r.get("class").and_then(Value::as_str) == Some(class))
    }
}

/// A job's own InitialWorkDirRequirement may place only files the server staged for this
/// run: a path it names itself (or an expression makes up) is no confined input, and its
/// copy would bring a file from outside the data directories into the run.
fn job_workdir_is_staged(links: &[EngineLink]) -> Result<(), EngineError> {
    match links.iter().find(|l| !l.from.starts_with("{work_dir}/")) {
        None => Ok(()),
        Some(l) => Err(EngineError::new(
            format!(
                "`{}` InitialWorkDirRequirement places `{}`, which is not a file of this job's inputs",
                crate::job_requirements::JOB_FIELD,
                l.from
            ),
            "give the file as an input of the job and place it with $(inputs.<id>)",
        )
        .field(format!("parameters.{}", crate::job_requirements::PARAM))),
    }
}

impl CwlEngine {
    fn for_job(&self, params: &Map<String, Value>) -> Result<ForJob, EngineError> {
        use crate::job_requirements as jr;
        let served = jr::Served {
            shell: self.shell,
            no_container: self.no_container,
        };
        let requirements = jr::read(params, &self.tool, served)
            .map_err(|r| EngineError::new(r.message, r.hint).field(r.field))?;
        Ok(self.with_requirements(requirements))
    }

    /// What the plan says the operator's options changed: the tool's, then the job's
    /// container requirements served from PATH.
    fn notes(&self, j: &ForJob) -> Vec<String> {
        let mut notes = self.plan_notes.clone();
        for (i, req) in j.requirements.iter().enumerate() {
            if req.get("class").and_then(Value::as_str) == Some("DockerRequirement") {
                let at = format!(
                    "{}[{i}].DockerRequirement",
                    crate::job_requirements::JOB_FIELD
                );
                notes.push(crate::job_requirements::container_note(&at, req));
            }
        }
        notes
    }

    fn with_requirements(&self, requirements: Vec<Value>) -> ForJob {
        use crate::job_requirements as jr;
        let (js, lib) = jr::javascript(&requirements, self.inline_js, &self.lib);
        ForJob {
            tool: jr::effective_tool(&self.tool, &requirements),
            exprs: Expressions::new(js, lib),
            requirements,
        }
    }

    /// The job of `params`, filled: defaults, types, File and Directory objects completed,
    /// literals written below `scratch`.
    fn fill(
        &self,
        params: &Map<String, Value>,
        scratch: &Path,
        j: &ForJob,
    ) -> Result<Value, EngineError> {
        let base = std::env::current_dir().unwrap_or_default();
        crate::inputs::fill(
            &j.tool,
            &self.names.job(params),
            &base,
            &self.dir,
            scratch,
            &self.namespaces,
            &j.exprs,
        )
        .map_err(refusal)
    }
}

fn refusal(e: CwlError) -> EngineError {
    EngineError::new(
        e.to_string(),
        "fix the job's value as the tool's CWL description says (get_capabilities shows the schema)",
    )
}

fn scratch() -> Result<tempfile::TempDir, EngineError> {
    tempfile::Builder::new()
        .prefix("scimcp-cwl-")
        .tempdir()
        .map_err(|e| {
            EngineError::new(
                format!("cannot make a scratch directory: {e}"),
                "check TMPDIR",
            )
        })
}

/// How the files of a filled job are staged: one group per top-level File (with its
/// secondary files, which CWL requires beside it) or Directory; literals (under `scratch`)
/// and the entries an ordinary Directory holds are not staged on their own.
struct Plan {
    /// (pointer, source path, group index, literal)
    entries: Vec<Entry>,
    groups: Vec<StageGroup>,
}

struct Entry {
    pointer: String,
    path: PathBuf,
    /// The group and the file's place in it; `None` for a literal.
    staged: Option<(usize, usize)>,
}

fn plan_staging(job: &Value, scratch: &Path) -> Plan {
    let mut entries = Vec::new();
    let mut groups: Vec<StageGroup> = Vec::new();
    let mut by_pointer: BTreeMap<String, usize> = BTreeMap::new();
    for (pointer, path) in crate::inputs::files(job) {
        if path.starts_with(scratch) {
            entries.push(Entry {
                pointer,
                path,
                staged: None,
            });
            continue;
        }
        let is_dir = job
            .pointer(&pointer)
            .and_then(|o| o.get("class"))
            .and_then(Value::as_str)
            == Some("Directory");
        let primary = pointer
            .rsplit_once('/')
            .and_then(|(parent, _)| parent.strip_suffix("/secondaryFiles"))
            .and_then(|p| by_pointer.get(p).copied());
        let staged = match primary {
            Some(g) if !is_dir && groups[g].kind == InputKind::Files => {
                groups[g].paths.push(path.display().to_string());
                (g, groups[g].paths.len() - 1)
            }
            _ => {
                let id = format!("f{}", groups.len() + 1);
                groups.push(StageGroup {
                    id,
                    kind: if is_dir {
                        InputKind::Directory
                    } else {
                        InputKind::Files
                    },
                    paths: vec![path.display().to_string()],
                });
                (groups.len() - 1, 0)
            }
        };
        by_pointer.insert(pointer.clone(), staged.0);
        entries.push(Entry {
            pointer,
            path,
            staged: Some(staged),
        });
    }
    Plan { entries, groups }
}

impl CommandEngine for CwlEngine {
    fn name(&self) -> &'static str {
        "cwl"
    }

    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn fixed_sources(&self) -> &[PathBuf] {
        &self.fixed_sources
    }

    fn stage(&self, params: &Map<String, Value>) -> Result<Vec<StageGroup>, EngineError> {
        let scratch = scratch()?;
        let j = self.for_job(params)?;
        let job = self.fill(params, scratch.path(), &j)?;
        Ok(plan_staging(&job, scratch.path()).groups)
    }

    fn command(
        &self,
        params: &Map<String, Value>,
        staged: &[StagedGroup],
    ) -> Result<EngineCommand, EngineError> {
        let scratch = scratch()?;
        let j = self.for_job(params)?;
        let mut job = self.fill(params, scratch.path(), &j)?;
        let plan = plan_staging(&job, scratch.path());
        let mut files = Vec::new();
        let mut dirs = Vec::new();
        let mut links = Vec::new();
        let renamed = renamed_groups(&plan, &job, staged);
        for e in &plan.entries {
            let basename = job
                .pointer(&e.pointer)
                .and_then(|o| o.get("basename"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let natural = match e.staged {
                Some((g, i)) => {
                    let group = staged.get(g).ok_or_else(|| {
                        EngineError::new("the staged inputs do not match the job", "validate again")
                    })?;
                    match (&group.dir, group.files.get(i)) {
                        (Some(dir), _) => format!("{{work_dir}}/{dir}"),
                        (None, Some((_, run_path))) => format!("{{work_dir}}/{run_path}"),
                        (None, None) => {
                            return Err(EngineError::new(
                                "a staged input has fewer files than the job names",
                                "validate again",
                            ));
                        }
                    }
                }
                None => {
                    // A literal: written into the run from what fill wrote below scratch.
                    let rel = e.path.strip_prefix(scratch.path()).unwrap_or(&e.path);
                    let to = format!("{LITERALS}/{}", rel.display());
                    literal_files(&e.path, &to, &mut files, &mut dirs)?;
                    format!("{{work_dir}}/{to}")
                }
            };
            // Where CWL wants it: a secondary file beside its primary, a listing entry inside
            // its Directory, and every file under its own basename (a job may name it
            // differently from its source). A copy there when the staged one is elsewhere.
            let to = match (crate::inputs::staged_parent(&job, &e.pointer), &basename) {
                (Some(dir), Some(name)) => format!("{}/{name}", dir.display()),
                (None, Some(name))
                    if e.staged.is_some_and(|(g, _)| renamed.contains(&g))
                        || (e.staged.is_some() && !natural.ends_with(&format!("/{name}"))) =>
                {
                    // Below the group's own directory, so two groups never collide.
                    match e
                        .staged
                        .and_then(|(g, _)| staged.get(g))
                        .and_then(|g| g.dir.as_ref())
                    {
                        Some(_) => format!("{natural}.named/{name}"),
                        None => match natural.rsplit_once('/') {
                            Some((dir, _)) => format!("{dir}/named/{name}"),
                            None => natural.clone(),
                        },
                    }
                }
                _ => natural.clone(),
            };
            if to != natural {
                links.push(EngineLink {
                    from: natural.clone(),
                    to: to.clone(),
                    writable: false,
                });
            }
            if let Some(obj) = job.pointer_mut(&e.pointer) {
                crate::inputs::relocate(obj, Path::new(&to));
            }
        }
        let job = unescape_run_paths(job);
        let runtime = self.runtime(&j, &job)?;
        let cl = command::build(&j.tool, &job, &runtime, &j.exprs).map_err(refusal)?;
        let mut argv = cl.argv.clone();
        let args = if self.shell {
            vec!["-c".to_string(), argv.join(" ")]
        } else {
            if argv.is_empty() || !self.programs.contains(&argv[0]) {
                let mut known = vec![self.programs.first.as_str()];
                known.extend(self.programs.others.iter().map(String::as_str));
                return Err(EngineError::new(
                    format!(
                        "the command line starts with `{}`, which is not a program this tool was loaded with ({})",
                        argv.first().map(String::as_str).unwrap_or(""),
                        known.join(", ")
                    ),
                    "give values for which the tool's command starts with one of those programs; only programs resolved and hashed when the server started are run",
                ));
            }
            argv.remove(0);
            argv
        };
        let program = if self.shell {
            self.programs.first.clone()
        } else {
            cl.argv[0].clone()
        };
        let before = links.len();
        for entry in &cl.workdir {
            workdir_entry(entry, OUTDIR, &mut files, &mut dirs, &mut links);
        }
        if j.job_sets("InitialWorkDirRequirement") {
            job_workdir_is_staged(&links[before..])?;
        }
        // CWL's runtime environment: HOME is the output directory, TMPDIR the temporary one;
        // the tool's EnvVarRequirement comes after.
        let mut env = BTreeMap::from([
            ("HOME".to_string(), format!("{{work_dir}}/{OUTDIR}")),
            ("TMPDIR".to_string(), TMPDIR.to_string()),
        ]);
        env.extend(cl.env.clone());
        Ok(EngineCommand {
            program,
            args,
            cwd: Some(OUTDIR.to_string()),
            stdin_file: cl.stdin.clone(),
            stdout_file: cl.stdout.clone(),
            stderr_file: cl.stderr.clone(),
            env,
            files,
            links,
            dirs,
            // ToolTimeLimit 0 means no limit: the manifest's own applies.
            timeout_s: cl.time_limit_s.filter(|t| *t > 0),
            success_codes: if cl.success_codes.is_empty() {
                vec![0]
            } else {
                cl.success_codes.clone()
            },
            notes: self.notes(&j),
            job: {
                let mut record = json!({
                    "job": job,
                    "runtime": runtime,
                    "stdout": cl.stdout,
                    "stderr": cl.stderr,
                });
                // Only when the job has some, so other plans (and their hashes) stay as they were.
                if !j.requirements.is_empty() {
                    record["requirements"] = Value::Array(j.requirements.clone());
                }
                record
            },
        })
    }

    fn outputs(
        &self,
        command: &EngineCommand,
        work_dir: &Path,
        exit_code: i32,
    ) -> Result<Value, EngineError> {
        let job = &command.job["job"];
        let mut runtime = command.job["runtime"].clone();
        runtime["exitCode"] = json!(exit_code);
        let streams = crate::collect::Streams {
            stdout: command.job["stdout"].as_str(),
            stderr: command.job["stderr"].as_str(),
        };
        // The job's requirements as the plan recorded them (checked when it was made).
        let requirements = command.job["requirements"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let j = self.with_requirements(requirements);
        crate::collect::collect(
            &j.tool,
            job,
            &runtime,
            &work_dir.join(OUTDIR),
            &self.namespaces,
            &j.exprs,
            streams,
        )
        .map_err(|e| EngineError::new(e.to_string(), "see the tool's stderr (get_run_log)"))
    }
}

impl CwlEngine {
    /// CWL's `runtime` for a job: the run's directories (symbolic until the run) and the
    /// resources the tool (with the job's requirements) asks for (at least 1 core and 1 MiB;
    /// what it would get here).
    fn runtime(&self, j: &ForJob, job: &Value) -> Result<Value, EngineError> {
        // CWL v1.2's defaults: coresMin 1, ramMin 256 MiB, tmpdirMin and outdirMin 1024 MiB.
        let mut runtime = json!({
            "outdir": format!("{{work_dir}}/{OUTDIR}"),
            "tmpdir": TMPDIR,
            "cores": 1,
            "ram": 256,
            "outdirSize": 1024,
            "tmpdirSize": 1024,
        });
        for (what, key) in [
            ("cores", "cores"),
            ("ram", "ram"),
            ("tmpdir", "tmpdirSize"),
            ("outdir", "outdirSize"),
        ] {
            let base = runtime.clone();
            if let Some(v) = resource(&j.tool, job, &base, &j.exprs, what)? {
                runtime[key] = json!(v.ceil().max(1.0) as u64);
            }
        }
        Ok(runtime)
    }
}

/// A ResourceRequirement's `<what>Min` (else `<what>Max`), a number or an expression over
/// the job, from `requirements` before `hints`.
fn resource(
    tool: &Value,
    job: &Value,
    runtime: &Value,
    exprs: &Expressions,
    what: &str,
) -> Result<Option<f64>, EngineError> {
    for list in ["requirements", "hints"] {
        let Some(req) = tool
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|r| r.get("class").and_then(Value::as_str) == Some("ResourceRequirement"))
        else {
            continue;
        };
        for key in [format!("{what}Min"), format!("{what}Max")] {
            let value = match req.get(&key) {
                None | Some(Value::Null) => continue,
                Some(Value::String(text)) => {
                    let ctx = crate::expr::Context {
                        inputs: job,
                        self_: &Value::Null,
                        runtime,
                    };
                    exprs.eval(text, &ctx).map_err(|e| {
                        EngineError::new(
                            format!("{list}.ResourceRequirement.{key}: {e}"),
                            "fix the tool's expression",
                        )
                    })?
                }
                Some(v) => v.clone(),
            };
            return Ok(value.as_f64());
        }
    }
    Ok(None)
}

/// The File groups with a secondary file the job names differently from its source: the
/// primary then moves to a directory of its own too, so the secondaries' directory (the
/// primary's `dirname`) holds each file once, under its CWL name.
fn renamed_groups(
    plan: &Plan,
    job: &Value,
    staged: &[StagedGroup],
) -> std::collections::BTreeSet<usize> {
    plan.entries
        .iter()
        .filter_map(|e| {
            let (g, i) = e.staged?;
            let group = staged.get(g)?;
            if i == 0 || group.kind != InputKind::Files {
                return None;
            }
            let name = job.pointer(&e.pointer)?.get("basename")?.as_str()?;
            let copy = group.files.get(i)?.1.as_str();
            (!copy.ends_with(&format!("/{name}")) && copy != name).then_some(g)
        })
        .collect()
}

/// `file://%7Bwork_dir%7D/…` (a URI made from a symbolic path) back to `{work_dir}`, so the
/// run substitutes it like every other run path.
fn unescape_run_paths(job: Value) -> Value {
    let text = job.to_string().replace("%7Bwork_dir%7D", "{work_dir}");
    serde_json::from_str(&text).unwrap_or(job)
}

/// A literal File or Directory that fill wrote at `path`, as text files and directories to
/// make at `to` in the working directory.
fn literal_files(
    path: &Path,
    to: &str,
    files: &mut Vec<(String, String)>,
    dirs: &mut Vec<String>,
) -> Result<(), EngineError> {
    let fail = |e: std::io::Error| {
        EngineError::new(
            format!("cannot read a literal the job gives: {e}"),
            "give the literal's contents as text",
        )
    };
    let meta = fs_err::symlink_metadata(path).map_err(fail)?;
    if meta.is_dir() {
        dirs.push(to.to_string());
        for entry in fs_err::read_dir(path).map_err(fail)? {
            let entry = entry.map_err(fail)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            literal_files(&entry.path(), &format!("{to}/{name}"), files, dirs)?;
        }
    } else {
        let content = fs_err::read_to_string(path).map_err(fail)?;
        files.push((to.to_string(), content));
    }
    Ok(())
}

/// One InitialWorkDir entry as files, directories and links in the working directory.
fn workdir_entry(
    entry: &WorkdirEntry,
    parent: &str,
    files: &mut Vec<(String, String)>,
    dirs: &mut Vec<String>,
    links: &mut Vec<EngineLink>,
) {
    let at = |name: &str| {
        // An absolute name (`$(runtime.outdir)/x`) is already relative to the run's
        // working directory once its prefix goes.
        if let Some(rest) = name.strip_prefix("{work_dir}/") {
            return rest.to_string();
        }
        if parent.is_empty() {
            name.to_string()
        } else {
            format!("{parent}/{name}")
        }
    };
    match entry {
        WorkdirEntry::Text { name, contents, .. } => files.push((at(name), contents.clone())),
        WorkdirEntry::File {
            name,
            source,
            writable,
        } => links.push(EngineLink {
            from: source.clone(),
            to: at(name),
            writable: *writable,
        }),
        WorkdirEntry::Directory {
            name,
            source,
            listing,
            writable,
        } => {
            let here = at(name);
            match source {
                Some(source) => links.push(EngineLink {
                    from: source.clone(),
                    to: here.clone(),
                    writable: *writable,
                }),
                None => dirs.push(here.clone()),
            }
            for child in listing {
                workdir_entry(child, &here, files, dirs, links);
            }
        }
    }
}

/// Load the CWL tool at `path` as an adapter whose commands the engine builds.
pub fn load_engine(
    path: &Path,
    options: EngineOptions,
) -> Result<(Adapter, Arc<CwlEngine>), CwlError> {
    let tool = crate::norm::load(path)?;
    crate::engine_manifest::adapter(path, tool, options)
}

pub(crate) struct Parts {
    pub tool: Value,
    pub path: PathBuf,
    pub namespaces: BTreeMap<String, String>,
    pub names: ParamNames,
    pub inline_js: bool,
    pub lib: Vec<String>,
    pub programs: crate::program::Programs,
    pub shell: bool,
    pub plan_notes: Vec<String>,
    pub no_container: bool,
}

/// The File and Directory objects written literally in the tool's InitialWorkDir listing
/// (not made by an expression), by their canonical paths: the operator's own files, which a
/// command may copy into the working directory although no request staged them.
fn literal_sources(tool: &Value, dir: &Path) -> Vec<PathBuf> {
    fn walk(v: &Value, dir: &Path, out: &mut Vec<PathBuf>) {
        if let Some(items) = v.as_array() {
            for item in items {
                walk(item, dir, out);
            }
            return;
        }
        let Some(o) = v.as_object() else { return };
        if matches!(
            o.get("class").and_then(Value::as_str),
            Some("File" | "Directory")
        ) {
            let at = o
                .get("path")
                .or_else(|| o.get("location"))
                .and_then(Value::as_str)
                .filter(|s| !crate::expr::has_expression(s));
            if let Some(at) = at {
                let p = crate::job::location_path(at, dir);
                if let Ok(c) = fs_err::canonicalize(&p) {
                    out.push(c);
                }
            }
        }
        for key in ["listing", "secondaryFiles"] {
            for child in o.get(key).and_then(Value::as_array).into_iter().flatten() {
                walk(child, dir, out);
            }
        }
    }
    let mut out = Vec::new();
    for req in tool
        .get("requirements")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|r| r.get("class").and_then(Value::as_str) == Some("InitialWorkDirRequirement"))
    {
        for item in req
            .get("listing")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            walk(item, dir, &mut out);
        }
    }
    out
}

pub(crate) fn engine_of(p: Parts) -> CwlEngine {
    let fixed_sources = literal_sources(&p.tool, p.path.parent().unwrap_or(Path::new(".")));
    let fingerprint =
        scimcp_core::hash::sha256_hex(scimcp_core::hash::canonical_json(&p.tool).as_bytes());
    CwlEngine {
        dir: p.path.parent().map(Path::to_path_buf).unwrap_or_default(),
        tool: p.tool,
        path: p.path,
        namespaces: p.namespaces,
        names: p.names,
        inline_js: p.inline_js,
        lib: p.lib,
        programs: p.programs,
        shell: p.shell,
        plan_notes: p.plan_notes,
        no_container: p.no_container,
        fixed_sources,
        fingerprint,
    }
}

pub(crate) fn param_names(tool: &Value) -> ParamNames {
    ParamNames::of(tool)
}

/// Names a manifest accepts: `[a-z_][a-z0-9_]*` for parameters, `[a-z][a-z0-9_]*` for ids.
pub(crate) fn sanitize(id: &str, taken: &mut std::collections::BTreeSet<String>) -> String {
    let short = id.rsplit(['#', '/']).next().unwrap_or(id);
    let mut s: String = short
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        s = format!("p_{s}");
    }
    if RUN_VALUES.contains(&s.as_str())
        || ["options", "null", "input", crate::job_requirements::PARAM].contains(&s.as_str())
    {
        s = format!("cwl_{s}");
    }
    s.truncate(60);
    let mut candidate = s.clone();
    let mut n = 2;
    while !taken.insert(candidate.clone()) {
        candidate = format!("{s}_{n}");
        n += 1;
    }
    candidate
}
