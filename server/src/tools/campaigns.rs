//! `start_campaign`, `get_campaign_status`, `get_campaign_result` and `cancel_campaign`:
//! one workflow over many items, validated item by item before anything runs, with the
//! same plan-then-confirm rule as `start_analysis` and `cancel_run`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::handler::{Call, ToolHandler};
use crate::campaigns::request::{
    CampaignItem, CampaignResultRequest, CampaignStatusRequest, CancelCampaignRequest,
    StartCampaignRequest,
};
use crate::campaigns::{
    CampaignCounts, CampaignRecord, CampaignState, ColumnSummary, ItemRecord, ItemStatus,
    MAX_ITEMS, Prepared, Row, counts, item_statuses, table,
};
use crate::context::{ConfirmMode, ServerContext};
use crate::envelope::{ErrorCode, Issue, ToolError};
use crate::grants::{GrantKind, Refusal};
use crate::paging::Page;
use crate::request::AnalysisRequest;
use crate::validate::validate as validate_request;

/// Most Slurm array tasks running at once one campaign may ask for.
const MAX_ARRAY_THROTTLE: u32 = 1000;
/// How often a waiting `get_campaign_result` looks at the campaign.
const RESULT_POLL: Duration = Duration::from_millis(500);

/// `start_campaign` output: a started campaign, or (`started: false`) a preview.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StartCampaignOutput {
    pub started: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub campaign_id: Option<String>,
    /// Items in the campaign (after expanding a grid).
    pub items: usize,
    pub max_concurrent: u32,
    /// `local` or `slurm`.
    pub executor: String,
    /// The summary table's columns.
    pub columns: Vec<String>,
    /// This session's one-time confirmation of exactly these items (valid 15 minutes): pass
    /// it with `confirm: true` to start them.
    pub preview_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<CampaignPreview>,
    pub next_action: String,
}

/// The items a confirmed start would run (first page).
#[derive(Debug, Serialize, JsonSchema)]
pub struct CampaignPreview {
    pub confirmation_required: bool,
    pub items: Page<PreviewItem>,
}

/// One validated item.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PreviewItem {
    pub index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub inputs: crate::inputs::RequestInputs,
    pub parameters: serde_json::Map<String, Value>,
    pub validation_id: String,
    pub plan_sha256: String,
}

/// `get_campaign_status` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CampaignStatusOutput {
    pub campaign_id: String,
    pub workflow: String,
    pub executor: String,
    pub state: CampaignState,
    pub max_concurrent: u32,
    pub created_at: String,
    /// The Slurm job array running the items (`<id>_<index>` is each item's job).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array_job_id: Option<String>,
    pub counts: CampaignCounts,
    /// Items in order, paged.
    pub items: Page<ItemStatus>,
    pub next_action: String,
}

/// The summary table: a page of rows, with every column's summary.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TableView {
    /// `artifact.key` of each value in a row.
    pub columns: Vec<String>,
    pub rows: Page<Row>,
    /// Count, min, max and mean of each numeric column over every row (all pages).
    pub summary: Vec<ColumnSummary>,
}

/// `get_campaign_result` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CampaignResultOutput {
    pub campaign_id: String,
    pub state: CampaignState,
    /// True when every item has ended.
    pub terminal: bool,
    /// Seconds this call waited.
    pub waited_s: f64,
    pub counts: CampaignCounts,
    pub table: TableView,
    /// For an answer that is still pending: seconds after which to call again (0: at
    /// once; the next call waits again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u32>,
    pub next_action: String,
}

/// `cancel_campaign` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CancelCampaignOutput {
    pub campaign_id: String,
    pub state: CampaignState,
    /// False when nothing changed: the campaign had ended, or this was a preview.
    pub changed: bool,
    pub confirmation_required: bool,
    pub counts: CampaignCounts,
    pub message: String,
}

fn word<T: Serialize>(v: T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// The items of the request, from `items` or the expanded `grid`.
fn items_of(req: &StartCampaignRequest) -> Result<Vec<CampaignItem>, ToolError> {
    let invalid = |m: String, field: &str| {
        ToolError::new(
            ErrorCode::InvalidRequest,
            m,
            "give the items as `items` (a list of {dataset, parameters}) or `grid`, with 1 to 1000 items",
        )
        .field(field)
    };
    let items = match (&req.items, &req.grid) {
        (Some(items), None) => items.clone(),
        (None, Some(grid)) => crate::campaigns::expand(grid).map_err(|m| invalid(m, "grid"))?,
        (Some(_), Some(_)) => {
            return Err(invalid("give `items` or `grid`, not both".into(), "items"));
        }
        (None, None) => return Err(invalid("no `items` and no `grid`".into(), "items")),
    };
    if items.is_empty() || items.len() > MAX_ITEMS {
        return Err(invalid(
            format!(
                "a campaign has 1 to {MAX_ITEMS} items; this one has {}",
                items.len()
            ),
            "items",
        ));
    }
    Ok(items)
}

/// The summary table's columns: those asked for, each a declared `json_keys` entry or
/// `[[workflow.metric]]` (`<from>.<id>`); by default every key of the first artifact that
/// declares some, else every metric that reports one value (not `all`).
fn columns_of(ctx: &ServerContext, req: &StartCampaignRequest) -> Result<Vec<String>, ToolError> {
    let workflow = ctx.adapter.workflow(&req.workflow).ok_or_else(|| {
        ToolError::new(
            ErrorCode::UnknownWorkflow,
            format!(
                "adapter '{}' has no workflow '{}'",
                ctx.adapter.manifest.name, req.workflow
            ),
            "pick one of the allowed workflows (get_capabilities describes each)",
        )
        .field("workflow")
        .allowed(ctx.adapter.workflow_ids())
    })?;
    let declared: Vec<String> = workflow
        .artifacts
        .iter()
        .flat_map(|a| a.json_keys.iter().map(move |k| format!("{}.{k}", a.id)))
        .chain(
            workflow
                .metrics
                .iter()
                .map(|m| format!("{}.{}", m.from, m.id)),
        )
        .collect();
    match &req.metrics {
        Some(asked) => {
            if let Some(bad) = asked.iter().find(|m| !declared.contains(m)) {
                return Err(ToolError::new(
                    ErrorCode::InvalidRequest,
                    format!("'{bad}' is not a metric the workflow declares"),
                    "name metrics as artifact.key among the allowed values",
                )
                .field("metrics")
                .allowed(declared));
            }
            Ok(asked.clone())
        }
        None => Ok(workflow
            .artifacts
            .iter()
            .find(|a| !a.json_keys.is_empty())
            .map(|a| {
                a.json_keys
                    .iter()
                    .map(|k| format!("{}.{k}", a.id))
                    .collect()
            })
            .unwrap_or_else(|| {
                workflow
                    .metrics
                    .iter()
                    .filter(|m| !m.all)
                    .map(|m| format!("{}.{}", m.from, m.id))
                    .collect()
            })),
    }
}

/// The `start_campaign` tool.
pub(super) struct StartCampaign;

impl ToolHandler for StartCampaign {
    const NAME: &'static str = "start_campaign";
    const DESCRIPTION: &'static str = "Run one workflow over many items (datasets and parameter sets, given as `items` or a `grid` to expand) as one tracked campaign, at most `max_concurrent` items at once (locally through the run queue, on Slurm as one job array). Every item is validated first: one invalid item starts nothing, and every problem is reported with its item index. Failing items do not stop the others. Plan-then-confirm as for start_analysis: without `confirm: true` where confirmation is required (or with `confirm: false`) it validates and previews only; confirm with the preview's `preview_id`.";
    const READ_ONLY: bool = false;
    type Request = StartCampaignRequest;
    type Output = StartCampaignOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        call: &Call,
        req: StartCampaignRequest,
    ) -> Result<StartCampaignOutput, ToolError> {
        start(ctx, call, req).await
    }
}

pub(super) async fn start(
    ctx: &Arc<ServerContext>,
    call: &Call,
    req: StartCampaignRequest,
) -> Result<StartCampaignOutput, ToolError> {
    let required = ctx.confirm == ConfirmMode::Required;
    let execute = req.confirm.unwrap_or(!required);
    let columns = columns_of(ctx, &req)?;
    let items = items_of(&req)?;
    let executor = ctx.runs.executor().kind().to_string();
    let limits = ctx.adapter.manifest.effective_limits();
    let most = match ctx.runs.executor().slurm() {
        None => limits.max_pending_runs,
        Some(_) => MAX_ARRAY_THROTTLE,
    };
    crate::paging::in_range(
        "max_concurrent",
        req.max_concurrent as usize,
        1,
        most as usize,
        if executor == "local" {
            "locally at most max_pending_runs of the adapter's limits"
        } else {
            "the job array's throttle"
        },
    )?;
    // Every item is validated (its dataset hashed) before anything is created or started.
    let mut validations = Vec::with_capacity(items.len());
    let mut issues = Vec::new();
    let mut first_code = None;
    for (i, item) in items.iter().enumerate() {
        let analysis = AnalysisRequest {
            workflow: req.workflow.clone(),
            dataset: item.dataset.clone(),
            inputs: item.inputs.clone(),
            parameters: item.parameters.clone(),
            expected_dataset_sha256: None,
        };
        match validate_request(
            &ctx.adapter,
            &ctx.validators,
            &ctx.datasets,
            &ctx.runtime,
            &analysis,
        )
        .await
        {
            Ok(v) => validations.push(v),
            Err(e) => {
                first_code.get_or_insert(e.code);
                let prefix = |f: &str| {
                    if f.is_empty() {
                        format!("items[{i}]")
                    } else {
                        format!("items[{i}].{f}")
                    }
                };
                if e.issues.is_empty() {
                    issues.push(Issue {
                        field: prefix(e.field.as_deref().unwrap_or("")),
                        message: e.message,
                        allowed: e.allowed,
                    });
                } else {
                    issues.extend(e.issues.into_iter().map(|is| Issue {
                        field: prefix(&is.field),
                        ..is
                    }));
                }
            }
        }
    }
    if let Some(code) = first_code {
        let bad: std::collections::BTreeSet<usize> = issues
            .iter()
            .filter_map(|i| {
                let index = i.field.strip_prefix("items[")?.split(']').next()?;
                index.parse().ok()
            })
            .collect();
        return Err(ToolError::new(
            code,
            format!(
                "{} of {} items are invalid (items {}); nothing was started",
                bad.len(),
                items.len(),
                bad.iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "fix the listed items (each issue names its item) and start the campaign again",
        )
        .issues(issues));
    }
    if let Some(blocked) = validations.iter().find(|v| !v.ready) {
        let why: Vec<&str> = blocked
            .blockers
            .iter()
            .map(|b| b.message.as_str())
            .collect();
        return Err(ToolError::new(
            ErrorCode::NotReady,
            format!("the campaign cannot start: {}", why.join("; ")),
            "resolve the blockers (get_environment shows the runtime), then start again",
        ));
    }
    // What the person approves: these items' validations, the bound and the columns. The
    // preview_id is a grant this server issues for it to this session, not the hash itself.
    let content = scimcp_core::hash::canonical_sha256_of(&serde_json::json!({
        "workflow": req.workflow,
        "max_concurrent": req.max_concurrent,
        "columns": columns,
        "validations": validations.iter().map(|v| v.validation_id.as_str()).collect::<Vec<_>>(),
    }));
    let grantee = call.grantee();
    if execute && required && req.preview_id.is_none() {
        return Err(ToolError::new(
            ErrorCode::ConfirmationRequired,
            "this server starts a campaign only with confirm: true together with the preview_id of the preview the person approved",
            "call start_campaign without confirm to get the preview, show it to the person, and after they agree call again with confirm: true and its preview_id",
        )
        .field("preview_id"));
    }
    let refused = |given: &str, r: Refusal| {
        ToolError::new(
            ErrorCode::StaleValidation,
            format!("preview {given} cannot start this campaign: {}", r.reason()),
            "call start_campaign without confirm again in this session for a new preview, show it to the person, and after they agree call again with confirm: true and its preview_id",
        )
        .field("preview_id")
    };
    if let Some(given) = &req.preview_id {
        ctx.grants
            .check(GrantKind::Campaign, given, &grantee, &content)
            .map_err(|r| refused(given, r))?;
    }
    let preview_id = match (&req.preview_id, execute) {
        (Some(given), true) => given.clone(),
        _ => ctx
            .grants
            .issue(GrantKind::Campaign, &grantee, &content, None),
    };
    let summary =
        |started: bool, campaign_id: Option<String>, next_action: String| StartCampaignOutput {
            started,
            campaign_id,
            items: items.len(),
            max_concurrent: req.max_concurrent,
            executor: executor.clone(),
            columns: columns.clone(),
            preview_id: preview_id.clone(),
            preview: None,
            next_action,
        };
    if !execute {
        let shown: Vec<PreviewItem> = items
            .iter()
            .zip(&validations)
            .enumerate()
            .map(|(index, (item, v))| PreviewItem {
                index,
                dataset: item.dataset.clone(),
                inputs: item.inputs.clone(),
                parameters: item.parameters.clone(),
                validation_id: v.validation_id.clone(),
                plan_sha256: v.plan_sha256.clone(),
            })
            .collect();
        return Ok(StartCampaignOutput {
            preview: Some(CampaignPreview {
                confirmation_required: required,
                items: Page::of(&shown, 0, 20),
            }),
            ..summary(
                false,
                None,
                format!(
                    "nothing was started: every item is valid. Show the person what would run ({} items, at most {} at once); after they agree call start_campaign again with the same arguments, confirm: true and preview_id \"{preview_id}\"",
                    items.len(),
                    req.max_concurrent
                ),
            )
        });
    }
    let campaign_id = crate::campaigns::CampaignManager::new_id();
    let requests: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut request = serde_json::json!({
                "workflow": req.workflow,
                "parameters": item.parameters,
                "started_by": call.caller.name(),
                "confirmed": req.confirm == Some(true),
                "campaign_id": campaign_id,
                "campaign_item": i,
            });
            // Only what the item has, so a dataset item's request reads as it always did.
            if let Some(dataset) = &item.dataset {
                request["dataset"] = Value::String(dataset.clone());
            }
            if !item.inputs.is_empty() {
                request["inputs"] = serde_json::to_value(&item.inputs).expect("inputs serialize");
            }
            request
        })
        .collect();
    let record = CampaignRecord {
        schema_version: crate::campaigns::SCHEMA_VERSION,
        campaign_id: campaign_id.clone(),
        adapter: ctx.adapter.manifest.name.clone(),
        workflow: req.workflow.clone(),
        executor: executor.clone(),
        max_concurrent: req.max_concurrent,
        columns: columns.clone(),
        created_at: crate::runs::state::now(),
        started_by: call.caller.name().to_string(),
        array_job_id: None,
        cancelled: false,
        adapter_sha256: None,
        items: items
            .iter()
            .zip(&validations)
            .enumerate()
            .map(|(index, (item, v))| ItemRecord {
                index,
                dataset: item.dataset.clone().unwrap_or_default(),
                parameters: item.parameters.clone(),
                validation_id: v.validation_id.clone(),
                run_id: None,
                start_error: None,
                resume: None,
            })
            .collect(),
    };
    let probe = ctx.runtime.probe().await.ok();
    if let Some(given) = &req.preview_id {
        ctx.grants
            .take(GrantKind::Campaign, given, &grantee, &content)
            .map_err(|r| refused(given, r))?;
    }
    tracing::info!(
        campaign_id,
        items = items.len(),
        by = call.caller.name(),
        "starting a campaign"
    );
    ctx.campaigns
        .start(
            &ctx.runs,
            Prepared {
                record,
                validations,
                requests,
            },
            probe,
        )
        .inspect_err(|_| {
            if let Some(given) = &req.preview_id {
                ctx.grants.release(given);
            }
        })?;
    Ok(summary(
        true,
        Some(campaign_id.clone()),
        format!(
            "call get_campaign_status (states and counts) or get_campaign_result (waits; the summary table) with campaign_id \"{campaign_id}\""
        ),
    ))
}

/// The `get_campaign_status` tool.
pub(super) struct GetCampaignStatus;

impl ToolHandler for GetCampaignStatus {
    const NAME: &'static str = "get_campaign_status";
    const DESCRIPTION: &'static str = "A campaign's state, its counts per state, and its items (paged) with each item's run, state and reason.";
    const READ_ONLY: bool = true;
    type Request = CampaignStatusRequest;
    type Output = CampaignStatusOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        _call: &Call,
        req: CampaignStatusRequest,
    ) -> Result<CampaignStatusOutput, ToolError> {
        status(ctx, req)
    }
}

pub(super) fn status(
    ctx: &ServerContext,
    req: CampaignStatusRequest,
) -> Result<CampaignStatusOutput, ToolError> {
    let limit = crate::paging::page_limit("limit", req.limit, 50, req.detail, 100, 1000)?;
    let record = ctx.campaigns.record(&req.campaign_id)?;
    let items = item_statuses(&record, &ctx.runs);
    let c = counts(&items);
    let state = crate::campaigns::view_state(&record, &c);
    Ok(CampaignStatusOutput {
        next_action: if state.is_terminal() {
            "call get_campaign_result for the summary table".into()
        } else {
            "call get_campaign_result to wait for the end (or cancel_campaign)".into()
        },
        campaign_id: record.campaign_id.clone(),
        workflow: record.workflow.clone(),
        executor: record.executor.clone(),
        state,
        max_concurrent: record.max_concurrent,
        created_at: record.created_at.clone(),
        array_job_id: record.array_job_id.clone(),
        counts: c,
        items: crate::campaigns::items_page(&record.campaign_id, &items, req.offset, limit),
    })
}

/// The `get_campaign_result` tool.
pub(super) struct GetCampaignResult;

impl ToolHandler for GetCampaignResult {
    const NAME: &'static str = "get_campaign_result";
    const DESCRIPTION: &'static str = "Wait up to `wait_s` seconds (at most 300; by default as long as this client lets one call run, less a margin) for a campaign to end (a pending answer has `retry_after_s`: call again then); returns each item's run and state with a summary table of the workflow's declared metrics (rows paged; count, min, max and mean per column) and, for failed items, their reason and error.";
    const READ_ONLY: bool = true;
    type Request = CampaignResultRequest;
    type Output = CampaignResultOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        call: &Call,
        req: CampaignResultRequest,
    ) -> Result<CampaignResultOutput, ToolError> {
        result(ctx, call, req).await
    }
}

pub(super) async fn result(
    ctx: &ServerContext,
    call: &Call,
    req: CampaignResultRequest,
) -> Result<CampaignResultOutput, ToolError> {
    let begun = Instant::now();
    let plan = crate::paging::wait_for(req.wait_s, &call.deadline(ctx))?;
    let wait = plan.duration();
    let limit = crate::paging::page_limit("limit", req.limit, 50, req.detail, 100, 1000)?;
    loop {
        let record = ctx.campaigns.record(&req.campaign_id)?;
        let items = item_statuses(&record, &ctx.runs);
        let c = counts(&items);
        let state = crate::campaigns::view_state(&record, &c);
        if state.is_terminal() || begun.elapsed() >= wait {
            let t = table(&record, &items, &ctx.runs);
            return Ok(CampaignResultOutput {
                campaign_id: record.campaign_id.clone(),
                state,
                terminal: state.is_terminal(),
                waited_s: (begun.elapsed().as_secs_f64() * 10.0).round() / 10.0,
                retry_after_s: (!state.is_terminal()).then(|| plan.retry_after_s()),
                next_action: if state.is_terminal() {
                    "summarize the table for the scientist: the counts, the failed items with their errors, and the metrics' summary".into()
                } else {
                    let retry = plan.retry_after_s();
                    format!(
                        "the campaign is still {} after this call's wait ({}); call get_campaign_result again {} with campaign_id \"{}\"",
                        word(state),
                        plan.why,
                        if retry == 0 {
                            "now".to_string()
                        } else {
                            format!("in {retry} s")
                        },
                        record.campaign_id
                    )
                },
                counts: c,
                table: TableView {
                    columns: record.columns.clone(),
                    rows: Page::of(&t.rows, req.offset, limit),
                    summary: t.summary,
                },
            });
        }
        tokio::time::sleep(RESULT_POLL.min(wait.saturating_sub(begun.elapsed()))).await;
    }
}

/// The `cancel_campaign` tool.
pub(super) struct CancelCampaign;

impl ToolHandler for CancelCampaign {
    const NAME: &'static str = "cancel_campaign";
    const DESCRIPTION: &'static str = "Cancel a campaign: items not started never start, queued and running items are cancelled (their process trees ended, or their Slurm tasks scancelled). Plan-then-confirm as for cancel_run.";
    const READ_ONLY: bool = false;
    type Request = CancelCampaignRequest;
    type Output = CancelCampaignOutput;
    async fn run(
        ctx: &Arc<ServerContext>,
        call: &Call,
        req: CancelCampaignRequest,
    ) -> Result<CancelCampaignOutput, ToolError> {
        cancel(ctx, call, req).await
    }
}

pub(super) async fn cancel(
    ctx: &ServerContext,
    call: &Call,
    req: CancelCampaignRequest,
) -> Result<CancelCampaignOutput, ToolError> {
    let required = ctx.confirm == ConfirmMode::Required;
    if !req.confirm.unwrap_or(!required) {
        let record = ctx.campaigns.record(&req.campaign_id)?;
        let items = item_statuses(&record, &ctx.runs);
        let c = counts(&items);
        let state = crate::campaigns::view_state(&record, &c);
        return Ok(CancelCampaignOutput {
            message: format!(
                "nothing was cancelled: campaign {} ({} items of {}: {} waiting, {} queued, {} running) is {}. Show this to the person; after they agree, call cancel_campaign again with confirm: true",
                record.campaign_id,
                c.total,
                record.workflow,
                c.waiting,
                c.queued,
                c.running,
                word(state)
            ),
            campaign_id: record.campaign_id,
            state,
            changed: false,
            confirmation_required: required,
            counts: c,
        });
    }
    tracing::info!(
        campaign_id = req.campaign_id,
        by = call.caller.name(),
        "cancelling a campaign"
    );
    let (record, changed) = ctx
        .campaigns
        .cancel(&ctx.runs, &req.campaign_id, Duration::from_secs(30))
        .await?;
    let items = item_statuses(&record, &ctx.runs);
    let c = counts(&items);
    let state = crate::campaigns::view_state(&record, &c);
    Ok(CancelCampaignOutput {
        message: if changed {
            format!(
                "campaign {} is {}: {} items cancelled, {} had ended before",
                record.campaign_id,
                word(state),
                c.cancelled,
                c.succeeded + c.partial_failure + c.failed
            )
        } else {
            format!(
                "campaign {} had already ended or been cancelled ({}); nothing changed",
                record.campaign_id,
                word(state)
            )
        },
        campaign_id: record.campaign_id,
        state,
        changed,
        confirmation_required: required,
        counts: c,
    })
}
