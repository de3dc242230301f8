//! Clients of `scimcp serve --transport http` for the tests: rmcp's own MCP client transport
//! (initialize, sessions, SSE streams, progress, cancellation) over an HTTP backend on hyper
//! that connects to a given address over TCP or TLS and sends a given `Host` and bearer
//! token; and single raw HTTP exchanges for status-code checks.
//!
//! One connection per request (as rmcp's Unix-socket client does): simple, and a server's
//! per-connection limits never see a pooled connection outlive its test.

use std::borrow::Cow;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, SseError, StreamableHttpClient, StreamableHttpClientTransportConfig,
    StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

/// Where a server is and how to reach it.
#[derive(Clone, Debug)]
pub struct HttpTarget {
    /// The socket address to connect to.
    pub connect: SocketAddr,
    /// `host:port` sent as `Host` (and, for TLS, the name the certificate must carry).
    pub authority: String,
    /// TLS settings (roots to trust); plain HTTP when `None`.
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

/// A TLS client configuration trusting only the PEM certificate(s) in `ca_pem`.
pub fn tls_trusting(ca_pem: &[u8]) -> anyhow::Result<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(cert?)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

impl HttpTarget {
    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}/mcp", self.authority)
    }

    fn host_name(&self) -> &str {
        let a = self.authority.as_str();
        if let Some(rest) = a.strip_prefix('[') {
            return rest.split(']').next().unwrap_or(rest);
        }
        a.rsplit_once(':').map_or(a, |(h, _)| h)
    }

    /// Send one request on a new connection.
    pub async fn send(&self, request: Request<Full<Bytes>>) -> std::io::Result<Response<Incoming>> {
        let tcp = tokio::net::TcpStream::connect(self.connect).await?;
        match &self.tls {
            None => send_on(tcp, request).await,
            Some(config) => {
                let name = ServerName::try_from(self.host_name().to_string())
                    .map_err(std::io::Error::other)?;
                let tls = tokio_rustls::TlsConnector::from(Arc::clone(config))
                    .connect(name, tcp)
                    .await?;
                send_on(tls, request).await
            }
        }
    }

    /// A request builder for `path` with `Host` set.
    pub fn request(&self, method: Method, path: &str) -> hyper::http::request::Builder {
        Request::builder()
            .method(method)
            .uri(path)
            .header(hyper::header::HOST, &self.authority)
    }
}

async fn send_on<IO>(io: IO, request: Request<Full<Bytes>>) -> std::io::Result<Response<Incoming>>
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(std::io::Error::other)?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender
        .send_request(request)
        .await
        .map_err(std::io::Error::other)
}

/// A whole answer of a raw exchange.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: String,
}

/// Send one request (`headers` added after `Host`) and read the whole answer, or the first
/// 64 KiB of a stream, within 30 s.
pub async fn raw(
    target: &HttpTarget,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<RawResponse> {
    let mut builder = target.request(method, path);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let request = builder
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(std::io::Error::other)?;
    let response = target.send(request).await?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let mut stream = response.into_body().into_data_stream();
    let mut bytes = Vec::new();
    let read = async {
        while let Some(chunk) = stream.next().await {
            bytes.extend_from_slice(&chunk.map_err(std::io::Error::other)?);
            if bytes.len() > 64 * 1024 {
                break;
            }
        }
        Ok::<_, std::io::Error>(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(30), read).await;
    Ok(RawResponse {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

/// A JSON-RPC `initialize` request body.
pub fn initialize_body() -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "scimcp-raw", "version": "1"}}})
    .to_string()
}

/// Headers of a JSON-RPC POST.
pub const POST_HEADERS: &[(&str, &str)] = &[
    ("accept", "application/json, text/event-stream"),
    ("content-type", "application/json"),
];

/// rmcp's Streamable HTTP client transport for `target`, sending `token` as a bearer token
/// and `extra` headers (e.g. an `Origin`) with every request.
pub fn transport(
    target: &HttpTarget,
    token: Option<&str>,
    extra: &[(&str, &str)],
) -> StreamableHttpClientTransport<HyperClient> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(target.url());
    config.auth_header = token.map(str::to_string);
    let client = HyperClient {
        target: target.clone(),
        extra: extra
            .iter()
            .map(|(n, v)| {
                (
                    HeaderName::from_bytes(n.as_bytes()).expect("header name"),
                    HeaderValue::from_str(v).expect("header value"),
                )
            })
            .collect(),
    };
    StreamableHttpClientTransport::with_client(client, config)
}

/// The HTTP backend of rmcp's client transport.
#[derive(Clone, Debug)]
pub struct HyperClient {
    target: HttpTarget,
    extra: Vec<(HeaderName, HeaderValue)>,
}

/// A failure of the backend itself.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("HTTP: {0}")]
    Http(#[from] hyper::http::Error),
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("body: {0}")]
    Body(#[from] hyper::Error),
}

type Failure = StreamableHttpError<ClientError>;

impl HyperClient {
    fn builder(
        &self,
        method: Method,
        uri: &str,
        session: Option<&str>,
        token: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
    ) -> hyper::http::request::Builder {
        let path = uri
            .parse::<hyper::Uri>()
            .ok()
            .and_then(|u| u.path_and_query().map(|p| p.to_string()))
            .unwrap_or_else(|| "/mcp".into());
        let mut builder = self
            .target
            .request(method, &path)
            .header("accept", "text/event-stream, application/json");
        if let Some(session) = session {
            builder = builder.header("mcp-session-id", session);
        }
        if let Some(token) = token {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        for (name, value) in custom.into_iter().chain(self.extra.iter().cloned()) {
            builder = builder.header(name, value);
        }
        builder
    }

    async fn send(&self, request: Request<Full<Bytes>>) -> Result<Response<Incoming>, Failure> {
        let response = self
            .target
            .send(request)
            .await
            .map_err(|e| StreamableHttpError::Client(ClientError::Io(e)))?;
        if response.status() == StatusCode::UNAUTHORIZED {
            let header = response
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            return Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(
                header,
            )));
        }
        Ok(response)
    }
}

async fn body_text(response: Response<Incoming>) -> Result<Vec<u8>, Failure> {
    Ok(response
        .into_body()
        .collect()
        .await
        .map_err(|e| StreamableHttpError::Client(ClientError::Body(e)))?
        .to_bytes()
        .to_vec())
}

fn is_media(response: &Response<Incoming>, media: &str) -> bool {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().unwrap_or("").trim() == media)
}

impl StreamableHttpClient for HyperClient {
    type Error = ClientError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let body = serde_json::to_vec(&message)
            .map_err(|e| StreamableHttpError::Client(ClientError::Json(e)))?;
        let request = self
            .builder(
                Method::POST,
                &uri,
                session_id.as_deref(),
                auth_header,
                custom_headers,
            )
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| StreamableHttpError::Client(ClientError::Http(e)))?;
        let response = self.send(request).await?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            if status == StatusCode::TOO_MANY_REQUESTS {
                return Err(
                    rmcp::transport::streamable_http_client::HttpStatusError::new(
                        status.as_u16(),
                        retry_after,
                    )
                    .into(),
                );
            }
            let body = body_text(response).await?;
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {}", String::from_utf8_lossy(&body)),
            )));
        }
        if is_media(&response, "text/event-stream") {
            let stream: BoxStream<'static, Result<Sse, SseError>> =
                SseStream::new(response.into_body()).boxed();
            return Ok(StreamableHttpPostResponse::Sse(stream, session));
        }
        if is_media(&response, "application/json") {
            let body = body_text(response).await?;
            let parsed: ServerJsonRpcMessage = serde_json::from_slice(&body)
                .map_err(|e| StreamableHttpError::Client(ClientError::Json(e)))?;
            return Ok(StreamableHttpPostResponse::Json(parsed, session));
        }
        Ok(StreamableHttpPostResponse::Accepted)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        let request = self
            .builder(
                Method::DELETE,
                &uri,
                Some(&session_id),
                auth_header,
                custom_headers,
            )
            .body(Full::new(Bytes::new()))
            .map_err(|e| StreamableHttpError::Client(ClientError::Http(e)))?;
        let _ = self.send(request).await?;
        Ok(())
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        let mut builder = self.builder(
            Method::GET,
            &uri,
            session_id.as_deref(),
            auth_header,
            custom_headers,
        );
        if let Some(id) = last_event_id {
            builder = builder.header("last-event-id", id);
        }
        let request = builder
            .body(Full::new(Bytes::new()))
            .map_err(|e| StreamableHttpError::Client(ClientError::Http(e)))?;
        let response = self.send(request).await?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if !response.status().is_success() || !is_media(&response, "text/event-stream") {
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("GET answered {}", response.status()),
            )));
        }
        Ok(SseStream::new(response.into_body()).boxed())
    }
}

/// Call a tool through an rmcp client; the whole result.
pub async fn call_tool(
    peer: &rmcp::Peer<rmcp::RoleClient>,
    tool: &str,
    arguments: serde_json::Value,
) -> anyhow::Result<rmcp::model::CallToolResult> {
    let arguments = arguments
        .as_object()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("tool arguments must be an object"))?;
    Ok(peer
        .call_tool(
            rmcp::model::CallToolRequestParams::new(tool.to_string()).with_arguments(arguments),
        )
        .await?)
}

/// Call a tool that must succeed; its structured content.
pub async fn ok(
    peer: &rmcp::Peer<rmcp::RoleClient>,
    tool: &str,
    arguments: serde_json::Value,
) -> serde_json::Value {
    let result = call_tool(peer, tool, arguments)
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e:#}"));
    assert_eq!(result.is_error, Some(false), "{tool}: {result:#?}");
    result.structured_content.expect("structured content")
}

/// Call a tool that must fail; its error envelope.
pub async fn err(
    peer: &rmcp::Peer<rmcp::RoleClient>,
    tool: &str,
    arguments: serde_json::Value,
) -> serde_json::Value {
    let result = call_tool(peer, tool, arguments)
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e:#}"));
    assert_eq!(result.is_error, Some(true), "{tool}: {result:#?}");
    result.structured_content.expect("structured content")["error"].clone()
}
