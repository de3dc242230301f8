//! A small blocking MCP client over Streamable HTTP, for `server.handshake` against a remote
//! server: `initialize`, `notifications/initialized`, `tools/list`, `tools/call
//! get_capabilities`, then the session's `DELETE`.
//!
//! Why not rmcp's client: the check must tell a scientist exactly what is wrong — the
//! connection refused, the name unknown, the certificate untrusted or for another name, the
//! token refused (401), the host not allowed (403) — and rmcp's transport folds those into
//! its own errors. This client runs on ureq, the workspace's one HTTP stack (rustls with
//! Mozilla's roots, or the CA file given), so each failure stays a value the check can name.
//!
//! Answers may come as one JSON body or as a stream of Server-Sent Events; the stream is read
//! until the response to the request arrives (other messages on it are skipped), at most
//! [`BODY_LIMIT`] bytes. Every event's data must be JSON, as some real clients require
//! (Gemini CLI parses each one and drops the connection on an empty priming event): an event
//! that is not is a failure of its own, [`Failure::NotJsonEvent`].

use std::io::BufRead;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use ureq::tls::{Certificate, RootCerts, TlsConfig};

/// The most bytes read from one answer.
const BODY_LIMIT: u64 = 8 * 1024 * 1024;

/// The protocol version offered in `initialize` (the server may answer with another it
/// supports; that one is sent back on every later request).
const PROTOCOL_VERSION: &str = "2025-06-18";

/// Where the server is and how to authenticate.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The MCP endpoint (`https://lab-server:8443/mcp`).
    pub url: String,
    /// The bearer token, when one is sent.
    pub token: Option<String>,
    /// Certificates to trust instead of the public authorities (a lab's own CA).
    pub ca: Option<Vec<Certificate<'static>>>,
    /// The time limit of each request.
    pub timeout: Duration,
    /// Whether the server is this computer (never reached through a proxy).
    pub loopback: bool,
}

/// What went wrong, kept apart so the check can name the remedy.
#[derive(Debug)]
pub enum Failure {
    /// Nothing accepts connections at the host and port.
    Refused(String),
    /// The host name does not resolve.
    UnknownHost,
    /// No answer in time.
    TimedOut(String),
    /// The TLS handshake failed.
    Tls(Tls, String),
    /// An HTTP status other than success, answering `during`.
    Status {
        during: &'static str,
        status: u16,
        retry_after: Option<String>,
        body: String,
    },
    /// An SSE event of the answer to `during` whose data is not JSON (`data` is its first
    /// characters; empty for a priming event sent to a client on a protocol before
    /// 2025-11-25).
    NotJsonEvent { during: &'static str, data: String },
    /// A JSON-RPC error answer.
    Rpc {
        during: &'static str,
        code: i64,
        message: String,
    },
    /// Anything else: an answer that is not MCP, a connection that broke, …
    Other(String),
}

/// Why a TLS handshake failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tls {
    /// The certificate's issuer is not trusted here.
    UnknownIssuer,
    /// The certificate is for another host name.
    WrongName,
    /// The certificate has expired (or is not valid yet).
    Expired,
    /// The other end does not speak TLS (a plain-HTTP server).
    Plaintext,
    Other,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Refused(d) => write!(f, "the connection was refused ({d})"),
            Failure::UnknownHost => f.write_str("the host name does not resolve"),
            Failure::TimedOut(d) => write!(f, "no answer in time ({d})"),
            Failure::Tls(_, d) => write!(f, "the TLS handshake failed: {d}"),
            Failure::Status {
                during,
                status,
                body,
                ..
            } => {
                write!(f, "{during} was answered with HTTP {status}")?;
                let body = body.trim();
                if !body.is_empty() {
                    write!(f, ": {}", body.chars().take(200).collect::<String>())?;
                }
                Ok(())
            }
            Failure::NotJsonEvent { during, data } if data.is_empty() => write!(
                f,
                "the event stream answering {during} has an event with empty data (a priming \
                 event), which is not JSON"
            ),
            Failure::NotJsonEvent { during, data } => write!(
                f,
                "the event stream answering {during} has an event whose data is not JSON: {data:?}"
            ),
            Failure::Rpc {
                during,
                code,
                message,
            } => write!(f, "{during} failed: {message} (JSON-RPC error {code})"),
            Failure::Other(d) => f.write_str(d),
        }
    }
}

/// What `initialize` told about the server.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub protocol: String,
}

/// An open MCP session.
pub struct Session {
    agent: ureq::Agent,
    endpoint: Endpoint,
    session_id: Option<String>,
    protocol: Option<String>,
    next_id: i64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("url", &self.endpoint.url)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Connect and complete `initialize` and `notifications/initialized`.
    pub fn open(endpoint: Endpoint) -> Result<(Session, ServerInfo), Failure> {
        let mut tls = TlsConfig::builder();
        if let Some(certs) = &endpoint.ca {
            tls = tls.root_certs(RootCerts::Specific(Arc::new(certs.clone())));
        }
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(endpoint.timeout))
            .max_redirects(0)
            .user_agent(concat!("scimcp-client/", env!("CARGO_PKG_VERSION")))
            .tls_config(tls.build());
        if endpoint.loopback {
            config = config.proxy(None);
        }
        let mut session = Session {
            agent: ureq::Agent::new_with_config(config.build()),
            endpoint,
            session_id: None,
            protocol: None,
            next_id: 0,
        };
        let result = session.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "scimcp-client", "version": env!("CARGO_PKG_VERSION")},
            }),
        )?;
        let text = |v: &Value| v.as_str().unwrap_or("?").to_string();
        let info = ServerInfo {
            name: text(&result["serverInfo"]["name"]),
            version: text(&result["serverInfo"]["version"]),
            protocol: text(&result["protocolVersion"]),
        };
        if result["protocolVersion"].is_string() {
            session.protocol = Some(info.protocol.clone());
        } else {
            return Err(Failure::Other(
                "the initialize answer names no protocolVersion: this is not an MCP server".into(),
            ));
        }
        session.notify("notifications/initialized")?;
        Ok((session, info))
    }

    /// Every tool's name (following `nextCursor` pages).
    pub fn list_tools(&mut self) -> Result<Vec<String>, Failure> {
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..100 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let result = self.request("tools/list", params)?;
            let tools = result["tools"].as_array().ok_or_else(|| {
                Failure::Other("the tools/list answer has no `tools` list".into())
            })?;
            names.extend(
                tools
                    .iter()
                    .filter_map(|t| t["name"].as_str().map(str::to_string)),
            );
            match result["nextCursor"].as_str() {
                Some(c) if !c.is_empty() => cursor = Some(c.to_string()),
                _ => return Ok(names),
            }
        }
        Err(Failure::Other(
            "tools/list did not end after 100 pages".into(),
        ))
    }

    /// Call `tool` with `arguments`; the result when the tool did not report an error.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, Failure> {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        if result["isError"].as_bool() == Some(true) {
            return Err(Failure::Other(format!(
                "{tool} answered with an error: {}",
                result["content"][0]["text"]
                    .as_str()
                    .unwrap_or("(no text)")
                    .chars()
                    .take(300)
                    .collect::<String>()
            )));
        }
        Ok(result)
    }

    /// End the session (`DELETE`); failures do not matter any more.
    pub fn close(self) {
        if self.session_id.is_some() {
            let request = self.with_headers(self.agent.delete(&self.endpoint.url));
            let _ = request.call();
        }
    }

    fn with_headers<B>(&self, mut request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        request = request.header("Accept", "application/json, text/event-stream");
        if let Some(token) = &self.endpoint.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        if let Some(id) = &self.session_id {
            request = request.header("Mcp-Session-Id", id);
        }
        if let Some(p) = &self.protocol {
            request = request.header("MCP-Protocol-Version", p);
        }
        request
    }

    fn post(
        &mut self,
        during: &'static str,
        message: &Value,
    ) -> Result<ureq::http::Response<ureq::Body>, Failure> {
        let request = self
            .with_headers(self.agent.post(&self.endpoint.url))
            .header("Content-Type", "application/json");
        let response = request
            .send(message.to_string().as_bytes())
            .map_err(classify)?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let mut response = response;
            let body = response
                .body_mut()
                .with_config()
                .limit(4096)
                .read_to_string()
                .unwrap_or_default();
            return Err(Failure::Status {
                during,
                status,
                retry_after,
                body,
            });
        }
        if let Some(id) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session_id = Some(id.to_string());
        }
        Ok(response)
    }

    fn notify(&mut self, method: &'static str) -> Result<(), Failure> {
        let message = json!({"jsonrpc": "2.0", "method": method});
        self.post(method, &message).map(drop)
    }

    /// Send a request and return its `result`.
    fn request(&mut self, method: &'static str, params: Value) -> Result<Value, Failure> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut response = self.post(method, &message)?;
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        let reader = response.body_mut().with_config().limit(BODY_LIMIT).reader();
        let answer = if sse {
            read_events(std::io::BufReader::new(reader), method, id)?
        } else {
            let value: Value = serde_json::from_reader(reader)
                .map_err(|e| Failure::Other(format!("the answer to {method} is not JSON ({e})")))?;
            value
        };
        if answer["id"] != json!(id) {
            return Err(Failure::Other(format!(
                "the answer to {method} is not a JSON-RPC response to it"
            )));
        }
        if let Some(error) = answer.get("error") {
            return Err(Failure::Rpc {
                during: method,
                code: error["code"].as_i64().unwrap_or(0),
                message: error["message"].as_str().unwrap_or("?").to_string(),
            });
        }
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| Failure::Other(format!("the answer to {method} has no result")))
    }
}

/// Read Server-Sent Events until the JSON-RPC response with `id`, the answer to `during`.
/// Like a strict client, every event with a `data` field must carry JSON (notifications and
/// requests of the server's are skipped); comments (keep-alives) carry nothing.
fn read_events(reader: impl BufRead, during: &'static str, id: i64) -> Result<Value, Failure> {
    let mut data: Option<String> = None;
    for line in reader.lines() {
        let line = line.map_err(|e| Failure::Other(format!("the event stream broke: {e}")))?;
        if line.is_empty() {
            let Some(event) = data.take() else { continue };
            let Ok(value) = serde_json::from_str::<Value>(&event) else {
                return Err(Failure::NotJsonEvent {
                    during,
                    data: event.chars().take(80).collect(),
                });
            };
            if value.get("id") == Some(&json!(id))
                && (value.get("result").is_some() || value.get("error").is_some())
            {
                return Ok(value);
            }
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line.as_str(), ""));
        if field == "data" {
            let value = value.strip_prefix(' ').unwrap_or(value);
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_string()),
            }
        }
    }
    Err(Failure::Other(
        "the event stream ended without the answer".into(),
    ))
}

/// Sort a ureq error into what the check can name.
fn classify(error: ureq::Error) -> Failure {
    match error {
        ureq::Error::HostNotFound => Failure::UnknownHost,
        ureq::Error::ConnectionFailed => Failure::Refused("no address of the host answered".into()),
        ureq::Error::Timeout(t) => Failure::TimedOut(t.to_string()),
        ureq::Error::Rustls(e) => tls(&e),
        ureq::Error::Tls(e) => Failure::Tls(Tls::Other, e.to_string()),
        ureq::Error::Io(e) => {
            if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                return tls(inner);
            }
            match e.kind() {
                std::io::ErrorKind::ConnectionRefused => Failure::Refused(e.to_string()),
                std::io::ErrorKind::TimedOut => Failure::TimedOut(e.to_string()),
                _ => Failure::Other(format!("the connection failed: {e}")),
            }
        }
        other => Failure::Other(other.to_string()),
    }
}

fn tls(error: &rustls::Error) -> Failure {
    use rustls::CertificateError as C;
    let kind = match error {
        rustls::Error::InvalidCertificate(c) => match c {
            C::UnknownIssuer => Tls::UnknownIssuer,
            C::NotValidForName | C::NotValidForNameContext { .. } => Tls::WrongName,
            C::Expired
            | C::ExpiredContext { .. }
            | C::NotValidYet
            | C::NotValidYetContext { .. } => Tls::Expired,
            _ => Tls::Other,
        },
        rustls::Error::InvalidMessage(_) => Tls::Plaintext,
        _ => Tls::Other,
    };
    Failure::Tls(kind, error.to_string())
}

/// Why a PEM file gave no certificates (the caller names the file).
#[derive(Debug, thiserror::Error)]
pub enum CertificatesError {
    /// A PEM block could not be parsed.
    #[error(transparent)]
    Pem(ureq::Error),
    /// It parsed, but held no certificate (a key only, or no PEM at all).
    #[error("it holds no PEM certificate")]
    NoCertificate,
}

/// The certificates in the PEM file `pem` (its bytes).
pub fn certificates(pem: &[u8]) -> Result<Vec<Certificate<'static>>, CertificatesError> {
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(pem) {
        if let ureq::tls::PemItem::Certificate(c) = item.map_err(CertificatesError::Pem)? {
            certs.push(c);
        }
    }
    if certs.is_empty() {
        return Err(CertificatesError::NoCertificate);
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_answer_out_of_an_event_stream() {
        let stream = ":\n\nid: 1\nretry: 3000\n\n\
            data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n\
            data: {\"jsonrpc\":\"2.0\",\"id\":7,\n\
            data: \"result\":{\"ok\":true}}\n\n";
        let value = read_events(stream.as_bytes(), "tools/list", 7).unwrap();
        assert_eq!(value["result"]["ok"], true);
        let err = read_events(
            "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n".as_bytes(),
            "tools/list",
            2,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("ended without the answer"),
            "{err}"
        );
    }

    #[test]
    fn an_event_whose_data_is_not_json_fails_as_in_a_strict_client() {
        // rmcp's priming event, as it was sent to clients on 2025-06-18.
        let primed = "data: \nid: 0\nretry: 3000\n\n\
            data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let err = read_events(primed.as_bytes(), "initialize", 1).unwrap_err();
        assert!(
            matches!(&err, Failure::NotJsonEvent { during: "initialize", data } if data.is_empty()),
            "{err}"
        );
        assert!(err.to_string().contains("priming"), "{err}");
        let junk = "data: hello\n\n";
        let err = read_events(junk.as_bytes(), "tools/list", 1).unwrap_err();
        assert!(err.to_string().contains("\"hello\""), "{err}");
    }

    #[test]
    fn reads_certificates_and_refuses_other_files() {
        let ca = fs_err::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/tls/ca.pem"),
        )
        .unwrap();
        assert_eq!(certificates(&ca).unwrap().len(), 1);
        assert!(certificates(b"not a certificate").is_err());
    }
}
