//! Transparency log entries: the entry must record exactly this bundle (consistency of the
//! canonicalized body), be included in the log (Merkle proof up to a checkpoint signed by the
//! log), and, for Rekor v1, carry a valid signed entry timestamp.
//!
//! Entry kinds: Rekor v1 `hashedrekord` 0.0.1, `dsse` 0.0.1, `intoto` 0.0.2; Rekor v2
//! `hashedrekord` 0.0.2 (also used for DSSE, over the PAE) and `dsse` 0.0.2.

use jiff::Timestamp;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::artifact::Digests;
use super::bundle::{BundleVersion, Content, TlogEntry};
use super::checkpoint::Checkpoint;
use super::dsse;
use super::encoding::{b64, pem_decode};
use super::error::VerifyError;
use super::keys::HashAlg;
use super::trust_root::TrustedRoot;
use super::{merkle, set};

/// What the log entry must record.
pub(crate) struct Expected<'a> {
    pub(crate) content: &'a Content,
    pub(crate) artifact: &'a Digests<'a>,
    /// The signing certificate's DER, or the key's SubjectPublicKeyInfo DER.
    pub(crate) verifier_der: &'a [u8],
    /// The signing key's SubjectPublicKeyInfo DER (the certificate's key, for keyless).
    pub(crate) spki_der: &'a [u8],
    pub(crate) is_certificate: bool,
}

fn body_error(m: impl Into<String>) -> VerifyError {
    VerifyError::TlogBody(m.into())
}

fn field<'v>(v: &'v Value, pointer: &str) -> Result<&'v str, VerifyError> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| body_error(format!("the entry body has no {pointer}")))
}

fn field_b64(v: &Value, pointer: &str) -> Result<Vec<u8>, VerifyError> {
    b64(field(v, pointer)?).map_err(|e| body_error(format!("{pointer}: {e}")))
}

/// The DER inside base64-encoded PEM, as Rekor v1 stores keys and certificates.
fn pem_field(v: &Value, pointer: &str) -> Result<Vec<u8>, VerifyError> {
    let pem = field_b64(v, pointer)?;
    let pem = String::from_utf8(pem).map_err(|_| body_error(format!("{pointer}: not PEM text")))?;
    pem_decode(&pem)
        .map(|(_, der)| der)
        .map_err(|e| body_error(format!("{pointer}: {e}")))
}

fn check_verifier(found: &[u8], expected: &Expected<'_>) -> Result<(), VerifyError> {
    if found == expected.verifier_der {
        Ok(())
    } else {
        Err(body_error(format!(
            "the entry records another {} than the bundle's",
            if expected.is_certificate {
                "certificate"
            } else {
                "public key"
            }
        )))
    }
}

fn check_signature(found: &[u8], expected: &Expected<'_>) -> Result<(), VerifyError> {
    if found == expected.content.signature() {
        Ok(())
    } else {
        Err(body_error(
            "the entry records another signature than the bundle's",
        ))
    }
}

/// The single signature an entry records at `pointer` (a DSSE envelope scimcp verifies
/// carries exactly one).
fn single_signature<'v>(v: &'v Value, pointer: &str) -> Result<&'v Value, VerifyError> {
    let sigs = v
        .pointer(pointer)
        .and_then(Value::as_array)
        .ok_or_else(|| body_error("the entry has no signatures"))?;
    match sigs.as_slice() {
        [sig] => Ok(sig),
        _ => Err(body_error(format!(
            "the entry records {} signatures, the envelope one",
            sigs.len()
        ))),
    }
}

fn check_sha256(found_hex: &str, want: &[u8], what: &str) -> Result<(), VerifyError> {
    check_hex(found_hex, want, &format!("{what} sha256"))
}

fn check_hex(found_hex: &str, want: &[u8], what: &str) -> Result<(), VerifyError> {
    if found_hex.eq_ignore_ascii_case(&hex::encode(want)) {
        Ok(())
    } else {
        Err(body_error(format!(
            "the entry records {what} {found_hex}, but the bundle's is {}",
            hex::encode(want)
        )))
    }
}

/// The artifact's digest under the hash function a message-signature entry names.
fn artifact_digest<'e>(
    expected: &'e Expected<'_>,
    alg: Option<HashAlg>,
    named: &str,
) -> Result<&'e [u8], VerifyError> {
    let alg = alg.ok_or_else(|| {
        VerifyError::Unsupported(format!("log entry artifact hash algorithm {named}"))
    })?;
    expected.artifact.get(alg).ok_or_else(|| {
        VerifyError::Unsupported(format!(
            "the log entry records the artifact's {} digest, but only its {} digest was \
             given; pass the file",
            alg.name(),
            expected.artifact.given_name().unwrap_or("?")
        ))
    })
}

/// Rekor v2 entries record the verifier as `x509Certificate` or `publicKey` raw bytes. A
/// keyless signer may log only its certificate's key (sigstore-js does): the entry then binds
/// the signature to that key, and the certificate carrying it is checked on its own (chain,
/// SCT, identity).
fn v2_verifier(verifier: &Value, expected: &Expected<'_>) -> Result<(), VerifyError> {
    if verifier.pointer("/x509Certificate").is_some() {
        if !expected.is_certificate {
            return Err(body_error(
                "the entry records a certificate, but the bundle is signed with a key",
            ));
        }
        return check_verifier(&field_b64(verifier, "/x509Certificate/rawBytes")?, expected);
    }
    if field_b64(verifier, "/publicKey/rawBytes")? == expected.spki_der {
        Ok(())
    } else {
        Err(body_error(
            "the entry records another public key than the bundle's",
        ))
    }
}

/// The entry's body must be a record of this bundle's signature, verifier and artifact.
pub(crate) fn check_body(entry: &TlogEntry, expected: &Expected<'_>) -> Result<(), VerifyError> {
    let body: Value = serde_json::from_slice(&entry.body)
        .map_err(|e| body_error(format!("the entry body is not JSON: {e}")))?;
    let kind = field(&body, "/kind")?;
    let api_version = field(&body, "/apiVersion")?;
    if kind != entry.kind || api_version != entry.version {
        return Err(body_error(format!(
            "the body is a {kind} {api_version} entry, but the bundle says {} {}",
            entry.kind, entry.version
        )));
    }
    match (kind, api_version, expected.content) {
        ("hashedrekord", "0.0.1", Content::Message { .. }) => {
            let named = field(&body, "/spec/data/hash/algorithm")?;
            let want = artifact_digest(expected, HashAlg::from_lower_name(named), named)?;
            check_hex(
                field(&body, "/spec/data/hash/value")?,
                want,
                &format!("artifact {named}"),
            )?;
            check_signature(&field_b64(&body, "/spec/signature/content")?, expected)?;
            check_verifier(
                &pem_field(&body, "/spec/signature/publicKey/content")?,
                expected,
            )
        }
        ("dsse", "0.0.1", Content::Dsse(env)) => {
            check_sha256(
                field(&body, "/spec/payloadHash/value")?,
                &Sha256::digest(&env.payload),
                "payload",
            )?;
            let sig = single_signature(&body, "/spec/signatures")?;
            check_signature(&field_b64(sig, "/signature")?, expected)?;
            check_verifier(&pem_field(sig, "/verifier")?, expected)
        }
        ("intoto", "0.0.2", Content::Dsse(env)) => {
            check_sha256(
                field(&body, "/spec/content/payloadHash/value")?,
                &Sha256::digest(&env.payload),
                "payload",
            )?;
            if field(&body, "/spec/content/envelope/payloadType")? != env.payload_type {
                return Err(body_error("the entry records another payload type"));
            }
            // The public-good Rekor keeps only the payload's hash for these entries (the
            // payloadHash checked above binds it); a log that kept the payload must have
            // kept this one. intoto 0.0.2 stores the envelope's base64 fields base64-encoded
            // once more.
            if body.pointer("/spec/content/envelope/payload").is_some() {
                let payload = field_b64(&body, "/spec/content/envelope/payload")?;
                let payload = b64(&String::from_utf8_lossy(&payload)).unwrap_or(payload);
                if payload != env.payload {
                    return Err(body_error("the entry records another payload"));
                }
            }
            let sig = single_signature(&body, "/spec/content/envelope/signatures")?;
            let raw = field_b64(sig, "/sig")?;
            let raw = b64(&String::from_utf8_lossy(&raw)).unwrap_or(raw);
            check_signature(&raw, expected)?;
            check_verifier(&pem_field(sig, "/publicKey")?, expected)
        }
        ("hashedrekord", "0.0.2", content) => {
            let spec = body
                .pointer("/spec/hashedRekordV002")
                .ok_or_else(|| body_error("the entry has no hashedRekordV002 spec"))?;
            let named = field(spec, "/data/algorithm")?;
            let alg = HashAlg::from_protobuf_name(named);
            // For DSSE, Rekor v2 logs a hashedrekord over the PAE (rekor-v2 spec §6.1.4).
            let want: Vec<u8> = match content {
                Content::Message { .. } => artifact_digest(expected, alg, named)?.to_vec(),
                Content::Dsse(env) => alg
                    .ok_or_else(|| {
                        VerifyError::Unsupported(format!("log entry digest algorithm {named}"))
                    })?
                    .digest(&dsse::pae(&env.payload_type, &env.payload)),
            };
            if field_b64(spec, "/data/digest")? != want {
                return Err(body_error(
                    "the entry records another digest than the signed data's",
                ));
            }
            check_signature(&field_b64(spec, "/signature/content")?, expected)?;
            let verifier = spec
                .pointer("/signature/verifier")
                .ok_or_else(|| body_error("the entry has no verifier"))?;
            v2_verifier(verifier, expected)
        }
        ("dsse", "0.0.2", Content::Dsse(env)) => {
            let spec = body
                .pointer("/spec/dsseV002")
                .ok_or_else(|| body_error("the entry has no dsseV002 spec"))?;
            if field(spec, "/payloadHash/algorithm")? != "SHA2_256"
                || field_b64(spec, "/payloadHash/digest")? != Sha256::digest(&env.payload).to_vec()
            {
                return Err(body_error("the entry records another payload"));
            }
            let sig = single_signature(spec, "/signatures")?;
            check_signature(&field_b64(sig, "/content")?, expected)?;
            let verifier = sig
                .pointer("/verifier")
                .ok_or_else(|| body_error("the entry has no verifier"))?;
            v2_verifier(verifier, expected)
        }
        ("hashedrekord", "0.0.1", Content::Dsse(_)) => Err(body_error(
            "a hashedrekord 0.0.1 entry cannot record a DSSE envelope",
        )),
        ("dsse" | "intoto", _, Content::Message { .. }) => Err(body_error(format!(
            "a {kind} entry cannot record a message signature"
        ))),
        _ => Err(VerifyError::Unsupported(format!(
            "transparency log entry kind {kind} {api_version}"
        ))),
    }
}

/// Verify one entry; returns the integrated time when a SET makes it a verified time.
pub(crate) fn verify_entry(
    entry: &TlogEntry,
    expected: &Expected<'_>,
    root: &TrustedRoot,
    version: BundleVersion,
    tsa_times: &[Timestamp],
) -> Result<Option<Timestamp>, VerifyError> {
    let log = root
        .tlog(&entry.log_id)
        .ok_or_else(|| VerifyError::UnknownLog {
            log_id: hex::encode(&entry.log_id),
        })?;
    check_body(entry, expected)?;
    let key = log.key.as_ref().map_err(|e| {
        VerifyError::Unsupported(format!("the key of log {} is unusable: {e}", log.base_url))
    })?;

    let mut verified_time = None;
    if let Some(set_sig) = &entry.signed_entry_timestamp {
        let integrated = entry.integrated_time.ok_or_else(|| {
            VerifyError::SignedEntryTimestamp("the entry has a SET but no integrated time".into())
        })?;
        set::verify(
            key,
            set_sig,
            &entry.body,
            integrated,
            &entry.log_id,
            entry.log_index,
        )?;
        verified_time = Some(Timestamp::from_second(integrated).map_err(|e| {
            VerifyError::SignedEntryTimestamp(format!("integrated time {integrated}: {e}"))
        })?);
    }

    if let Some(proof) = &entry.inclusion_proof {
        let leaf = merkle::leaf_hash(&entry.body);
        let computed = merkle::root_from_inclusion_proof(
            proof.log_index,
            proof.tree_size,
            leaf,
            &proof.hashes,
        )
        .map_err(|e| VerifyError::InclusionProof(e.to_string()))?;
        if computed.as_slice() != proof.root_hash.as_slice() {
            return Err(VerifyError::InclusionProof(format!(
                "the proof leads to root {}, not to the stated root {}",
                hex::encode(computed),
                hex::encode(&proof.root_hash)
            )));
        }
        // A proof only binds the entry to a tree the log signed through its checkpoint.
        // v0.1 bundles may lack it (their SET is the log's promise); later ones may not.
        let envelope = match (&proof.checkpoint, version) {
            (Some(envelope), _) => Some(envelope),
            (None, BundleVersion::V0_1) => None,
            (None, _) => {
                return Err(VerifyError::Checkpoint(
                    "the inclusion proof has no checkpoint, which v0.2+ bundles require".into(),
                ));
            }
        };
        if let Some(envelope) = envelope {
            let checkpoint = Checkpoint::parse(envelope)?;
            checkpoint.verify(log)?;
            if checkpoint.tree_size != proof.tree_size || checkpoint.root_hash != proof.root_hash {
                return Err(VerifyError::Checkpoint(format!(
                    "the signed checkpoint is for tree size {} root {}, but the proof is for \
                     tree size {} root {}",
                    checkpoint.tree_size,
                    hex::encode(&checkpoint.root_hash),
                    proof.tree_size,
                    hex::encode(&proof.root_hash)
                )));
            }
        }
    }

    // The log key must have been trusted when the entry was made: at the SET's integrated
    // time, or (Rekor v2 has no integrated time) at the timestamps' times.
    let times: Vec<Timestamp> = match verified_time {
        Some(t) => vec![t],
        None => tsa_times.to_vec(),
    };
    for t in times {
        if !log.window.contains(t) {
            return Err(VerifyError::OutsideTrustWindow {
                what: format!("transparency log {}", log.base_url),
                window: log.window.to_string(),
                time: t,
            });
        }
    }
    Ok(verified_time)
}
