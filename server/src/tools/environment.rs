//! `get_environment`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use super::handler::{Call, ToolHandler};
use crate::context::ServerContext;
use crate::envelope::ToolError;
use crate::request::NoArguments;
use crate::runtime::RuntimeProbe;

/// A pinned requirement whose installed version differs.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Mismatch {
    pub name: String,
    pub pinned: String,
    /// `null` when not installed.
    pub installed: Option<String>,
}

/// `get_environment` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EnvironmentOutput {
    pub server_version: String,
    pub adapter: String,
    pub adapter_sha256: String,
    pub runtime_kind: String,
    /// Interpreter requirement from the manifest.
    pub python_requirement: Option<String>,
    /// True when the interpreter satisfies the requirement and every pin matches.
    pub requirements_satisfied: bool,
    pub mismatches: Vec<Mismatch>,
    /// What the interpreter itself reported: its version, executable, implementation, the
    /// installed version of each pinned distribution, and the adapter package's identity.
    /// Absent for an executable runtime, whose programs are listed in `programs` instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub probe: Option<RuntimeProbe>,
    /// Each program the workflows run, as resolved when the server started: `id`, the
    /// `executable` path, its `sha256` and the `version` its probe printed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub programs: Vec<scimcp_core::program_identity::ProgramIdentity>,
    /// Programs that were not found or did not answer, each with its remedy.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub program_problems: Vec<String>,
    /// scimcp's data directory (runs live in `runs/`).
    pub data_root: String,
    /// Where runs execute, and for a cluster, what it says about itself.
    pub executor: ExecutorReport,
    /// The run sandbox: this server's mode (`serve --sandbox`) and what this machine can
    /// enforce, protection by protection.
    pub sandbox: crate::sandbox_policy::SandboxReport,
}

/// `local`, or `slurm` with the cluster's state.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExecutorReport {
    /// `local` (child processes of this server) or `slurm` (batch jobs).
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterReport>,
}

/// The Slurm cluster as this server sees it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ClusterReport {
    /// True when the controller answered.
    pub reachable: bool,
    /// Why it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The partitions with their limits (time, CPUs and memory per node, node states).
    pub partitions: Vec<crate::runs::slurm::Partition>,
    /// The operator's submission settings (partition, account, QOS, directives).
    pub config: crate::runs::slurm::SlurmConfig,
}

/// The executor's report; asking the cluster is blocking work, bounded by the configured
/// command timeout.
pub(super) async fn executor_report(ctx: &ServerContext) -> ExecutorReport {
    let executor = ctx.runs.executor();
    let cluster = match executor.slurm() {
        None => None,
        Some(exec) => {
            let slurm = std::sync::Arc::clone(&exec.slurm);
            let answer = tokio::task::spawn_blocking(move || slurm.partitions())
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(|e| e.to_string()));
            let (reachable, error, partitions) = match answer {
                Ok(p) => (true, None, p),
                Err(e) => (false, Some(e), Vec::new()),
            };
            Some(ClusterReport {
                reachable,
                error,
                partitions,
                config: exec.slurm.config.clone(),
            })
        }
    };
    ExecutorReport {
        kind: executor.kind().to_string(),
        cluster,
    }
}

/// The `get_environment` tool.
pub(super) struct GetEnvironment;

impl ToolHandler for GetEnvironment {
    const NAME: &'static str = "get_environment";
    const DESCRIPTION: &'static str = "The scientific runtime: interpreter and version, installed versions of the pinned requirements (with mismatches), the adapter package's identity hash, and where runs execute (local, or a Slurm cluster with its partitions and limits).";
    const READ_ONLY: bool = true;
    type Request = NoArguments;
    type Output = EnvironmentOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        _call: &Call,
        _req: NoArguments,
    ) -> Result<EnvironmentOutput, ToolError> {
        get(ctx).await
    }
}

pub(super) async fn get(ctx: &ServerContext) -> Result<EnvironmentOutput, ToolError> {
    let rt = &ctx.adapter.manifest.runtime;
    let probe = match rt.kind {
        scimcp_core::RuntimeKind::Python => Some(ctx.runtime.probe().await?),
        scimcp_core::RuntimeKind::Executable => None,
    };
    let programs = ctx.runtime.programs();
    let program_problems: Vec<String> = programs
        .problems()
        .iter()
        .map(ToString::to_string)
        .collect();
    let mismatches: Vec<Mismatch> = scimcp_core::pins::applicable(&rt.requirements)
        .into_iter()
        .filter_map(|pin| {
            let installed = probe.as_ref()?.versions.get(&pin.name).cloned().flatten();
            let differs = installed.as_deref() != Some(pin.version.as_str());
            differs.then_some(Mismatch {
                name: pin.name,
                pinned: pin.version,
                installed,
            })
        })
        .collect();
    let interpreter_ok = match (&rt.python, &probe) {
        (Some(req), Some(probe)) => match semver::Version::parse(&probe.python) {
            Ok(v) => semver::VersionReq::parse(req)
                .map(|r| r.matches(&v))
                .unwrap_or(false),
            Err(_) => false,
        },
        (None, _) => true,
        (Some(_), None) => false,
    };
    Ok(EnvironmentOutput {
        server_version: scimcp_core::version::SUITE_VERSION.into(),
        adapter: ctx.adapter.manifest.name.clone(),
        adapter_sha256: ctx.adapter.sha256().to_string(),
        runtime_kind: format!("{:?}", rt.kind).to_lowercase(),
        python_requirement: rt.python.clone(),
        requirements_satisfied: interpreter_ok
            && mismatches.is_empty()
            && program_problems.is_empty(),
        mismatches,
        probe,
        programs: programs.identities(),
        program_problems,
        data_root: ctx.data_root.display().to_string(),
        executor: executor_report(ctx).await,
        sandbox: crate::sandbox_policy::report(),
    })
}
