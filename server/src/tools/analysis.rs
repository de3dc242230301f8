//! `validate_analysis` and `start_analysis`, with plan-then-confirm: a start without
//! `confirm: true` where confirmation is required (or with `confirm: false` anywhere)
//! creates nothing and starts nothing, and answers with exactly what the confirmed call
//! would run.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use super::handler::{Call, ToolHandler};
use crate::context::{ConfirmMode, ServerContext};
use crate::envelope::{ErrorCode, Issue, ToolError};
use crate::grants::{GrantKind, Refusal};
use crate::plan::Plan;
use crate::request::{AnalysisRequest, StartRequest};
use crate::runs::state::RunState;
use crate::validate::{Validation, validate as validate_request};

/// `start_analysis` output: a started run, or (`started: false`) a preview of one.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StartOutput {
    /// True when a run was created and started; false for a preview, which created and
    /// started nothing.
    pub started: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<RunState>,
    pub validation_id: String,
    pub plan_sha256: String,
    /// SHA-256 of the dataset, for workflows that read one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset_sha256: Option<String>,
    /// What a confirmed start would do (previews only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<StartPreview>,
    pub next_action: String,
}

/// Exactly what `start_analysis` with `confirm: true` and this `validation_id` runs.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StartPreview {
    /// True when this server starts runs only with `confirm: true`.
    pub confirmation_required: bool,
    /// True when the analysis can start now; otherwise `blockers` say why not.
    pub ready: bool,
    pub blockers: Vec<Issue>,
    pub workflow: String,
    /// The parameters after schema defaults were applied.
    pub resolved_parameters: serde_json::Map<String, serde_json::Value>,
    /// The plan the confirmed call executes, unchanged (its hash is `plan_sha256`) except
    /// that a planned file of more than 4 KiB shows its head, size and SHA-256.
    #[serde(serialize_with = "crate::plan::serialize_shown")]
    pub plan: Plan,
    /// The plan's program and arguments on one line, quoted for reading. The server never
    /// runs a shell: the program receives exactly `plan.args`.
    pub command_line: String,
    /// Files the run must (or may) produce in its output directory.
    pub expected_artifacts: Vec<ExpectedArtifact>,
    pub estimated_resources: EstimatedResources,
    /// The name the run would record as having started it.
    pub started_by: String,
}

/// One artifact the workflow declares.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExpectedArtifact {
    pub id: String,
    /// Relative to the run's output directory; may be a glob.
    pub path: String,
    pub media_type: String,
    pub required: bool,
}

/// What a run may use, from the adapter's limits and the dataset.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EstimatedResources {
    /// The run is stopped (and reads `failed`, `timeout`) after this many seconds.
    pub timeout_s: u64,
    /// Bytes of the dataset copy the run reads.
    pub dataset_bytes: u64,
    /// Bytes of the named input files copied into the run.
    #[serde(skip_serializing_if = "is_zero")]
    pub input_bytes: u64,
    /// Bytes kept of each of stdout and stderr.
    pub max_log_bytes: u64,
    /// Files indexed at most, and the largest indexed.
    pub max_artifacts: u32,
    pub max_artifact_bytes: u64,
    /// Runs queued or running now in this server's runs directory, and the most allowed
    /// (more are refused); at most `max_concurrent_runs` execute at once, others wait.
    pub runs_pending_now: usize,
    pub max_pending_runs: u32,
    pub max_concurrent_runs: u32,
}

/// The `validate_analysis` tool.
pub(super) struct ValidateAnalysis;

impl ToolHandler for ValidateAnalysis {
    const NAME: &'static str = "validate_analysis";
    const DESCRIPTION: &'static str = "Check an analysis without running anything: strict parameter validation, dataset checks and hashing, readiness and blockers, and the exact plan (argv, stdin answers, expected artifacts) with its hashes and a validation id.";
    const READ_ONLY: bool = true;
    type Request = AnalysisRequest;
    type Output = Validation;
    async fn run(
        ctx: &Arc<ServerContext>,
        call: &Call,
        req: AnalysisRequest,
    ) -> Result<Validation, ToolError> {
        validate(ctx, call, req).await
    }
}

pub(super) async fn validate(
    ctx: &ServerContext,
    call: &Call,
    req: AnalysisRequest,
) -> Result<Validation, ToolError> {
    let mut v = validate_request(
        &ctx.adapter,
        &ctx.validators,
        &ctx.datasets,
        &ctx.runtime,
        &req,
    )
    .await?;
    if let Some(blocker) =
        crate::plan_steps::executor_refusal(&v.plan, ctx.runs.executor().slurm().is_some())
    {
        v.blockers.push(blocker);
        v.ready = false;
    }
    v.validation_id = grant(ctx, call, &v);
    Ok(v)
}

/// The confirmation this session may start `v`'s plan with, once.
fn grant(ctx: &ServerContext, call: &Call, v: &Validation) -> String {
    ctx.grants.issue(
        GrantKind::Analysis,
        &call.grantee(),
        &v.validation_id,
        v.dataset
            .as_ref()
            .map(|d| (d.reference.clone(), d.sha256.clone())),
    )
}

/// The refusal of a `validation_id` that cannot start `validation`.
fn refused(given: &str, refusal: Refusal, validation: &Validation) -> ToolError {
    if let Refusal::OtherContent {
        dataset: Some((reference, sha256)),
    } = &refusal
        && let Some(dataset) = &validation.dataset
        && sha256 != &dataset.sha256
    {
        return ToolError::new(
            ErrorCode::DatasetChanged,
            format!(
                "dataset '{reference}' changed since validation {given}: sha256 was {sha256}, now {}",
                dataset.sha256
            ),
            "call validate_analysis again so the new bytes are checked, review the plan, then start with the new validation_id",
        )
        .field("dataset");
    }
    ToolError::new(
        ErrorCode::StaleValidation,
        format!(
            "validation {given} cannot start this run: {}",
            refusal.reason()
        ),
        "call validate_analysis (or start_analysis without confirm) again in this session, review the new plan, then start with its validation_id",
    )
    .field("validation_id")
}

/// The `start_analysis` tool.
pub(super) struct StartAnalysis;

impl ToolHandler for StartAnalysis {
    const NAME: &'static str = "start_analysis";
    const DESCRIPTION: &'static str = "Start an analysis in the background after validating it again (and re-checking the dataset bytes). Returns a run id at once; then call get_run_result. Without `confirm: true` where this server requires confirmation (or with `confirm: false` anywhere) it starts nothing and returns a preview: the exact plan and command line, the expected artifacts and the estimated resources. Show the preview to the person and call again with `confirm: true` and its `validation_id` only after they agree.";
    const READ_ONLY: bool = false;
    type Request = StartRequest;
    type Output = StartOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        call: &Call,
        req: StartRequest,
    ) -> Result<StartOutput, ToolError> {
        start(ctx, call, req).await
    }
}

pub(super) async fn start(
    ctx: &Arc<ServerContext>,
    call: &Call,
    req: StartRequest,
) -> Result<StartOutput, ToolError> {
    let required = ctx.confirm == ConfirmMode::Required;
    let execute = req.confirm.unwrap_or(!required);
    if execute && required && req.validation_id.is_none() {
        return Err(ToolError::new(
            ErrorCode::ConfirmationRequired,
            "this server starts a run only with confirm: true together with the validation_id of the preview the person approved, and no validation_id was given",
            "call start_analysis without confirm (or validate_analysis) to get the plan, show it to the person, and after they agree call start_analysis again with confirm: true and that validation_id",
        )
        .field("validation_id"));
    }
    let analysis = req.analysis();
    // Validated afresh: the dataset is re-hashed now, so bytes changed since an earlier
    // validate_analysis are caught before any process exists.
    let validation = validate_request(
        &ctx.adapter,
        &ctx.validators,
        &ctx.datasets,
        &ctx.runtime,
        &analysis,
    )
    .await?;
    let mut validation = validation;
    let grantee = call.grantee();
    if let Some(given) = &req.validation_id {
        ctx.grants
            .check(
                GrantKind::Analysis,
                given,
                &grantee,
                &validation.validation_id,
            )
            .map_err(|r| refused(given, r, &validation))?;
    }
    if !execute {
        validation.validation_id = grant(ctx, call, &validation);
        let pending = super::runs::all(ctx)
            .await?
            .iter()
            .filter(|r| !r.state.is_terminal())
            .count();
        return Ok(preview(ctx, call, validation, required, pending));
    }
    let mut request = serde_json::to_value(&analysis).expect("request serializes");
    if let Some(recorded) = request.as_object_mut() {
        // Who started the run (a token's name, `loopback` or `stdio`) and whether they
        // confirmed a preview, kept with the run for good.
        recorded.insert("started_by".into(), call.caller.name().into());
        recorded.insert("confirmed".into(), (req.confirm == Some(true)).into());
    }
    // The runtime identity goes into the run manifest; a runtime that cannot be probed is
    // recorded as unknown rather than blocking a run the plan says can start.
    let probe = ctx.runtime.probe().await.ok();
    // The confirmation is used now, atomically (two racing starts with one id start one
    // run), and given back if the start is refused (e.g. too many runs).
    if let Some(given) = &req.validation_id {
        ctx.grants
            .take(
                GrantKind::Analysis,
                given,
                &grantee,
                &validation.validation_id,
            )
            .map_err(|r| refused(given, r, &validation))?;
        // The run records the id the person approved.
        validation.validation_id = given.clone();
    }
    // Counting the pending runs of every server sharing the runs directory (a status.json
    // read per run) and writing the run's records durably are blocking work: off the async
    // workers, so a long history or a slow disk never holds up other tool calls.
    let status = {
        let (runs, validation) = (Arc::clone(&ctx.runs), validation.clone());
        tokio::task::spawn_blocking(move || runs.start(&validation, &request, probe))
            .await
            .map_err(|e| ToolError::internal(format!("starting the run panicked: {e}")))
            .and_then(|started| started)
            .inspect_err(|_| {
                if let Some(given) = &req.validation_id {
                    ctx.grants.release(given);
                }
            })?
    };
    Ok(StartOutput {
        started: true,
        run_id: Some(status.run_id.clone()),
        state: Some(status.state),
        validation_id: validation.validation_id,
        plan_sha256: validation.plan_sha256,
        dataset_sha256: validation.dataset.map(|d| d.sha256),
        preview: None,
        next_action: format!("call get_run_result with run_id \"{}\"", status.run_id),
    })
}

fn preview(
    ctx: &ServerContext,
    call: &Call,
    validation: Validation,
    required: bool,
    runs_pending_now: usize,
) -> StartOutput {
    let limits = ctx.adapter.manifest.effective_limits();
    let plan = validation.plan;
    let next_action = if validation.ready {
        format!(
            "nothing was started: show the person this plan (command_line, expected_artifacts, estimated_resources) and wait for their explicit go-ahead; then call start_analysis again with the same arguments, confirm: true and validation_id \"{}\"",
            validation.validation_id
        )
    } else {
        "nothing was started, and the analysis cannot start yet: resolve the blockers, then ask for a new preview".to_string()
    };
    StartOutput {
        started: false,
        run_id: None,
        state: None,
        validation_id: validation.validation_id,
        plan_sha256: validation.plan_sha256,
        dataset_sha256: validation.dataset.as_ref().map(|d| d.sha256.clone()),
        preview: Some(StartPreview {
            confirmation_required: required,
            ready: validation.ready,
            blockers: validation.blockers,
            workflow: validation.workflow,
            resolved_parameters: validation.resolved_parameters,
            command_line: command_line(&plan.program, &plan.args),
            expected_artifacts: plan
                .artifacts
                .iter()
                .map(|a| ExpectedArtifact {
                    id: a.id.clone(),
                    path: a.path.clone(),
                    media_type: a.media_type.clone(),
                    required: a.required,
                })
                .collect(),
            estimated_resources: EstimatedResources {
                timeout_s: plan.timeout_s,
                dataset_bytes: validation.dataset.as_ref().map_or(0, |d| d.size_bytes),
                input_bytes: validation
                    .inputs
                    .iter()
                    .flat_map(|i| &i.files)
                    .map(|f| f.planned.size_bytes)
                    .sum(),
                max_log_bytes: limits.max_log_bytes,
                max_artifacts: limits.max_artifacts,
                max_artifact_bytes: limits.max_artifact_bytes,
                runs_pending_now,
                max_pending_runs: limits.max_pending_runs,
                max_concurrent_runs: limits.max_concurrent_runs,
            },
            started_by: call.caller.name().to_string(),
            plan,
        }),
        next_action,
    }
}

/// `program args…` quoted the way a POSIX shell reader expects, for display only.
fn command_line(program: &str, args: &[String]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '/' | ':' | '=' | '@' | '%' | '+' | ',')
        });
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        assert_eq!(
            command_line(
                "/opt/py thon/bin/python",
                &[
                    "-m".into(),
                    "refsci".into(),
                    "it's".into(),
                    "".into(),
                    "{\"a\":1}".into()
                ]
            ),
            r#"'/opt/py thon/bin/python' -m refsci 'it'\''s' '' '{"a":1}'"#
        );
    }
}
