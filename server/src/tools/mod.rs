//! The fifteen MCP tools: their catalog (names, descriptions, input and output schemas,
//! annotations) and the dispatcher that parses arguments strictly and wraps every answer
//! in structured content or the one error envelope.

mod analysis;
mod campaigns;
mod capabilities;
mod datasets;
mod environment;
mod runs;

use std::sync::Arc;

use rmcp::model::{CallToolResult, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;

use crate::envelope::{ErrorCode, ToolError, parse_args};
#[cfg(test)]
use crate::paging::COMPACT_CEILING;
use crate::paging::Detail;
use crate::request::{
    AnalysisRequest, CancelRequest, CapabilitiesRequest, DatasetsRequest, InspectRequest,
    ListRunsRequest, LogRequest, NoArguments, ResultRequest, RunRef, StartRequest,
};
use crate::server::ServerContext;

/// Who is calling a tool, and where to report progress.
#[derive(Debug, Clone)]
pub struct Call {
    pub caller: crate::auth::Caller,
    /// The MCP session, unique in this process (a confirmation is granted to one session).
    pub session: Arc<str>,
    /// The client's declared name (`initialize`'s `clientInfo.name`), when it gave one.
    pub client: Option<String>,
    /// Set when the client asked for progress notifications (`_meta.progressToken`).
    pub progress: Option<Progress>,
}

impl Call {
    /// Whom a confirmation issued in this call belongs to: this MCP session of this caller.
    pub fn grantee(&self) -> String {
        format!("{}/{}", self.caller.name(), self.session)
    }

    /// The deadline this call's client gives one tool call.
    pub fn deadline(&self, ctx: &ServerContext) -> crate::paging::ClientDeadline {
        crate::paging::ClientDeadline::of(ctx.client_timeout_s, self.client.as_deref())
    }

    /// A call from the stdio client without progress (tests, in-process use).
    pub fn stdio() -> Call {
        Call {
            caller: crate::auth::Caller::Stdio,
            session: "stdio".into(),
            client: None,
            progress: None,
        }
    }
}

/// Sends `notifications/progress` for one request.
#[derive(Clone)]
pub struct Progress {
    peer: rmcp::Peer<rmcp::RoleServer>,
    token: rmcp::model::ProgressToken,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("token", &self.token)
            .finish()
    }
}

impl Progress {
    pub fn new(peer: rmcp::Peer<rmcp::RoleServer>, token: rmcp::model::ProgressToken) -> Self {
        Progress { peer, token }
    }

    /// Report `progress` (which only grows) of `total`, with a message; a client that went
    /// away is not an error of the tool. The message loses control, bidirectional and
    /// line-separator characters here, whatever produced it (a state name, a CLI's line).
    pub async fn report(&self, progress: f64, total: Option<f64>, message: String) {
        let mut param = rmcp::model::ProgressNotificationParam::new(self.token.clone(), progress)
            .with_message(scimcp_core::manifest::safe_text(&message));
        if let Some(total) = total {
            param = param.with_total(total);
        }
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!("progress notification not delivered: {e}");
        }
    }
}

pub use analysis::{StartOutput, StartPreview};
pub use campaigns::{
    CampaignResultOutput, CampaignStatusOutput, CancelCampaignOutput, StartCampaignOutput,
};
pub use capabilities::CapabilitiesOutput;
pub use datasets::{DatasetsOutput, InspectOutput};
pub use environment::EnvironmentOutput;
pub use runs::{CancelOutput, LogOutput, ResultOutput, RunsOutput, StatusOutput};

/// Every tool name, in catalog order.
pub const TOOL_NAMES: &[&str] = &[
    "get_capabilities",
    "list_datasets",
    "inspect_dataset",
    "validate_analysis",
    "start_analysis",
    "get_run_status",
    "get_run_result",
    "cancel_run",
    "list_runs",
    "get_run_log",
    "get_environment",
    "start_campaign",
    "get_campaign_status",
    "get_campaign_result",
    "cancel_campaign",
];

fn tool<I: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    read_only: bool,
) -> Tool {
    let mut tool = Tool::new(name, description, Arc::new(serde_json::Map::new()))
        .with_input_schema::<I>()
        .with_output_schema::<O>();
    tool.input_schema = Arc::new(portable_schema(tool.input_schema.as_ref().clone()));
    tool.output_schema = tool
        .output_schema
        .map(|schema| Arc::new(portable_schema(schema.as_ref().clone())));
    tool.with_annotations(
        ToolAnnotations::new()
            .read_only(read_only)
            .destructive(false)
            .idempotent(read_only)
            .open_world(false),
    )
}

/// `schema` rewritten in the most portable spelling of the same contract, because clients
/// translate tool schemas into narrower dialects and refuse what they cannot map:
/// - a boolean subschema (schemars writes `true` for a free-form field) becomes an object:
///   `{}` for `true`, `{"not": {}}` for `false`. The TypeScript MCP SDK, which many clients
///   are built on, refuses a property whose schema is not an object, and with it the whole
///   `tools/list` (found by the official MCP conformance suite);
/// - a nullable type (`"type": ["string", "null"]`, schemars' spelling of `Option`) becomes
///   `anyOf` branches with one type each, which single-type dialects such as the OpenAPI
///   subset of Gemini's function declarations accept (flagged by the MCP Inspector's
///   `--strict` check);
/// - a `format` outside the JSON Schema 2020-12 vocabulary (schemars writes Rust's integer
///   widths, `uint64`, `uint32`, `uint`, `int32`, …, and `double`) is dropped, its meaning
///   kept as `minimum`/`maximum` where the type bounds the value: validators warn about
///   every unknown format (Gemini CLI and Claude Code print one line each, hundreds per
///   session).
///
/// `additionalProperties` keeps its boolean: that form is universal.
fn portable_schema(
    schema: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::{Map, Value};
    /// Keywords that describe a schema rather than constrain it: they stay outside `anyOf`.
    const ANNOTATIONS: &[&str] = &[
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
    ];
    fn objectify(schema: &mut Value) {
        match schema {
            Value::Bool(true) => *schema = Value::Object(Map::new()),
            Value::Bool(false) => *schema = serde_json::json!({"not": {}}),
            _ => {}
        }
        walk(schema);
    }
    fn split_nullable(map: &mut Map<String, Value>) {
        let Some(Value::Array(types)) = map.get("type") else {
            return;
        };
        let mut branches: Vec<Value> = Vec::with_capacity(types.len());
        let types = types.clone();
        let mut constraints = Map::new();
        for (key, value) in std::mem::take(map) {
            if key == "type" {
                continue;
            }
            if ANNOTATIONS.contains(&key.as_str()) {
                map.insert(key, value);
            } else {
                constraints.insert(key, value);
            }
        }
        for t in types {
            let mut branch = Map::new();
            branch.insert("type".into(), t.clone());
            if t != "null" {
                branch.extend(constraints.clone());
            }
            branches.push(Value::Object(branch));
        }
        map.insert("anyOf".into(), Value::Array(branches));
    }
    /// The range a Rust number format implies: the bounds JSON numbers hold exactly (a
    /// 64-bit maximum would not survive a JavaScript client, so none is written).
    fn format_range(format: &str) -> Option<(Option<i64>, Option<i64>)> {
        Some(match format {
            "uint8" => (Some(0), Some(u8::MAX.into())),
            "uint16" => (Some(0), Some(u16::MAX.into())),
            "uint32" => (Some(0), Some(u32::MAX.into())),
            "uint64" | "uint" | "uint128" => (Some(0), None),
            "int8" => (Some(i8::MIN.into()), Some(i8::MAX.into())),
            "int16" => (Some(i16::MIN.into()), Some(i16::MAX.into())),
            "int32" => (Some(i32::MIN.into()), Some(i32::MAX.into())),
            "int64" | "int" | "int128" | "float" | "double" => (None, None),
            _ => return None,
        })
    }
    fn standard_format(map: &mut Map<String, Value>) {
        let Some(Value::String(format)) = map.get("format") else {
            return;
        };
        if STANDARD_FORMATS.contains(&format.as_str()) {
            return;
        }
        let range = format_range(format);
        map.remove("format");
        if let Some((min, max)) = range {
            // A bound the type already states narrower (a `range` attribute) stays.
            if let Some(min) = min {
                map.entry("minimum").or_insert(min.into());
            }
            if let Some(max) = max {
                map.entry("maximum").or_insert(max.into());
            }
        }
    }
    fn walk(schema: &mut Value) {
        let Value::Object(map) = schema else { return };
        standard_format(map);
        split_nullable(map);
        for (key, child) in map.iter_mut() {
            match (key.as_str(), child) {
                (
                    "properties" | "patternProperties" | "$defs" | "definitions",
                    Value::Object(children),
                ) => {
                    children.values_mut().for_each(objectify);
                }
                ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(children)) => {
                    children.iter_mut().for_each(objectify);
                }
                (
                    "items"
                    | "not"
                    | "if"
                    | "then"
                    | "else"
                    | "contains"
                    | "propertyNames"
                    | "additionalProperties",
                    child,
                ) if !child.is_boolean() || key != "additionalProperties" => {
                    objectify(child);
                }
                _ => {}
            }
        }
    }
    let mut root = Value::Object(schema);
    walk(&mut root);
    match root {
        Value::Object(map) => map,
        _ => unreachable!("walk keeps an object an object"),
    }
}

/// The `format` values of the JSON Schema 2020-12 format vocabulary (draft 2020-12,
/// Validation, section 7.3): the only ones a served schema may carry.
pub(crate) const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The tool list served on `tools/list`, read once per process from `catalog.json` (every
/// HTTP session and every repeated `tools/list` reuses it; the tools hold their schemas
/// behind `Arc`s, so a copy is cheap).
///
/// The file is [`generate_catalog`]'s output, checked in: generating the schemas from the
/// request and output types at every start cost more than the rest of a cold start to
/// `tools/list` (schemars walks every type, then each schema is made portable), where
/// parsing the result takes a tenth of that. `the_served_catalog_file_is_generated_from_the_types`
/// fails, naming the command that regenerates it, the moment a type and the file disagree.
pub fn catalog() -> Vec<Tool> {
    static CATALOG: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    CATALOG
        .get_or_init(|| {
            serde_json::from_str(CATALOG_JSON)
                .expect("catalog.json is generate_catalog's output (a test holds it so)")
        })
        .clone()
}

const CATALOG_JSON: &str = include_str!("catalog.json");

/// The tool list, generated from the request and output types (see [`catalog`]).
pub fn generate_catalog() -> Vec<Tool> {
    vec![
        tool::<CapabilitiesRequest, CapabilitiesOutput>(
            "get_capabilities",
            "What this server can run: the adapter, its workflows with their parameter schemas and artifacts, limits and runtime readiness. Pass `workflow` to get one workflow's exact schema and its hash.",
            true,
        ),
        tool::<DatasetsRequest, DatasetsOutput>(
            "list_datasets",
            "Data files the server may read: the adapter's built-in datasets (`builtin:<id>`) and the files at the top of the allowed directories whose format a workflow accepts (tables for workflows that read a dataset, the formats of named inputs), each with its kind and the inputs that accept it. Pass a `reference` as `dataset` or as an input.",
            true,
        ),
        tool::<InspectRequest, InspectOutput>(
            "inspect_dataset",
            "What one data file is and holds, with its size and SHA-256: its `kind` and format (by extension, then content), and for a table its columns (inferred types, missing counts), rows and first rows; for FASTA/FASTQ the records, lengths and alphabet; for PDB/PDBQT/mmCIF the models, chains, residues, atoms, elements and bounding box; for FITS every HDU's type, shape and header keys; for any other file whether it is text and its first lines. A non-table is never read as CSV.",
            true,
        ),
        tool::<AnalysisRequest, crate::validate::Validation>(
            "validate_analysis",
            "Check an analysis without running anything: strict parameter validation, dataset checks and hashing, readiness and blockers, and the exact plan (argv, stdin answers, expected artifacts) with its hashes and a validation id.",
            true,
        ),
        tool::<StartRequest, StartOutput>(
            "start_analysis",
            "Start an analysis in the background after validating it again (and re-checking the dataset bytes). Returns a run id at once; then call get_run_result. Without `confirm: true` where this server requires confirmation (or with `confirm: false` anywhere) it starts nothing and returns a preview: the exact plan and command line, the expected artifacts and the estimated resources. Show the preview to the person and call again with `confirm: true` and its `validation_id` only after they agree.",
            false,
        ),
        tool::<RunRef, StatusOutput>(
            "get_run_status",
            "The state of one run (queued, running, succeeded, partial_failure, failed, cancelled) and why it ended.",
            true,
        ),
        tool::<ResultRequest, ResultOutput>(
            "get_run_result",
            "Wait up to `wait_s` seconds (at most 300; by default as long as this client lets one call run, less a margin: 45 s for a client whose deadline is unknown) for a run to finish, sending progress notifications (state, elapsed time) when the request carries a progress token; returns its result (artifacts with SHA-256, reported metrics, problems) or a pending receipt with `retry_after_s`: call get_run_result again then, as many times as the run needs. Cancelling this call ends the wait, not the run.",
            true,
        ),
        tool::<CancelRequest, CancelOutput>(
            "cancel_run",
            "Stop a queued or running run: its whole process tree is ended and the run reads `cancelled`. Without `confirm: true` where this server requires confirmation (or with `confirm: false` anywhere) it cancels nothing and returns the run's status: show it to the person and call again with `confirm: true` only after they agree.",
            false,
        ),
        tool::<ListRunsRequest, RunsOutput>(
            "list_runs",
            "Runs in this server's state directory, newest first, paged with offset and limit.",
            true,
        ),
        tool::<LogRequest, LogOutput>(
            "get_run_log",
            "The tail of a run's stdout or stderr (bounded).",
            true,
        ),
        tool::<NoArguments, EnvironmentOutput>(
            "get_environment",
            "The scientific runtime: interpreter and version, installed versions of the pinned requirements (with mismatches), the adapter package's identity hash, and where runs execute (local, or a Slurm cluster with its partitions and limits).",
            true,
        ),
        tool::<crate::campaigns::request::StartCampaignRequest, StartCampaignOutput>(
            "start_campaign",
            "Run one workflow over many items (datasets and parameter sets, given as `items` or a `grid` to expand) as one tracked campaign, at most `max_concurrent` items at once (locally through the run queue, on Slurm as one job array). Every item is validated first: one invalid item starts nothing, and every problem is reported with its item index. Failing items do not stop the others. Plan-then-confirm as for start_analysis: without `confirm: true` where confirmation is required (or with `confirm: false`) it validates and previews only; confirm with the preview's `preview_id`.",
            false,
        ),
        tool::<crate::campaigns::request::CampaignStatusRequest, CampaignStatusOutput>(
            "get_campaign_status",
            "A campaign's state, its counts per state, and its items (paged) with each item's run, state and reason.",
            true,
        ),
        tool::<crate::campaigns::request::CampaignResultRequest, CampaignResultOutput>(
            "get_campaign_result",
            "Wait up to `wait_s` seconds (at most 300; by default as long as this client lets one call run, less a margin) for a campaign to end (a pending answer has `retry_after_s`: call again then); returns each item's run and state with a summary table of the workflow's declared metrics (rows paged; count, min, max and mean per column) and, for failed items, their reason and error.",
            true,
        ),
        tool::<crate::campaigns::request::CancelCampaignRequest, CancelCampaignOutput>(
            "cancel_campaign",
            "Cancel a campaign: items not started never start, queued and running items are cancelled (their process trees ended, or their Slurm tasks scancelled). Plan-then-confirm as for cancel_run.",
            false,
        ),
    ]
}

/// The tool result for `result`, refusing (explicitly, never by silent truncation) an answer
/// whose whole serialized response would exceed the view's ceiling.
fn respond<T: Serialize>(result: Result<T, ToolError>, detail: Detail) -> CallToolResult {
    let response = match result {
        Ok(value) => {
            CallToolResult::structured(serde_json::to_value(value).expect("tool output serializes"))
        }
        Err(e) => e.into_result(),
    };
    let size = serde_json::to_vec(&response)
        .map(|b| b.len())
        .unwrap_or(usize::MAX);
    if size <= detail.ceiling() {
        return response;
    }
    ToolError::new(
        ErrorCode::ResponseTooLarge,
        format!(
            "the answer is {size} bytes, above the {} byte ceiling of the {detail:?} view",
            detail.ceiling()
        ),
        "ask for a smaller page (offset/limit), or detail=\"full\" for the larger ceiling",
    )
    .into_result()
}

type Args = Option<serde_json::Map<String, serde_json::Value>>;

/// The detail view requested, when the arguments name one (for the ceiling check).
fn detail_of(args: &Args) -> Detail {
    args.as_ref()
        .and_then(|a| a.get("detail"))
        .and_then(|d| serde_json::from_value(d.clone()).ok())
        .unwrap_or_default()
}

/// Run tool `name` for `call`; `None` when no tool has that name.
pub async fn dispatch(
    ctx: &Arc<ServerContext>,
    call: &Call,
    name: &str,
    args: Args,
) -> Option<CallToolResult> {
    let d = detail_of(&args);
    let result = match name {
        "get_capabilities" => respond(
            async { capabilities::get(ctx, parse_args(name, args)?).await }.await,
            d,
        ),
        "list_datasets" => respond(
            async { datasets::list(ctx, parse_args(name, args)?).await }.await,
            d,
        ),
        "inspect_dataset" => respond(
            async { datasets::inspect(ctx, parse_args(name, args)?).await }.await,
            d,
        ),
        "validate_analysis" => respond(
            async { analysis::validate(ctx, call, parse_args(name, args)?).await }.await,
            d,
        ),
        "start_analysis" => respond(
            async { analysis::start(ctx, call, parse_args(name, args)?).await }.await,
            d,
        ),
        "get_run_status" => respond(
            parse_args::<RunRef>(name, args).and_then(|r| runs::status(ctx, r)),
            d,
        ),
        "get_run_result" => respond(
            async { runs::result(ctx, call, parse_args(name, args)?).await }.await,
            d,
        ),
        "cancel_run" => respond(
            async { runs::cancel(ctx, call, parse_args(name, args)?).await }.await,
            d,
        ),
        "list_runs" => respond(
            async { runs::list(ctx, parse_args(name, args)?).await }.await,
            d,
        ),
        "get_run_log" => respond(
            parse_args::<LogRequest>(name, args).and_then(|r| runs::log(ctx, r)),
            d,
        ),
        "get_environment" => respond(
            async {
                parse_args::<NoArguments>(name, args)?;
                environment::get(ctx).await
            }
            .await,
            d,
        ),
        "start_campaign" => respond(
            async { campaigns::start(ctx, call, parse_args(name, args)?).await }.await,
            d,
        ),
        "get_campaign_status" => respond(
            parse_args(name, args).and_then(|r| campaigns::status(ctx, r)),
            d,
        ),
        "get_campaign_result" => respond(
            async { campaigns::result(ctx, call, parse_args(name, args)?).await }.await,
            d,
        ),
        "cancel_campaign" => respond(
            async { campaigns::cancel(ctx, call, parse_args(name, args)?).await }.await,
            d,
        ),
        _ => return None,
    };
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_answer_becomes_an_explicit_error() {
        let big = serde_json::json!({"text": "x".repeat(COMPACT_CEILING)});
        let r = respond(Ok::<_, ToolError>(big.clone()), Detail::Compact);
        assert_eq!(r.is_error, Some(true));
        assert_eq!(
            r.structured_content.unwrap()["error"]["code"],
            "response_too_large"
        );
        let r = respond(Ok::<_, ToolError>(big), Detail::Full);
        assert_eq!(r.is_error, Some(false));
    }

    /// Every place a subschema goes holds an object that says what it accepts, with one
    /// `type` at most, in every tool's schemas.
    #[test]
    fn served_schemas_are_portable() {
        fn check(path: &str, schema: &serde_json::Value, found: &mut Vec<String>) {
            use serde_json::Value;
            let Value::Object(map) = schema else {
                found.push(format!("{path}: not an object"));
                return;
            };
            if map.get("type").is_some_and(Value::is_array) {
                found.push(format!("{path}: a type array"));
            }
            const CONSTRAINING: &[&str] = &[
                "type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "not",
            ];
            if !CONSTRAINING.iter().any(|k| map.contains_key(*k)) {
                found.push(format!("{path}: accepts anything"));
            }
            for (key, child) in map {
                let here = format!("{path}/{key}");
                match (key.as_str(), child) {
                    ("properties" | "patternProperties" | "$defs", Value::Object(children)) => {
                        for (name, c) in children {
                            check(&format!("{here}/{name}"), c, found);
                        }
                    }
                    ("anyOf" | "oneOf" | "allOf", Value::Array(children)) => {
                        for (i, c) in children.iter().enumerate() {
                            check(&format!("{here}/{i}"), c, found);
                        }
                    }
                    ("items" | "not", c) => check(&here, c, found),
                    // A map's values (`true`/`false` say only whether other keys may appear).
                    ("additionalProperties", c @ Value::Object(_)) => check(&here, c, found),
                    _ => {}
                }
            }
        }
        let mut found = Vec::new();
        for tool in catalog() {
            check(
                &format!("{}/input", tool.name),
                &serde_json::Value::Object(tool.input_schema.as_ref().clone()),
                &mut found,
            );
            let output = tool.output_schema.expect("every tool has an output schema");
            check(
                &format!("{}/output", tool.name),
                &serde_json::Value::Object(output.as_ref().clone()),
                &mut found,
            );
        }
        assert!(found.is_empty(), "{found:#?}");
    }

    /// No served schema (input or output, at any depth) carries a `format` outside the
    /// JSON Schema 2020-12 vocabulary: clients' validators warn about each one.
    #[test]
    fn served_schemas_use_only_standard_formats() {
        fn check(path: &str, value: &serde_json::Value, found: &mut Vec<String>) {
            use serde_json::Value;
            match value {
                Value::Object(map) => {
                    for (key, child) in map {
                        let here = format!("{path}/{key}");
                        // `format` as a keyword (a string), not a property named so.
                        if key == "format"
                            && let Value::String(f) = child
                            && !STANDARD_FORMATS.contains(&f.as_str())
                        {
                            found.push(format!("{here}: {f}"));
                        }
                        check(&here, child, found);
                    }
                }
                Value::Array(items) => {
                    for (i, c) in items.iter().enumerate() {
                        check(&format!("{path}/{i}"), c, found);
                    }
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        for (which, tools) in [("served", catalog()), ("generated", generate_catalog())] {
            for tool in tools {
                check(
                    &format!("{which}/{}/input", tool.name),
                    &serde_json::Value::Object(tool.input_schema.as_ref().clone()),
                    &mut found,
                );
                if let Some(output) = &tool.output_schema {
                    check(
                        &format!("{which}/{}/output", tool.name),
                        &serde_json::Value::Object(output.as_ref().clone()),
                        &mut found,
                    );
                }
            }
        }
        assert!(found.is_empty(), "{found:#?}");
    }

    /// Dropping a Rust format keeps its range, and a narrower stated bound wins.
    #[test]
    fn rust_formats_become_ranges() {
        let rewritten = portable_schema(
            serde_json::json!({
                "properties": {
                    "a": {"type": "integer", "format": "uint64", "minimum": 0},
                    "b": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 10},
                    "c": {"type": "integer", "format": "int32"},
                    "d": {"type": "number", "format": "double"},
                    "e": {"type": "string", "format": "date-time"},
                },
            })
            .as_object()
            .unwrap()
            .clone(),
        );
        assert_eq!(
            serde_json::Value::Object(rewritten),
            serde_json::json!({
                "properties": {
                    "a": {"type": "integer", "minimum": 0},
                    "b": {"type": "integer", "minimum": 0, "maximum": 10},
                    "c": {"type": "integer", "minimum": -2147483648_i64, "maximum": 2147483647},
                    "d": {"type": "number"},
                    "e": {"type": "string", "format": "date-time"},
                },
            })
        );
    }

    /// The rewrite keeps meaning: `true` accepts anything, `false` nothing, a nullable type
    /// is the same set of values as one branch per type, annotations stay outside.
    #[test]
    fn portable_rewrites_keep_the_contract() {
        let rewritten = portable_schema(
            serde_json::json!({
                "properties": {
                    "a": true,
                    "b": false,
                    "c": {"type": ["integer", "null"], "minimum": 0, "description": "d", "default": null},
                },
                "additionalProperties": false,
            })
            .as_object()
            .unwrap()
            .clone(),
        );
        assert_eq!(
            serde_json::Value::Object(rewritten),
            serde_json::json!({
                "properties": {
                    "a": {},
                    "b": {"not": {}},
                    "c": {
                        "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}],
                        "description": "d",
                        "default": null,
                    },
                },
                "additionalProperties": false,
            })
        );
    }
}

#[cfg(test)]
mod catalog_file_tests {
    /// `catalog.json`, what `tools/list` serves, is exactly what the types generate now.
    #[test]
    fn the_served_catalog_file_is_generated_from_the_types() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools/catalog.json");
        let mut text = serde_json::to_string_pretty(&super::generate_catalog()).expect("json");
        text.push('\n');
        if std::env::var_os("SCIMCP_UPDATE_CATALOG").is_some() {
            fs_err::write(&path, &text).expect("write the catalog file");
            return;
        }
        let recorded = fs_err::read_to_string(&path).unwrap_or_default();
        assert!(
            recorded == text,
            "{} is not what the tools' types generate now; regenerate it with \
             SCIMCP_UPDATE_CATALOG=1 cargo nextest run --workspace -E 'package(scimcp-server) & test(/catalog_file/)' \
             and commit it",
            path.display()
        );
        // What is served reads back as the same tools, field for field.
        let served = serde_json::to_value(super::catalog()).expect("json");
        let generated = serde_json::to_value(super::generate_catalog()).expect("json");
        assert_eq!(served, generated);
    }

    /// `release/tool-catalog.json`: the tools the release's MCP Bundle manifest lists, kept
    /// as a file so `scimcp-release` needs no link to the server. This test keeps it true.
    #[test]
    fn the_release_catalog_file_lists_these_tools() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../release/tool-catalog.json");
        let now: Vec<serde_json::Value> = super::catalog()
            .into_iter()
            .map(|t| {
                serde_json::json!({
                    "name": t.name,
                    "description": t.description.as_deref().unwrap_or_default(),
                })
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&now).expect("json");
        text.push('\n');
        if std::env::var_os("SCIMCP_UPDATE_CATALOG").is_some() {
            fs_err::write(&path, &text).expect("write the catalog file");
            return;
        }
        let recorded = fs_err::read_to_string(&path).unwrap_or_default();
        assert!(
            recorded == text,
            "{} does not list the server's tools as they are now; regenerate it with \
             SCIMCP_UPDATE_CATALOG=1 cargo nextest run --workspace -E 'package(scimcp-server) & test(/catalog_file/)' \
             and commit it",
            path.display()
        );
    }
}
