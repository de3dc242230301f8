//! What the caller trusts: an exact certificate identity and OIDC issuer (keyless), or a
//! public key (key pair).

use x509_cert::Certificate;
use x509_cert::der::Decode;
use x509_cert::der::asn1::Utf8StringRef;
use x509_cert::der::oid::ObjectIdentifier;
use x509_cert::ext::pkix::SubjectAltName;
use x509_cert::ext::pkix::name::GeneralName;

use super::error::VerifyError;
use super::keys::{KeyError, PublicKey, spki_der_from_pem};

/// Fulcio's OIDC issuer extension (v2): a DER UTF8String.
const FULCIO_ISSUER_V2: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.8");
/// Fulcio's legacy OIDC issuer extension: the raw string bytes, not DER.
const FULCIO_ISSUER_V1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.1");

/// A public key the caller trusts, with its DER form for matching log entries.
#[derive(Debug, Clone)]
pub struct TrustedKey {
    pub(crate) key: PublicKey,
    pub(crate) spki_der: Vec<u8>,
}

impl TrustedKey {
    /// Read a PEM `PUBLIC KEY`.
    pub fn from_pem(pem: &str) -> Result<Self, KeyError> {
        let spki_der = spki_der_from_pem(pem)?;
        Ok(TrustedKey {
            key: PublicKey::from_spki_der(&spki_der)?,
            spki_der,
        })
    }
}

/// Who must have signed.
#[derive(Debug, Clone)]
pub enum Policy {
    /// Keyless: a Fulcio certificate whose SAN is exactly `identity` and whose OIDC issuer is
    /// exactly `issuer`. No patterns: a pinned identity is compared byte for byte.
    Identity { identity: String, issuer: String },
    /// Key pair: the bundle's signature must verify under this key.
    Key(TrustedKey),
}

/// Every subject alternative name of the certificate as a string.
pub fn subject_alt_names(cert: &Certificate) -> Vec<String> {
    let Ok(Some((_, san))) = cert.tbs_certificate().get_extension::<SubjectAltName>() else {
        return Vec::new();
    };
    san.0
        .iter()
        .filter_map(|name| match name {
            GeneralName::Rfc822Name(s) | GeneralName::DnsName(s) => Some(s.to_string()),
            GeneralName::UniformResourceIdentifier(s) => Some(s.to_string()),
            // Fulcio puts some identities (e.g. usernames) in an otherName UTF8String.
            GeneralName::OtherName(other) => other
                .value
                .decode_as::<Utf8StringRef<'_>>()
                .ok()
                .map(|s| s.as_str().to_owned()),
            _ => None,
        })
        .collect()
}

/// The OIDC issuer recorded by Fulcio, preferring the v2 extension.
pub fn oidc_issuer(cert: &Certificate) -> Option<String> {
    let exts = cert.tbs_certificate().extensions()?;
    if let Some(ext) = exts.iter().find(|e| e.extn_id == FULCIO_ISSUER_V2) {
        return Utf8StringRef::from_der(ext.extn_value.as_bytes())
            .ok()
            .map(|s| s.as_str().to_owned());
    }
    exts.iter()
        .find(|e| e.extn_id == FULCIO_ISSUER_V1)
        .and_then(|ext| String::from_utf8(ext.extn_value.as_bytes().to_vec()).ok())
}

/// Check the certificate against an identity policy.
pub(crate) fn check_identity(
    cert: &Certificate,
    identity: &str,
    issuer: &str,
) -> Result<(), VerifyError> {
    let names = subject_alt_names(cert);
    if !names.iter().any(|n| n == identity) {
        return Err(VerifyError::IdentityMismatch {
            expected: identity.to_owned(),
            found: names,
        });
    }
    let found = oidc_issuer(cert);
    if found.as_deref() != Some(issuer) {
        return Err(VerifyError::IssuerMismatch {
            expected: issuer.to_owned(),
            found,
        });
    }
    Ok(())
}
