//! The MCP server: the rmcp handler that routes tools, resources and their subscriptions,
//! one per session, over the shared [`ServerContext`] (in `context.rs`).

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, DiscoverResult, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::model::{CancelTaskParams, GetTaskParams, GetTaskResult, UpdateTaskParams};
use rmcp::model::{CustomRequest, CustomResult, ErrorCode};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::auth::Caller;
use crate::context::ServerContext;
use crate::tools::listing::LIST_TTL_MS;
use crate::tools::{Call, Progress};

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

    /// Who asks about a task (no progress: task methods report none).
    fn task_call(&self, context: &RequestContext<RoleServer>) -> Call {
        Call {
            caller: caller_of(context),
            session: Arc::clone(&self.session_id),
            client: None,
            progress: None,
        }
    }

    /// A 2025-11-25 task-augmented `tools/call` (tasks/legacy.rs): a `get_run_result` on a
    /// run still going is a task at once; anything else runs as a call, then becomes one.
    async fn call_as_task(
        &self,
        call: &Call,
        params: Option<serde_json::Value>,
        context: RequestContext<RoleServer>,
    ) -> Result<serde_json::Value, McpError> {
        use crate::tasks::legacy;
        let request = legacy::call_params(params)?;
        let tool = request.name.to_string();
        if tool == "get_run_result"
            && let Some(task) =
                crate::tasks::for_waiting_result(&self.ctx, call, request.arguments.as_ref())?
        {
            let created = serde_json::json!({"task": legacy::created_task(&task.task)});
            legacy::notify_changes(&self.ctx, call, &created["task"], context.peer.clone());
            return Ok(created);
        }
        let peer = context.peer.clone();
        let response = self.call_tool(request, context).await?;
        let created = legacy::created(&self.ctx, call, &tool, response).await?;
        legacy::notify_changes(&self.ctx, call, &created["task"], peer);
        Ok(created)
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
                .enable_tasks()
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
        Ok(crate::tools::listing::list_result())
    }

    /// `server/discover` with the same cache hints as `tools/list` (rmcp's default says
    /// `ttlMs: 0`, `private`): the versions, capabilities and instructions are this build's.
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        )
        .with_ttl_ms(LIST_TTL_MS)
        .with_cache_scope(CacheScope::Public))
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
        // Tasks and confirmation by the person (tasks/): a form to answer, a task to poll.
        let arguments =
            match crate::tasks::before_call(&self.ctx, &call, &request, &context).await? {
                crate::tasks::Before::Respond(response) => return Ok(response),
                crate::tasks::Before::Call(arguments) => arguments,
            };
        // A client's cancellation ends this call (a wait ends; the run it waited on goes on).
        let result = tokio::select! {
            r = crate::tools::dispatch(&self.ctx, &call, &name, arguments) => r,
            _ = context.ct.cancelled() => return Err(McpError::internal_error("request cancelled by the client", None)),
        };
        match result {
            Some(mut r) => {
                // A finished run's images go with its result (result_images.rs).
                if name == crate::result_images::TOOL {
                    crate::result_images::attach(&self.ctx, &mut r).await;
                }
                if let Some(task) = crate::tasks::after_call(&self.ctx, &call, &name, &r, &context)?
                {
                    return Ok(CallToolResponse::Task(task));
                }
                Ok(r.into())
            }
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

    /// `tasks/get` (2026-07-28 tasks extension): the task's run or campaign, read now.
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let call = self.task_call(&context);
        let record = crate::tasks::load(&self.ctx, &call, &request.task_id)?;
        Ok(GetTaskResult::new(
            crate::tasks::get(&self.ctx, &call, &record).await?,
        ))
    }

    /// `tasks/update`: no task of this server asks for input, so answers are acknowledged
    /// and ignored, as the extension says of unknown keys.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::tasks::load(&self.ctx, &self.task_call(&context), &request.task_id).map(|_| ())
    }

    /// `tasks/cancel`: the run's (or campaign's) whole process tree ends, as `cancel_run` does.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let call = self.task_call(&context);
        let record = crate::tasks::load(&self.ctx, &call, &request.task_id)?;
        crate::tasks::cancel(&self.ctx, &call, &record).await
    }

    /// Protocol 2025-11-25's experimental tasks, renamed by the stdio layer (tasks/wire.rs)
    /// and answered in that version's shape from the same task records (tasks/legacy.rs).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        use crate::tasks::legacy::{self, Method};
        let Some(method) = Method::parse(&request.method) else {
            return Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", request.method),
                None,
            ));
        };
        let call = self.task_call(&context);
        let params = request.params;
        let record = |name: &str| -> Result<crate::tasks::TaskRecord, McpError> {
            let id = legacy::task_id(name, params.as_ref())?;
            crate::tasks::load(&self.ctx, &call, &id)
        };
        // tasks/result and tasks/cancel wait on the run: a client's cancellation ends the
        // wait (never the run).
        let ct = context.ct.clone();
        let work = async {
            Ok::<_, McpError>(match method {
                Method::Call => self.call_as_task(&call, params.clone(), context).await?,
                Method::Get => legacy::get(&self.ctx, &call, &record("tasks/get")?).await?,
                Method::Result => {
                    legacy::result(&self.ctx, &call, &record("tasks/result")?).await?
                }
                Method::Cancel => {
                    legacy::cancel(&self.ctx, &call, &record("tasks/cancel")?).await?
                }
                Method::List => legacy::list(&self.ctx, &call, params.as_ref()).await?,
            })
        };
        tokio::select! {
            answer = work => Ok(CustomResult(answer?)),
            _ = ct.cancelled() => Err(McpError::internal_error("request cancelled by the client", None)),
        }
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
