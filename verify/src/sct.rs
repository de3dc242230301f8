//! Embedded signed certificate timestamps (RFC 6962 §3.2): proof that the Fulcio certificate
//! was submitted to a certificate transparency log of the trusted root.
//!
//! Written by hand: x509-cert's `sct` feature decodes the list but does not rebuild the signed
//! precertificate data, and that rebuild is where the care is needed.

use jiff::Timestamp;
use sha2::{Digest, Sha256};
use x509_cert::Certificate;
use x509_cert::der::Encode;
use x509_cert::der::oid::ObjectIdentifier;

use super::asn1::{self, DerError, tag};
use super::error::VerifyError;
use super::keys::HashAlg;
use super::trust_root::TrustedRoot;

const SCT_LIST_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.11129.2.4.2");

/// One parsed SCT (v1).
#[derive(Debug)]
pub(crate) struct Sct<'a> {
    log_id: &'a [u8],
    timestamp_ms: u64,
    extensions: &'a [u8],
    hash: u8,
    signature: &'a [u8],
}

/// Why the embedded SCT list cannot be read, or the precertificate not rebuilt.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum SctError {
    #[error("truncated SCT list")]
    Truncated,
    /// A length does not fit this platform's `usize`.
    #[error(transparent)]
    Length(#[from] std::num::TryFromIntError),
    #[error("trailing bytes after the SCT list")]
    TrailingBytes,
    #[error("unsupported SCT version {0}")]
    Version(u64),
    /// The certificate's DER, walked to remove the SCT list.
    #[error(transparent)]
    Der(#[from] DerError),
    #[error("empty certificate")]
    EmptyCertificate,
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], SctError> {
        if self.0.len() < n {
            return Err(SctError::Truncated);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn uint(&mut self, n: usize) -> Result<u64, SctError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }
    fn vec(&mut self, len_bytes: usize) -> Result<&'a [u8], SctError> {
        let len = usize::try_from(self.uint(len_bytes)?)?;
        self.take(len)
    }
}

pub(crate) fn parse_list(tls: &[u8]) -> Result<Vec<Sct<'_>>, SctError> {
    let mut outer = Reader(tls);
    let list = outer.vec(2)?;
    if !outer.0.is_empty() {
        return Err(SctError::TrailingBytes);
    }
    let mut items = Reader(list);
    let mut scts = Vec::new();
    while !items.0.is_empty() {
        let mut r = Reader(items.vec(2)?);
        let version = r.uint(1)?;
        if version != 0 {
            return Err(SctError::Version(version));
        }
        let log_id = r.take(32)?;
        let timestamp_ms = r.uint(8)?;
        let extensions = r.vec(2)?;
        let hash = r.uint(1)? as u8;
        let _signature_algorithm = r.uint(1)?;
        let signature = r.vec(2)?;
        scts.push(Sct {
            log_id,
            timestamp_ms,
            extensions,
            hash,
            signature,
        });
    }
    Ok(scts)
}

/// The precertificate TBS: the leaf's TBSCertificate with the SCT list extension removed,
/// re-encoded byte for byte from the original DER otherwise.
pub(crate) fn precert_tbs(leaf_der: &[u8]) -> Result<Vec<u8>, SctError> {
    let cert = asn1::read_single(leaf_der)?;
    let cert_fields = cert.children()?;
    let tbs = cert_fields.first().ok_or(SctError::EmptyCertificate)?;
    let mut content = Vec::new();
    for field in tbs.children()? {
        if field.tag != tag::CONTEXT_3 {
            content.extend_from_slice(field.raw);
            continue;
        }
        let exts = asn1::read_single(field.content)?;
        let mut kept = Vec::new();
        for ext in exts.children()? {
            let oid = ext
                .children()?
                .first()
                .map(|o| o.content.to_vec())
                .unwrap_or_default();
            if oid != SCT_LIST_OID.as_bytes() {
                kept.extend_from_slice(ext.raw);
            }
        }
        content.extend(asn1::encode(
            tag::CONTEXT_3,
            &asn1::encode(tag::SEQUENCE, &kept),
        ));
    }
    Ok(asn1::encode(tag::SEQUENCE, &content))
}

fn u24(n: usize) -> [u8; 3] {
    let b = (n as u32).to_be_bytes();
    [b[1], b[2], b[3]]
}

/// Verify that at least one embedded SCT is signed by a CT log of the trusted root whose
/// key was valid at the SCT's time. SCTs from unknown logs are skipped (a certificate may be
/// logged in several places) but at least one must verify.
pub(crate) fn verify(
    leaf: &Certificate,
    leaf_der: &[u8],
    issuer: &Certificate,
    root: &TrustedRoot,
) -> Result<(), VerifyError> {
    let fail = |m: String| VerifyError::Sct(m);
    let ext = leaf
        .tbs_certificate()
        .extensions()
        .into_iter()
        .flatten()
        .find(|e| e.extn_id == SCT_LIST_OID)
        .ok_or_else(|| fail("the certificate has no embedded SCT".into()))?;
    // extnValue wraps a DER OCTET STRING whose content is the TLS-encoded SCT list.
    let inner = asn1::read_single(ext.extn_value.as_bytes())
        .and_then(|t| t.expect(tag::OCTET_STRING, "SCT list is not an OCTET STRING"))
        .map_err(|e| fail(e.to_string()))?;
    let scts = parse_list(inner).map_err(|e| fail(e.to_string()))?;
    let tbs = precert_tbs(leaf_der).map_err(|e| fail(e.to_string()))?;
    let issuer_spki = issuer
        .tbs_certificate()
        .subject_public_key_info()
        .to_der()
        .map_err(|e| fail(e.to_string()))?;
    let issuer_key_hash = Sha256::digest(&issuer_spki);

    let mut reasons = Vec::new();
    for sct in &scts {
        let Some(log) = root.ctlogs.iter().find(|l| l.log_id == sct.log_id) else {
            reasons.push(format!(
                "log {} is not in the trusted root",
                hex::encode(sct.log_id)
            ));
            continue;
        };
        let time = Timestamp::from_millisecond(i64::try_from(sct.timestamp_ms).unwrap_or(i64::MAX))
            .map_err(|e| fail(e.to_string()))?;
        if !log.window.contains(time) {
            reasons.push(format!(
                "CT log {} is trusted {}, not at the SCT's time {time}",
                log.base_url, log.window
            ));
            continue;
        }
        let key = match &log.key {
            Ok(k) => k,
            Err(e) => {
                reasons.push(format!("CT log {} key unusable: {e}", log.base_url));
                continue;
            }
        };
        // RFC 6962 §3.2 digitally-signed struct for a precert entry.
        let mut signed = vec![0u8, 0u8];
        signed.extend_from_slice(&sct.timestamp_ms.to_be_bytes());
        signed.extend_from_slice(&1u16.to_be_bytes());
        signed.extend_from_slice(&issuer_key_hash);
        signed.extend_from_slice(&u24(tbs.len()));
        signed.extend_from_slice(&tbs);
        signed.extend_from_slice(&(sct.extensions.len() as u16).to_be_bytes());
        signed.extend_from_slice(sct.extensions);
        let hash = match sct.hash {
            4 => HashAlg::Sha256,
            5 => HashAlg::Sha384,
            6 => HashAlg::Sha512,
            other => {
                reasons.push(format!("unsupported SCT hash algorithm {other}"));
                continue;
            }
        };
        let result = match key {
            super::keys::PublicKey::Ed25519(_) => key.verify(&signed, sct.signature),
            _ => key.verify_prehash(hash, &hash.digest(&signed), sct.signature),
        };
        match result {
            Ok(()) => return Ok(()),
            Err(e) => reasons.push(format!("SCT from {}: {e}", log.base_url)),
        }
    }
    Err(fail(format!(
        "no embedded SCT verifies against a CT log of the trusted root ({})",
        reasons.join("; ")
    )))
}
