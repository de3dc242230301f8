//! The Sigstore trusted root: which CAs, transparency logs, CT logs and timestamp
//! authorities to trust, and when. The public-good root is embedded; `--trusted-root`
//! replaces it (a private deployment, a test instance).
//!
//! Every key and authority carries a validity window (`validFor`); a missing start is an
//! error, never "since forever", and the end is inclusive (the protobuf TimeRange is closed).

use jiff::Timestamp;
use serde::Deserialize;
use x509_cert::Certificate;
use x509_cert::der::Decode;

use super::encoding::b64;
use super::keys::{KeyError, PublicKey};

/// The public-good trusted root shipped in the binary (a copy of Sigstore's
/// `trusted_root.json` from its TUF repository).
const PRODUCTION_TRUSTED_ROOT: &str = include_str!("../data/production-trusted_root.json");

const MEDIA_TYPE_V01: &str = "application/vnd.dev.sigstore.trustedroot+json;version=0.1";
const MEDIA_TYPE_V02: &str = "application/vnd.dev.sigstore.trustedroot.v0.2+json";

/// A trusted root that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TrustRootError {
    #[error("not valid trusted-root JSON: {0}")]
    Json(String),
    #[error("unsupported trusted root media type {0:?}")]
    MediaType(String),
    #[error("{what}: {problem}")]
    Entry { what: String, problem: String },
}

/// A closed time interval; `end` absent means still valid.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub(crate) start: Timestamp,
    pub(crate) end: Option<Timestamp>,
}

impl Window {
    pub(crate) fn contains(&self, t: Timestamp) -> bool {
        self.start <= t && self.end.is_none_or(|end| t <= end)
    }
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.end {
            Some(end) => write!(f, "from {} to {}", self.start, end),
            None => write!(f, "from {}", self.start),
        }
    }
}

/// A transparency log or CT log key.
#[derive(Debug, Clone)]
pub(crate) struct LogKey {
    pub(crate) base_url: String,
    pub(crate) log_id: Vec<u8>,
    /// Kept as a result: staging roots list RSA CT keys that no current entry uses, and an
    /// unusable key must only fail the bundles that need it.
    pub(crate) key: Result<PublicKey, KeyError>,
    pub(crate) window: Window,
}

impl LogKey {
    /// The log's name in checkpoints: the base URL's host (and port).
    pub(crate) fn host(&self) -> &str {
        let rest = self
            .base_url
            .split_once("://")
            .map_or(self.base_url.as_str(), |(_, r)| r);
        rest.split('/').next().unwrap_or(rest)
    }
}

/// A certificate authority (Fulcio) or timestamp authority with its chain, leaf first.
#[derive(Debug, Clone)]
pub(crate) struct Authority {
    pub(crate) uri: String,
    pub(crate) chain: Vec<Certificate>,
    pub(crate) window: Window,
}

/// A parsed trusted root.
#[derive(Debug, Clone)]
pub struct TrustedRoot {
    pub(crate) tlogs: Vec<LogKey>,
    pub(crate) ctlogs: Vec<LogKey>,
    pub(crate) certificate_authorities: Vec<Authority>,
    pub(crate) timestamp_authorities: Vec<Authority>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RootJson {
    media_type: String,
    #[serde(default)]
    tlogs: Vec<LogJson>,
    #[serde(default)]
    certificate_authorities: Vec<AuthorityJson>,
    #[serde(default)]
    ctlogs: Vec<LogJson>,
    #[serde(default)]
    timestamp_authorities: Vec<AuthorityJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LogJson {
    #[serde(default)]
    base_url: String,
    public_key: PublicKeyJson,
    log_id: LogIdJson,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PublicKeyJson {
    raw_bytes: Option<String>,
    valid_for: Option<TimeRangeJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LogIdJson {
    key_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AuthorityJson {
    #[serde(default)]
    uri: String,
    cert_chain: CertChainJson,
    valid_for: Option<TimeRangeJson>,
}

#[derive(Deserialize)]
struct CertChainJson {
    #[serde(default)]
    certificates: Vec<RawBytesJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBytesJson {
    raw_bytes: String,
}

#[derive(Deserialize)]
struct TimeRangeJson {
    start: Option<String>,
    end: Option<String>,
}

fn entry_error(what: &str, problem: impl std::fmt::Display) -> TrustRootError {
    TrustRootError::Entry {
        what: what.to_owned(),
        problem: problem.to_string(),
    }
}

fn window(what: &str, range: Option<&TimeRangeJson>) -> Result<Window, TrustRootError> {
    let range = range.ok_or_else(|| entry_error(what, "has no validity window (validFor)"))?;
    let parse = |s: &str| {
        s.parse::<Timestamp>()
            .map_err(|e| entry_error(what, format!("invalid time {s:?}: {e}")))
    };
    let start = range.start.as_deref().ok_or_else(|| {
        entry_error(
            what,
            "validity window has no start; a missing bound is refused, not read as unbounded",
        )
    })?;
    Ok(Window {
        start: parse(start)?,
        end: range.end.as_deref().map(parse).transpose()?,
    })
}

fn log_key(kind: &str, log: &LogJson) -> Result<LogKey, TrustRootError> {
    let what = format!("{kind} {}", log.base_url);
    let log_id = b64(&log.log_id.key_id).map_err(|e| entry_error(&what, e))?;
    let raw = log
        .public_key
        .raw_bytes
        .as_deref()
        .ok_or_else(|| entry_error(&what, "has no public key bytes"))?;
    let der = b64(raw).map_err(|e| entry_error(&what, e))?;
    Ok(LogKey {
        base_url: log.base_url.clone(),
        log_id,
        key: PublicKey::from_spki_der(&der),
        window: window(&what, log.public_key.valid_for.as_ref())?,
    })
}

fn authority(kind: &str, a: &AuthorityJson) -> Result<Authority, TrustRootError> {
    let what = format!("{kind} {}", a.uri);
    if a.cert_chain.certificates.is_empty() {
        return Err(entry_error(&what, "has an empty certificate chain"));
    }
    let chain = a
        .cert_chain
        .certificates
        .iter()
        .map(|c| {
            let der = b64(&c.raw_bytes).map_err(|e| entry_error(&what, e))?;
            Certificate::from_der(&der).map_err(|e| entry_error(&what, e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Authority {
        uri: a.uri.clone(),
        chain,
        window: window(&what, a.valid_for.as_ref())?,
    })
}

impl TrustedRoot {
    /// The Sigstore public-good instance's trusted root, embedded in the binary.
    pub fn production() -> Result<Self, TrustRootError> {
        Self::from_json(PRODUCTION_TRUSTED_ROOT.as_bytes())
    }

    /// Parse a `trusted_root.json` (media type trustedroot v0.1 or v0.2).
    pub fn from_json(bytes: &[u8]) -> Result<Self, TrustRootError> {
        let json: RootJson =
            serde_json::from_slice(bytes).map_err(|e| TrustRootError::Json(e.to_string()))?;
        if json.media_type != MEDIA_TYPE_V01 && json.media_type != MEDIA_TYPE_V02 {
            return Err(TrustRootError::MediaType(json.media_type));
        }
        Ok(TrustedRoot {
            tlogs: json
                .tlogs
                .iter()
                .map(|l| log_key("transparency log", l))
                .collect::<Result<_, _>>()?,
            ctlogs: json
                .ctlogs
                .iter()
                .map(|l| log_key("CT log", l))
                .collect::<Result<_, _>>()?,
            certificate_authorities: json
                .certificate_authorities
                .iter()
                .map(|a| authority("certificate authority", a))
                .collect::<Result<_, _>>()?,
            timestamp_authorities: json
                .timestamp_authorities
                .iter()
                .map(|a| authority("timestamp authority", a))
                .collect::<Result<_, _>>()?,
        })
    }

    pub(crate) fn tlog(&self, log_id: &[u8]) -> Option<&LogKey> {
        self.tlogs.iter().find(|l| l.log_id == log_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_production_root_parses() {
        let root = TrustedRoot::production().unwrap();
        assert!(!root.tlogs.is_empty());
        assert!(!root.ctlogs.is_empty());
        assert!(!root.certificate_authorities.is_empty());
        assert!(root.tlogs.iter().all(|l| l.key.is_ok()));
        assert_eq!(root.tlogs[0].host(), "rekor.sigstore.dev");
    }

    #[test]
    fn window_end_is_inclusive() {
        let start: Timestamp = "2020-01-01T00:00:00Z".parse().unwrap();
        let end: Timestamp = "2021-01-01T00:00:00Z".parse().unwrap();
        let w = Window {
            start,
            end: Some(end),
        };
        assert!(w.contains(start) && w.contains(end));
        assert!(!w.contains(end.checked_add(jiff::SignedDuration::from_secs(1)).unwrap()));
    }
}
