//! The OIDC identity token Fulcio binds the certificate to: given on the command line, or
//! the ambient GitHub Actions token of the job.
//!
//! The token's claims are read without checking its signature: Fulcio authenticates the
//! token; the signer only needs the claim the proof of possession signs, and the expiry to
//! fail early with a clear message.

use base64ct::{Base64UrlUnpadded, Encoding};
use jiff::Timestamp;
use serde::Deserialize;

use super::error::{KeylessError, Service};
use super::http::{Transport, body_excerpt, with_retries};

/// The variables GitHub Actions sets for a job with `permissions: id-token: write`.
pub const ACTIONS_ID_TOKEN_REQUEST_URL: &str = "ACTIONS_ID_TOKEN_REQUEST_URL";
pub const ACTIONS_ID_TOKEN_REQUEST_TOKEN: &str = "ACTIONS_ID_TOKEN_REQUEST_TOKEN";

/// The audience Fulcio accepts.
const SIGSTORE_AUDIENCE: &str = "sigstore";

/// A raw OIDC ID token (a JWT) with the claims the signer needs.
#[derive(Clone)]
pub struct IdentityToken {
    raw: String,
    issuer: String,
    subject: Option<String>,
    email: Option<String>,
    expires: Option<Timestamp>,
}

// The raw token is a credential: never print it.
impl std::fmt::Debug for IdentityToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityToken")
            .field("issuer", &self.issuer)
            .field("subject", &self.subject)
            .field("email", &self.email)
            .field("expires", &self.expires)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Claims {
    iss: Option<String>,
    sub: Option<String>,
    email: Option<String>,
    exp: Option<i64>,
}

fn token_error(m: impl Into<String>) -> KeylessError {
    KeylessError::Token(m.into())
}

impl IdentityToken {
    /// Read a JWT's claims (header.payload.signature, base64url).
    pub fn parse(raw: &str) -> Result<Self, KeylessError> {
        let raw = raw.trim();
        let mut parts = raw.split('.');
        let (Some(_header), Some(payload), Some(_signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(token_error(
                "not a JWT (expected three base64url parts separated by dots)",
            ));
        };
        let json = Base64UrlUnpadded::decode_vec(payload.trim_end_matches('='))
            .map_err(|e| token_error(format!("the JWT payload is not base64url: {e}")))?;
        let claims: Claims = serde_json::from_slice(&json)
            .map_err(|e| token_error(format!("the JWT payload is not a claims object: {e}")))?;
        let issuer = claims
            .iss
            .ok_or_else(|| token_error("the token has no `iss` (issuer) claim"))?;
        if claims.sub.is_none() && claims.email.is_none() {
            return Err(token_error(
                "the token has neither a `sub` nor an `email` claim, so it names no identity",
            ));
        }
        let expires = claims
            .exp
            .map(|exp| {
                Timestamp::from_second(exp)
                    .map_err(|e| token_error(format!("the `exp` claim {exp}: {e}")))
            })
            .transpose()?;
        Ok(IdentityToken {
            raw: raw.to_owned(),
            issuer,
            subject: claims.sub,
            email: claims.email,
            expires,
        })
    }

    /// The token itself, for Fulcio.
    pub(crate) fn raw(&self) -> &str {
        &self.raw
    }

    /// The `iss` claim.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// What the proof of possession signs: the identity claim Fulcio checks it against, the
    /// email for email identities and `sub` for everything else (workflows included).
    pub fn challenge(&self) -> &str {
        self.email
            .as_deref()
            .or(self.subject.as_deref())
            .unwrap_or_default()
    }

    /// Refuse a token that has expired: Fulcio would, with a less helpful message.
    pub fn check_not_expired(&self, now: Timestamp) -> Result<(), KeylessError> {
        match self.expires {
            Some(expires) if expires <= now => Err(token_error(format!(
                "the token expired at {expires} (now {now}); request a fresh one"
            ))),
            _ => Ok(()),
        }
    }
}

/// The identity token to sign with: `explicit` if given, else the ambient GitHub Actions token
/// (read through `env`, fetched through `transport`), else [`KeylessError::NoToken`].
pub fn identity_token(
    explicit: Option<&str>,
    transport: &dyn Transport,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<IdentityToken, KeylessError> {
    if let Some(raw) = explicit.filter(|t| !t.trim().is_empty()) {
        return IdentityToken::parse(raw);
    }
    let url = env(ACTIONS_ID_TOKEN_REQUEST_URL).filter(|v| !v.is_empty());
    let bearer = env(ACTIONS_ID_TOKEN_REQUEST_TOKEN).filter(|v| !v.is_empty());
    match (url, bearer) {
        (Some(url), Some(bearer)) => github_actions_token(transport, &url, &bearer),
        (None, None) => Err(KeylessError::NoToken),
        (Some(_), None) => Err(KeylessError::PartialAmbient {
            present: ACTIONS_ID_TOKEN_REQUEST_URL,
            missing: ACTIONS_ID_TOKEN_REQUEST_TOKEN,
        }),
        (None, Some(_)) => Err(KeylessError::PartialAmbient {
            present: ACTIONS_ID_TOKEN_REQUEST_TOKEN,
            missing: ACTIONS_ID_TOKEN_REQUEST_URL,
        }),
    }
}

#[derive(Deserialize)]
struct ActionsTokenResponse {
    value: String,
}

/// Ask the Actions runtime for a token with the `sigstore` audience. The request URL already
/// carries a query (`?api-version=…`), so the audience is appended to it.
fn github_actions_token(
    transport: &dyn Transport,
    request_url: &str,
    bearer: &str,
) -> Result<IdentityToken, KeylessError> {
    let separator = if request_url.contains('?') { '&' } else { '?' };
    let url = format!("{request_url}{separator}audience={SIGSTORE_AUDIENCE}");
    let service_error = |problem: String| KeylessError::Service {
        service: Service::GitHubActions,
        // The request URL names the run; the bearer is never shown.
        url: request_url.to_owned(),
        problem,
    };
    let response = with_retries(|| transport.get(&url, Some(bearer))).map_err(|source| {
        KeylessError::Unreachable {
            service: Service::GitHubActions,
            url: request_url.to_owned(),
            source,
        }
    })?;
    if response.status != 200 {
        return Err(service_error(format!(
            "HTTP {}: {}",
            response.status,
            body_excerpt(&response.body)
        )));
    }
    let parsed: ActionsTokenResponse = serde_json::from_slice(&response.body)
        .map_err(|e| service_error(format!("the answer has no token ({e})")))?;
    IdentityToken::parse(&parsed.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        format!(
            "{}.{}.c2ln",
            Base64UrlUnpadded::encode_string(br#"{"alg":"RS256"}"#),
            Base64UrlUnpadded::encode_string(claims.as_bytes())
        )
    }

    #[test]
    fn the_challenge_is_the_email_or_else_the_subject() {
        let t = IdentityToken::parse(&jwt(
            r#"{"iss":"https://i","sub":"repo:o/r:ref:refs/tags/v1.0.0"}"#,
        ))
        .unwrap();
        assert_eq!(t.challenge(), "repo:o/r:ref:refs/tags/v1.0.0");
        let t = IdentityToken::parse(&jwt(r#"{"iss":"https://i","sub":"123","email":"a@b.c"}"#))
            .unwrap();
        assert_eq!(t.challenge(), "a@b.c");
        assert!(
            !format!("{t:?}").contains("c2ln"),
            "Debug must not print the token"
        );
    }

    #[test]
    fn malformed_and_expired_tokens_are_refused() {
        assert!(IdentityToken::parse("abc").is_err());
        assert!(IdentityToken::parse(&jwt(r#"{"sub":"x"}"#)).is_err());
        assert!(IdentityToken::parse(&jwt(r#"{"iss":"https://i"}"#)).is_err());
        let t = IdentityToken::parse(&jwt(r#"{"iss":"https://i","sub":"x","exp":1000}"#)).unwrap();
        let err = t.check_not_expired(Timestamp::now()).unwrap_err();
        assert!(err.to_string().contains("expired"), "{err}");
    }

    struct NoNetwork;
    impl Transport for NoNetwork {
        fn get(
            &self,
            _: &str,
            _: Option<&str>,
        ) -> Result<super::super::HttpResponse, super::super::TransportError> {
            panic!("no request expected")
        }
        fn post_json(
            &self,
            _: &str,
            _: Option<&str>,
            _: &[u8],
        ) -> Result<super::super::HttpResponse, super::super::TransportError> {
            panic!("no request expected")
        }
    }

    #[test]
    fn without_a_token_the_error_says_where_one_comes_from() {
        let err = identity_token(None, &NoNetwork, &|_| None).unwrap_err();
        assert!(matches!(err, KeylessError::NoToken));
        assert!(err.to_string().contains("--identity-token"), "{err}");
        let err = identity_token(None, &NoNetwork, &|name| {
            (name == ACTIONS_ID_TOKEN_REQUEST_URL).then(|| "https://x".to_owned())
        })
        .unwrap_err();
        assert!(err.to_string().contains("id-token: write"), "{err}");
    }
}
