//! What a tool is given and what it implements: the [`Call`] (who calls, in which session,
//! where progress goes) and the [`ToolHandler`] trait each tool's unit type implements. The
//! tool files and the table in `tools/mod.rs` both use these; this file imports neither.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::context::ServerContext;
use crate::envelope::ToolError;

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

    /// A call from the stdio client without progress (tests).
    #[cfg(test)]
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

/// One MCP tool, defined in one place: its name, description and annotations, the types
/// its arguments parse into and its answer serializes from (the catalog's schemas are
/// generated from the same types, so they cannot drift apart), and its handler.
///
/// Why a table of our own rather than rmcp's `#[tool_router]`/`ToolRouter`: the router
/// builds every schema at start-up with its own settings, where this server serves the
/// checked-in, portable `catalog.json` (see [`catalog`](super::catalog)); its `Parameters<T>` answers bad
/// arguments with its own text, not the error envelope naming the field and the allowed
/// values ([`parse_args`](crate::envelope::parse_args)); its handlers take a `ToolCallContext` that only an rmcp session
/// can make, where tests and in-process callers use [`dispatch`](super::dispatch) with a [`Call`]; and the
/// response ceiling of the requested detail view (`respond`) would be repeated in every
/// handler. The table below gives the same guarantee (listed means dispatched) in a few
/// lines, with the behaviour unchanged.
pub(crate) trait ToolHandler: 'static {
    /// The tool's name on `tools/list` and `tools/call`.
    const NAME: &'static str;
    /// What the client's model reads to choose the tool.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "read by the catalog's generator (tests); a build serves catalog.json"
        )
    )]
    const DESCRIPTION: &'static str;
    /// Annotated read-only and idempotent, or neither (it starts or stops runs); no tool is
    /// destructive or open-world.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "read by the catalog's generator (tests); a build serves catalog.json"
        )
    )]
    const READ_ONLY: bool;
    /// The arguments, parsed strictly (unknown fields refused) before [`Self::run`].
    type Request: DeserializeOwned + JsonSchema + Send + 'static;
    /// The structured content of a successful answer.
    type Output: Serialize + JsonSchema + 'static;
    /// Serve one call.
    fn run(
        ctx: &Arc<ServerContext>,
        call: &Call,
        req: Self::Request,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;
}
