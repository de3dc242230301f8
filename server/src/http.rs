//! The Streamable HTTP transport (`scimcp serve --transport http`): one MCP endpoint, `/mcp`,
//! on a loopback address, every session served by the same [`ScimcpServer`] state (one run
//! manager, so limits and runs are shared exactly as between tools of one stdio session).
//!
//! Loopback only, by design: scimcp has no authentication, and a run starts programs on this
//! computer. `Host` is checked against loopback names (DNS rebinding) and a browser `Origin`
//! must be a loopback origin too; requests without `Origin` (every non-browser client) pass.

use std::convert::Infallible;
use std::net::SocketAddr;

use anyhow::Context as _;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::server::ScimcpServer;

/// The one path MCP is served on (the convention clients default to).
pub const MCP_PATH: &str = "/mcp";

/// Parse `--listen` and refuse anything but a loopback address.
pub fn loopback_address(listen: &str) -> anyhow::Result<SocketAddr> {
    // `localhost:PORT` is what people type; it means the IPv4 loopback here (no resolver, so
    // no surprise from a hosts file).
    let literal = match listen.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => listen.to_owned(),
    };
    let addr: SocketAddr = literal.parse().with_context(|| {
        format!(
            "--listen {listen:?} is not an address and port such as 127.0.0.1:8765, \
             localhost:8765 or [::1]:8765"
        )
    })?;
    if !addr.ip().is_loopback() {
        anyhow::bail!(
            "--listen {addr}: scimcp serves HTTP on this computer only (127.0.0.1 or [::1]). It \
             has no authentication and its tools start programs, so it must not listen on a \
             network; use an SSH tunnel or the stdio transport to reach it from elsewhere"
        );
    }
    Ok(addr)
}

/// Serve until SIGINT/SIGTERM (or Ctrl-C), then stop accepting, end every session and return
/// (the caller then ends the live runs).
pub async fn serve(server: ScimcpServer, listen: &str) -> anyhow::Result<()> {
    let addr = loopback_address(listen)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr().context("reading the bound address")?;
    let shutdown = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
        .with_cancellation_token(shutdown.child_token());
    let mcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        LocalSessionManager::default().into(),
        config,
    );
    // Tests and scripts read the real port (for --listen 127.0.0.1:0) from this line.
    tracing::info!("serving MCP over HTTP at http://{local}{MCP_PATH}");
    let stop = crate::shutdown::signal();
    tokio::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: keep serving the others.
                    tracing::warn!("accepting a connection failed: {e}");
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let mcp = mcp.clone();
        let connection_done = shutdown.child_token();
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let mcp = mcp.clone();
                async move { route(&mcp, request).await }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!("HTTP connection ended: {e}");
                    }
                }
                () = connection_done.cancelled() => connection.as_mut().graceful_shutdown(),
            }
        });
    }
    tracing::info!("shutting down the HTTP transport");
    shutdown.cancel();
    Ok(())
}

type McpService = StreamableHttpService<ScimcpServer, LocalSessionManager>;

async fn route(
    mcp: &McpService,
    request: Request<Incoming>,
) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    if request.uri().path() != MCP_PATH {
        let body = format!("scimcp serves MCP at {MCP_PATH} only\n");
        let response = Response::builder()
            .status(StatusCode::NOT_FOUND)
            .header("content-type", "text/plain; charset=utf-8")
            .body(Full::new(Bytes::from(body)).boxed())
            .expect("a static response is valid");
        return Ok(response);
    }
    Ok(mcp.handle(request).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_accepted() {
        for ok in ["127.0.0.1:8765", "[::1]:0", "localhost:9000", "127.0.0.2:1"] {
            assert!(loopback_address(ok).unwrap().ip().is_loopback(), "{ok}");
        }
        assert_eq!(
            loopback_address("localhost:9000").unwrap(),
            "127.0.0.1:9000".parse::<SocketAddr>().unwrap()
        );
        for bad in [
            "0.0.0.0:8765",
            "[::]:8765",
            "192.168.1.2:80",
            "localhost",
            "example.org:80",
        ] {
            let message = loopback_address(bad).unwrap_err().to_string();
            assert!(message.contains("--listen"), "{bad}: {message}");
        }
    }
}
