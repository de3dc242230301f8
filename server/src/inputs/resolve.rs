//! Resolving a request's `inputs` against a workflow's `[[workflow.input]]` declarations:
//! shape (one file, a list, a directory), counts, confinement, formats and hashes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use scimcp_core::Workflow;
use scimcp_core::manifest::{InputKind, InputSpec};

use super::reference::{InputRef, InputValue, RequestInputs};
use super::resolved::{ResolvedInput, ResolvedInputFile, input_dir};
use crate::datasets::DatasetCatalog;
use crate::datasets::open::open_confined;
use crate::envelope::{ErrorCode, ToolError};
use crate::plan::{FromRun, OUTPUT_DIR, PlannedInputFile};

/// Bounds that apply to every input file.
#[derive(Debug, Clone, Copy)]
pub struct InputLimits {
    /// Largest file (the adapter's `max_dataset_bytes`).
    pub max_bytes: u64,
    /// Most files in one input (the adapter's `max_artifacts`).
    pub max_files: u32,
}

/// Check `given` against `workflow`'s inputs and resolve each reference to hashed files.
/// Blocking work (opening and hashing) runs off the async workers.
pub async fn resolve_inputs(
    workflow: &Workflow,
    given: &RequestInputs,
    catalog: &DatasetCatalog,
    limits: InputLimits,
) -> Result<Vec<ResolvedInput>, ToolError> {
    check_ids(workflow, given)?;
    let mut jobs = Vec::new();
    for spec in &workflow.inputs {
        let Some(value) = given.get(&spec.id) else {
            if spec.required {
                return Err(ToolError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "workflow '{}' needs input '{}' ({}; formats: {})",
                        workflow.id,
                        spec.id,
                        spec.summary,
                        spec.formats.join(", ")
                    ),
                    format!(
                        "pass inputs: {{\"{}\": \"<path of the file>\"}} (or a run's artifact: {{\"run_id\": …, \"artifact\": …}})",
                        spec.id
                    ),
                )
                .field(format!("inputs.{}", spec.id)));
            }
            continue;
        };
        let refs = check_shape(spec, value, limits)?;
        let located = refs
            .into_iter()
            .map(|r| locate(spec, r, catalog))
            .collect::<Result<Vec<_>, _>>()?;
        jobs.push((spec.clone(), located));
    }
    tokio::task::spawn_blocking(move || {
        jobs.into_iter()
            .map(|(spec, located)| open_input(&spec, located, limits))
            .collect()
    })
    .await
    .map_err(|e| ToolError::internal(format!("checking the inputs panicked: {e}")))?
}

fn field(id: &str) -> String {
    format!("inputs.{id}")
}

/// Every given id is a declared input.
pub(crate) fn check_ids(workflow: &Workflow, given: &RequestInputs) -> Result<(), ToolError> {
    let declared: Vec<&str> = workflow.inputs.iter().map(|i| i.id.as_str()).collect();
    for id in given.keys() {
        if !declared.contains(&id.as_str()) {
            let message = if declared.is_empty() {
                format!(
                    "workflow '{}' takes no named inputs, but '{id}' was given",
                    workflow.id
                )
            } else {
                format!("workflow '{}' has no input '{id}'", workflow.id)
            };
            return Err(ToolError::new(
                ErrorCode::InvalidRequest,
                message,
                "pass only the inputs get_capabilities(workflow=…) lists",
            )
            .field(field(id))
            .allowed(declared.iter().map(|s| s.to_string())));
        }
    }
    Ok(())
}

/// The references of one input, checked against its kind and counts.
fn check_shape(
    spec: &InputSpec,
    value: &InputValue,
    limits: InputLimits,
) -> Result<Vec<InputRef>, ToolError> {
    let refs: Vec<InputRef> = value.refs().into_iter().cloned().collect();
    let refuse = |message: String, next: &str| {
        Err(ToolError::new(ErrorCode::InvalidRequest, message, next).field(field(&spec.id)))
    };
    match (spec.kind, value) {
        (InputKind::File, InputValue::Many(_)) => refuse(
            format!("input '{}' takes one file, not a list", spec.id),
            "pass one reference (a path string, {path, sha256} or {run_id, artifact})",
        ),
        (InputKind::Directory, InputValue::Many(_)) => refuse(
            format!("input '{}' takes one directory, not a list", spec.id),
            "pass the path of the directory, or {run_id, artifact} of an earlier run's artifact",
        ),
        (InputKind::Directory, InputValue::One(InputRef::Hashed(_))) => refuse(
            format!(
                "input '{}' is a directory; a directory has no single sha256 to compare",
                spec.id
            ),
            "pass the directory's path as a string",
        ),
        (InputKind::Files, _) => {
            let n = refs.len() as u32;
            let max = spec.max_count.unwrap_or(limits.max_files);
            if n < spec.min_files() || n > max {
                return refuse(
                    format!(
                        "input '{}' takes {} to {max} files; {n} were given",
                        spec.id,
                        spec.min_files()
                    ),
                    "pass a list with an accepted number of references",
                );
            }
            Ok(refs)
        }
        _ => Ok(refs),
    }
}

/// A reference located on disk (nothing opened yet): its root, its path below it, and what
/// the file must hash to when that is known already.
struct Located {
    reference: String,
    root: PathBuf,
    relative: PathBuf,
    expected_sha256: Option<String>,
    media_type: Option<String>,
    from_run: Option<FromRun>,
}

fn locate(
    spec: &InputSpec,
    r: InputRef,
    catalog: &DatasetCatalog,
) -> Result<Vec<Located>, ToolError> {
    match r {
        InputRef::Path(path) => {
            let (root, relative) = catalog.confined(&path).map_err(|e| as_input(e, &spec.id))?;
            Ok(vec![Located {
                reference: path,
                root,
                relative,
                expected_sha256: None,
                media_type: None,
                from_run: None,
            }])
        }
        InputRef::Hashed(h) => {
            let (root, relative) = catalog
                .confined(&h.path)
                .map_err(|e| as_input(e, &spec.id))?;
            Ok(vec![Located {
                reference: h.path,
                root,
                relative,
                expected_sha256: Some(h.sha256.to_ascii_lowercase()),
                media_type: None,
                from_run: None,
            }])
        }
        InputRef::Run(a) => locate_run_artifact(spec, &a.run_id, &a.artifact, &catalog.runs_dir()),
    }
}

/// The files of artifact `artifact` of run `run_id`, as its published result recorded them.
fn locate_run_artifact(
    spec: &InputSpec,
    run_id: &str,
    artifact: &str,
    runs_dir: &Path,
) -> Result<Vec<Located>, ToolError> {
    let refuse = |code, message: String, next: &str| {
        ToolError::new(code, message, next).field(field(&spec.id))
    };
    let well_formed = run_id.len() == 20
        && run_id.starts_with("run-")
        && run_id[4..].chars().all(|c| c.is_ascii_hexdigit());
    if !well_formed {
        return Err(refuse(
            ErrorCode::UnknownRun,
            format!("input '{}': '{run_id}' is not a run id", spec.id),
            "pass the run_id start_analysis returned (run- and 16 hex digits); list_runs lists them",
        ));
    }
    let runs_dir = fs_err::canonicalize(runs_dir).map_err(|_| {
        refuse(
            ErrorCode::UnknownRun,
            format!(
                "input '{}': this server has no runs yet, so no run '{run_id}'",
                spec.id
            ),
            "list_runs lists the runs whose artifacts can be inputs",
        )
    })?;
    let result_path = runs_dir.join(run_id).join("result.json");
    let bytes = match scimcp_core::fs::read_regular(&result_path, 64 * 1024 * 1024) {
        Ok(Some(b)) => b,
        Ok(None) => {
            return Err(refuse(
                ErrorCode::UnknownRun,
                format!(
                    "input '{}': run '{run_id}' has no result (it does not exist here or has not ended)",
                    spec.id
                ),
                "wait for the run to end (get_run_result), or pick a finished run from list_runs",
            ));
        }
        Err(e) => {
            return Err(refuse(
                ErrorCode::DatasetUnreadable,
                format!(
                    "input '{}': cannot read the result of run '{run_id}': {e}",
                    spec.id
                ),
                "check the run with get_run_result",
            ));
        }
    };
    let result: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        refuse(
            ErrorCode::DatasetUnreadable,
            format!(
                "input '{}': the result of run '{run_id}' is not readable JSON: {e}",
                spec.id
            ),
            "pick another run",
        )
    })?;
    let state = result["state"].as_str().unwrap_or_default();
    if state != "succeeded" {
        return Err(refuse(
            ErrorCode::InvalidRequest,
            format!(
                "input '{}': run '{run_id}' ended {state}, not succeeded; its artifacts are not used as inputs",
                spec.id
            ),
            "pass an artifact of a run that succeeded",
        ));
    }
    let records: Vec<&serde_json::Value> = result["artifacts"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|r| r["id"].as_str() == Some(artifact))
                .collect()
        })
        .unwrap_or_default();
    if records.is_empty() {
        let ids: BTreeSet<String> = result["artifacts"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|r| r["id"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        return Err(refuse(
            ErrorCode::InvalidRequest,
            format!(
                "input '{}': run '{run_id}' recorded no artifact '{artifact}'",
                spec.id
            ),
            "pass one of the run's artifact ids (get_run_result lists them)",
        )
        .allowed(ids));
    }
    if spec.kind == InputKind::File && records.len() > 1 {
        return Err(refuse(
            ErrorCode::InvalidRequest,
            format!(
                "input '{}' takes one file, but artifact '{artifact}' of run '{run_id}' has {} files",
                spec.id,
                records.len()
            ),
            "use an input declared kind = \"files\" or \"directory\" for a multi-file artifact",
        ));
    }
    records
        .into_iter()
        .map(|r| {
            let path = r["path"].as_str().unwrap_or_default().to_string();
            let sha256 = r["sha256"].as_str().unwrap_or_default().to_string();
            // Work-based artifacts are relative to the working directory; every other base
            // (the output directory, saved streams) lies in the output directory.
            let base = match r["base"].as_str() {
                Some("work") => PathBuf::from("work"),
                _ => Path::new("work").join(OUTPUT_DIR),
            };
            Ok(Located {
                reference: format!("{run_id}:{artifact}"),
                root: runs_dir.clone(),
                relative: Path::new(run_id).join(base).join(&path),
                expected_sha256: Some(sha256),
                media_type: r["media_type"].as_str().map(String::from),
                from_run: Some(FromRun {
                    run_id: run_id.to_string(),
                    artifact: artifact.to_string(),
                    path,
                }),
            })
        })
        .collect()
}

/// Open, check and hash every file of one input.
fn open_input(
    spec: &InputSpec,
    located: Vec<Vec<Located>>,
    limits: InputLimits,
) -> Result<ResolvedInput, ToolError> {
    let mut files = Vec::new();
    for group in located {
        for loc in group {
            if spec.kind == InputKind::Directory && loc.from_run.is_none() {
                files.extend(open_directory(spec, &loc, limits)?);
            } else {
                let name = file_name(&loc.relative);
                files.push(open_file(spec, &loc, &loc.relative, name, limits)?);
            }
        }
    }
    if files.is_empty() && spec.kind == InputKind::Directory {
        return Err(ToolError::new(
            ErrorCode::InvalidRequest,
            format!("input '{}': the directory holds no file", spec.id),
            "pass a directory with the files the CLI reads",
        )
        .field(field(&spec.id)));
    }
    if files.len() > limits.max_files as usize {
        return Err(ToolError::new(
            ErrorCode::DatasetTooLarge,
            format!(
                "input '{}' has {} files, above this adapter's limit of {}",
                spec.id,
                files.len(),
                limits.max_files
            ),
            "pass fewer files",
        )
        .field(field(&spec.id)));
    }
    let mut seen = BTreeSet::new();
    for f in &files {
        if !seen.insert(f.planned.run_path.clone()) {
            return Err(ToolError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "input '{}': two files would both be copied to {} (same file name)",
                    spec.id, f.planned.run_path
                ),
                "pass files with different names (copy or rename one)",
            )
            .field(field(&spec.id)));
        }
    }
    Ok(ResolvedInput {
        id: spec.id.clone(),
        kind: spec.kind,
        files,
    })
}

fn file_name(rel: &Path) -> String {
    rel.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// One file: its format accepted, opened confined, hashed, compared with the expected hash.
fn open_file(
    spec: &InputSpec,
    loc: &Located,
    relative: &Path,
    run_name: String,
    limits: InputLimits,
) -> Result<ResolvedInputFile, ToolError> {
    let name = file_name(relative);
    if let Some(problem) = name_problem(&run_name) {
        return Err(ToolError::new(
            ErrorCode::DatasetNotRegular,
            format!(
                "input '{}': file '{}' has {problem} in its name",
                spec.id,
                run_name.escape_debug()
            ),
            "rename the file",
        )
        .field(field(&spec.id)));
    }
    // An artifact's recorded media type, else the ones its extension goes by (the file-kind
    // table `inspect_dataset` uses, so an input accepts what the listing says it accepts).
    let accepted = match &loc.media_type {
        Some(m) => spec.accepts(&name, Some(m)),
        None => {
            let known = crate::datasets::kinds::media_types(&name);
            spec.accepts(&name, None) || known.iter().any(|m| spec.accepts(&name, Some(m)))
        }
    };
    if !accepted {
        return Err(ToolError::new(
            ErrorCode::InvalidRequest,
            format!(
                "input '{}': file '{name}' ({}) is not an accepted format; input '{}' accepts {}",
                spec.id,
                loc.reference,
                spec.id,
                spec.formats.join(", ")
            ),
            format!(
                "pass a file of one of the formats {}",
                spec.formats.join(", ")
            ),
        )
        .field(field(&spec.id))
        .allowed(spec.formats.iter().cloned()));
    }
    let reference = if relative == loc.relative {
        loc.reference.clone()
    } else {
        format!(
            "{}/{}",
            loc.reference.trim_end_matches('/'),
            relative
                .strip_prefix(&loc.relative)
                .unwrap_or(relative)
                .to_string_lossy()
        )
    };
    let mut opened = open_confined(&loc.root, relative, &reference, limits.max_bytes)
        .map_err(|e| as_input(e, &spec.id))?;
    let (sha256, size) = opened
        .sha256(&reference, limits.max_bytes)
        .map_err(|e| as_input(e, &spec.id))?;
    if let Some(expected) = &loc.expected_sha256
        && *expected != sha256
    {
        let message = match &loc.from_run {
            Some(run) => format!(
                "input '{}': artifact '{}' of run '{}' ({}) no longer has the sha256 its result recorded ({expected}); it is now {sha256}",
                spec.id, run.artifact, run.run_id, run.path
            ),
            None => format!(
                "input '{}': file '{reference}' has sha256 {sha256}, not the expected {expected}",
                spec.id
            ),
        };
        return Err(ToolError::new(
            ErrorCode::DatasetChanged,
            message,
            "check that this is the intended file; re-run the producing run, or drop the expected sha256",
        )
        .field(field(&spec.id)));
    }
    Ok(ResolvedInputFile {
        planned: PlannedInputFile {
            reference,
            run_path: format!("{}/{run_name}", input_dir(&spec.id)),
            sha256,
            size_bytes: size,
            from_run: loc.from_run.clone(),
        },
        path: loc.root.join(relative),
        root: loc.root.clone(),
        relative: relative.to_path_buf(),
    })
}

/// Every file below a directory input (links and special files refused), each opened
/// confined from the root again, so nothing read escapes it.
fn open_directory(
    spec: &InputSpec,
    loc: &Located,
    limits: InputLimits,
) -> Result<Vec<ResolvedInputFile>, ToolError> {
    let refuse = |code, message: String, next: &str| {
        ToolError::new(code, message, next).field(field(&spec.id))
    };
    let top = loc.root.join(&loc.relative);
    match fs_err::symlink_metadata(&top) {
        Ok(m) if m.is_dir() => {}
        Ok(m) if m.file_type().is_symlink() => {
            return Err(refuse(
                ErrorCode::DatasetOutsideRoots,
                format!(
                    "input '{}': '{}' is a symbolic link; links inside data directories are not followed",
                    spec.id, loc.reference
                ),
                "pass the directory's real location",
            ));
        }
        Ok(_) => {
            return Err(refuse(
                ErrorCode::DatasetNotRegular,
                format!(
                    "input '{}' is a directory input, but '{}' is not a directory",
                    spec.id, loc.reference
                ),
                "pass the path of a directory",
            ));
        }
        Err(_) => {
            return Err(refuse(
                ErrorCode::DatasetNotFound,
                format!("input '{}': no directory at '{}'", spec.id, loc.reference),
                "check the path (list_datasets lists the allowed directories' files)",
            ));
        }
    }
    let mut files = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(sub) = stack.pop() {
        let mut entries: Vec<_> = fs_err::read_dir(top.join(&sub))
            .map_err(|e| {
                refuse(
                    ErrorCode::DatasetUnreadable,
                    format!("input '{}': cannot list '{}': {e}", spec.id, loc.reference),
                    "check the directory's permissions",
                )
            })?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let rel = sub.join(entry.file_name());
            let kind = entry.file_type().map_err(|e| {
                refuse(
                    ErrorCode::DatasetUnreadable,
                    format!("input '{}': {e}", spec.id),
                    "check the directory",
                )
            })?;
            if kind.is_dir() {
                stack.push(rel);
                continue;
            }
            if files.len() >= limits.max_files as usize {
                return Err(refuse(
                    ErrorCode::DatasetTooLarge,
                    format!(
                        "input '{}': directory '{}' holds more than {} files, this adapter's limit",
                        spec.id, loc.reference, limits.max_files
                    ),
                    "pass a directory with fewer files",
                ));
            }
            // Links and special files are refused by the confined open itself.
            let run_name = rel.to_string_lossy().replace('\\', "/");
            files.push(open_file(
                spec,
                loc,
                &loc.relative.join(&rel),
                run_name,
                limits,
            )?);
        }
    }
    files.sort_by(|a, b| a.planned.run_path.cmp(&b.planned.run_path));
    Ok(files)
}

/// Why a copy's name cannot be written into the plan, as for a dataset's: a control
/// character would change the shape of what the CLI reads (a stdin line, a text file), and a
/// run-path token would be replaced when the run starts.
fn name_problem(name: &str) -> Option<String> {
    if name.chars().any(char::is_control) {
        return Some("a control character (a line break, a tab, NUL…)".into());
    }
    scimcp_core::manifest::ABSOLUTE_RUN_VALUES
        .iter()
        .map(|v| format!("{{{v}}}"))
        .find(|t| name.contains(t.as_str()))
}

/// A dataset refusal, re-worded for an input: the field and the text name the input.
fn as_input(mut e: ToolError, id: &str) -> ToolError {
    let text = e.message.replacen("dataset", "file", 1);
    e.message = format!("input '{id}': {text}");
    e.field(field(id))
}
