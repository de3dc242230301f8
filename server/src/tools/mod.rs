//! The fifteen MCP tools: their catalog (names, descriptions, input and output schemas,
//! annotations) and the dispatcher that parses arguments strictly and wraps every answer
//! in structured content or the one error envelope.
//!
//! Each tool is defined once, as a `ToolHandler` next to the function that serves it
//! (name, description, annotations, request and output types, handler); `TOOLS` lists
//! them, and the catalog, [`TOOL_NAMES`] and [`dispatch`] are all derived from that one
//! table, so a tool cannot be listed without being dispatched. Adding a tool: implement
//! `ToolHandler` for a new unit type (in a new file with its `mod` line, or beside its
//! kin), add one line to `TOOLS`, then regenerate `catalog.json` (see [`catalog`]);
//! docs/architecture.md has the recipe.

mod analysis;
mod campaigns;
mod capabilities;
mod datasets;
mod environment;
mod handler;
pub(crate) mod listing;
mod runs;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

#[cfg(test)]
use rmcp::model::ToolAnnotations;
use rmcp::model::{CallToolResult, Tool};
#[cfg(test)]
use schemars::JsonSchema;
use serde::Serialize;

use crate::context::ServerContext;
use crate::envelope::{ErrorCode, ToolError, parse_args};
#[cfg(test)]
use crate::paging::COMPACT_CEILING;
use crate::paging::Detail;

pub(crate) use handler::ToolHandler;
pub use handler::{Call, Progress};

type Answer<'a> = Pin<Box<dyn Future<Output = CallToolResult> + Send + 'a>>;

/// A [`ToolHandler`] with its types erased, as [`TOOLS`] holds it.
pub(crate) struct ToolDef {
    name: &'static str,
    // Only the catalog's generator reads the types: a build serves the checked-in catalog.json.
    #[cfg(test)]
    definition: fn() -> Tool,
    call: for<'a> fn(&'a Arc<ServerContext>, &'a Call, Args) -> Answer<'a>,
}

impl ToolDef {
    const fn of<T: ToolHandler>() -> ToolDef {
        ToolDef {
            name: T::NAME,
            #[cfg(test)]
            definition: definition::<T>,
            call: call::<T>,
        }
    }
}

/// The catalog entry of `T`, generated from its types.
#[cfg(test)]
fn definition<T: ToolHandler>() -> Tool {
    let mut tool = tool::<T::Request, T::Output>(T::NAME, T::DESCRIPTION, T::READ_ONLY);
    // The run viewer (an MCP App) renders these tools' answers where the client has Apps.
    tool.meta = crate::ui::tool_meta(T::NAME);
    tool
}

/// Parse the arguments for `T`, run it, and wrap its answer (or its error) for the client.
fn call<'a, T: ToolHandler>(ctx: &'a Arc<ServerContext>, call: &'a Call, args: Args) -> Answer<'a> {
    Box::pin(async move {
        let d = detail_of(&args);
        respond(
            async { T::run(ctx, call, parse_args(T::NAME, args)?).await }.await,
            d,
        )
    })
}

/// Every tool, in catalog order: the one list the catalog, [`TOOL_NAMES`] and [`dispatch`]
/// are derived from.
pub(crate) const TOOLS: &[ToolDef] = &[
    ToolDef::of::<capabilities::GetCapabilities>(),
    ToolDef::of::<datasets::ListDatasets>(),
    ToolDef::of::<datasets::InspectDataset>(),
    ToolDef::of::<analysis::ValidateAnalysis>(),
    ToolDef::of::<analysis::StartAnalysis>(),
    ToolDef::of::<runs::GetRunStatus>(),
    ToolDef::of::<runs::GetRunResult>(),
    ToolDef::of::<runs::CancelRun>(),
    ToolDef::of::<runs::ListRuns>(),
    ToolDef::of::<runs::GetRunLog>(),
    ToolDef::of::<environment::GetEnvironment>(),
    ToolDef::of::<campaigns::StartCampaign>(),
    ToolDef::of::<campaigns::GetCampaignStatus>(),
    ToolDef::of::<campaigns::GetCampaignResult>(),
    ToolDef::of::<campaigns::CancelCampaign>(),
];

/// Every tool name, in catalog order (read from `TOOLS`).
pub const TOOL_NAMES: &[&str] = &{
    let mut names = [""; TOOLS.len()];
    let mut i = 0;
    while i < TOOLS.len() {
        names[i] = TOOLS[i].name;
        i += 1;
    }
    names
};

#[cfg(test)]
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
#[cfg(test)]
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
#[cfg(test)]
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

/// `catalog.json` as serde_json writes it compact (server/build.rs strips the whitespace
/// between tokens): what [`catalog`] parses, and the `tools` of listing.rs's answer.
pub(crate) const CATALOG_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/catalog.min.json"));

/// The tool list, generated from the request and output types (see [`catalog`]).
#[cfg(test)]
pub fn generate_catalog() -> Vec<Tool> {
    TOOLS.iter().map(|t| (t.definition)()).collect()
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
    let tool = TOOLS.iter().find(|t| t.name == name)?;
    Some((tool.call)(ctx, call, args).await)
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

    /// A tool cannot be listed without being dispatched: the table holds each tool's handler
    /// with its name (a compile-time bond), and here every tool `tools/list` serves (the
    /// checked-in catalog included) is called through `dispatch` and answered by its own
    /// handler: the strict parse of that tool's request, named in the error, refuses an
    /// unknown argument before anything runs.
    #[tokio::test]
    async fn every_listed_tool_is_dispatched_to_its_own_handler() {
        let root = tempfile::tempdir().unwrap();
        let start = root.path().join("start");
        fs_err::create_dir_all(&start).unwrap();
        let settings = crate::context::ServerSettings {
            adapter: scimcp_core::manifest::resolve("refsci").unwrap(),
            python: None,
            start_dir: fs_err::canonicalize(&start).unwrap(),
            data_dirs: Vec::new(),
            data_root: root.path().join("home"),
            run_env: Default::default(),
            confirm: crate::context::ConfirmMode::Optional,
            executor: crate::runs::executor::Executor::Local,
            client_timeout_s: None,
        };
        let ctx = ServerContext::open(settings).await.unwrap();
        let call = Call::stdio();
        let listed: Vec<String> = catalog().into_iter().map(|t| t.name.to_string()).collect();
        assert_eq!(
            listed, TOOL_NAMES,
            "the served list is the table's, in its order"
        );
        let mut unique = listed.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), listed.len(), "no two tools share a name");
        for name in &listed {
            let args = serde_json::json!({"no_such_argument": 1});
            let result = dispatch(&ctx, &call, name, args.as_object().cloned())
                .await
                .unwrap_or_else(|| panic!("{name} is listed but has no handler"));
            assert_eq!(result.is_error, Some(true), "{name}");
            let error = &result.structured_content.expect("an envelope")["error"];
            assert_eq!(error["code"], "invalid_request", "{name}: {error}");
            assert!(
                error["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(&format!("invalid arguments for {name}:"))),
                "{name} was answered by another tool's handler: {error}"
            );
            assert_eq!(error["field"], "no_such_argument", "{name}: {error}");
        }
        assert!(dispatch(&ctx, &call, "no_such_tool", None).await.is_none());
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
