//! MCP resources: what a client may read without calling a tool, under stable URIs.
//!
//! | URI | content |
//! |---|---|
//! | `scimcp://adapter/manifest` | the adapter manifest's canonical JSON (its SHA-256 is the adapter hash every answer carries) |
//! | `scimcp://adapter/workflows/{workflow}/schema` | a workflow's parameter JSON Schema |
//! | `scimcp://runs/{run_id}/result` | a finished run's `result.json`, byte for byte |
//! | `scimcp://runs/{run_id}/artifacts/{path}` | one artifact of the output directory: inline when it is text of at most 256 KiB or a raster image (PNG, JPEG, GIF, WebP) of at most 4 MiB (base64 `blob`, so an MCP App can show it), otherwise (binary or larger) a JSON description with its size and SHA-256; a sequence, structure or FITS file (by extension) also gets a second, JSON content with inspect_dataset's facts |
//! | `scimcp://runs/{run_id}/work/{path}` | the same for a declared artifact the CLI wrote elsewhere in its working directory (`base = "work"`) |
//! | `ui://scimcp/run-viewer` | the MCP App run viewer's HTML (`text/html;profile=mcp-app`, see [`crate::ui`]) |
//!
//! `resources/list` pages through them (the adapter's first, then finished runs oldest
//! first, each run's result then its artifacts) with an opaque cursor that stays valid while
//! runs are added. Artifacts are read only as `result.json` lists them: opened below the
//! run's output directory without following links, checked to be the same size, and served
//! only when their SHA-256 still matches the recorded one.
//!
//! `resources/subscribe` on a run's URI (result or artifact) — also before the run has
//! ended — sends `notifications/resources/updated` for that URI when the run finishes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParam,
};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use scimcp_core::manifest::ArtifactBase;

use crate::context::ServerContext;
use crate::runs::is_run_id;
use crate::runs::state::{ArtifactRecord, RunResult};

pub const MANIFEST_URI: &str = "scimcp://adapter/manifest";
const WORKFLOWS_PREFIX: &str = "scimcp://adapter/workflows/";
const RUNS_PREFIX: &str = "scimcp://runs/";
/// Resources per `resources/list` page.
pub const PAGE_SIZE: usize = 100;
/// Largest text artifact sent inline; larger ones are described.
pub const INLINE_TEXT_MAX: u64 = 256 * 1024;
/// Largest raster image sent as a blob; larger ones are described.
pub const INLINE_IMAGE_MAX: u64 = 4 * 1024 * 1024;
/// Image types sent as blobs: the raster formats browsers (and so MCP Apps) draw.
const INLINE_IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];
/// Subscriptions one session may hold.
const MAX_SUBSCRIPTIONS: usize = 1024;
/// How long a watcher waits in one go before checking its subscription is still wanted.
const WATCH_SLICE: Duration = Duration::from_secs(30);

/// The URI of a workflow's parameter schema.
pub fn schema_uri(workflow: &str) -> String {
    format!("{WORKFLOWS_PREFIX}{workflow}/schema")
}

/// The URI of a run's `result.json`.
pub fn result_uri(run_id: &str) -> String {
    format!("{RUNS_PREFIX}{run_id}/result")
}

/// The URI of an artifact (its path relative to its base directory, percent-encoded): under
/// `artifacts/` for the output directory, `work/` for the working directory.
pub fn artifact_uri(run_id: &str, base: ArtifactBase, path: &str) -> String {
    let under = match base {
        // Stream artifacts are files the server writes into the output directory.
        ArtifactBase::Output | ArtifactBase::Stdout | ArtifactBase::Stderr => "artifacts",
        ArtifactBase::Work => "work",
    };
    format!("{RUNS_PREFIX}{run_id}/{under}/{}", encode_path(path))
}

/// The resource templates clients may fill in.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{WORKFLOWS_PREFIX}{{workflow}}/schema"), "workflow-schema")
            .with_title("A workflow's parameter schema")
            .with_description("The JSON Schema of a workflow's parameters (get_capabilities lists the workflow ids).")
            .with_mime_type("application/schema+json"),
        ResourceTemplate::new(format!("{RUNS_PREFIX}{{run_id}}/result"), "run-result")
            .with_title("A finished run's result.json")
            .with_description("The published result of a run (list_runs gives the ids). Subscribe before it ends to be told when it does.")
            .with_mime_type("application/json"),
        ResourceTemplate::new(format!("{RUNS_PREFIX}{{run_id}}/artifacts/{{+path}}"), "run-artifact")
            .with_title("An artifact of a finished run")
            .with_description("One file of the run's output directory, as result.json lists it: text up to 256 KiB inline, otherwise its size and SHA-256."),
        ResourceTemplate::new(format!("{RUNS_PREFIX}{{run_id}}/work/{{+path}}"), "run-work-artifact")
            .with_title("A declared artifact in a finished run's working directory")
            .with_description("A declared artifact the CLI wrote outside its output directory (base = work), served as the output directory's are."),
    ]
}

/// What a URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Manifest,
    Schema(String),
    Result(String),
    Artifact(String, ArtifactBase, String),
}

fn parse(uri: &str) -> Option<Target> {
    if uri == MANIFEST_URI {
        return Some(Target::Manifest);
    }
    if let Some(rest) = uri.strip_prefix(WORKFLOWS_PREFIX) {
        let workflow = rest.strip_suffix("/schema")?;
        return (!workflow.is_empty() && !workflow.contains('/'))
            .then(|| Target::Schema(workflow.to_string()));
    }
    let rest = uri.strip_prefix(RUNS_PREFIX)?;
    let (run_id, what) = rest.split_once('/')?;
    if !is_run_id(run_id) {
        return None;
    }
    if what == "result" {
        return Some(Target::Result(run_id.to_string()));
    }
    let (base, encoded) = if let Some(rest) = what.strip_prefix("artifacts/") {
        (ArtifactBase::Output, rest)
    } else {
        (ArtifactBase::Work, what.strip_prefix("work/")?)
    };
    let path = decode_path(encoded)?;
    let plain = !path.is_empty()
        && !path.starts_with('/')
        && path
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
    plain.then(|| Target::Artifact(run_id.to_string(), base, path))
}

fn not_found(uri: &str, message: impl Into<String>) -> McpError {
    McpError::resource_not_found(message.into(), Some(serde_json::json!({ "uri": uri })))
}

fn unknown_uri(uri: &str) -> McpError {
    not_found(
        uri,
        format!(
            "{uri:?} is not a resource of this server; its URIs are {MANIFEST_URI}, \
             {WORKFLOWS_PREFIX}<workflow>/schema, {RUNS_PREFIX}<run_id>/result, \
             {RUNS_PREFIX}<run_id>/artifacts/<path> and {} (resources/list shows them)",
            crate::ui::VIEWER_URI
        ),
    )
}

/// Percent-encode everything but unreserved characters and `/`.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode_path(encoded: &str) -> Option<String> {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = encoded.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let text = String::from_utf8(out).ok()?;
    (!text.contains('\0')).then_some(text)
}

fn run_dir(ctx: &ServerContext, run_id: &str) -> PathBuf {
    ctx.data_root.join("runs").join(run_id)
}

/// Who started a run, as its `request.json` records it (a token's name, `loopback` or
/// `stdio`); `None` for runs from before this was recorded.
pub fn started_by(ctx: &ServerContext, run_id: &str) -> Option<String> {
    if !is_run_id(run_id) {
        return None;
    }
    let path = run_dir(ctx, run_id).join("request.json");
    let meta = fs_err::metadata(&path).ok()?;
    if meta.len() > 1024 * 1024 {
        return None;
    }
    let request: serde_json::Value = serde_json::from_slice(&fs_err::read(&path).ok()?).ok()?;
    request["started_by"].as_str().map(str::to_string)
}

fn static_resources(ctx: &ServerContext) -> Vec<Resource> {
    let adapter = &ctx.adapter;
    let mut out = vec![
        Resource::new(MANIFEST_URI, "adapter-manifest")
            .with_title(format!(
                "{} {} adapter manifest",
                adapter.manifest.name, adapter.manifest.version
            ))
            .with_description(format!(
                "The adapter manifest in canonical JSON (sha256 {}).",
                adapter.sha256()
            ))
            .with_mime_type("application/json")
            .with_size(adapter.canonical_json().len() as u64),
    ];
    for wf in &adapter.manifest.workflows {
        out.push(
            Resource::new(schema_uri(&wf.id), format!("workflow-{}-schema", wf.id))
                .with_title(format!("Parameters of workflow {}", wf.id))
                .with_description(wf.summary.clone())
                .with_mime_type("application/schema+json"),
        );
    }
    out.push(crate::ui::resource());
    out
}

fn run_resources(ctx: &ServerContext, result: &RunResult) -> Vec<Resource> {
    let size = fs_err::metadata(run_dir(ctx, &result.run_id).join("result.json"))
        .map(|m| m.len())
        .ok();
    let state = serde_json::to_value(result.state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut head = Resource::new(
        result_uri(&result.run_id),
        format!("{}-result", result.run_id),
    )
    .with_title(format!(
        "Result of {} ({}, {state})",
        result.run_id, result.workflow
    ))
    .with_description(format!(
        "result.json of run {} (workflow {}, ended {})",
        result.run_id, result.workflow, result.ended_at
    ))
    .with_mime_type("application/json");
    if let Some(size) = size {
        head = head.with_size(size);
    }
    let mut out = vec![head];
    for a in &result.artifacts {
        out.push(
            Resource::new(
                artifact_uri(&result.run_id, a.base, &a.path),
                format!("{}/{}", result.run_id, a.path),
            )
            .with_title(format!("{} of {}", a.path, result.run_id))
            .with_description(format!("sha256 {}", a.sha256))
            .with_mime_type(a.media_type.clone())
            .with_size(a.size_bytes),
        );
    }
    out
}

/// Where a page starts: inside the adapter's resources, or at an item of a run.
#[derive(Debug, PartialEq, Eq)]
enum Cursor {
    Static(usize),
    Run {
        created_at: String,
        run_id: String,
        item: usize,
    },
}

impl Cursor {
    fn encode(&self) -> String {
        match self {
            Cursor::Static(i) => format!("s|{i}"),
            Cursor::Run {
                created_at,
                run_id,
                item,
            } => format!("r|{created_at}|{run_id}|{item}"),
        }
    }

    fn decode(text: &str) -> Option<Cursor> {
        let mut parts = text.split('|');
        let cursor = match parts.next()? {
            "s" => Cursor::Static(parts.next()?.parse().ok()?),
            "r" => Cursor::Run {
                created_at: parts.next()?.to_string(),
                run_id: parts.next().filter(|r| is_run_id(r))?.to_string(),
                item: parts.next()?.parse().ok()?,
            },
            _ => return None,
        };
        parts.next().is_none().then_some(cursor)
    }
}

/// One page of `resources/list`.
pub fn list(ctx: &ServerContext, cursor: Option<&str>) -> Result<ListResourcesResult, McpError> {
    let cursor = match cursor {
        None => Cursor::Static(0),
        Some(text) => Cursor::decode(text).ok_or_else(|| {
            McpError::invalid_params(
                format!("{text:?} is not a cursor this server gave; start again without one"),
                None,
            )
        })?,
    };
    let mut page: Vec<Resource> = Vec::new();
    let mut next = None;
    if let Cursor::Static(from) = cursor {
        let statics = static_resources(ctx);
        for (i, r) in statics.into_iter().enumerate().skip(from) {
            if page.len() == PAGE_SIZE {
                next = Some(Cursor::Static(i));
                break;
            }
            page.push(r);
        }
    }
    if next.is_none() {
        let mut runs: Vec<_> = ctx
            .runs
            .list()
            .into_iter()
            .filter(|r| r.state.is_terminal())
            .collect();
        runs.sort_by(|a, b| {
            (a.created_at.as_str(), a.run_id.as_str())
                .cmp(&(b.created_at.as_str(), b.run_id.as_str()))
        });
        'runs: for run in runs {
            let first_item = match &cursor {
                Cursor::Static(_) => 0,
                Cursor::Run {
                    created_at,
                    run_id,
                    item,
                } => match (run.created_at.as_str(), run.run_id.as_str())
                    .cmp(&(created_at.as_str(), run_id.as_str()))
                {
                    std::cmp::Ordering::Less => continue,
                    std::cmp::Ordering::Equal => *item,
                    std::cmp::Ordering::Greater => 0,
                },
            };
            let Ok(Some((result, _))) = ctx.runs.result(&run.run_id) else {
                continue;
            };
            for (i, r) in run_resources(ctx, &result)
                .into_iter()
                .enumerate()
                .skip(first_item)
            {
                if page.len() == PAGE_SIZE {
                    next = Some(Cursor::Run {
                        created_at: run.created_at.clone(),
                        run_id: run.run_id.clone(),
                        item: i,
                    });
                    break 'runs;
                }
                page.push(r);
            }
        }
    }
    let mut result = ListResourcesResult::with_all_items(page);
    result.next_cursor = next.map(|c| c.encode());
    Ok(result)
}

/// `resources/read`.
pub fn read(ctx: &ServerContext, uri: &str) -> Result<ReadResourceResult, McpError> {
    if let Some(viewer) = crate::ui::read(uri) {
        return Ok(ReadResourceResult::new(vec![viewer]));
    }
    let target = parse(uri).ok_or_else(|| unknown_uri(uri))?;
    // An artifact of a known scientific kind also gets inspect_dataset's facts.
    let mut facts = None;
    let contents = match target {
        Target::Manifest => ResourceContents::text(ctx.adapter.canonical_json().to_string(), uri)
            .with_mime_type("application/json"),
        Target::Schema(workflow) => {
            let wf = ctx.adapter.workflow(&workflow).ok_or_else(|| {
                not_found(
                    uri,
                    format!(
                        "adapter '{}' has no workflow '{workflow}' (its workflows: {})",
                        ctx.adapter.manifest.name,
                        ctx.adapter.workflow_ids().join(", ")
                    ),
                )
            })?;
            let text = serde_json::to_string_pretty(&wf.parameters_schema)
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
            ResourceContents::text(text, uri).with_mime_type("application/schema+json")
        }
        Target::Result(run_id) => {
            finished(ctx, uri, &run_id)?;
            let path = run_dir(ctx, &run_id).join("result.json");
            let text = fs_err::read_to_string(&path).map_err(|e| {
                McpError::internal_error(format!("cannot read {}: {e}", path.display()), None)
            })?;
            let mut meta = rmcp::model::MetaObject::new();
            if let Some(who) = started_by(ctx, &run_id) {
                meta.insert("scimcp/started_by".into(), who.into());
            }
            meta.insert(
                "scimcp/sha256".into(),
                scimcp_core::hash::sha256_hex(text.as_bytes()).into(),
            );
            ResourceContents::text(text, uri)
                .with_mime_type("application/json")
                .with_meta(meta)
        }
        Target::Artifact(run_id, base, path) => {
            let result = finished(ctx, uri, &run_id)?;
            let record = result
                .artifacts
                .iter()
                .find(|a| a.path == path && a.base == base)
                .ok_or_else(|| {
                    not_found(
                        uri,
                        format!(
                            "run {run_id} has no artifact '{path}' ({} listed in its result; resources/list or get_run_result shows them)",
                            result.artifacts.len()
                        ),
                    )
                })?;
            let dir = match base {
                ArtifactBase::Output | ArtifactBase::Stdout | ArtifactBase::Stderr => {
                    PathBuf::from(&result.output_dir)
                }
                // The run's working directory (every plan's `working_dir`).
                ArtifactBase::Work => Path::new(&result.run_dir).join("work"),
            };
            facts = crate::datasets::kinds::artifact_facts(
                uri,
                &dir,
                &record.path,
                record.size_bytes,
                &record.sha256,
            );
            artifact_contents(uri, &dir, record)?
        }
    };
    Ok(ReadResourceResult::new(
        std::iter::once(contents).chain(facts).collect(),
    ))
}

/// The published result of a run that has ended, or why there is none.
fn finished(ctx: &ServerContext, uri: &str, run_id: &str) -> Result<RunResult, McpError> {
    let status = ctx
        .runs
        .status(run_id)
        .map_err(|e| not_found(uri, e.message))?;
    if !status.state.is_terminal() {
        return Err(not_found(
            uri,
            format!(
                "run {run_id} has not ended yet, so its result is not published; subscribe to {} (resources/subscribe) to be told when it ends, or call get_run_result",
                result_uri(run_id)
            ),
        ));
    }
    match ctx.runs.result(run_id) {
        Ok(Some((result, _))) => Ok(result),
        Ok(None) => Err(not_found(
            uri,
            format!(
                "run {run_id} ended without a result ({}); get_run_status says why",
                status.reason.as_deref().unwrap_or("no reason recorded")
            ),
        )),
        Err(e) => Err(McpError::internal_error(e.message, None)),
    }
}

fn is_text_type(media_type: &str) -> bool {
    let base = media_type.split(';').next().unwrap_or("").trim();
    base.starts_with("text/")
        || base.ends_with("+json")
        || base.ends_with("+xml")
        || matches!(
            base,
            "application/json"
                | "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/csv"
                | "application/x-ndjson"
        )
}

/// The type an image artifact of `media_type` is sent as, when it is one sent as a blob.
fn inline_image_type(media_type: &str) -> Option<&'static str> {
    let base = media_type.split(';').next().unwrap_or("").trim();
    INLINE_IMAGE_TYPES
        .iter()
        .find(|t| t.eq_ignore_ascii_case(base))
        .copied()
}

fn artifact_contents(
    uri: &str,
    output_dir: &Path,
    record: &ArtifactRecord,
) -> Result<ResourceContents, McpError> {
    let describe = |why: &str| -> ResourceContents {
        let text = serde_json::to_string_pretty(&serde_json::json!({
            "path": record.path,
            "media_type": record.media_type,
            "size_bytes": record.size_bytes,
            "sha256": record.sha256,
            "inline": false,
            "why": why,
        }))
        .expect("a description serializes");
        ResourceContents::text(text, uri).with_mime_type("application/json")
    };
    let image = inline_image_type(&record.media_type);
    if image.is_some() && record.size_bytes > INLINE_IMAGE_MAX {
        return Ok(describe(&format!(
            "an image over {INLINE_IMAGE_MAX} bytes is described by its size and SHA-256, not sent"
        )));
    }
    if image.is_none() && !is_text_type(&record.media_type) {
        return Ok(describe(
            "binary content is described by its size and SHA-256, not sent",
        ));
    }
    if image.is_none() && record.size_bytes > INLINE_TEXT_MAX {
        return Ok(describe(&format!(
            "text over {INLINE_TEXT_MAX} bytes is described by its size and SHA-256, not sent"
        )));
    }
    // Opened below the output directory without following links, checked on the handle
    // (a regular file, one link, no larger than recorded), read through it.
    let mut opened = crate::datasets::open::open_confined(
        output_dir,
        Path::new(&record.path),
        &record.path,
        record.size_bytes,
    )
    .map_err(|e| {
        not_found(
            uri,
            format!("artifact '{}' cannot be read: {}", record.path, e.message),
        )
    })?;
    let mut bytes = Vec::with_capacity(record.size_bytes as usize);
    {
        use std::io::Read as _;
        let mut reader = opened
            .capped(&record.path, record.size_bytes)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        reader.read_to_end(&mut bytes).map_err(|e| {
            not_found(
                uri,
                format!("artifact '{}' cannot be read: {e}", record.path),
            )
        })?;
    }
    if scimcp_core::hash::sha256_hex(&bytes) != record.sha256 {
        return Err(not_found(
            uri,
            format!(
                "artifact '{}' changed since the run ended (its SHA-256 no longer matches result.json), so it is not served",
                record.path
            ),
        ));
    }
    if let Some(image) = image {
        use base64ct::{Base64, Encoding as _};
        return Ok(ResourceContents::blob(Base64::encode_string(&bytes), uri).with_mime_type(image));
    }
    match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => {
            Ok(ResourceContents::text(text, uri).with_mime_type(record.media_type.clone()))
        }
        _ => Ok(describe(
            "the content is not UTF-8 text, so it is described, not sent",
        )),
    }
}

/// One session's resource subscriptions.
#[derive(Debug, Default)]
pub struct Session {
    subscriptions: Mutex<HashSet<String>>,
}

impl Session {
    pub fn unsubscribe(&self, uri: &str) {
        self.subscriptions
            .lock()
            .expect("subscriptions lock")
            .remove(uri);
    }

    fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions
            .lock()
            .expect("subscriptions lock")
            .contains(uri)
    }
}

/// Whether `uri` may be subscribed to: `Some(run_id)` for a run's resource, `None` for the
/// adapter's (which never change while the server runs).
fn subscribable(ctx: &ServerContext, uri: &str) -> Result<Option<String>, McpError> {
    match parse(uri).ok_or_else(|| unknown_uri(uri))? {
        Target::Manifest => Ok(None),
        Target::Schema(workflow) => match ctx.adapter.workflow(&workflow) {
            Some(_) => Ok(None),
            None => Err(not_found(uri, format!("no workflow '{workflow}'"))),
        },
        Target::Result(run_id) | Target::Artifact(run_id, _, _) => {
            ctx.runs
                .status(&run_id)
                .map_err(|e| not_found(uri, e.message))?;
            Ok(Some(run_id))
        }
    }
}

/// `resources/subscribe`: remember the URI; for a run's URI, watch the run and send
/// `notifications/resources/updated` when it ends (at once when it already has).
pub fn subscribe(
    ctx: &Arc<ServerContext>,
    session: &Arc<Session>,
    uri: &str,
    peer: Peer<RoleServer>,
) -> Result<(), McpError> {
    let run_id = subscribable(ctx, uri)?;
    {
        let mut subscriptions = session.subscriptions.lock().expect("subscriptions lock");
        if subscriptions.contains(uri) {
            return Ok(());
        }
        if subscriptions.len() >= MAX_SUBSCRIPTIONS {
            return Err(McpError::invalid_params(
                format!(
                    "this session already holds {MAX_SUBSCRIPTIONS} subscriptions; unsubscribe from some first"
                ),
                None,
            ));
        }
        subscriptions.insert(uri.to_string());
    }
    if let Some(run_id) = run_id {
        let ctx = Arc::clone(ctx);
        let session = Arc::downgrade(session);
        let uri = uri.to_string();
        tokio::spawn(async move {
            let wanted = || session.upgrade().is_some_and(|s| s.is_subscribed(&uri));
            if wait_for_end(&ctx, &run_id, wanted).await
                && let Err(e) = peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone()))
                    .await
            {
                tracing::debug!("resource update for {uri} not delivered: {e}");
            }
        });
    }
    Ok(())
}

/// The URIs a `subscriptions/listen` (protocol 2026-07-28) may follow: those `subscribe`
/// would accept, at most [`MAX_SUBSCRIPTIONS`].
pub fn accepted_uris(ctx: &ServerContext, requested: &[String]) -> Vec<String> {
    requested
        .iter()
        .filter(|uri| subscribable(ctx, uri).is_ok())
        .take(MAX_SUBSCRIPTIONS)
        .cloned()
        .collect()
}

/// `subscriptions/listen`: until the client ends the subscription, send
/// `notifications/resources/updated` for each accepted run URI when its run ends.
pub async fn listen(
    ctx: &Arc<ServerContext>,
    context: rmcp::service::SubscriptionContext,
) -> Result<(), McpError> {
    let mut waits = tokio::task::JoinSet::new();
    let uris = context
        .accepted()
        .resource_subscriptions
        .clone()
        .unwrap_or_default();
    for uri in uris {
        let Ok(Some(run_id)) = subscribable(ctx, &uri) else {
            continue;
        };
        let ctx = Arc::clone(ctx);
        let sink = context.sink().clone();
        waits.spawn(async move {
            if wait_for_end(&ctx, &run_id, || true).await
                && let Err(e) = sink.notify_resource_updated(uri.clone()).await
            {
                tracing::debug!("resource update for {uri} not delivered: {e}");
            }
        });
    }
    // Dropping the set when the subscription ends stops every wait.
    context.cancelled().await;
    drop(waits);
    Ok(())
}

/// Wait until the run has ended (true), or until `wanted` says to stop (false).
async fn wait_for_end(ctx: &ServerContext, run_id: &str, wanted: impl Fn() -> bool) -> bool {
    loop {
        if !wanted() {
            return false;
        }
        let asked = Instant::now();
        match ctx.runs.wait_terminal(run_id, WATCH_SLICE).await {
            Ok(status) if status.state.is_terminal() => return wanted(),
            // A run another server executes is read from disk: poll it every 2 s.
            Ok(_) => {
                let pause = Duration::from_secs(2).saturating_sub(asked.elapsed());
                tokio::time::sleep(pause).await;
            }
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_parse_and_round_trip() {
        assert_eq!(parse(MANIFEST_URI), Some(Target::Manifest));
        assert_eq!(
            parse(&schema_uri("regression")),
            Some(Target::Schema("regression".into()))
        );
        let run = "run-0123456789abcdef";
        assert_eq!(parse(&result_uri(run)), Some(Target::Result(run.into())));
        for path in ["metrics.json", "plots/fig 1.png", "données/é.csv", "a%b"] {
            assert_eq!(
                parse(&artifact_uri(run, ArtifactBase::Output, path)),
                Some(Target::Artifact(
                    run.into(),
                    ArtifactBase::Output,
                    path.into()
                )),
                "{path}"
            );
        }
        assert_eq!(
            parse(&artifact_uri(run, ArtifactBase::Work, "results/a b.csv")),
            Some(Target::Artifact(
                run.into(),
                ArtifactBase::Work,
                "results/a b.csv".into()
            ))
        );
        assert_ne!(
            artifact_uri(run, ArtifactBase::Work, "x"),
            artifact_uri(run, ArtifactBase::Output, "x")
        );
        for bad in [
            "scimcp://runs/run-xyz/result",
            "scimcp://runs/run-0123456789abcdef/other/x",
            "scimcp://runs/run-0123456789abcdef/artifacts/../x",
            "scimcp://runs/run-0123456789abcdef/artifacts/a//b",
            "scimcp://runs/run-0123456789abcdef/artifacts/%2E%2E/x",
            "scimcp://runs/run-0123456789abcdef/artifacts/a%00",
            "scimcp://runs/run-0123456789abcdef/artifacts/%zz",
            "scimcp://adapter/workflows//schema",
            "test://static-text",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        for c in [
            Cursor::Static(3),
            Cursor::Run {
                created_at: "2026-01-01T00:00:00Z".into(),
                run_id: "run-0123456789abcdef".into(),
                item: 7,
            },
        ] {
            assert_eq!(Cursor::decode(&c.encode()), Some(c));
        }
        for bad in ["", "s", "s|x", "r|t|run-x|1", "q|1", "s|1|2"] {
            assert_eq!(Cursor::decode(bad), None, "{bad}");
        }
    }

    fn record(dir: &Path, path: &str, bytes: &[u8], media_type: &str) -> ArtifactRecord {
        let file = dir.join(path);
        fs_err::create_dir_all(file.parent().unwrap()).unwrap();
        fs_err::write(&file, bytes).unwrap();
        ArtifactRecord {
            id: None,
            path: path.into(),
            media_type: media_type.into(),
            size_bytes: bytes.len() as u64,
            sha256: scimcp_core::hash::sha256_hex(bytes),
            base: ArtifactBase::Output,
        }
    }

    fn text_of(contents: &ResourceContents) -> (&str, Option<&str>) {
        match contents {
            ResourceContents::TextResourceContents {
                text, mime_type, ..
            } => (text.as_str(), mime_type.as_deref()),
            other => panic!("not text: {other:?}"),
        }
    }

    #[test]
    fn artifacts_are_inline_text_or_described_and_always_checked() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        let uri = "scimcp://runs/run-0123456789abcdef/artifacts/x";
        // Small text: inline, with its media type.
        let csv = record(out, "plots/pred ictions.csv", b"a,b\n1,2\n", "text/csv");
        let c = artifact_contents(uri, out, &csv).unwrap();
        assert_eq!(text_of(&c), ("a,b\n1,2\n", Some("text/csv")));
        // Binary: described by size and hash, never read.
        let pickle = record(
            out,
            "model.pkl",
            &[0x80, 4, 0x95, 0, 1, 2, 3],
            "application/octet-stream",
        );
        let c = artifact_contents(uri, out, &pickle).unwrap();
        let described: serde_json::Value = serde_json::from_str(text_of(&c).0).unwrap();
        assert_eq!(described["inline"], false);
        assert_eq!(described["sha256"], pickle.sha256.as_str());
        assert_eq!(described["size_bytes"], 7);
        // A raster image: its bytes as a base64 blob with its type (an MCP App shows it),
        // checked against its hash like any artifact.
        let png_bytes = [0x89, b'P', b'N', b'G', 0, 1, 2];
        let png = record(out, "fig.png", &png_bytes, "image/png");
        match artifact_contents(uri, out, &png).unwrap() {
            ResourceContents::BlobResourceContents {
                blob, mime_type, ..
            } => {
                use base64ct::{Base64, Encoding as _};
                assert_eq!(Base64::decode_vec(&blob).unwrap(), png_bytes);
                assert_eq!(mime_type.as_deref(), Some("image/png"));
            }
            other => panic!("not a blob: {other:?}"),
        }
        let mut swapped = png.clone();
        swapped.sha256 = "0".repeat(64);
        assert!(artifact_contents(uri, out, &swapped).is_err());
        // An image over the image bound: described.
        let mut huge = png.clone();
        huge.size_bytes = INLINE_IMAGE_MAX + 1;
        let c = artifact_contents(uri, out, &huge).unwrap();
        assert!(text_of(&c).0.contains("\"inline\": false"));
        // Text over the inline limit: described too.
        let big = record(
            out,
            "big.txt",
            &vec![b'x'; INLINE_TEXT_MAX as usize + 1],
            "text/plain",
        );
        let c = artifact_contents(uri, out, &big).unwrap();
        assert!(text_of(&c).0.contains("\"inline\": false"));
        // "Text" that is not UTF-8: described.
        let latin = record(out, "latin.txt", b"caf\xe9", "text/plain");
        let c = artifact_contents(uri, out, &latin).unwrap();
        assert!(text_of(&c).0.contains("not UTF-8"));
        // Changed since the run ended: refused.
        let mut changed = csv.clone();
        changed.sha256 = "0".repeat(64);
        let e = artifact_contents(uri, out, &changed).unwrap_err();
        assert!(e.message.contains("changed since the run ended"), "{e:?}");
        // A file swapped for a link after the run: not followed.
        #[cfg(unix)]
        {
            let secret = dir.path().join("secret.txt");
            fs_err::write(&secret, "a,b\n1,2\n").unwrap();
            fs_err::remove_file(out.join("plots/pred ictions.csv")).unwrap();
            std::os::unix::fs::symlink(&secret, out.join("plots/pred ictions.csv")).unwrap();
            let e = artifact_contents(uri, out, &csv).unwrap_err();
            assert!(e.message.contains("cannot be read"), "{e:?}");
        }
    }

    #[test]
    fn text_types() {
        for t in [
            "text/csv",
            "application/json",
            "application/vnd.x+json; charset=utf-8",
        ] {
            assert!(is_text_type(t), "{t}");
        }
        for t in [
            "image/png",
            "application/octet-stream",
            "application/x-pickle",
        ] {
            assert!(!is_text_type(t), "{t}");
        }
    }
}
