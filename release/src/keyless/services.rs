//! Which Fulcio and Rekor to use, from a Sigstore signing config
//! (`application/vnd.dev.sigstore.signingconfig.v0.2+json`). The public-good instance's config
//! is embedded; `--signing-config FILE` names another (a private instance, or a test's fakes).

use jiff::Timestamp;
use serde::Deserialize;

use super::error::KeylessError;

/// Sigstore's public-good signing config (from its TUF repository).
const PRODUCTION_SIGNING_CONFIG: &str =
    include_str!("../../data/sigstore/production-signing_config.v0.2.json");

const MEDIA_TYPE: &str = "application/vnd.dev.sigstore.signingconfig.v0.2+json";

/// The only API versions this signer speaks: Fulcio's v1 service (whose HTTP route is
/// `/api/v2/signingCert`) and Rekor v1 (`/api/v1/log/entries`).
const FULCIO_API: u32 = 1;
const REKOR_API: u32 = 1;

/// The services one signing run uses (base URLs, no trailing slash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Services {
    pub fulcio: String,
    pub rekor: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigJson {
    media_type: String,
    #[serde(default)]
    ca_urls: Vec<ServiceJson>,
    #[serde(default)]
    rekor_tlog_urls: Vec<ServiceJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServiceJson {
    url: String,
    major_api_version: u32,
    valid_for: Option<ValidForJson>,
}

#[derive(Deserialize)]
struct ValidForJson {
    start: Option<String>,
    end: Option<String>,
}

fn config_error(m: impl Into<String>) -> KeylessError {
    KeylessError::SigningConfig(m.into())
}

impl ServiceJson {
    fn valid_at(&self, now: Timestamp) -> Result<bool, KeylessError> {
        let Some(range) = &self.valid_for else {
            return Ok(false);
        };
        let parse = |s: &str| {
            s.parse::<Timestamp>()
                .map_err(|e| config_error(format!("{}: invalid time {s:?}: {e}", self.url)))
        };
        // A service without a start is not chosen: the spec requires one.
        let Some(start) = range.start.as_deref() else {
            return Ok(false);
        };
        let end = range.end.as_deref().map(parse).transpose()?;
        Ok(parse(start)? <= now && end.is_none_or(|end| now <= end))
    }
}

/// The first service of `api` version valid at `now`.
fn pick(
    services: &[ServiceJson],
    api: u32,
    what: &str,
    now: Timestamp,
) -> Result<String, KeylessError> {
    for service in services {
        if service.major_api_version == api && service.valid_at(now)? {
            return Ok(service.url.trim_end_matches('/').to_owned());
        }
    }
    Err(config_error(format!(
        "it names no {what} with API version {api} valid now ({now}); this signer speaks only \
         that version"
    )))
}

impl Services {
    /// The public-good instance.
    pub fn production() -> Result<Self, KeylessError> {
        Self::from_signing_config(PRODUCTION_SIGNING_CONFIG.as_bytes(), Timestamp::now())
    }

    /// Pick the services of a signing config valid at `now`.
    pub fn from_signing_config(json: &[u8], now: Timestamp) -> Result<Self, KeylessError> {
        let config: ConfigJson = serde_json::from_slice(json)
            .map_err(|e| config_error(format!("not a signing config: {e}")))?;
        if config.media_type != MEDIA_TYPE {
            return Err(config_error(format!(
                "media type {:?} is not {MEDIA_TYPE:?}",
                config.media_type
            )));
        }
        Ok(Services {
            fulcio: pick(&config.ca_urls, FULCIO_API, "Fulcio (caUrls)", now)?,
            rekor: pick(
                &config.rekor_tlog_urls,
                REKOR_API,
                "Rekor log (rekorTlogUrls)",
                now,
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn production_is_the_public_good_instance() {
        let services = Services::production().unwrap();
        assert_eq!(services.fulcio, "https://fulcio.sigstore.dev");
        assert_eq!(services.rekor, "https://rekor.sigstore.dev");
    }

    #[test]
    fn only_valid_rekor_v1_logs_are_picked() {
        let config = br#"{
          "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
          "caUrls": [{"url": "https://ca/", "majorApiVersion": 1, "validFor": {"start": "2020-01-01T00:00:00Z"}}],
          "rekorTlogUrls": [
            {"url": "https://old", "majorApiVersion": 1, "validFor": {"start": "2020-01-01T00:00:00Z", "end": "2021-01-01T00:00:00Z"}},
            {"url": "https://v2", "majorApiVersion": 2, "validFor": {"start": "2020-01-01T00:00:00Z"}},
            {"url": "https://v1", "majorApiVersion": 1, "validFor": {"start": "2020-01-01T00:00:00Z"}}
          ]
        }"#;
        let services = Services::from_signing_config(config, Timestamp::now()).unwrap();
        assert_eq!(services.fulcio, "https://ca");
        assert_eq!(services.rekor, "https://v1");
        let only_v2 = String::from_utf8_lossy(config).replace(
            "\"https://v1\", \"majorApiVersion\": 1",
            "\"https://v1\", \"majorApiVersion\": 2",
        );
        let err = Services::from_signing_config(only_v2.as_bytes(), Timestamp::now()).unwrap_err();
        assert!(err.to_string().contains("Rekor"), "{err}");
    }
}
