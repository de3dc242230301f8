//! The run's side of an engine plan (a CWL tool): the working directory laid out as the
//! engine asked before the start (staged copies placed at their second names, empty
//! directories), and after the tool exited, its exit status judged by the engine's codes and
//! its output object written where the artifact collector indexes it
//! ([`crate::plan_engine::OUTPUTS_FILE`]).

use std::path::Path;

use scimcp_core::manifest::{CommandEngine, EngineCommand};

use super::execute::Finish;
use super::state::RunState;
use crate::plan::{Escape, RunPaths};

/// Lay out `work` for `command`: its directories, and each link (a copy of a staged input
/// under the name the tool expects; a copy, not a link, so the tool cannot reach the staged
/// original through it, and a writable entry changes only the copy).
pub(super) fn prepare(work: &Path, command: &EngineCommand) -> std::io::Result<()> {
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
/// codes, then the output object. A run whose outputs cannot be read (a required output
/// missing, a file outside the working directory) fails, naming why.
pub(super) fn conclude(
    engine: &dyn CommandEngine,
    command: &EngineCommand,
    work: &Path,
    paths: &RunPaths,
    mut finish: Finish,
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
