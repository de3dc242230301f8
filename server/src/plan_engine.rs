//! Plans of an adapter whose commands an engine builds (a CWL tool; see
//! [`scimcp_core::manifest::CommandEngine`]): the files the request's parameters name are
//! staged exactly like named inputs (confined, hashed, copied into `inputs/<id>/`, checked
//! again at the end), then the engine builds the command from the staged copies and the plan
//! records it. The run starts the same resolved program as any other plan, never a shell.

use std::sync::Arc;

use scimcp_core::manifest::{
    ANY_FORMAT, CommandEngine, EngineCommand, EngineError, InputKind, InputSpec, StagedGroup,
    Workflow,
};
use serde_json::{Map, Value};

use crate::envelope::{ErrorCode, ToolError};
use crate::inputs::{InputValue, RequestInputs, ResolvedInput};
use crate::plan::{Escape, Plan, PlannedFile};

/// Where the engine's output object is written in the working directory (an artifact of
/// every engine run, so a client and `cwl-run` read it with its hash).
pub const OUTPUTS_FILE: &str = ".scimcp/outputs.json";
/// The artifact id of [`OUTPUTS_FILE`].
pub const OUTPUTS_ARTIFACT: &str = "outputs";

fn refused(e: EngineError) -> ToolError {
    let field = e.field.clone().unwrap_or_else(|| "parameters".to_string());
    ToolError::new(ErrorCode::InvalidParameters, e.message, e.hint).field(field)
}

/// The workflow with the engine's stage groups as its named inputs, and the request's
/// inputs for them: what [`crate::inputs::resolve_inputs`] confines, hashes and plans.
pub(crate) fn stage(
    engine: &Arc<dyn CommandEngine>,
    workflow: &Workflow,
    params: &Map<String, Value>,
    given: &RequestInputs,
) -> Result<(Workflow, RequestInputs), ToolError> {
    if !given.is_empty() {
        return Err(ToolError::new(
            ErrorCode::InvalidRequest,
            format!(
                "workflow '{}' takes its files inside parameters, not as named inputs",
                workflow.id
            ),
            "drop inputs and give each file where the tool's parameter schema has it: {\"class\": \"File\", \"path\": \"<path>\"}",
        )
        .field("inputs"));
    }
    let groups = engine.stage(params).map_err(refused)?;
    let mut staged = workflow.clone();
    let mut inputs = RequestInputs::new();
    for g in groups {
        staged.inputs.push(InputSpec {
            id: g.id.clone(),
            summary: "a file the parameters name".into(),
            formats: vec![ANY_FORMAT.to_string()],
            kind: g.kind,
            required: true,
            min_count: None,
            max_count: None,
        });
        let refs = g
            .paths
            .into_iter()
            .map(crate::inputs::InputRef::Path)
            .collect::<Vec<_>>();
        let value = match (g.kind, refs.len()) {
            (InputKind::Files, _) | (_, 0) => InputValue::Many(refs),
            _ => InputValue::One(refs.into_iter().next().expect("one reference")),
        };
        inputs.insert(g.id, value);
    }
    Ok((staged, inputs))
}

/// What the engine needs of the staged inputs: each file's confined source and its copy.
pub(crate) fn staged(inputs: &[ResolvedInput]) -> Vec<StagedGroup> {
    inputs
        .iter()
        .map(|i| {
            let planned = i.planned();
            StagedGroup {
                id: i.id.clone(),
                kind: i.kind,
                files: i
                    .files
                    .iter()
                    .map(|f| (f.path.clone(), f.planned.run_path.clone()))
                    .collect(),
                dir: planned.run_path,
            }
        })
        .collect()
}

/// The engine's command for `params` on `staged`, refused when it would reach outside the
/// run's working directory.
pub(crate) fn command(
    engine: &Arc<dyn CommandEngine>,
    params: &Map<String, Value>,
    staged: &[StagedGroup],
) -> Result<EngineCommand, ToolError> {
    let command = engine.command(params, staged).map_err(refused)?;
    confine(&command, engine.fixed_sources())?;
    Ok(command)
}

/// Every path the run lays out or reads for an engine's command stays in its working
/// directory. The confinement of a request's files is the server's, not the engine's: a CWL
/// expression can make a File of any path a client sends as a string, and the run would copy
/// that host file into the working directory (and a client read it back as an output) if the
/// server trusted the engine's sources. Files a request names are staged by the server first,
/// so their copies are already inside; the only host files a command may copy in as they are
/// are those the adapter's own description names (`fixed`).
fn confine(command: &EngineCommand, fixed: &[std::path::PathBuf]) -> Result<(), ToolError> {
    let outside = |what: &str, path: &str, hint: &str| {
        Err(ToolError::new(
            ErrorCode::InvalidParameters,
            format!("the tool's {what} `{path}`, which is outside the run's working directory"),
            hint.to_string(),
        )
        .field("parameters"))
    };
    let is_fixed = |from: &str| {
        fs_err::canonicalize(from).is_ok_and(|c| fixed.iter().any(|f| c.starts_with(f)))
    };
    for link in &command.links {
        if !inside_work(&link.from) && !is_fixed(&link.from) {
            return outside(
                "initial work directory names the file",
                &link.from,
                "give the file as one of the tool's File or Directory inputs: the server then confines it to the data directories, hashes it and stages a copy",
            );
        }
        if !inside_work(&link.to) {
            return outside(
                "initial work directory places a file at",
                &link.to,
                "name entries inside the output directory",
            );
        }
    }
    let placed = command
        .dirs
        .iter()
        .chain(command.files.iter().map(|(path, _)| path))
        .chain(command.cwd.iter())
        .chain(command.stdin_file.iter())
        .chain(command.stdout_file.iter())
        .chain(command.stderr_file.iter());
    for path in placed {
        if !inside_work(path) {
            return outside(
                "command uses the path",
                path,
                "name files inside the output directory",
            );
        }
    }
    Ok(())
}

/// True for a path relative to the working directory (or `{work_dir}/…`) that never leaves it.
fn inside_work(path: &str) -> bool {
    use std::path::Component;
    let rest = path.strip_prefix("{work_dir}/").unwrap_or(path);
    !rest.is_empty()
        && std::path::Path::new(rest)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// `plan` (compiled from the workflow, which has no argv of its own) with the engine's
/// command: its arguments after the resolved program and its launch prefix, its text files,
/// and the command itself for the run and the outputs step.
///
/// The text files move into `plan.input_files` rather than being kept twice: the run writes
/// those, and an answer shows a large one by its size and hash only
/// ([`crate::plan::serialize_shown`]).
pub(crate) fn apply(plan: &mut Plan, mut command: EngineCommand) {
    plan.args.extend(command.args.iter().cloned());
    for (path, content) in std::mem::take(&mut command.files) {
        plan.input_files
            .push(PlannedFile::new(path, content, Escape::None));
    }
    for (k, v) in &command.env {
        plan.env.insert(k.clone(), v.clone());
    }
    if let Some(t) = command.timeout_s {
        plan.timeout_s = plan.timeout_s.min(t);
    }
    plan.artifacts.push(outputs_artifact());
    plan.engine = Some(command);
}

fn outputs_artifact() -> scimcp_core::manifest::ArtifactSpec {
    serde_json::from_value(serde_json::json!({
        "id": OUTPUTS_ARTIFACT,
        "path": OUTPUTS_FILE,
        "media_type": "application/json",
        "base": "work",
    }))
    .expect("a valid artifact spec")
}

/// True when `exit_code` means success for an engine plan (its declared codes, else 0).
pub(crate) fn is_success(command: &EngineCommand, exit_code: i32) -> bool {
    if command.success_codes.is_empty() {
        exit_code == 0
    } else {
        command.success_codes.contains(&exit_code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scimcp_core::manifest::EngineLink;

    fn command() -> EngineCommand {
        serde_json::from_value(serde_json::json!({
            "program": "cat", "args": [], "cwd": "out", "job": {},
            "links": [{"from": "{work_dir}/inputs/g0/a.txt", "to": "out/a.txt"}],
            "dirs": ["out/sub"], "stdout_file": "out.txt"
        }))
        .unwrap()
    }

    #[test]
    fn an_engine_command_inside_the_working_directory_is_accepted() {
        confine(&command(), &[]).unwrap();
    }

    #[test]
    fn an_engine_command_reaching_outside_the_working_directory_is_refused() {
        let host = |from: &str| {
            let mut c = command();
            c.links.push(EngineLink {
                from: from.into(),
                to: "out/stolen".into(),
                writable: false,
            });
            c
        };
        for from in [
            "/etc/hostname",
            "{work_dir}/../../etc/hostname",
            "inputs/../../x",
            "",
        ] {
            let e = confine(&host(from), &[]).unwrap_err();
            assert!(
                e.to_string()
                    .contains("outside the run's working directory"),
                "{from}: {e}"
            );
        }
        // A host file the adapter's own description names may be copied in; no other.
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("reference.txt");
        fs_err::write(&own, "x").unwrap();
        let fixed = [fs_err::canonicalize(&own).unwrap()];
        confine(&host(own.to_str().unwrap()), &fixed).unwrap();
        assert!(confine(&host("/etc/hostname"), &fixed).is_err());
        let mut c = command();
        c.links[0].to = "../elsewhere".into();
        assert!(confine(&c, &[]).is_err());
        let mut c = command();
        c.stdout_file = Some("/tmp/out.txt".into());
        assert!(confine(&c, &[]).is_err());
        // The server opens stdin outside the sandbox: a host path there would leak too.
        let mut c = command();
        c.stdin_file = Some("/etc/hostname".into());
        assert!(confine(&c, &[]).is_err());
        let mut c = command();
        c.dirs.push("out/../../up".into());
        assert!(confine(&c, &[]).is_err());
    }
}
