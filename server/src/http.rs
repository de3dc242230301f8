//! The Streamable HTTP transport (`scimcp serve --transport http`): one MCP endpoint, `/mcp`,
//! on a loopback address, every session served by the same [`ScimcpServer`] state (one run
//! manager, so limits and runs are shared exactly as between tools of one stdio session).
//!
//! Loopback only, by design: scimcp has no authentication, and a run starts programs on this
//! computer. `Host` is checked against loopback names (DNS rebinding) and a browser `Origin`
//! must be a loopback origin too; requests without `Origin` (every non-browser client) pass.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::server::ScimcpServer;

/// The one path MCP is served on (the convention clients default to).
pub const MCP_PATH: &str = "/mcp";

/// How long a client may take to send a request's headers (and how long an idle keep-alive
/// connection is kept): a connection that trickles bytes holds nothing for longer.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's body.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest request body accepted (an MCP request is a few KiB).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Connections served at once; more wait in the kernel's queue until one ends.
pub const MAX_CONNECTIONS: usize = 256;

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
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut backoff = AcceptBackoff::default();
    loop {
        // A slot first: at the cap, connections wait in the kernel's queue, not in memory.
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => slot.expect("the semaphore is never closed"),
            () = &mut stop => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    backoff.succeeded();
                    stream
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait before trying again (a loop
                    // that retries at once spins and floods the log), then keep serving.
                    let pause = backoff.failed(&e);
                    tokio::select! {
                        () = tokio::time::sleep(pause) => continue,
                        () = &mut stop => break,
                    }
                }
            },
            () = &mut stop => break,
        };
        let mcp = mcp.clone();
        let connection_done = shutdown.child_token();
        tokio::spawn(async move {
            let _slot = slot;
            let service = service_fn(move |request: Request<Incoming>| {
                let mcp = mcp.clone();
                async move { route(&mcp, request).await }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
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
        return Ok(plain(
            StatusCode::NOT_FOUND,
            format!("scimcp serves MCP at {MCP_PATH} only\n"),
        ));
    }
    // The body is read here, bounded in size and time, so a client trickling a body holds a
    // connection for BODY_TIMEOUT at most and cannot make the server buffer without end.
    let (parts, body) = request.into_parts();
    let limited = http_body_util::Limited::new(body, MAX_BODY_BYTES);
    let bytes = match tokio::time::timeout(BODY_TIMEOUT, limited.collect()).await {
        Err(_) => {
            return Ok(plain(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within {} s\n",
                    BODY_TIMEOUT.as_secs()
                ),
            ));
        }
        Ok(Err(e)) => {
            let too_large = e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some();
            return Ok(if too_large {
                plain(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("a request body may be at most {MAX_BODY_BYTES} bytes\n"),
                )
            } else {
                plain(
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read\n".into(),
                )
            });
        }
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    Ok(mcp
        .handle(Request::from_parts(parts, Full::new(bytes)))
        .await)
}

fn plain(status: StatusCode, body: String) -> Response<BoxBody<Bytes, Infallible>> {
    Response::builder()
        .status(status)
        .header("content-type", "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(body)).boxed())
        .expect("a static response is valid")
}

/// Pauses between failed accepts: 10 ms doubling to 1 s, and one warning per second at
/// most, however often accepting fails.
#[derive(Debug, Default)]
struct AcceptBackoff {
    pause: Option<Duration>,
    last_warning: Option<Instant>,
    suppressed: u64,
}

impl AcceptBackoff {
    fn failed(&mut self, e: &std::io::Error) -> Duration {
        let pause = self.pause.map_or(Duration::from_millis(10), |p| {
            (p * 2).min(Duration::from_secs(1))
        });
        self.pause = Some(pause);
        if self
            .last_warning
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            let also = if self.suppressed > 0 {
                format!(" ({} more since the last warning)", self.suppressed)
            } else {
                String::new()
            };
            tracing::warn!("accepting a connection failed: {e}{also}; retrying in {pause:?}");
            self.last_warning = Some(Instant::now());
            self.suppressed = 0;
        } else {
            self.suppressed += 1;
        }
        pause
    }

    fn succeeded(&mut self) {
        self.pause = None;
    }
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
