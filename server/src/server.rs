//! The MCP server: settings resolved at start-up, the shared context every tool uses, and
//! the rmcp handler that routes tools, resources and their subscriptions.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use scimcp_core::Adapter;

use crate::auth::Caller;
use crate::datasets::DatasetCatalog;
use crate::runs::RunManager;
use crate::runtime::ScientificRuntime;
use crate::tools::{Call, Progress};
use crate::validate::Validators;

/// Whether `start_analysis` and `cancel_run` act only with `confirm: true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmMode {
    /// Without `confirm: true` they change nothing and answer with what would happen
    /// (plan-then-confirm). The default when the server is reachable from a network.
    Required,
    /// Without `confirm` they act at once; `confirm: false` still asks for a preview. The
    /// default over stdio and loopback HTTP.
    Optional,
}

impl ConfirmMode {
    pub fn word(self) -> &'static str {
        match self {
            ConfirmMode::Required => "required",
            ConfirmMode::Optional => "optional",
        }
    }
}

/// What `scimcp serve` was asked to serve, resolved and checked.
#[derive(Debug)]
pub struct ServerSettings {
    pub adapter: Adapter,
    pub python: Option<PathBuf>,
    /// Canonical start directory (relative dataset paths resolve against it).
    pub start_dir: PathBuf,
    /// Canonical extra dataset directories.
    pub data_dirs: Vec<PathBuf>,
    /// scimcp's data root (runs, materialized datasets).
    pub data_root: PathBuf,
    /// The operator's `--env` variables for every run.
    pub run_env: std::collections::BTreeMap<String, String>,
    /// Plan-then-confirm for starting and cancelling runs.
    pub confirm: ConfirmMode,
    /// Where runs execute.
    pub executor: crate::runs::executor::Executor,
    /// The client's deadline for one tool call (`--client-timeout-s`).
    pub client_timeout_s: Option<u64>,
}

impl ServerSettings {
    /// Resolve the adapter, the start directory, the data directories and the data root.
    pub fn resolve(
        adapter: &str,
        python: Option<PathBuf>,
        data_dirs: Vec<PathBuf>,
        run_env: &[String],
    ) -> anyhow::Result<ServerSettings> {
        let adapter =
            scimcp_core::manifest::resolve(adapter).map_err(|e| match e.split_hint() {
                Some((message, hint)) => anyhow::Error::new(scimcp_core::failure::Hinted::new(
                    format!("invalid adapter: {message}"),
                    hint,
                )),
                None => anyhow::anyhow!("invalid adapter:\n{e}"),
            })?;
        let run_env = parse_run_env(run_env)?;
        let start_dir = std::env::current_dir()
            .and_then(fs_err::canonicalize)
            .context("cannot resolve the server's start directory")?;
        let data_dirs = data_dirs
            .into_iter()
            .map(|d| {
                fs_err::canonicalize(&d).with_context(|| {
                    format!("--data-dir {} is not an existing directory", d.display())
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let data_root = scimcp_core::dirs::data_root()?;
        // Flag and SCIMCP_PYTHON (clap reads both) win; then the runtime scimcp-setup
        // provisioned for this adapter. An unreadable state file is a warning, not a crash:
        // the server still starts and says what is missing.
        let python = match python.filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => Some(p),
            None => {
                match scimcp_core::install_state::recorded_interpreter(
                    &data_root,
                    &adapter.manifest.name,
                ) {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::warn!("{e}");
                        None
                    }
                }
            }
        };
        Ok(ServerSettings {
            adapter,
            python,
            start_dir,
            data_dirs,
            data_root,
            run_env,
            confirm: ConfirmMode::Optional,
            executor: crate::runs::executor::Executor::Local,
            client_timeout_s: None,
        })
    }
}

/// `--env NAME=VALUE` arguments, each checked by the rules a manifest's `env` follows.
fn parse_run_env(args: &[String]) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let mut env = std::collections::BTreeMap::new();
    for arg in args {
        let Some((name, value)) = arg.split_once('=') else {
            anyhow::bail!("--env {arg:?} is not NAME=VALUE; write e.g. --env OMP_NUM_THREADS=4");
        };
        if let Some(problem) = scimcp_core::run_env::manifest_env_problem(name, value) {
            anyhow::bail!("--env {arg:?}: {problem}");
        }
        env.insert(name.to_string(), value.to_string());
    }
    Ok(env)
}

/// Everything the tools share.
#[derive(Debug)]
pub struct ServerContext {
    pub adapter: Arc<Adapter>,
    pub runtime: ScientificRuntime,
    pub datasets: DatasetCatalog,
    pub runs: Arc<RunManager>,
    pub campaigns: Arc<crate::campaigns::CampaignManager>,
    pub(crate) validators: Validators,
    pub data_root: PathBuf,
    /// Plan-then-confirm for starting and cancelling runs.
    pub confirm: ConfirmMode,
    /// The confirmations (validation and preview ids) this process issued.
    pub(crate) grants: crate::grants::Grants,
    /// The client's deadline for one tool call, when `--client-timeout-s` told it.
    pub client_timeout_s: Option<u64>,
}

impl ServerContext {
    /// Open the state directories, recover interrupted runs and prepare validators.
    pub async fn open(settings: ServerSettings) -> anyhow::Result<Arc<ServerContext>> {
        let adapter = Arc::new(settings.adapter);
        // The adapter's canonical form and hash are needed by the first validation, not by
        // the handshake: the blocking pool computes them while the server starts answering.
        drop(tokio::task::spawn_blocking({
            let adapter = Arc::clone(&adapter);
            move || {
                adapter.sha256();
            }
        }));
        let runtime = ScientificRuntime::resolve(&adapter, settings.python, settings.run_env)
            .with_run_root(settings.data_root.clone());
        if let Some(problem) = runtime.problem() {
            tracing::warn!("{problem}");
        }
        scimcp_core::fs::create_private_dir(&settings.data_root).with_context(|| {
            format!(
                "cannot create the data directory {}",
                settings.data_root.display()
            )
        })?;
        let datasets_root = settings.data_root.join("datasets");
        let datasets = DatasetCatalog::new(
            &adapter,
            settings.start_dir,
            settings.data_dirs,
            &datasets_root,
        );
        if let Some(note) = datasets.start_dir_note() {
            tracing::warn!("{note}");
        }
        let runs_dir = settings.data_root.join("runs");
        let runs = RunManager::open(runs_dir.clone(), &adapter, settings.executor)
            .with_context(|| format!("cannot open the runs directory {}", runs_dir.display()))?;
        let runs = Arc::new(runs);
        if runs.has_detached_runs() {
            // Their results record the runtime identity, as the first server's would have.
            let probe = runtime.probe().await.ok();
            let n = runs.reattach(probe);
            tracing::info!("re-attached to {n} batch job(s) of earlier runs");
        }
        let campaigns_dir = settings
            .data_root
            .join("campaigns")
            .join(&adapter.manifest.name);
        let campaigns = crate::campaigns::CampaignManager::open(campaigns_dir.clone())
            .with_context(|| {
                format!(
                    "cannot open the campaigns directory {}",
                    campaigns_dir.display()
                )
            })?;
        let validators = Validators::new(&adapter);
        tracing::info!(adapter = adapter.manifest.name, version = adapter.manifest.version, runs = %runs_dir.display(), "scimcp server ready");
        Ok(Arc::new(ServerContext {
            adapter,
            runtime,
            datasets,
            runs,
            campaigns: Arc::new(campaigns),
            validators,
            data_root: settings.data_root,
            confirm: settings.confirm,
            grants: crate::grants::Grants::default(),
            client_timeout_s: settings.client_timeout_s,
        }))
    }
}

/// The rmcp handler: one per MCP session (HTTP serves many), all sharing one context.
#[derive(Debug, Clone)]
pub struct ScimcpServer {
    ctx: Arc<ServerContext>,
    session: Arc<crate::resources::Session>,
    /// This MCP session's id inside the process: confirmations are granted to one session.
    session_id: Arc<str>,
}

impl ScimcpServer {
    pub fn new(ctx: Arc<ServerContext>) -> Self {
        ScimcpServer {
            ctx,
            session: Arc::new(crate::resources::Session::default()),
            session_id: uuid::Uuid::new_v4().simple().to_string().into(),
        }
    }

    /// A handler for a new session: the same context, its own resource subscriptions.
    pub fn new_session(&self) -> Self {
        ScimcpServer::new(Arc::clone(&self.ctx))
    }
}

const INSTRUCTIONS: &str = "This server runs a scientific command-line program for you. \
Keep the scientist's explicit choices (model, parameters, seed) exactly as given. \
Flow: get_capabilities → list_datasets / inspect_dataset → validate_analysis → show the plan \
→ start_analysis → get_run_result (it waits, with progress) → summarize the metrics and \
artifacts. start_analysis and cancel_run act on this computer: when one answers with a \
preview (started: false, or confirmation_required), show the person exactly what it says \
would happen (the command line, the expected artifacts, the estimated resources; the run to \
cancel) and wait for their explicit go-ahead; only then call it again with confirm: true (and \
the preview's validation_id). Never set confirm: true without that go-ahead for that specific \
action. Finished runs are also resources (scimcp://runs/<run_id>/result and its artifacts); \
subscribe to a run's result URI to be told when it ends. Every error names the field and the \
next action.";

/// Who sent this request: the caller the HTTP transport authenticated, or the stdio client.
fn caller_of(context: &RequestContext<RoleServer>) -> Caller {
    context
        .extensions
        .get::<hyper::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .cloned()
        .unwrap_or(Caller::Stdio)
}

impl ServerHandler for ScimcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new(
            scimcp_core::version::SUITE_NAME,
            scimcp_core::version::SUITE_VERSION,
        ))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(crate::tools::catalog()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let call = Call {
            caller: caller_of(&context),
            session: Arc::clone(&self.session_id),
            client: context
                .peer
                .peer_info()
                .map(|info| info.client_info.name.clone()),
            progress: context
                .meta
                .get_progress_token()
                .map(|token| Progress::new(context.peer.clone(), token)),
        };
        // A client's cancellation ends this call (a wait ends; the run it waited on goes on).
        let result = tokio::select! {
            r = crate::tools::dispatch(&self.ctx, &call, &name, request.arguments) => r,
            _ = context.ct.cancelled() => return Err(McpError::internal_error("request cancelled by the client", None)),
        };
        match result {
            Some(r) => Ok(r.into()),
            None => Err(McpError::invalid_params(
                format!("tool not found: {name}"),
                Some(serde_json::json!({"known_tools": crate::tools::TOOL_NAMES})),
            )),
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        crate::resources::list(&self.ctx, request.and_then(|r| r.cursor).as_deref())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(
            crate::resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let ctx = Arc::clone(&self.ctx);
        // Files are read (and hashed) off the async workers.
        tokio::task::spawn_blocking(move || crate::resources::read(&ctx, &request.uri))
            .await
            .map_err(|e| {
                McpError::internal_error(format!("reading the resource failed: {e}"), None)
            })?
            .map(Into::into)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::resources::subscribe(&self.ctx, &self.session, &request.uri, context.peer)
    }

    /// Protocol 2026-07-28's subscriptions: the resource URIs `resources/subscribe` would
    /// accept.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let uris = crate::resources::accepted_uris(
            &self.ctx,
            requested
                .resource_subscriptions
                .as_deref()
                .unwrap_or_default(),
        );
        Some(
            SubscriptionFilter::builder()
                .resource_subscriptions(uris)
                .build(),
        )
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), McpError> {
        crate::resources::listen(&self.ctx, context).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session.unsubscribe(&request.uri);
        Ok(())
    }
}
