//! Rekor v1: log a `hashedrekord` 0.0.1 entry (artifact digest, signature, certificate) with
//! `POST /api/v1/log/entries`, and turn the answer into the bundle's transparency log entry.
//!
//! Nothing in the answer is trusted here: the entry, its SET, inclusion proof and checkpoint
//! are all checked by the offline verifier before the bundle is written.

use std::collections::BTreeMap;

use base64ct::{Base64, Encoding};
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::{KeylessError, Service};
use super::http::{Transport, body_excerpt, with_retries};

/// What the log records: the artifact's SHA-256, the signature and the signing certificate.
pub(crate) struct Record<'a> {
    pub(crate) artifact_sha256: &'a [u8],
    pub(crate) signature: &'a [u8],
    pub(crate) certificate_der: &'a [u8],
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LogEntryJson {
    body: String,
    integrated_time: i64,
    #[serde(rename = "logID")]
    log_id: String,
    log_index: i64,
    verification: Option<VerificationJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VerificationJson {
    signed_entry_timestamp: Option<String>,
    inclusion_proof: Option<ProofJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProofJson {
    log_index: i64,
    root_hash: String,
    tree_size: i64,
    #[serde(default)]
    hashes: Vec<String>,
    checkpoint: Option<String>,
}

/// PEM with 64-column lines, as Rekor stores certificates in hashedrekord entries.
fn pem(label: &str, der: &[u8]) -> String {
    let b64 = Base64::encode_string(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// Log `record` in the Rekor at `base_url`; returns the bundle's `tlogEntries[]` item.
pub(crate) fn log_entry(
    transport: &dyn Transport,
    base_url: &str,
    record: &Record<'_>,
) -> Result<Value, KeylessError> {
    let url = format!("{base_url}/api/v1/log/entries");
    let fail = |problem: String| KeylessError::Service {
        service: Service::Rekor,
        url: url.clone(),
        problem,
    };
    let proposed = json!({
        "apiVersion": "0.0.1",
        "kind": "hashedrekord",
        "spec": {
            "data": { "hash": { "algorithm": "sha256", "value": hex::encode(record.artifact_sha256) } },
            "signature": {
                "content": Base64::encode_string(record.signature),
                "publicKey": {
                    "content": Base64::encode_string(pem("CERTIFICATE", record.certificate_der).as_bytes()),
                },
            },
        },
    });
    let body = serde_json::to_vec(&proposed).map_err(|e| KeylessError::Encode(e.to_string()))?;
    let response = with_retries(|| transport.post_json(&url, None, &body)).map_err(|source| {
        KeylessError::Unreachable {
            service: Service::Rekor,
            url: url.clone(),
            source,
        }
    })?;
    if !matches!(response.status, 200 | 201) {
        return Err(fail(format!(
            "HTTP {}: {}",
            response.status,
            body_excerpt(&response.body)
        )));
    }
    // The answer is `{ "<entry UUID>": <entry> }`.
    let entries: BTreeMap<String, LogEntryJson> = serde_json::from_slice(&response.body)
        .map_err(|e| fail(format!("the answer is not a log entry: {e}")))?;
    let mut entries = entries.into_values();
    let (Some(entry), None) = (entries.next(), entries.next()) else {
        return Err(fail(
            "the answer does not hold exactly one log entry".into(),
        ));
    };
    bundle_entry(entry).map_err(|e| fail(e.to_string()))
}

/// Why Rekor's answer cannot become a bundle entry (reported as the Rekor service's problem).
#[derive(Debug, thiserror::Error)]
enum EntryError {
    #[error("the entry has no verification data (SET and inclusion proof)")]
    NoVerification,
    #[error("the entry has no signed entry timestamp")]
    NoSet,
    #[error("the entry has no inclusion proof, which a v0.3 bundle needs")]
    NoInclusionProof,
    #[error("the inclusion proof has no checkpoint, which a v0.3 bundle needs")]
    NoCheckpoint,
    #[error("{what} {value:?} is not hex: {source}")]
    NotHex {
        what: &'static str,
        value: String,
        #[source]
        source: hex::FromHexError,
    },
}

/// Rekor v1 JSON (hex log ID and hashes, numbers) to the bundle's protobuf JSON (base64,
/// int64 as strings).
fn bundle_entry(entry: LogEntryJson) -> Result<Value, EntryError> {
    let verification = entry.verification.ok_or(EntryError::NoVerification)?;
    let set = verification
        .signed_entry_timestamp
        .ok_or(EntryError::NoSet)?;
    let proof = verification
        .inclusion_proof
        .ok_or(EntryError::NoInclusionProof)?;
    let checkpoint = proof.checkpoint.ok_or(EntryError::NoCheckpoint)?;
    let from_hex = |what: &'static str, h: &str| {
        hex::decode(h)
            .map(|bytes| Base64::encode_string(&bytes))
            .map_err(|source| EntryError::NotHex {
                what,
                value: h.to_owned(),
                source,
            })
    };
    let hashes = proof
        .hashes
        .iter()
        .map(|h| from_hex("proof hash", h))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({
        "logIndex": entry.log_index.to_string(),
        "logId": { "keyId": from_hex("log ID", &entry.log_id)? },
        "kindVersion": { "kind": "hashedrekord", "version": "0.0.1" },
        "integratedTime": entry.integrated_time.to_string(),
        "inclusionPromise": { "signedEntryTimestamp": set },
        "inclusionProof": {
            "logIndex": proof.log_index.to_string(),
            "rootHash": from_hex("root hash", &proof.root_hash)?,
            "treeSize": proof.tree_size.to_string(),
            "hashes": hashes,
            "checkpoint": { "envelope": checkpoint },
        },
        "canonicalizedBody": entry.body,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_lines_are_64_columns() {
        let text = pem("CERTIFICATE", &[7u8; 100]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "-----BEGIN CERTIFICATE-----");
        assert_eq!(lines[1].len(), 64);
        assert_eq!(lines.last(), Some(&"-----END CERTIFICATE-----"));
        let (label, der) = crate::verify::pem_decode(&text).unwrap();
        assert_eq!((label.as_str(), der), ("CERTIFICATE", vec![7u8; 100]));
    }

    #[test]
    fn entries_without_proof_are_refused() {
        let entry: LogEntryJson = serde_json::from_value(json!({
            "body": "e30=", "integratedTime": 1, "logID": "00", "logIndex": 3,
            "verification": { "signedEntryTimestamp": "AA==" },
        }))
        .unwrap();
        assert!(
            bundle_entry(entry)
                .unwrap_err()
                .to_string()
                .contains("inclusion proof")
        );
    }
}
