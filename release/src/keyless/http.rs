//! The one door to the network: keyless signing talks to Fulcio, Rekor and the GitHub Actions
//! token endpoint only through [`Transport`], so tests can point it at local fakes and the
//! verifier never links a client it does not need.

use std::time::Duration;

/// A response: status and body, whatever the status.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: u16,
    pub body: Vec<u8>,
}

/// A request that got no usable HTTP answer: no connection, TLS, a timeout, a body that
/// could not be read. An HTTP error status is not one: it is a response.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error(transparent)]
    Request(Box<ureq::Error>),
    #[error("reading the response: {0}")]
    Body(#[source] Box<ureq::Error>),
    /// Another [`Transport`]'s failure (a test's fake), in its own words.
    #[error("{0}")]
    Other(String),
}

/// A blocking HTTP client. Errors are transport failures ([`TransportError`]); an HTTP error
/// status is a response, for the caller to judge.
pub trait Transport {
    /// `GET url`, with `Authorization: Bearer <bearer>` when given.
    fn get(&self, url: &str, bearer: Option<&str>) -> Result<HttpResponse, TransportError>;
    /// `POST url` with a JSON body, with `Authorization: Bearer <bearer>` when given.
    fn post_json(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: &[u8],
    ) -> Result<HttpResponse, TransportError>;
}

/// Sigstore answers are small (a certificate chain, a log entry with its proof); anything
/// larger is not one of them.
const MAX_RESPONSE_BYTES: u64 = 4 * 1024 * 1024;

/// The real client: ureq over rustls, TLS verified against webpki-roots.
#[derive(Debug)]
pub struct UreqTransport {
    agent: ureq::Agent,
}

impl UreqTransport {
    pub fn new() -> Self {
        let config = ureq::Agent::config_builder()
            // The caller reads every status; Fulcio's and Rekor's error bodies say why.
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .user_agent(concat!("scimcp-release/", env!("CARGO_PKG_VERSION")))
            .build();
        UreqTransport {
            agent: config.into(),
        }
    }

    fn finish(
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<HttpResponse, TransportError> {
        let mut response = result.map_err(|e| TransportError::Request(Box::new(e)))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_vec()
            .map_err(|e| TransportError::Body(Box::new(e)))?;
        Ok(HttpResponse { status, body })
    }
}

impl Default for UreqTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl Transport for UreqTransport {
    fn get(&self, url: &str, bearer: Option<&str>) -> Result<HttpResponse, TransportError> {
        let mut request = self.agent.get(url).header("Accept", "application/json");
        if let Some(token) = bearer {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        Self::finish(request.call())
    }

    fn post_json(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: &[u8],
    ) -> Result<HttpResponse, TransportError> {
        let mut request = self
            .agent
            .post(url)
            .header("Accept", "application/json")
            .header("Content-Type", "application/json");
        if let Some(token) = bearer {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        Self::finish(request.send(body))
    }
}

const ATTEMPTS: u32 = 3;

/// Run one exchange up to three times, one then two seconds apart, while it fails to connect
/// or answers "too many requests" or a gateway error: in CI those are usually blips, and a
/// release should not fail on one. Any other answer is final.
pub(crate) fn with_retries(
    mut exchange: impl FnMut() -> Result<HttpResponse, TransportError>,
) -> Result<HttpResponse, TransportError> {
    let mut delay = Duration::from_secs(1);
    let mut attempt = 1;
    loop {
        let result = exchange();
        let transient = match &result {
            Ok(response) => matches!(response.status, 429 | 502 | 503 | 504),
            Err(_) => true,
        };
        if !transient || attempt == ATTEMPTS {
            return result;
        }
        std::thread::sleep(delay);
        delay *= 2;
        attempt += 1;
    }
}

/// A response body for an error message: text, trimmed and cut short.
pub(crate) fn body_excerpt(body: &[u8]) -> String {
    const MAX: usize = 400;
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None if text.is_empty() => "(empty body)".to_owned(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_answers_are_not_retried() {
        let mut calls = 0;
        let result = with_retries(|| {
            calls += 1;
            Ok(HttpResponse {
                status: 400,
                body: Vec::new(),
            })
        });
        assert_eq!(result.unwrap().status, 400);
        assert_eq!(calls, 1);
    }

    #[test]
    fn excerpts_are_bounded() {
        assert_eq!(body_excerpt(b"  "), "(empty body)");
        assert_eq!(
            body_excerpt("é".repeat(1000).as_bytes()).chars().count(),
            401
        );
    }
}
