//! Why keyless signing failed, and which service it was talking to. Below the rest of
//! `keyless`, so the token, Fulcio, Rekor and signing-config code share it without importing
//! each other.

use crate::verify::VerifyError;

use super::http::TransportError;

/// The service a keyless step talked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Fulcio,
    Rekor,
    GitHubActions,
}

impl std::fmt::Display for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Service::Fulcio => "Fulcio",
            Service::Rekor => "Rekor",
            Service::GitHubActions => "the GitHub Actions OIDC token service",
        })
    }
}

/// A keyless signing step failed.
#[derive(Debug, thiserror::Error)]
pub enum KeylessError {
    #[error(
        "no OIDC identity token: pass --identity-token TOKEN (or set SIGSTORE_ID_TOKEN), or \
         run in a GitHub Actions job with `permissions: id-token: write`, which sets \
         ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN"
    )]
    NoToken,
    #[error(
        "{present} is set but {missing} is not; the GitHub Actions job needs \
         `permissions: id-token: write`"
    )]
    PartialAmbient {
        present: &'static str,
        missing: &'static str,
    },
    #[error("identity token: {0}")]
    Token(String),
    #[error("signing config: {0}")]
    SigningConfig(String),
    #[error("{service} ({url}): {problem}")]
    Service {
        service: Service,
        url: String,
        problem: String,
    },
    /// The request got no HTTP answer (no connection, TLS, a timeout), after the retries.
    #[error("{service} ({url}): {source}")]
    Unreachable {
        service: Service,
        url: String,
        #[source]
        source: TransportError,
    },
    #[error("cannot encode a request: {0}")]
    Encode(String),
    /// The bundle assembled from the services' answers does not verify: it is not written.
    #[error(
        "the new bundle does not verify against the trusted root, so it was not written (is \
         the trusted root the one of this Fulcio and Rekor?)"
    )]
    SelfCheck(#[source] VerifyError),
}
