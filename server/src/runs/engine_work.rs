//! The run's side of an engine plan (a CWL tool): the working directory laid out as the
//! engine asked before the start (staged copies placed at their second names, empty
//! directories), and after the tool exited, its exit status judged by the engine's codes and
//! its output object written where the artifact collector indexes it
//! ([`crate::plan_engine::OUTPUTS_FILE`]).

use std::path::Path;

use scimcp_core::manifest::{ArtifactSpec, CommandEngine, EngineCommand};
use serde_json::Value;

use super::execute::Finish;
use super::state::RunState;
use crate::plan::{Escape, RunPaths};

/// Lay out `work` for `command`: its directories, and each link (a copy of a staged input
/// under the name the tool expects; a copy, not a link, so the tool cannot reach the staged
/// original through it, and a writable entry changes only the copy).
pub(super) fn prepare(work: &Path, command: &EngineCommand) -> std::io::Result<()> {
    if let Some(cwd) = &command.cwd {
        fs_err::create_dir_all(work.join(cwd))?;
    }
    for dir in &command.dirs {
        fs_err::create_dir_all(work.join(in_work(dir)))?;
    }
    for link in &command.links {
        let from = work.join(in_work(&link.from));
        let to = work.join(in_work(&link.to));
        if let Some(parent) = to.parent() {
            fs_err::create_dir_all(parent)?;
        }
        copy_tree(&from, &to)?;
    }
    Ok(())
}

fn in_work(path: &str) -> &str {
    path.strip_prefix("{work_dir}/").unwrap_or(path)
}

/// Copy a file, or a directory with everything in it (no link followed: a symlink inside a
/// staged directory is not copied).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let meta = fs_err::symlink_metadata(from)?;
    if meta.is_dir() {
        fs_err::create_dir_all(to)?;
        for entry in fs_err::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else if meta.is_file() {
        fs_err::copy(from, to).map(|_| ())
    } else {
        Ok(())
    }
}

/// The run's ending as the engine reads it: the exit status against the engine's success
/// codes, then the output object, and the artifacts that makes (each file of the object
/// inside the working directory, so a client reads it with its hash like any artifact). A
/// run whose outputs cannot be read (a required output missing, a file outside the working
/// directory) fails, naming why.
pub(super) fn conclude(
    engine: &dyn CommandEngine,
    command: &EngineCommand,
    work: &Path,
    paths: &RunPaths,
    finish: Finish,
) -> (Finish, Vec<ArtifactSpec>) {
    let mut artifacts = Vec::new();
    let finish = judge(engine, command, work, paths, finish, &mut artifacts);
    (finish, artifacts)
}

fn judge(
    engine: &dyn CommandEngine,
    command: &EngineCommand,
    work: &Path,
    paths: &RunPaths,
    mut finish: Finish,
    artifacts: &mut Vec<ArtifactSpec>,
) -> Finish {
    let code = finish.exit_code;
    let exited = matches!(finish.state, RunState::Succeeded)
        || (finish.state == RunState::Failed && finish.reason == "exit_code");
    let Some(code) = code.filter(|_| exited) else {
        return finish;
    };
    if !crate::plan_engine::is_success(command, code) {
        if finish.state == RunState::Succeeded {
            return Finish {
                state: RunState::Failed,
                reason: "exit_code".into(),
                message: format!(
                    "the scientific CLI exited with status {code}, which the tool does not \
                     count as success; see stderr_tail or get_run_log"
                ),
                ..finish
            };
        }
        return finish;
    }
    // The engine reads the job with the real paths of this run.
    let command = match serde_json::to_string(command)
        .ok()
        .map(|text| paths.substitute(&text, Escape::Json))
        .and_then(|text| serde_json::from_str::<EngineCommand>(&text).ok())
    {
        Some(c) => c,
        None => {
            return Finish::new(
                RunState::Failed,
                "internal",
                "cannot substitute the run's paths into the engine's command",
            );
        }
    };
    match engine.outputs(&command, work, code) {
        Ok(object) => {
            let file = work.join(crate::plan_engine::OUTPUTS_FILE);
            let written = file
                .parent()
                .map_or(Ok(()), fs_err::create_dir_all)
                .and_then(|()| {
                    let mut bytes =
                        serde_json::to_vec_pretty(&object).map_err(std::io::Error::other)?;
                    bytes.push(b'\n');
                    fs_err::write(&file, bytes)
                });
            if let Err(e) = written {
                return Finish::new(
                    RunState::Failed,
                    "internal",
                    &format!("cannot write the tool's output object: {e}"),
                );
            }
            let mut seen = std::collections::BTreeSet::new();
            output_files(&object, work, "", &mut seen, artifacts);
            finish.state = RunState::Succeeded;
            finish.reason = String::new();
            finish.message = String::new();
            finish
        }
        Err(e) => Finish {
            state: RunState::Failed,
            reason: "outputs".into(),
            message: format!("the tool ran, but its outputs are not as it declares: {e}"),
            ..finish
        },
    }
}

/// An artifact for each File in `object` (and in its listings and secondary files) that is
/// inside `work`, named after the output it belongs to.
fn output_files(
    object: &Value,
    work: &Path,
    key: &str,
    seen: &mut std::collections::BTreeSet<String>,
    out: &mut Vec<ArtifactSpec>,
) {
    match object {
        Value::Array(items) => {
            for item in items {
                output_files(item, work, key, seen, out);
            }
        }
        Value::Object(o) => {
            if o.get("class").and_then(Value::as_str) == Some("File")
                && let Some(rel) = o
                    .get("path")
                    .and_then(Value::as_str)
                    .and_then(|p| Path::new(p).strip_prefix(work).ok())
                    .map(|r| r.to_string_lossy().replace('\\', "/"))
                && seen.insert(rel.clone())
                && !rel.contains(['*', '?', '[', '{'])
            {
                let id = artifact_id(key, out.len());
                if let Ok(spec) = serde_json::from_value(serde_json::json!({
                    "id": id,
                    "path": rel,
                    "media_type": super::artifacts::guess_media_type(&rel),
                    "base": "work",
                    "allow_empty": true,
                    // The output object is the authority on what the tool produced; a file
                    // the collector does not index (a symbolic link) is no missing artifact.
                    "required": false,
                })) {
                    out.push(spec);
                }
            }
            for (k, v) in o {
                let key = if key.is_empty() { k.as_str() } else { key };
                output_files(v, work, key, seen, out);
            }
        }
        _ => {}
    }
}

/// `[a-z][a-z0-9_]*` from an output id, made unique by its index.
fn artifact_id(key: &str, index: usize) -> String {
    let mut id: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !id.starts_with(|c: char| c.is_ascii_lowercase()) {
        id = format!("o_{id}");
    }
    format!("{id}_{}", index + 1)
}
