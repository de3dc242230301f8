//! The Sigstore bundle (protobuf-specs `Bundle`, JSON encoding): parsing and the structural
//! rules of each bundle version, before any cryptography.

use serde::Deserialize;
use serde::de::{self, Deserializer};
use x509_cert::Certificate;
use x509_cert::der::Decode;

use super::encoding::b64;
use super::error::VerifyError;

/// The bundle versions this verifier accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BundleVersion {
    V0_1,
    V0_2,
    V0_3,
}

impl BundleVersion {
    /// Both spellings of v0.3 exist in the wild: the parameter form and the `.v0.3+json` form.
    pub(crate) fn from_media_type(media_type: &str) -> Option<Self> {
        match media_type {
            "application/vnd.dev.sigstore.bundle+json;version=0.1" => Some(BundleVersion::V0_1),
            "application/vnd.dev.sigstore.bundle+json;version=0.2" => Some(BundleVersion::V0_2),
            "application/vnd.dev.sigstore.bundle+json;version=0.3"
            | "application/vnd.dev.sigstore.bundle.v0.3+json" => Some(BundleVersion::V0_3),
            _ => None,
        }
    }
}

/// The media type `sign` writes.
pub const BUNDLE_V03_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";

/// Who the bundle says signed: a Fulcio certificate or a key named only by a hint.
#[derive(Debug, Clone)]
pub(crate) enum Material {
    Certificate {
        der: Vec<u8>,
        cert: Box<Certificate>,
    },
    PublicKey,
}

/// What was signed.
#[derive(Debug, Clone)]
pub(crate) enum Content {
    Message {
        /// `(algorithm, digest)` as recorded in the bundle; an unauthenticated hint.
        digest: Option<(String, Vec<u8>)>,
        signature: Vec<u8>,
    },
    Dsse(Envelope),
}

impl Content {
    /// The signature bytes that timestamps and log entries refer to.
    pub(crate) fn signature(&self) -> &[u8] {
        match self {
            Content::Message { signature, .. } => signature,
            Content::Dsse(env) => &env.signature,
        }
    }
}

/// A DSSE envelope with its single signature.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    pub(crate) payload: Vec<u8>,
    pub(crate) payload_type: String,
    pub(crate) signature: Vec<u8>,
}

/// A Merkle inclusion proof with its checkpoint.
#[derive(Debug, Clone)]
pub(crate) struct InclusionProof {
    pub(crate) log_index: u64,
    pub(crate) root_hash: Vec<u8>,
    pub(crate) tree_size: u64,
    pub(crate) hashes: Vec<Vec<u8>>,
    pub(crate) checkpoint: Option<String>,
}

/// One transparency log entry.
#[derive(Debug, Clone)]
pub(crate) struct TlogEntry {
    pub(crate) log_index: u64,
    pub(crate) log_id: Vec<u8>,
    pub(crate) kind: String,
    pub(crate) version: String,
    pub(crate) integrated_time: Option<i64>,
    pub(crate) signed_entry_timestamp: Option<Vec<u8>>,
    pub(crate) inclusion_proof: Option<InclusionProof>,
    pub(crate) body: Vec<u8>,
}

/// A structurally valid bundle.
#[derive(Debug, Clone)]
pub(crate) struct Bundle {
    pub(crate) version: BundleVersion,
    pub(crate) material: Material,
    pub(crate) tlog_entries: Vec<TlogEntry>,
    pub(crate) timestamps: Vec<Vec<u8>>,
    pub(crate) content: Content,
}

// ---- JSON model (protobuf-specs JSON mapping: camelCase, int64 as strings, bytes as base64)

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BundleJson {
    media_type: String,
    verification_material: MaterialJson,
    message_signature: Option<MessageSignatureJson>,
    dsse_envelope: Option<EnvelopeJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MaterialJson {
    x509_certificate_chain: Option<ChainJson>,
    certificate: Option<RawBytesJson>,
    public_key: Option<serde_json::Value>,
    #[serde(default)]
    tlog_entries: Vec<TlogEntryJson>,
    timestamp_verification_data: Option<TimestampDataJson>,
}

#[derive(Deserialize)]
struct ChainJson {
    #[serde(default)]
    certificates: Vec<RawBytesJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBytesJson {
    raw_bytes: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TimestampDataJson {
    #[serde(default)]
    rfc3161_timestamps: Vec<SignedTimestampJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SignedTimestampJson {
    signed_timestamp: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TlogEntryJson {
    #[serde(deserialize_with = "int64")]
    log_index: i64,
    log_id: LogIdJson,
    kind_version: KindVersionJson,
    #[serde(default, deserialize_with = "opt_int64")]
    integrated_time: Option<i64>,
    inclusion_promise: Option<PromiseJson>,
    inclusion_proof: Option<ProofJson>,
    canonicalized_body: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LogIdJson {
    key_id: String,
}

#[derive(Deserialize)]
struct KindVersionJson {
    kind: String,
    version: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromiseJson {
    signed_entry_timestamp: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProofJson {
    #[serde(deserialize_with = "int64")]
    log_index: i64,
    root_hash: String,
    #[serde(deserialize_with = "int64")]
    tree_size: i64,
    #[serde(default)]
    hashes: Vec<String>,
    checkpoint: Option<CheckpointJson>,
}

#[derive(Deserialize)]
struct CheckpointJson {
    envelope: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageSignatureJson {
    message_digest: Option<DigestJson>,
    signature: String,
}

#[derive(Deserialize)]
struct DigestJson {
    algorithm: String,
    digest: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EnvelopeJson {
    payload: String,
    payload_type: String,
    #[serde(default)]
    signatures: Vec<EnvelopeSignatureJson>,
}

#[derive(Deserialize)]
struct EnvelopeSignatureJson {
    sig: String,
}

/// protobuf JSON writes int64 as a string but readers must also accept numbers.
fn int64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Int {
        Num(i64),
        Str(String),
    }
    match Int::deserialize(d)? {
        Int::Num(n) => Ok(n),
        Int::Str(s) => s
            .parse()
            .map_err(|_| de::Error::custom(format!("{s:?} is not an integer"))),
    }
}

fn opt_int64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    int64(d).map(Some)
}

fn format_error(what: &str, e: impl std::fmt::Display) -> VerifyError {
    VerifyError::BundleFormat(format!("{what}: {e}"))
}

fn non_negative(what: &str, n: i64) -> Result<u64, VerifyError> {
    u64::try_from(n).map_err(|_| VerifyError::BundleFormat(format!("{what} is negative ({n})")))
}

impl Bundle {
    /// Parse bundle JSON and enforce the rules of its version.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, VerifyError> {
        let json: BundleJson =
            serde_json::from_slice(bytes).map_err(|e| format_error("not a Sigstore bundle", e))?;
        let version = BundleVersion::from_media_type(&json.media_type)
            .ok_or_else(|| VerifyError::UnsupportedMediaType(json.media_type.clone()))?;
        let vm = json.verification_material;

        let material = match (&vm.x509_certificate_chain, &vm.certificate, &vm.public_key) {
            (Some(chain), None, None) => {
                // v0.3 replaced the chain with a single leaf certificate.
                if version >= BundleVersion::V0_3 {
                    return Err(VerifyError::BundleFormat(
                        "a v0.3 bundle must carry `certificate`, not `x509CertificateChain`".into(),
                    ));
                }
                chain_material(&chain.certificates)?
            }
            (None, Some(cert), None) => chain_material(std::slice::from_ref(cert))?,
            (None, None, Some(_)) => Material::PublicKey,
            (None, None, None) => {
                return Err(VerifyError::BundleFormat(
                    "no verification material (certificate or public key)".into(),
                ));
            }
            _ => {
                return Err(VerifyError::BundleFormat(
                    "more than one kind of verification material".into(),
                ));
            }
        };

        let tlog_entries = vm
            .tlog_entries
            .iter()
            .map(|e| tlog_entry(version, e))
            .collect::<Result<Vec<_>, _>>()?;

        let timestamps = vm
            .timestamp_verification_data
            .map(|t| t.rfc3161_timestamps)
            .unwrap_or_default()
            .iter()
            .map(|t| b64(&t.signed_timestamp).map_err(|e| format_error("RFC 3161 timestamp", e)))
            .collect::<Result<Vec<_>, _>>()?;

        let content = match (json.message_signature, json.dsse_envelope) {
            (Some(ms), None) => Content::Message {
                digest: ms
                    .message_digest
                    .map(|d| {
                        b64(&d.digest)
                            .map(|bytes| (d.algorithm, bytes))
                            .map_err(|e| format_error("message digest", e))
                    })
                    .transpose()?,
                signature: b64(&ms.signature).map_err(|e| format_error("message signature", e))?,
            },
            (None, Some(env)) => {
                let [sig] = env.signatures.as_slice() else {
                    return Err(VerifyError::Dsse(format!(
                        "the envelope must carry exactly one signature, it has {}",
                        env.signatures.len()
                    )));
                };
                Content::Dsse(Envelope {
                    payload: b64(&env.payload).map_err(|e| format_error("DSSE payload", e))?,
                    payload_type: env.payload_type,
                    signature: b64(&sig.sig).map_err(|e| format_error("DSSE signature", e))?,
                })
            }
            (None, None) => {
                return Err(VerifyError::BundleFormat(
                    "neither a message signature nor a DSSE envelope".into(),
                ));
            }
            (Some(_), Some(_)) => {
                return Err(VerifyError::BundleFormat(
                    "both a message signature and a DSSE envelope".into(),
                ));
            }
        };

        Ok(Bundle {
            version,
            material,
            tlog_entries,
            timestamps,
            content,
        })
    }
}

fn chain_material(certs: &[RawBytesJson]) -> Result<Material, VerifyError> {
    let Some((leaf, rest)) = certs.split_first() else {
        return Err(VerifyError::BundleFormat(
            "the certificate chain is empty".into(),
        ));
    };
    // Only the leaf is used: intermediates and roots come from the trusted root. A root in the
    // bundle is refused outright, as a bundle that tries to bring its own trust anchor.
    for raw in rest {
        let der = b64(&raw.raw_bytes).map_err(|e| format_error("chain certificate", e))?;
        let cert = Certificate::from_der(&der).map_err(|e| format_error("chain certificate", e))?;
        let tbs = cert.tbs_certificate();
        if tbs.issuer() == tbs.subject() {
            return Err(VerifyError::ChainContainsRoot {
                subject: tbs.subject().to_string(),
            });
        }
    }
    let der = b64(&leaf.raw_bytes).map_err(|e| format_error("signing certificate", e))?;
    let cert = Certificate::from_der(&der).map_err(|e| format_error("signing certificate", e))?;
    Ok(Material::Certificate {
        der,
        cert: Box::new(cert),
    })
}

fn tlog_entry(version: BundleVersion, e: &TlogEntryJson) -> Result<TlogEntry, VerifyError> {
    let log_index = non_negative("log entry index", e.log_index)?;
    let signed_entry_timestamp = e
        .inclusion_promise
        .as_ref()
        .map(|p| {
            b64(&p.signed_entry_timestamp)
                .map_err(|err| format_error("signed entry timestamp", err))
        })
        .transpose()?;
    let inclusion_proof = e.inclusion_proof.as_ref().map(proof).transpose()?;
    // v0.1 bundles are verified through their SET; from v0.2 on, the inclusion proof (with a
    // signed checkpoint) is mandatory, because Rekor v2 no longer issues SETs.
    match version {
        BundleVersion::V0_1 if signed_entry_timestamp.is_none() => {
            return Err(VerifyError::BundleFormat(
                "a v0.1 bundle's log entry must carry an inclusion promise (SET)".into(),
            ));
        }
        BundleVersion::V0_2 | BundleVersion::V0_3 if inclusion_proof.is_none() => {
            return Err(VerifyError::InclusionProof(
                "the log entry has no inclusion proof, which v0.2+ bundles require \
                 (verification is offline: the log is never queried)"
                    .into(),
            ));
        }
        BundleVersion::V0_2 | BundleVersion::V0_3 => {}
        BundleVersion::V0_1 => {}
    }
    Ok(TlogEntry {
        log_index,
        log_id: b64(&e.log_id.key_id).map_err(|err| format_error("log id", err))?,
        kind: e.kind_version.kind.clone(),
        version: e.kind_version.version.clone(),
        integrated_time: e.integrated_time,
        signed_entry_timestamp,
        inclusion_proof,
        body: b64(&e.canonicalized_body).map_err(|err| format_error("log entry body", err))?,
    })
}

fn proof(p: &ProofJson) -> Result<InclusionProof, VerifyError> {
    Ok(InclusionProof {
        log_index: non_negative("inclusion proof index", p.log_index)?,
        root_hash: b64(&p.root_hash).map_err(|e| format_error("inclusion proof root", e))?,
        tree_size: non_negative("inclusion proof tree size", p.tree_size)?,
        hashes: p
            .hashes
            .iter()
            .map(|h| b64(h).map_err(|e| format_error("inclusion proof hash", e)))
            .collect::<Result<_, _>>()?,
        checkpoint: p.checkpoint.as_ref().map(|c| c.envelope.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types() {
        assert_eq!(
            BundleVersion::from_media_type("application/vnd.dev.sigstore.bundle.v0.3+json"),
            Some(BundleVersion::V0_3)
        );
        assert_eq!(
            BundleVersion::from_media_type("application/vnd.dev.sigstore.bundle+json;version=0.3"),
            Some(BundleVersion::V0_3)
        );
        assert_eq!(
            BundleVersion::from_media_type("application/vnd.dev.sigstore.bundle+json;version=0.1"),
            Some(BundleVersion::V0_1)
        );
        assert_eq!(
            BundleVersion::from_media_type("application/vnd.dev.sigstore.bundle+json;version=99.9"),
            None
        );
    }
}
