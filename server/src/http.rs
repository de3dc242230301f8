//! The Streamable HTTP transport (`scimcp serve --transport http`): one MCP endpoint, `/mcp`,
//! and `GET /health` for load balancers; every session is served by the same
//! [`ScimcpServer`] state (one run manager, so limits and runs are shared exactly as between
//! tools of one stdio session).
//!
//! Network means authentication. On a loopback address the server serves this computer and
//! needs no token. Any other address requires bearer tokens (`crate::auth`): a request
//! without a known token is answered 401 with no detail, before its body is read; each
//! token's requests are bounded in rate and in number in flight (429 with `Retry-After`);
//! the token's name travels with the request into the tools, so each run records who
//! started it. A network address also needs TLS (`--tls-cert`/`--tls-key`), or an explicit
//! `--allow-plain-http` when a TLS-terminating proxy sits in front (docs/REMOTE.md).
//!
//! Connections are bounded per peer address, and a new one must have a request admitted
//! (a known token, or any request where none is needed) within a few seconds before it may
//! hold one of the long slots (`http::conns`), so idle connections cannot starve a token
//! holder. SSE answers carry priming events only for clients on protocol 2025-11-25 or later
//! (`http::sse`).
//!
//! Whatever the address, `Host` must name this server (a loopback name, the address the
//! client connected to, or an `--allowed-host`), which stops DNS rebinding, and a browser's
//! `Origin` must be a loopback origin or an `--allowed-origin`. A session is bound to the
//! token that opened it.

mod body;
mod conns;
mod error;
mod limits;
mod sse;
mod tls;
mod wire;

use body::HttpBody;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{AUTHORIZATION, HOST};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

pub use limits::TokenLimits;

use crate::auth::{Caller, Tokens};
use crate::server::ScimcpServer;
use conns::{Conns, Ticket};
pub use error::HttpError;
use limits::{Held, Limiter, Refusal};

/// The one path MCP is served on (the convention clients default to).
pub const MCP_PATH: &str = "/mcp";
/// The load balancers' path: `200 {"status":"ok","version":…}`, without authentication.
pub const HEALTH_PATH: &str = "/health";

/// How long an admitted connection may take to send a request's headers (and how long it is
/// kept idle between requests). A new connection has [`PRE_AUTH_TIMEOUT`] for its TLS
/// handshake and first admitted request.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
pub use conns::{
    ADMITTED as MAX_CONNECTIONS, PER_PEER as MAX_CONNECTIONS_PER_PEER, PRE_AUTH_TIMEOUT,
};
/// How long a client may take to send a request's body.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest request body accepted (an MCP request is a few KiB).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Sessions whose opening token is remembered (older ones are forgotten first; rmcp ends
/// idle sessions long before this many accumulate).
const MAX_BOUND_SESSIONS: usize = 16_384;

/// Host names every server accepts: this computer's loopback names.
const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];
/// Browser origins every server accepts: pages served from this computer.
const LOOPBACK_ORIGINS: &[&str] = &["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// What `scimcp serve --transport http` was asked for, before anything is checked.
#[derive(Debug, Clone, Default)]
pub struct HttpArgs {
    pub listen: String,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// The token file (default `<data root>/tokens.toml`).
    pub token_file: Option<PathBuf>,
    /// The data root, for the default token file.
    pub data_root: PathBuf,
    /// `SCIMCP_TOKEN`.
    pub env_token: Option<String>,
    /// Require a token even on a loopback address (a reverse proxy on this computer).
    pub require_token: bool,
    /// Serve a network address without TLS (a TLS-terminating proxy in front).
    pub allow_plain_http: bool,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub limits: Option<TokenLimits>,
}

/// The HTTP transport's settings, checked: a network address has tokens (and TLS or an
/// explicit opt-out), the certificate and key load, the token file is trustworthy.
#[derive(Debug)]
pub struct HttpConfig {
    pub addr: SocketAddr,
    tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
    tokens: Option<Arc<Tokens>>,
    /// Every request must carry a token.
    pub require_token: bool,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    limits: TokenLimits,
}

/// Parse `--listen`: `HOST:PORT` with an IP address (`[…]` around IPv6), or
/// `localhost:PORT` (the IPv4 loopback: no resolver, so no surprise from a hosts file).
pub fn parse_listen(listen: &str) -> Result<SocketAddr, HttpError> {
    let literal = match listen.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => listen.to_owned(),
    };
    literal.parse().map_err(|source| HttpError::Listen {
        listen: listen.to_owned(),
        source,
    })
}

impl HttpConfig {
    /// Check `args`; every refusal says what to change.
    pub fn resolve(args: HttpArgs) -> Result<HttpConfig, HttpError> {
        let addr = parse_listen(&args.listen)?;
        let network = !addr.ip().is_loopback();
        let require_token = network || args.require_token;
        let tls = match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => Some(tls::server_config(cert, key)?),
            (None, None) => None,
            (Some(_), None) => return Err(HttpError::CertWithoutKey),
            (None, Some(_)) => return Err(HttpError::KeyWithoutCert),
        };
        if network && tls.is_none() && !args.allow_plain_http {
            return Err(HttpError::PlainOnNetwork { addr });
        }
        let token_file = args
            .token_file
            .clone()
            .unwrap_or_else(|| crate::auth::default_token_file(&args.data_root));
        let tokens = match Tokens::open(token_file.clone(), args.env_token.as_deref()) {
            Ok(tokens) => Some(Arc::new(tokens)),
            Err(e) if require_token => return Err(e.into()),
            Err(e) => {
                // Loopback without --require-token: tokens only name callers, so a broken
                // file must not stop the server; a presented token is then refused.
                tracing::warn!("{e}; bearer tokens are not accepted until it is fixed");
                None
            }
        };
        if require_token && tokens.as_ref().is_none_or(|t| t.is_empty()) {
            let why = if network {
                format!("--listen {addr} is a network address, which requires authentication")
            } else {
                "--require-token asks for authentication".to_string()
            };
            return Err(HttpError::NoToken {
                why,
                token_file,
                env: crate::auth::TOKEN_ENV,
            });
        }
        let mut allowed_hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
        let listen_ip = addr.ip().to_string();
        if !addr.ip().is_unspecified() && !allowed_hosts.contains(&listen_ip) {
            allowed_hosts.push(listen_ip);
        }
        for host in &args.allowed_hosts {
            let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
            if host.is_empty() || host.contains(['/', ' ', '@']) {
                return Err(HttpError::BadHost { host });
            }
            if !allowed_hosts.contains(&host) {
                allowed_hosts.push(host);
            }
        }
        let mut allowed_origins: Vec<String> =
            LOOPBACK_ORIGINS.iter().map(|o| o.to_string()).collect();
        for origin in &args.allowed_origins {
            if !(origin.starts_with("http://") || origin.starts_with("https://")) {
                return Err(HttpError::BadOrigin {
                    origin: origin.clone(),
                });
            }
            allowed_origins.push(origin.clone());
        }
        Ok(HttpConfig {
            addr,
            tls,
            tokens,
            require_token,
            allowed_hosts,
            allowed_origins,
            limits: args.limits.unwrap_or(TokenLimits::DEFAULT),
        })
    }

    /// True for a server reachable from other computers (or through a proxy): tokens
    /// required, so plan-then-confirm is required by default too.
    pub fn is_remote(&self) -> bool {
        self.require_token
    }

    /// One line for the log saying who may connect (never a secret).
    pub fn access_summary(&self) -> String {
        let tokens = self
            .tokens
            .as_ref()
            .map(|t| (t.names(), t.file().to_path_buf()));
        match (self.require_token, tokens) {
            (true, Some((names, file))) => format!(
                "bearer token required: {} accepted ({}; token file {})",
                names.len(),
                names.join(", "),
                file.display()
            ),
            (true, None) => "bearer token required".to_string(),
            (false, Some((names, _))) if !names.is_empty() => format!(
                "this computer only; a bearer token is optional and names the caller ({} known)",
                names.len()
            ),
            (false, _) => "this computer only, no token needed".to_string(),
        }
    }
}

/// The connection a request came in on.
#[derive(Debug, Clone, Copy)]
struct ConnInfo {
    local: SocketAddr,
    peer: SocketAddr,
}

/// Who may pass, checked for every request before MCP sees it.
#[derive(Debug)]
struct Gate {
    tokens: Option<Arc<Tokens>>,
    require_token: bool,
    allowed_hosts: Vec<String>,
    limiter: Limiter,
    /// Which caller opened each session, oldest first.
    sessions: Mutex<(HashMap<String, String>, VecDeque<String>)>,
    refusals: Mutex<RateLimitedWarning>,
}

impl Gate {
    fn authenticate(&self, headers: &hyper::HeaderMap) -> Result<Caller, &'static str> {
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let first = values.next();
        if values.next().is_some() {
            return Err("several Authorization headers");
        }
        let Some(value) = first else {
            return if self.require_token {
                Err("no bearer token")
            } else {
                Ok(Caller::Loopback)
            };
        };
        let value = value
            .to_str()
            .map_err(|_| "an Authorization header that is not text")?;
        let (scheme, secret) = value
            .trim()
            .split_once(' ')
            .ok_or("an Authorization header that is not a bearer token")?;
        let secret = secret.trim();
        if !scheme.eq_ignore_ascii_case("bearer") || secret.is_empty() {
            return Err("an Authorization header that is not a bearer token");
        }
        let tokens = self
            .tokens
            .as_ref()
            .ok_or("a token, and none is configured")?;
        tokens
            .check(secret)
            .map(Caller::Token)
            .ok_or("an unknown or revoked token")
    }

    /// `Host` names this server: an allowed name, or the address the client connected to
    /// (an address literal cannot be rebound to another server by DNS).
    fn host_allowed(&self, headers: &hyper::HeaderMap, conn: &ConnInfo) -> bool {
        let mut values = headers.get_all(HOST).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return false;
        };
        let Some((host, port)) = value.to_str().ok().and_then(split_authority) else {
            return false;
        };
        if let Ok(ip) = host.parse::<IpAddr>()
            && ip.to_canonical() == conn.local.ip().to_canonical()
        {
            return true;
        }
        self.allowed_hosts
            .iter()
            .any(|allowed| match split_authority(allowed) {
                Some((name, None)) => name == host,
                Some((name, Some(p))) => name == host && port == Some(p),
                None => false,
            })
    }

    /// A session may be used only by the caller that opened it.
    fn session_allowed(&self, session: &str, caller: &Caller) -> bool {
        let sessions = self.sessions.lock().expect("sessions lock");
        sessions
            .0
            .get(session)
            .is_none_or(|owner| owner == caller.name())
    }

    fn bind_session(&self, session: &str, caller: &Caller) {
        let mut sessions = self.sessions.lock().expect("sessions lock");
        let (owners, order) = &mut *sessions;
        if owners
            .insert(session.to_string(), caller.name().to_string())
            .is_none()
        {
            order.push_back(session.to_string());
        }
        while order.len() > MAX_BOUND_SESSIONS {
            if let Some(oldest) = order.pop_front() {
                owners.remove(&oldest);
            }
        }
    }

    fn forget_session(&self, session: &str) {
        let mut sessions = self.sessions.lock().expect("sessions lock");
        let (owners, order) = &mut *sessions;
        if owners.remove(session).is_some() {
            order.retain(|s| s != session);
        }
    }
}

/// `host[:port]` of an authority, the host in lower case without brackets.
fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    let authority = authority.trim();
    if authority.is_empty() {
        return None;
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?.parse().ok()?),
        };
        (host, port)
    } else if authority.matches(':').count() == 1 {
        let (host, port) = authority.split_once(':')?;
        (host, Some(port.parse().ok()?))
    } else {
        // A name, an IPv4 address, or a bare IPv6 address (several colons, no port).
        (authority, None)
    };
    Some((host.trim_end_matches('.').to_ascii_lowercase(), port))
}

type McpService = StreamableHttpService<ScimcpServer, LocalSessionManager>;

/// Serve until SIGINT/SIGTERM (or Ctrl-C), then stop accepting, end every session and return
/// (the caller then ends the live runs).
pub async fn serve(server: ScimcpServer, config: HttpConfig) -> Result<(), HttpError> {
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|source| HttpError::Bind {
            addr: config.addr,
            source,
        })?;
    let local = listener.local_addr().map_err(HttpError::BoundAddress)?;
    let shutdown = CancellationToken::new();
    // Host is checked by the gate (which also accepts the address a client connected to);
    // rmcp checks it again for loopback names when nothing else is allowed.
    let mut mcp_config = StreamableHttpServerConfig::default()
        .with_allowed_origins(config.allowed_origins.clone())
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(shutdown.child_token());
    mcp_config = if config.allowed_hosts.len() == LOOPBACK_HOSTS.len() && local.ip().is_loopback() {
        mcp_config.with_allowed_hosts(config.allowed_hosts.clone())
    } else {
        mcp_config.disable_allowed_hosts()
    };
    let mcp = StreamableHttpService::new(
        move || Ok(server.new_session()),
        LocalSessionManager::default().into(),
        mcp_config,
    );
    let gate = Arc::new(Gate {
        tokens: config.tokens.clone(),
        require_token: config.require_token,
        allowed_hosts: config.allowed_hosts.clone(),
        limiter: Limiter::new(config.limits),
        sessions: Mutex::new((HashMap::new(), VecDeque::new())),
        refusals: Mutex::new(RateLimitedWarning::default()),
    });
    let tls = config.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let scheme = if tls.is_some() { "https" } else { "http" };
    // Tests and scripts read the real port (for --listen …:0) from this line.
    tracing::info!("serving MCP over HTTP at {scheme}://{local}{MCP_PATH}");
    tracing::info!("access: {}", config.access_summary());
    let stop = crate::shutdown::signal();
    tokio::pin!(stop);
    let conns = Conns::new();
    let mut crowded = RateLimitedWarning::default();
    let mut backoff = AcceptBackoff::default();
    loop {
        // Accepting never waits for a slot: a crowd of idle connections must not keep the
        // next client in the kernel's queue (the slots are bounded per peer, `conns`).
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => {
                    backoff.succeeded();
                    accepted
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
        let accepted_at = tokio::time::Instant::now();
        let ticket = match conns.open(peer.ip().to_canonical()) {
            Ok(ticket) => Arc::new(ticket),
            Err(refused) => {
                crowded.warn(|also| {
                    let why = match refused {
                        conns::Refused::PeerFull => {
                            format!("it has {MAX_CONNECTIONS_PER_PEER} connections open")
                        }
                    };
                    format!("closed a new connection from {}: {why}{also}", peer.ip())
                });
                drop(stream);
                continue;
            }
        };
        // An answer goes out in several small writes (headers, then each SSE event): with
        // Nagle's algorithm on, the second waits for the client's delayed ACK, about 40 ms
        // per call on Linux.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY for {peer}: {e}");
        }
        let conn = ConnInfo {
            local: stream.local_addr().unwrap_or(local),
            peer,
        };
        let mcp = mcp.clone();
        let gate = Arc::clone(&gate);
        let tls = tls.clone();
        let done = shutdown.child_token();
        tokio::spawn(async move {
            let deadline = accepted_at + PRE_AUTH_TIMEOUT;
            let Some(tls) = tls else {
                return serve_connection(stream, mcp, gate, conn, ticket, deadline, done).await;
            };
            let evicted = ticket.evicted().clone();
            let handshake = tokio::time::timeout_at(deadline, tls.accept(stream));
            tokio::select! {
                shaken = handshake => match shaken {
                    Ok(Ok(stream)) => {
                        serve_connection(stream, mcp, gate, conn, ticket, deadline, done).await;
                    }
                    Ok(Err(e)) => tracing::debug!("TLS handshake with {} failed: {e}", conn.peer),
                    Err(_) => tracing::debug!("TLS handshake with {} timed out", conn.peer),
                },
                () = evicted.cancelled() => {}
                () = done.cancelled() => {}
            }
        });
    }
    tracing::info!("shutting down the HTTP transport");
    shutdown.cancel();
    Ok(())
}

/// Serve one connection: until `deadline` it must have a request admitted (else it is
/// closed, as it is when a newer connection takes its waiting slot); then as long as hyper
/// keeps it.
async fn serve_connection<IO>(
    io: IO,
    mcp: McpService,
    gate: Arc<Gate>,
    conn: ConnInfo,
    ticket: Arc<Ticket>,
    deadline: tokio::time::Instant,
    done: CancellationToken,
) where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let on_request = Arc::clone(&ticket);
    let service = service_fn(move |request: Request<Incoming>| {
        let mcp = mcp.clone();
        let gate = Arc::clone(&gate);
        let ticket = Arc::clone(&on_request);
        async move { route(&mcp, &gate, &conn, &ticket, request).await }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    let expired = tokio::time::sleep_until(deadline);
    tokio::pin!(expired);
    let mut waiting = true;
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!("HTTP connection ended: {e}");
                }
                return;
            }
            () = done.cancelled() => {
                connection.as_mut().graceful_shutdown();
                return;
            }
            () = ticket.admitted().cancelled(), if waiting => waiting = false,
            () = &mut expired, if waiting => {
                tracing::debug!("closed a connection from {}: no admitted request within {} s", conn.peer, PRE_AUTH_TIMEOUT.as_secs());
                return;
            }
            () = ticket.evicted().cancelled(), if waiting => {
                tracing::debug!("closed a waiting connection from {} for a newer one", conn.peer);
                return;
            }
        }
    }
}

async fn route(
    mcp: &McpService,
    gate: &Gate,
    conn: &ConnInfo,
    ticket: &Ticket,
    request: Request<Incoming>,
) -> Result<Response<HttpBody>, Infallible> {
    // Only origin-form targets (`/mcp`): an absolute-form target (`http://evil.com/mcp`) is
    // what a proxy is sent, and it would name a host apart from the Host header that was
    // checked.
    if request.uri().scheme().is_some() || request.uri().authority().is_some() {
        return Ok(plain(
            StatusCode::BAD_REQUEST,
            "Bad Request: the request target must be a path such as /mcp\n".into(),
        ));
    }
    let path = request.uri().path();
    if path == HEALTH_PATH {
        return Ok(health(request.method()));
    }
    if path != MCP_PATH {
        return Ok(plain(
            StatusCode::NOT_FOUND,
            format!("scimcp serves MCP at {MCP_PATH} only\n"),
        ));
    }
    // Authentication first, before the body is read: a caller without a known token learns
    // nothing but 401.
    let caller = match gate.authenticate(request.headers()) {
        Ok(caller) => caller,
        Err(why) => {
            gate.refusals
                .lock()
                .expect("refusals lock")
                .warn(|also| format!("refused a request from {}: {why}{also}", conn.peer.ip()));
            return Ok(unauthorized());
        }
    };
    if !ticket.admit() {
        let mut response = plain(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("Service Unavailable: {MAX_CONNECTIONS} connections are being served\n"),
        );
        let headers = response.headers_mut();
        headers.insert("retry-after", hyper::header::HeaderValue::from_static("1"));
        headers.insert(
            hyper::header::CONNECTION,
            hyper::header::HeaderValue::from_static("close"),
        );
        return Ok(response);
    }
    if !gate.host_allowed(request.headers(), conn) {
        tracing::warn!(
            "refused a request from {}: its Host header does not name this server (DNS \
             rebinding?); if clients reach it by that name, start it with --allowed-host NAME",
            conn.peer.ip()
        );
        return Ok(plain(
            StatusCode::FORBIDDEN,
            "Forbidden: Host header is not allowed\n".into(),
        ));
    }
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(session) = &session
        && !gate.session_allowed(session, &caller)
    {
        return Ok(plain(
            StatusCode::FORBIDDEN,
            "Forbidden: this session was opened with another token\n".into(),
        ));
    }
    let permit = match &caller {
        Caller::Token(name) => match gate.limiter.admit(name) {
            Ok(permit) => Some(permit),
            Err(refusal) => return Ok(too_many(refusal)),
        },
        _ => None,
    };
    // The body is read here, bounded in size and time, so a client trickling a body holds a
    // connection for BODY_TIMEOUT at most and cannot make the server buffer without end.
    let (mut parts, body) = request.into_parts();
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
    let method = parts.method.clone();
    let version = sse::request_version(&parts.headers, &bytes);
    let priming = sse::wants_priming(&version);
    // 2025-11-25's experimental tasks, which rmcp cannot route (tasks/wire.rs).
    let tasks_2025 = crate::tasks::wire::Wire::for_request(&version);
    let bytes = wire::inbound(tasks_2025.as_ref(), bytes);
    // The tools read the caller from here (rmcp hands the request's parts to the handler).
    parts.extensions.insert(caller.clone());
    let response = mcp
        .handle(Request::from_parts(parts, Full::new(bytes)))
        .await;
    if response.status().is_success() {
        match &session {
            None => {
                if let Some(opened) = response
                    .headers()
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
                {
                    gate.bind_session(opened, &caller);
                }
            }
            Some(session) if method == Method::DELETE => gate.forget_session(session),
            Some(_) => {}
        }
    }
    let response = wire::outbound(tasks_2025.as_ref(), response).await;
    let (parts, body) = response.into_parts();
    let is_sse = parts
        .headers
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let body = if is_sse && !priming {
        sse::WithoutEmptyEvents::new(body).boxed()
    } else {
        body
    };
    Ok(Response::from_parts(parts, Held::new(body, permit).boxed()))
}

fn health(method: &Method) -> Response<HttpBody> {
    if method != Method::GET && method != Method::HEAD {
        let mut response = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("{HEALTH_PATH} answers GET only\n"),
        );
        response.headers_mut().insert(
            "allow",
            hyper::header::HeaderValue::from_static("GET, HEAD"),
        );
        return response;
    }
    let body = serde_json::json!({
        "status": "ok",
        "version": scimcp_core::version::SUITE_VERSION,
    })
    .to_string();
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .header("cache-control", "no-store")
        .body(Full::new(Bytes::from(body)).boxed())
        .expect("a static response is valid")
}

fn unauthorized() -> Response<HttpBody> {
    let mut response = plain(StatusCode::UNAUTHORIZED, "Unauthorized\n".into());
    response.headers_mut().insert(
        "www-authenticate",
        hyper::header::HeaderValue::from_static("Bearer realm=\"scimcp\""),
    );
    response
}

fn too_many(refusal: Refusal) -> Response<HttpBody> {
    let (retry_after, text) = match refusal {
        Refusal::Rate { retry_after } => (
            retry_after.as_secs_f64().ceil().max(1.0) as u64,
            "Too Many Requests: this token's request rate is over its limit\n",
        ),
        Refusal::InFlight => (
            1,
            "Too Many Requests: this token has too many requests in flight\n",
        ),
    };
    let mut response = plain(StatusCode::TOO_MANY_REQUESTS, text.into());
    response
        .headers_mut()
        .insert("retry-after", hyper::header::HeaderValue::from(retry_after));
    response
}

fn plain(status: StatusCode, body: String) -> Response<HttpBody> {
    Response::builder()
        .status(status)
        .header("content-type", "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(body)).boxed())
        .expect("a static response is valid")
}

/// One warning a second at most, with the count of the ones held back.
#[derive(Debug, Default)]
struct RateLimitedWarning {
    last: Option<Instant>,
    suppressed: u64,
}

impl RateLimitedWarning {
    fn warn(&mut self, message: impl FnOnce(String) -> String) {
        if self
            .last
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            let also = if self.suppressed > 0 {
                format!(" ({} more since the last warning)", self.suppressed)
            } else {
                String::new()
            };
            tracing::warn!("{}", message(also));
            self.last = Some(Instant::now());
            self.suppressed = 0;
        } else {
            self.suppressed += 1;
        }
    }
}

/// Pauses between failed accepts: 10 ms doubling to 1 s, and one warning per second at
/// most, however often accepting fails.
#[derive(Debug, Default)]
struct AcceptBackoff {
    pause: Option<Duration>,
    warning: RateLimitedWarning,
}

impl AcceptBackoff {
    fn failed(&mut self, e: &std::io::Error) -> Duration {
        let pause = self.pause.map_or(Duration::from_millis(10), |p| {
            (p * 2).min(Duration::from_secs(1))
        });
        self.pause = Some(pause);
        self.warning.warn(|also| {
            format!("accepting a connection failed: {e}{also}; retrying in {pause:?}")
        });
        pause
    }

    fn succeeded(&mut self) {
        self.pause = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(listen: &str, dir: &std::path::Path) -> HttpArgs {
        HttpArgs {
            listen: listen.into(),
            data_root: dir.to_path_buf(),
            ..HttpArgs::default()
        }
    }

    #[test]
    fn listen_addresses_parse() {
        assert_eq!(
            parse_listen("localhost:9000").unwrap(),
            "127.0.0.1:9000".parse::<SocketAddr>().unwrap()
        );
        for ok in ["127.0.0.1:8765", "[::1]:0", "0.0.0.0:80", "[::]:1"] {
            parse_listen(ok).unwrap();
        }
        for bad in ["localhost", "example.org:80", "1.2.3.4"] {
            let message = parse_listen(bad).unwrap_err().to_string();
            assert!(message.contains("--listen"), "{bad}: {message}");
        }
    }

    #[test]
    fn a_network_address_needs_tokens_and_tls() {
        let dir = tempfile::tempdir().unwrap();
        // Loopback: nothing needed.
        let loopback = HttpConfig::resolve(args("127.0.0.1:0", dir.path())).unwrap();
        assert!(!loopback.is_remote());
        // A network address without TLS is refused, naming both ways out.
        let err = HttpConfig::resolve(args("0.0.0.0:0", dir.path()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--tls-cert") && err.contains("--allow-plain-http"),
            "{err}"
        );
        // With plain HTTP allowed, still no token: refused, naming `scimcp token add`.
        let mut plain = args("0.0.0.0:0", dir.path());
        plain.allow_plain_http = true;
        let err = HttpConfig::resolve(plain.clone()).unwrap_err().to_string();
        assert!(
            err.contains("scimcp token add") && err.contains("SCIMCP_TOKEN"),
            "{err}"
        );
        // A token makes it start.
        crate::auth::add_token(&crate::auth::default_token_file(dir.path()), "alice").unwrap();
        let config = HttpConfig::resolve(plain).unwrap();
        assert!(config.is_remote());
        assert!(config.access_summary().contains("alice"));
        // --require-token on loopback asks for the same.
        let other = tempfile::tempdir().unwrap();
        let mut proxied = args("127.0.0.1:0", other.path());
        proxied.require_token = true;
        assert!(HttpConfig::resolve(proxied).is_err());
    }

    #[test]
    fn authorities_split() {
        assert_eq!(
            split_authority("Example.ORG."),
            Some(("example.org".into(), None))
        );
        assert_eq!(
            split_authority("a.b:8765"),
            Some(("a.b".into(), Some(8765)))
        );
        assert_eq!(split_authority("[::1]:80"), Some(("::1".into(), Some(80))));
        assert_eq!(split_authority("[::1]"), Some(("::1".into(), None)));
        assert_eq!(split_authority("::1"), Some(("::1".into(), None)));
        assert_eq!(split_authority("a:b"), None);
        assert_eq!(split_authority(""), None);
    }

    #[test]
    fn host_must_name_this_server() {
        let gate = Gate {
            tokens: None,
            require_token: false,
            allowed_hosts: vec![
                "localhost".into(),
                "lab.example".into(),
                "other.example:443".into(),
            ],
            limiter: Limiter::new(TokenLimits::DEFAULT),
            sessions: Mutex::new((HashMap::new(), VecDeque::new())),
            refusals: Mutex::new(RateLimitedWarning::default()),
        };
        let conn = ConnInfo {
            local: "192.0.2.2:8765".parse().unwrap(),
            peer: "192.0.2.9:5000".parse().unwrap(),
        };
        let with = |host: &str| {
            let mut h = hyper::HeaderMap::new();
            h.insert(HOST, host.parse().unwrap());
            gate.host_allowed(&h, &conn)
        };
        assert!(with("localhost:8765"));
        assert!(with("192.0.2.2:8765"));
        assert!(with("LAB.example"));
        assert!(with("other.example:443"));
        assert!(!with("other.example:444"));
        assert!(!with("192.0.2.3:8765"));
        assert!(!with("attacker.example"));
        assert!(!gate.host_allowed(&hyper::HeaderMap::new(), &conn));
    }
}
