//! The programs an adapter runs, resolved once when the server starts: the executable
//! runtime's own, every `[programs.<id>]` a workflow or step names, and for an engine's
//! workflow every declared program. Each is found, hashed and asked its version
//! (`scimcp_core::program_identity`); a missing one makes the workflows that need it not
//! ready, with the remedy the manifest's `provided_by` gives.

use std::collections::BTreeMap;
use std::path::Path;

use scimcp_core::Manifest;
use scimcp_core::RuntimeKind;
use scimcp_core::manifest::{RUNTIME_PROGRAM, Workflow};
use scimcp_core::program_identity::{
    ProgramIdentity, ProgramProblem, VERSION_OUTPUT_BYTES, VERSION_TIMEOUT, identify,
};

/// Every program the adapter's workflows run, identified or with why not.
#[derive(Debug, Default)]
pub struct ProgramTable {
    entries: BTreeMap<String, Result<ProgramIdentity, ProgramProblem>>,
}

impl ProgramTable {
    /// Resolve the runtime's program (executable runtimes) and every program a workflow
    /// names. Python-only adapters resolve nothing, so their start costs nothing more.
    pub fn resolve(manifest: &Manifest, python: Option<&Path>) -> ProgramTable {
        let mut ids: Vec<&str> = Vec::new();
        if manifest.runtime.kind == RuntimeKind::Executable {
            ids.push(RUNTIME_PROGRAM);
        }
        for wf in &manifest.workflows {
            // An engine's command may start any declared program (a CWL tool whose
            // expression chooses it): each is resolved now, and the plan names the one used.
            let engine_programs = wf
                .engine
                .is_some()
                .then(|| manifest.programs.keys().map(String::as_str))
                .into_iter()
                .flatten();
            for id in manifest
                .workflow_program_ids(wf)
                .into_iter()
                .chain(engine_programs)
            {
                if id != RUNTIME_PROGRAM && !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        let path_var = std::env::var_os("PATH");
        let entries = ids
            .into_iter()
            .map(|id| {
                let found = identify(manifest, id, python, path_var.clone(), &version_probe);
                if let Err(p) = &found {
                    tracing::warn!("{p}");
                }
                (id.to_string(), found)
            })
            .collect();
        ProgramTable { entries }
    }

    /// The identity of program `id`, or why it has none.
    pub fn get(&self, id: &str) -> Option<&Result<ProgramIdentity, ProgramProblem>> {
        self.entries.get(id)
    }

    /// Every resolved program (for `get_environment`), in id order.
    pub fn identities(&self) -> Vec<ProgramIdentity> {
        self.entries
            .values()
            .filter_map(|e| e.as_ref().ok().cloned())
            .collect()
    }

    /// Every program that could not be resolved.
    pub fn problems(&self) -> Vec<&ProgramProblem> {
        self.entries
            .values()
            .filter_map(|e| e.as_ref().err())
            .collect()
    }

    /// The identities of the programs `wf` runs, in step order, or every problem among them.
    pub fn for_workflow(
        &self,
        manifest: &Manifest,
        wf: &Workflow,
    ) -> Result<Vec<ProgramIdentity>, Vec<ProgramProblem>> {
        let mut found = Vec::new();
        let mut problems = Vec::new();
        for id in manifest.workflow_program_ids(wf) {
            match self.entries.get(id) {
                Some(Ok(identity)) => found.push(identity.clone()),
                Some(Err(p)) => problems.push(p.clone()),
                // The python runtime's interpreter: identified by the runtime probe instead.
                None => {}
            }
        }
        if problems.is_empty() {
            Ok(found)
        } else {
            Err(problems)
        }
    }

    /// Why `wf` cannot run, if one of its programs is missing: each problem with its remedy.
    pub fn workflow_problem(&self, manifest: &Manifest, wf: &Workflow) -> Option<String> {
        self.for_workflow(manifest, wf).err().map(|problems| {
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        })
    }
}

/// Why a version probe gave no output to read a version from.
#[derive(Debug, thiserror::Error)]
enum VersionProbeError {
    #[error("{0}")]
    Run(#[source] scimcp_process::ProcessError),
    #[error("it took longer than {} s", VERSION_TIMEOUT.as_secs())]
    TimedOut,
}

/// A version probe through the shared runner: own process group, cleared environment (the
/// suite's fixed variables only), stdin closed, output and time bounded. Its exit status is
/// not judged: some programs exit non-zero after printing their version; the pattern decides.
fn version_probe(program: &Path, args: &[String]) -> Result<(String, String), VersionProbeError> {
    let cwd = std::env::temp_dir();
    let cmd =
        crate::runs::child::isolated_std_command(program, args, &cwd, &crate::plan::fixed_env());
    let step = scimcp_process::Step::new("the version probe", cmd)
        .timeout(VERSION_TIMEOUT)
        .max_output(VERSION_OUTPUT_BYTES);
    let out = scimcp_process::run(step).map_err(VersionProbeError::Run)?;
    if out.timed_out {
        return Err(VersionProbeError::TimedOut);
    }
    Ok((out.stdout, out.stderr))
}
