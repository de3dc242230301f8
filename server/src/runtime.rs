//! The scientific runtime: which program runs the CLI, and what is installed in it.
//!
//! The interpreter comes from `--python PATH`, else `SCIMCP_PYTHON`, else the runtime
//! `scimcp-setup` provisioned and recorded in `state.json`. A missing or broken interpreter
//! does not stop the server: every tool that needs the runtime reports a blocker naming
//! what is missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use scimcp_core::program_identity::ProgramProblem;
use scimcp_core::{Adapter, Manifest, RuntimeKind, Workflow};
use tokio::sync::OnceCell;

use crate::envelope::{ErrorCode, ToolError};

/// How long the environment probe may take (importing nothing heavy, reading metadata).
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

pub use scimcp_core::runtime_probe::RuntimeProbe;
use scimcp_core::runtime_probe::{RUNTIME_PROBE_SCRIPT, requirement_names};

/// Why the runtime's program cannot be used: each says what to configure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RuntimeProblem {
    #[error(
        "no Python interpreter is configured for the '{adapter}' runtime: run `scimcp-setup install` \
         (it provisions one and records it), or start the server with \
         --python PATH or set SCIMCP_PYTHON to an interpreter that has `{package}` and its \
         pinned requirements installed (scripts/dev-env.sh creates one at .venv)"
    )]
    NoInterpreter { adapter: String, package: String },
    #[error(
        "the configured Python interpreter {} does not exist or is not a file: fix \
         --python / SCIMCP_PYTHON",
        path.display()
    )]
    NotAFile { path: PathBuf },
    /// The executable runtime's program was not found or not identified.
    #[error("{0}")]
    Program(ProgramProblem),
    #[error("the executable runtime names no program")]
    NoProgram,
}

/// Why the environment probe gave no answer (kept, and shared, for the process's life).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProbeError {
    #[error("{0}")]
    Unavailable(RuntimeProblem),
    #[error("environment probing applies to python runtimes only")]
    NotPython,
    #[error("the runtime probe did not finish: {0}")]
    Unfinished(String),
    #[error("{0}")]
    Failed(Arc<scimcp_process::ProcessError>),
    #[error("the runtime probe printed something unexpected: {0}")]
    Unexpected(Arc<serde_json::Error>),
}

/// The scientific runtime the server launches the CLI with.
#[derive(Debug)]
pub struct ScientificRuntime {
    kind: RuntimeKind,
    program: Result<PathBuf, RuntimeProblem>,
    launch: Vec<String>,
    package: Option<String>,
    requirement_names: Vec<String>,
    /// The operator's `--env` variables, over the manifest's and under the suite's fixed ones.
    operator_env: BTreeMap<String, String>,
    /// What a process of this runtime outside a workflow gets (the dataset export): the
    /// manifest's `[runtime] env`, the operator's, the suite's fixed variables.
    env: BTreeMap<String, String>,
    probe: OnceCell<Result<RuntimeProbe, ProbeError>>,
    /// The executable runtime's program and every `[programs.<id>]` a workflow names.
    programs: crate::programs::ProgramTable,
    /// Where runs and the state directory live (checked for spaces at validation).
    run_root: Option<PathBuf>,
}

impl ScientificRuntime {
    /// Decide which program runs `adapter`'s CLI.
    pub fn resolve(
        adapter: &Adapter,
        python: Option<PathBuf>,
        operator_env: BTreeMap<String, String>,
    ) -> ScientificRuntime {
        let rt = &adapter.manifest.runtime;
        let program = match rt.kind {
            RuntimeKind::Python => match python {
                None => Err(RuntimeProblem::NoInterpreter {
                    adapter: adapter.manifest.name.clone(),
                    package: rt
                        .package
                        .as_deref()
                        .unwrap_or("the adapter package")
                        .to_string(),
                }),
                Some(p) if !p.is_file() => Err(RuntimeProblem::NotAFile { path: p }),
                Some(p) => Ok(std::path::absolute(&p).unwrap_or(p)),
            },
            // Resolved below, with the other programs.
            RuntimeKind::Executable => Err(RuntimeProblem::NoProgram),
        };
        let programs = crate::programs::ProgramTable::resolve(
            &adapter.manifest,
            program.as_ref().ok().map(PathBuf::as_path),
        );
        let program = match rt.kind {
            RuntimeKind::Python => program,
            RuntimeKind::Executable => match programs.get(scimcp_core::manifest::RUNTIME_PROGRAM) {
                Some(Ok(identity)) => Ok(PathBuf::from(&identity.executable)),
                Some(Err(problem)) => Err(RuntimeProblem::Program(problem.clone())),
                None => Err(RuntimeProblem::NoProgram),
            },
        };
        ScientificRuntime {
            kind: rt.kind,
            program,
            launch: rt.launch.clone(),
            package: rt.package.clone(),
            requirement_names: requirement_names(&rt.requirements),
            env: {
                let mut env: BTreeMap<String, String> = scimcp_core::run_env::DEFAULT_RUN_ENV
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                env.extend(rt.env.clone());
                env.extend(operator_env.clone());
                env.extend(crate::plan::fixed_env());
                env
            },
            operator_env,
            probe: OnceCell::new(),
            programs,
            run_root: None,
        }
    }

    /// Record where runs live (`SCIMCP_HOME` or `--data-root`), for the space check.
    pub fn with_run_root(mut self, root: PathBuf) -> ScientificRuntime {
        self.run_root = Some(root);
        self
    }

    /// Where runs live, when the server said.
    pub fn run_root(&self) -> Option<&Path> {
        self.run_root.as_deref()
    }

    /// The resolved programs.
    pub fn programs(&self) -> &crate::programs::ProgramTable {
        &self.programs
    }

    /// The variables every process of this runtime gets outside a workflow (e.g. the
    /// dataset export).
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// The variables a run of `workflow` gets (besides the passthrough names): the suite's
    /// defaults (a home and caches inside the run), the manifest's `[runtime] env`, the
    /// workflow's `env`, the operator's `--env`, then the suite's fixed variables, each over
    /// the one before. `{work_dir}` and `{state_dir}` stay symbolic until the run starts.
    pub fn run_env(&self, manifest: &Manifest, workflow: &Workflow) -> BTreeMap<String, String> {
        let mut env: BTreeMap<String, String> = scimcp_core::run_env::DEFAULT_RUN_ENV
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        env.extend(manifest.run_env(workflow));
        env.extend(self.operator_env.clone());
        env.extend(crate::plan::fixed_env());
        env
    }

    /// Why the runtime cannot be used, if it cannot.
    pub fn problem(&self) -> Option<&RuntimeProblem> {
        self.program.as_ref().err()
    }

    /// The program and the launch arguments before a workflow's argv.
    pub fn command_prefix(&self) -> Result<(&Path, &[String]), ToolError> {
        match &self.program {
            Ok(p) => Ok((p.as_path(), &self.launch)),
            Err(problem) => Err(ToolError::new(
                ErrorCode::RuntimeUnavailable,
                problem.to_string(),
                "configure the scientific runtime, then restart the server",
            )),
        }
    }

    /// Probe the runtime once (interpreter, versions, package identity) and remember it.
    pub async fn probe(&self) -> Result<RuntimeProbe, ToolError> {
        let result = self.probe.get_or_init(|| self.run_probe()).await;
        result.clone().map_err(|problem| {
            ToolError::new(
                ErrorCode::RuntimeUnavailable,
                problem.to_string(),
                "fix the scientific runtime (scripts/dev-env.sh rebuilds the development one), then restart the server",
            )
        })
    }

    async fn run_probe(&self) -> Result<RuntimeProbe, ProbeError> {
        let program = self.program.clone().map_err(ProbeError::Unavailable)?;
        if self.kind != RuntimeKind::Python {
            return Err(ProbeError::NotPython);
        }
        let mut cmd = scimcp_process::python_command(&program);
        cmd.arg("-c")
            .arg(RUNTIME_PROBE_SCRIPT)
            .arg(self.package.clone().unwrap_or_default())
            .args(&self.requirement_names);
        let step = scimcp_process::Step::new("the runtime probe", cmd).timeout(PROBE_TIMEOUT);
        let out = tokio::task::spawn_blocking(move || scimcp_process::run(step))
            .await
            .map_err(|e| ProbeError::Unfinished(e.to_string()))?
            .and_then(scimcp_process::Captured::check)
            .map_err(|e| ProbeError::Failed(Arc::new(e)))?;
        serde_json::from_str(&out.stdout).map_err(|e| ProbeError::Unexpected(Arc::new(e)))
    }
}
