//! The signing certificate: its code-signing profile, and its chain to a Fulcio CA of the
//! trusted root. Also the shared chain check for timestamp authorities.
//!
//! Path building is simple on purpose: Sigstore chains are short and fixed (leaf, then the
//! authority's chain from the trusted root, leaf-most first), so each authority's chain is
//! tried as a whole rather than searched; no general X.509 path builder is needed.

use jiff::Timestamp;
use x509_cert::Certificate;
use x509_cert::der::Encode;
use x509_cert::der::oid::ObjectIdentifier;
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage, KeyUsage};

use super::error::VerifyError;
use super::keys::{KeyError, PublicKey, SignatureError, SignatureScheme};
use super::trust_root::{Authority, TrustedRoot, Window};

pub(crate) const ID_KP_CODE_SIGNING: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.3");
pub(crate) const ID_KP_TIME_STAMPING: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.8");

/// A certificate time as a timestamp.
pub(crate) fn time(t: x509_cert::time::Time) -> Timestamp {
    let secs = i64::try_from(t.to_unix_duration().as_secs()).unwrap_or(i64::MAX);
    Timestamp::from_second(secs).unwrap_or(Timestamp::MAX)
}

/// `(notBefore, notAfter)` of a certificate.
pub fn validity(cert: &Certificate) -> (Timestamp, Timestamp) {
    let v = cert.tbs_certificate().validity();
    (time(v.not_before), time(v.not_after))
}

/// Why a certificate cannot be used: its key, its encoding, or one link of its chain.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum CertError {
    /// The subject public key is unreadable or of an unsupported kind.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A part of the certificate does not re-encode as DER.
    #[error(transparent)]
    Der(#[from] x509_cert::der::Error),
    #[error("issuer {issuer} is not {expected}")]
    IssuerName { issuer: String, expected: String },
    #[error("unsupported certificate signature algorithm {0}")]
    UnsupportedAlgorithm(ObjectIdentifier),
    #[error("certificate signature has unused bits")]
    UnusedBits,
    #[error("signature by {issuer} does not verify: {source}")]
    Signature {
        issuer: String,
        #[source]
        source: SignatureError,
    },
    #[error("CA certificate {subject} is valid from {not_before} to {not_after}, not at {at}")]
    CaNotValid {
        subject: String,
        not_before: Timestamp,
        not_after: Timestamp,
        at: Timestamp,
    },
    #[error("the trusted root trusts {uri} {window}, not at {at}")]
    OutsideTrustWindow {
        uri: String,
        window: Window,
        at: Timestamp,
    },
}

/// The certificate's subject public key.
pub(crate) fn public_key(cert: &Certificate) -> Result<PublicKey, CertError> {
    Ok(PublicKey::from_spki(
        cert.tbs_certificate().subject_public_key_info(),
    )?)
}

/// The certificate's SubjectPublicKeyInfo DER, as log entries may record the signer's key.
pub(crate) fn spki_der(cert: &Certificate) -> Result<Vec<u8>, CertError> {
    Ok(cert.tbs_certificate().subject_public_key_info().to_der()?)
}

/// Whether `issuer` signed `cert`: names chain and the signature verifies.
pub(crate) fn issued_by(cert: &Certificate, issuer: &Certificate) -> Result<(), CertError> {
    if cert.tbs_certificate().issuer() != issuer.tbs_certificate().subject() {
        return Err(CertError::IssuerName {
            issuer: cert.tbs_certificate().issuer().to_string(),
            expected: issuer.tbs_certificate().subject().to_string(),
        });
    }
    let scheme = SignatureScheme::from_oid(&cert.signature_algorithm().oid).ok_or(
        CertError::UnsupportedAlgorithm(cert.signature_algorithm().oid),
    )?;
    let tbs = cert.tbs_certificate().to_der()?;
    let signature = cert.signature().as_bytes().ok_or(CertError::UnusedBits)?;
    public_key(issuer)?
        .verify_scheme(scheme, &tbs, signature)
        .map_err(|source| CertError::Signature {
            issuer: issuer.tbs_certificate().subject().to_string(),
            source,
        })
}

/// Verify `leaf` against one authority's chain at time `at`: each link's signature, each
/// certificate's validity at `at`, and the authority's trust-root window at `at`.
pub(crate) fn verify_against(
    leaf: &Certificate,
    authority: &Authority,
    at: Timestamp,
) -> Result<(), CertError> {
    let mut child = leaf;
    for ca in &authority.chain {
        issued_by(child, ca)?;
        let (not_before, not_after) = validity(ca);
        if at < not_before || at > not_after {
            return Err(CertError::CaNotValid {
                subject: ca.tbs_certificate().subject().to_string(),
                not_before,
                not_after,
                at,
            });
        }
        child = ca;
    }
    if !authority.window.contains(at) {
        return Err(CertError::OutsideTrustWindow {
            uri: authority.uri.clone(),
            window: authority.window,
            at,
        });
    }
    Ok(())
}

/// The Fulcio chain check: the leaf chains to a certificate authority of the trusted root,
/// with every certificate and the authority's window valid when the leaf was issued
/// (Fulcio leaves live ten minutes; the signing time is checked against the leaf later).
/// Returns the issuing CA certificate, which the SCT check needs.
pub(crate) fn verify_fulcio_chain<'r>(
    leaf: &Certificate,
    root: &'r TrustedRoot,
) -> Result<&'r Certificate, VerifyError> {
    let (issued_at, _) = validity(leaf);
    let mut reasons = Vec::new();
    for authority in &root.certificate_authorities {
        match verify_against(leaf, authority, issued_at) {
            Ok(()) => return Ok(&authority.chain[0]),
            Err(reason) => reasons.push(format!("{}: {reason}", authority.uri)),
        }
    }
    Err(VerifyError::CertificateChain(format!(
        "the signing certificate (issued {issued_at}) does not chain to any Fulcio CA of the \
         trusted root ({})",
        if reasons.is_empty() {
            "the trusted root has none".to_owned()
        } else {
            reasons.join("; ")
        }
    )))
}

/// A Fulcio leaf must be an end-entity code-signing certificate.
pub(crate) fn check_leaf_profile(leaf: &Certificate) -> Result<(), VerifyError> {
    let tbs = leaf.tbs_certificate();
    let profile = |m: &str| VerifyError::CertificateProfile(m.to_owned());
    if let Some((_, bc)) = tbs
        .get_extension::<BasicConstraints>()
        .map_err(|e| profile(&format!("unreadable basic constraints: {e}")))?
        && bc.ca
    {
        return Err(profile("the signing certificate is a CA certificate"));
    }
    match tbs
        .get_extension::<KeyUsage>()
        .map_err(|e| profile(&format!("unreadable key usage: {e}")))?
    {
        Some((_, ku)) if ku.digital_signature() => {}
        _ => {
            return Err(profile(
                "the signing certificate lacks the digitalSignature key usage",
            ));
        }
    }
    match tbs
        .get_extension::<ExtendedKeyUsage>()
        .map_err(|e| profile(&format!("unreadable extended key usage: {e}")))?
    {
        Some((_, eku)) if eku.0.contains(&ID_KP_CODE_SIGNING) => Ok(()),
        _ => Err(profile(
            "the signing certificate lacks the code-signing extended key usage",
        )),
    }
}
