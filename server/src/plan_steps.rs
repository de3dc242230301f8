//! The programs a plan runs: a workflow's own program and launch, its `[[workflow.step]]`s
//! rendered one by one, and the identity (`{id, executable, sha256, version}`) of every
//! program it needs, bound into the plan so its hash changes when a binary does.
//!
//! Single-step workflows keep today's plan shape (`program`, `args`, `stdin`) and, for
//! python runtimes without `[programs]`, today's hash: `steps` and `programs` are absent.
//! A stepped plan lists each step in `steps`; its `program`/`args`/`stdin` repeat the first
//! step's, for readers that know only those.
//!
//! Stream artifacts of a step (`base = "stdout"`, `step = …`) are copied by
//! `runs::stream_copy::stream_copies` for the step's index; the step loop is `runs/steps.rs`.

use std::path::Path;

use scimcp_core::Adapter;
use scimcp_core::manifest::{RUNTIME_PROGRAM, Workflow};
use serde_json::Value;

use crate::envelope::Issue;
// Re-exported: the step record is the plan's (`plan.rs`), and readers know it from here too.
use crate::plan::Plan;
pub(crate) use crate::plan::PlannedStep;
use crate::plan_error::PlanError;
use crate::runtime::ScientificRuntime;

/// The program and launch prefix of a single-step workflow: the runtime's (as before), or
/// the workflow's `program`, with the workflow's `launch` over the program's own.
pub(crate) fn workflow_command(
    adapter: &Adapter,
    workflow: &Workflow,
    runtime: &ScientificRuntime,
) -> Result<(String, Vec<String>), Issue> {
    let m = &adapter.manifest;
    let chosen = m.workflow_program(workflow);
    let launch = chosen.launch.to_vec();
    if chosen.id == RUNTIME_PROGRAM {
        return match runtime.command_prefix() {
            Ok((p, _)) => Ok((p.to_string_lossy().into_owned(), launch)),
            Err(e) => Err(Issue {
                field: "runtime".into(),
                message: e.message,
                allowed: Vec::new(),
            }),
        };
    }
    match program_path(runtime, chosen.id) {
        Ok(path) => Ok((path, launch)),
        Err(issue) => Err(issue),
    }
}

/// The resolved executable of program `id`, or the blocker naming it with the remedy.
fn program_path(runtime: &ScientificRuntime, id: &str) -> Result<String, Issue> {
    if id == RUNTIME_PROGRAM {
        return runtime
            .command_prefix()
            .map(|(p, _)| p.to_string_lossy().into_owned())
            .map_err(|e| Issue {
                field: "runtime".into(),
                message: e.message,
                allowed: Vec::new(),
            });
    }
    match runtime.programs().get(id) {
        Some(Ok(identity)) => Ok(identity.executable.clone()),
        Some(Err(problem)) => Err(Issue {
            field: format!("programs.{id}"),
            message: problem.to_string(),
            allowed: Vec::new(),
        }),
        None => Err(Issue {
            field: format!("programs.{id}"),
            message: format!("program '{id}' was not resolved when the server started"),
            allowed: Vec::new(),
        }),
    }
}

/// Each step rendered: the launch prefix in force, then the argv with the step's options
/// placed (`{options}`, else last). The programs are bound later, by [`bind`].
pub(crate) fn compile(
    adapter: &Adapter,
    workflow: &Workflow,
    params: &serde_json::Map<String, Value>,
    expand: &dyn Fn(&str) -> Result<Vec<String>, PlanError>,
) -> Result<Vec<PlannedStep>, PlanError> {
    let m = &adapter.manifest;
    workflow
        .steps
        .iter()
        .map(|step| {
            let chosen = m.step_program(workflow, step);
            let mut args = chosen.launch.to_vec();
            args.extend(crate::plan_argv::assemble(
                &step.argv,
                crate::plan_argv::options(&step.options, params),
                expand,
            )?);
            let mut stdin = Vec::new();
            for line in &step.stdin {
                stdin.extend(expand(line)?);
            }
            Ok(PlannedStep {
                id: step.id.clone(),
                program_id: chosen.id.to_string(),
                program: String::new(),
                args,
                stdin,
            })
        })
        .collect()
}

/// Bind the programs into `plan` (each step's executable, every program's identity) and
/// return what blocks the run: a program that is missing, or one that cannot take the
/// spaces in the runs directory's path.
pub(crate) fn bind(
    plan: &mut Plan,
    adapter: &Adapter,
    workflow: &Workflow,
    runtime: &ScientificRuntime,
) -> Vec<Issue> {
    let m = &adapter.manifest;
    let mut blockers = Vec::new();
    if m.workflow_uses_programs(workflow) {
        match runtime.programs().for_workflow(m, workflow) {
            Ok(identities) => plan.programs = identities,
            Err(problems) => {
                for p in problems {
                    // A single-step workflow's runtime problem is already its `runtime` blocker.
                    if p.id != RUNTIME_PROGRAM || !workflow.steps.is_empty() {
                        blockers.push(Issue {
                            field: format!("programs.{}", p.id),
                            message: p.to_string(),
                            allowed: Vec::new(),
                        });
                    }
                }
            }
        }
    }
    blockers.extend(bind_engine_program(plan, adapter, runtime));
    for step in &mut plan.steps {
        step.program = program_path(runtime, &step.program_id).unwrap_or_default();
    }
    if let Some(first) = plan.steps.first() {
        plan.program = first.program.clone();
        plan.args = first.args.clone();
        plan.stdin = first.stdin.clone();
    }
    blockers.extend(space_blockers(adapter, workflow, runtime.run_root()));
    blockers
}

/// An engine's command that starts another declared program than the workflow's (a CWL
/// tool whose expression chooses among the programs it was loaded with): the plan starts
/// that program's resolved path and carries its identity. A name no declared program has is
/// a blocker, so nothing unresolved or unhashed ever runs.
fn bind_engine_program(
    plan: &mut Plan,
    adapter: &Adapter,
    runtime: &ScientificRuntime,
) -> Vec<Issue> {
    let m = &adapter.manifest;
    let Some(engine) = &plan.engine else {
        return Vec::new();
    };
    if m.runtime.executable.as_deref() == Some(engine.program.as_str()) {
        return Vec::new();
    }
    let Some(id) = m
        .programs
        .iter()
        .find(|(_, p)| p.executable == engine.program)
        .map(|(id, _)| id.clone())
    else {
        return vec![Issue {
            field: "program".into(),
            message: format!(
                "the engine's command starts `{}`, which the adapter does not declare: only programs resolved and hashed when the server started are run",
                engine.program
            ),
            allowed: Vec::new(),
        }];
    };
    match (program_path(runtime, &id), runtime.programs().get(&id)) {
        (Ok(path), Some(Ok(identity))) => {
            plan.program = path;
            plan.programs = vec![identity.clone()];
            Vec::new()
        }
        (Err(issue), _) => vec![issue],
        (Ok(_), _) => vec![Issue {
            field: format!("programs.{id}"),
            message: format!("program '{id}' was not resolved when the server started"),
            allowed: Vec::new(),
        }],
    }
}

/// A program declared `paths_with_spaces = false` cannot be given `{work_dir}`,
/// `{state_dir}` or an input's path when the runs directory has a space (macOS's
/// "Application Support" has one): refused before any run, with the way out.
fn space_blockers(adapter: &Adapter, workflow: &Workflow, run_root: Option<&Path>) -> Vec<Issue> {
    let Some(root) = run_root else {
        return Vec::new();
    };
    let text = root.to_string_lossy();
    if !text.contains(char::is_whitespace) {
        return Vec::new();
    }
    let m = &adapter.manifest;
    m.workflow_program_ids(workflow)
        .into_iter()
        .filter_map(|id| {
            let facts = m.program_facts(id)?;
            (!facts.paths_with_spaces).then(|| Issue {
                field: if id == RUNTIME_PROGRAM { "runtime".into() } else { format!("programs.{id}") },
                message: format!(
                    "program '{id}' ({}) cannot take paths with spaces, and the runs directory {text:?} has one: \
                     set SCIMCP_HOME to a directory whose path has no spaces (e.g. ~/scimcp) and restart the server",
                    facts.executable
                ),
                allowed: Vec::new(),
            })
        })
        .collect()
}

/// A stepped plan under the Slurm executor: one batch job runs one program (its job script
/// has no step loop), so the workflow is refused before anything is submitted.
pub(crate) fn executor_refusal(plan: &Plan, slurm: bool) -> Option<Issue> {
    (slurm && !plan.steps.is_empty()).then(|| Issue {
        field: "workflow".into(),
        message: format!(
            "workflow '{}' runs {} steps, and the Slurm executor runs one program per batch job: \
             serve this adapter with the local executor to run it",
            plan.workflow,
            plan.steps.len()
        ),
        allowed: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stepped_plans_are_refused_only_under_slurm() {
        let mut plan: Plan = serde_json::from_value(serde_json::json!({
            "adapter": "a", "adapter_version": "0.1.0", "adapter_sha256": "x", "workflow": "w",
            "program": "/bin/cp", "args": [], "stdin": [], "input_files": [], "env": {},
            "env_passthrough": [], "working_dir": "work", "output_dir": "output",
            "artifacts": [], "timeout_s": 60
        }))
        .unwrap();
        assert!(executor_refusal(&plan, true).is_none());
        plan.steps = vec![
            PlannedStep {
                id: "one".into(),
                program_id: "copy".into(),
                program: "/bin/cp".into(),
                args: vec![],
                stdin: vec![],
            };
            2
        ];
        assert!(executor_refusal(&plan, false).is_none());
        let refusal = executor_refusal(&plan, true).unwrap();
        assert!(
            refusal.message.contains("runs 2 steps"),
            "{}",
            refusal.message
        );
    }
}
