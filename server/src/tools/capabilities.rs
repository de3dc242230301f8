//! `get_capabilities`.

use std::sync::Arc;

use schemars::JsonSchema;
use scimcp_core::hash::canonical_sha256;
use serde::Serialize;

use super::handler::{Call, ToolHandler};
use crate::context::ServerContext;
use crate::envelope::{ErrorCode, ToolError};
use crate::request::CapabilitiesRequest;

/// The server's identity.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ServerIdentity {
    pub name: String,
    pub version: String,
}

/// The adapter being served.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AdapterInfo {
    pub name: String,
    pub version: String,
    pub summary: String,
    /// SHA-256 of the manifest's canonical form (schemas included).
    pub sha256: String,
}

/// Whether runs can start.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Readiness {
    pub ready: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// A declared output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ArtifactInfo {
    pub id: String,
    pub path: String,
    pub media_type: String,
    pub required: bool,
}

/// A named file input a workflow takes (`inputs.<id>` of a request).
#[derive(Debug, Serialize, JsonSchema)]
pub struct InputInfo {
    pub id: String,
    pub summary: String,
    /// Accepted file extensions (no dot) or media types.
    pub formats: Vec<String>,
    /// `file` (one reference), `files` (a list) or `directory`.
    pub kind: String,
    pub required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_count: Option<u32>,
}

/// One workflow.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkflowInfo {
    pub id: String,
    pub summary: String,
    /// The strict JSON Schema of `parameters` (when one workflow is asked for, or with
    /// `detail = "full"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub parameters_schema: Option<serde_json::Value>,
    pub parameters_schema_sha256: String,
    /// The named file inputs to pass as `inputs` (absent when the workflow has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputInfo>,
    /// `false` when the workflow reads no table: pass no `dataset`, only `inputs` (absent,
    /// meaning `true`, for a workflow that requires a dataset).
    #[serde(skip_serializing_if = "is_true")]
    pub takes_dataset: bool,
    pub artifacts: Vec<ArtifactInfo>,
    /// Whether the programs this workflow runs were found when the server started (absent
    /// for a workflow that runs only a python runtime's interpreter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Which program is missing and how to install it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// What the run sandbox grants this workflow's CLI beyond its runtime, run directory and
    /// adapter state directory: the network, `/dev/shm`, declared paths.
    pub sandbox: crate::plan::PlannedSandbox,
}

/// `get_capabilities` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CapabilitiesOutput {
    pub server: ServerIdentity,
    pub adapter: AdapterInfo,
    pub runtime: Readiness,
    /// Resource bounds in force for runs.
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub limits: serde_json::Value,
    pub workflows: Vec<WorkflowInfo>,
    /// Prefix of built-in dataset references.
    pub builtin_dataset_prefix: String,
}

/// The `get_capabilities` tool.
pub(super) struct GetCapabilities;

impl ToolHandler for GetCapabilities {
    const NAME: &'static str = "get_capabilities";
    const DESCRIPTION: &'static str = "What this server can run: the adapter, its workflows with their parameter schemas and artifacts, limits and runtime readiness. Pass `workflow` to get one workflow's exact schema and its hash.";
    const READ_ONLY: bool = true;
    type Request = CapabilitiesRequest;
    type Output = CapabilitiesOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        _call: &Call,
        req: CapabilitiesRequest,
    ) -> Result<CapabilitiesOutput, ToolError> {
        get(ctx, req).await
    }
}

pub(super) async fn get(
    ctx: &ServerContext,
    req: CapabilitiesRequest,
) -> Result<CapabilitiesOutput, ToolError> {
    let m = &ctx.adapter.manifest;
    let with_schema = req.workflow.is_some() || req.detail == crate::paging::Detail::Full;
    let selected: Vec<_> = match &req.workflow {
        None => m.workflows.iter().collect(),
        Some(id) => vec![ctx.adapter.workflow(id).ok_or_else(|| {
            ToolError::new(
                ErrorCode::UnknownWorkflow,
                format!("adapter '{}' has no workflow '{id}'", m.name),
                "pick one of the allowed workflows",
            )
            .field("workflow")
            .allowed(ctx.adapter.workflow_ids())
        })?],
    };
    Ok(CapabilitiesOutput {
        server: ServerIdentity {
            name: scimcp_core::version::SUITE_NAME.into(),
            version: scimcp_core::version::SUITE_VERSION.into(),
        },
        adapter: AdapterInfo {
            name: m.name.clone(),
            version: m.version.clone(),
            summary: m.summary.clone(),
            sha256: ctx.adapter.sha256().to_string(),
        },
        runtime: readiness(ctx),
        limits: serde_json::to_value(m.effective_limits()).expect("limits serialize"),
        workflows: selected
            .into_iter()
            .map(|w| WorkflowInfo {
                id: w.id.clone(),
                summary: w.summary.clone(),
                parameters_schema_sha256: canonical_sha256(&w.parameters_schema),
                parameters_schema: with_schema.then(|| w.parameters_schema.clone()),
                inputs: w
                    .inputs
                    .iter()
                    .map(|i| InputInfo {
                        id: i.id.clone(),
                        summary: i.summary.clone(),
                        formats: i.formats.clone(),
                        kind: i.kind.as_str().into(),
                        required: i.required,
                        min_count: i.min_count,
                        max_count: i.max_count,
                    })
                    .collect(),
                takes_dataset: crate::inputs::takes_dataset(w),
                artifacts: w
                    .artifacts
                    .iter()
                    .map(|a| ArtifactInfo {
                        id: a.id.clone(),
                        path: a.path.clone(),
                        media_type: a.media_type.clone(),
                        required: a.required,
                    })
                    .collect(),
                ready: m
                    .workflow_uses_programs(w)
                    .then(|| ctx.runtime.programs().workflow_problem(m, w).is_none()),
                problem: ctx.runtime.programs().workflow_problem(m, w),
                sandbox: crate::sandbox_policy::declared(w).unwrap_or_default(),
            })
            .collect(),
        builtin_dataset_prefix: crate::datasets::BUILTIN_PREFIX.into(),
    })
}

fn is_true(b: &bool) -> bool {
    *b
}

/// The runtime's readiness: its interpreter or executable, then every program a workflow
/// runs (each missing one with the packages that provide it).
fn readiness(ctx: &ServerContext) -> Readiness {
    let mut problems: Vec<String> = ctx
        .runtime
        .problem()
        .map(ToString::to_string)
        .into_iter()
        .collect();
    for p in ctx.runtime.programs().problems() {
        let text = p.to_string();
        if !problems.contains(&text) {
            problems.push(text);
        }
    }
    Readiness {
        ready: problems.is_empty(),
        problem: (!problems.is_empty()).then(|| problems.join("; ")),
    }
}
