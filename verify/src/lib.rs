//! `scimcp-verify`: offline verification of Sigstore bundles, the trusted root they are checked
//! against, and the release policy that pins who must have signed a scimcp release.
//!
//! This is the part of the release tooling that runs on a scientist's computer (the installer
//! verifies every bundle before it unpacks anything), so it is kept apart from the bundler, the
//! signer and the preflight in `scimcp-release`. It must never reach the network, never sign,
//! never trust material a bundle brings along (roots, TSA certificates), and never accept a
//! bundle without every check below having passed; every refusal names the check that failed.
//!
//! [`verify_bundle`] runs every check a Sigstore client must run, with nothing fetched:
//!
//! 1. bundle structure and media type (v0.1, v0.2, v0.3 in both spellings);
//! 2. keyless: the certificate's code-signing profile, its chain to a Fulcio CA of the
//!    trusted root (valid when issued), an embedded SCT from a trusted CT log, and the exact
//!    SAN identity and OIDC issuer; key pair: the caller's key;
//! 3. the signature over the artifact (message signature, or DSSE over an in-toto statement
//!    whose subject digest is the artifact's);
//! 4. RFC 3161 timestamps from trusted timestamp authorities;
//! 5. each transparency log entry: its body records this bundle, the Merkle inclusion proof,
//!    the log-signed checkpoint, the SET, and the log key's validity window;
//! 6. keyless only: at least one verified signing time exists (SET or timestamp), and the
//!    certificate was valid at each.
//!
//! Key-pair bundles written by `scimcp-release sign --key` have no log entry and no timestamp:
//! the key itself is the trust, so no signing time is needed.

mod artifact;
mod asn1;
mod bundle;
mod certificate;
mod checkpoint;
mod dsse;
mod encoding;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod keys;
mod merkle;
mod policy;
mod release;
pub mod release_policy;
mod sct;
mod set;
mod timestamp;
mod tlog;
mod trust_root;

use jiff::Timestamp;

pub use artifact::ArtifactInput;
pub use bundle::{BUNDLE_V03_MEDIA_TYPE, BundleVersion};
pub use error::VerifyError;
pub use keys::{KeyError, PublicKey};
pub use policy::{Policy, TrustedKey};
pub use release::{ReleaseVerifyError, VerifiedFile, bundle_path, verify_release_files};
pub use release_policy::ReleasePolicy;
pub use trust_root::{TrustRootError, TrustedRoot};

// Certificate and PEM helpers the keyless signer shares, so it reads a fresh Fulcio
// certificate exactly as verification will.
pub use certificate::validity as certificate_validity;
pub use encoding::{EncodingError, pem_decode};
pub use policy::{oidc_issuer, subject_alt_names};

use artifact::Digests;
use bundle::{Bundle, Content, Material};
use keys::HashAlg;

/// Where a verified signing time came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSource {
    /// A transparency log's signed entry timestamp (integrated time).
    SignedEntryTimestamp,
    /// An RFC 3161 timestamp authority.
    Rfc3161,
}

impl TimeSource {
    fn describe(self) -> &'static str {
        match self {
            TimeSource::SignedEntryTimestamp => "transparency log's signed entry timestamp",
            TimeSource::Rfc3161 => "RFC 3161 timestamp",
        }
    }
}

/// What a successful verification established.
#[derive(Debug, Clone)]
pub struct Verified {
    pub bundle_version: BundleVersion,
    /// The certificate identity (SAN) for keyless bundles; `None` for key-pair bundles.
    pub identity: Option<String>,
    pub issuer: Option<String>,
    /// Every verified signing time.
    pub signing_times: Vec<(TimeSource, Timestamp)>,
    /// How many transparency log entries were verified.
    pub tlog_entries: usize,
}

/// Verify a Sigstore bundle for `artifact` against `policy`, offline, with `root` as the only
/// source of trust. Every refusal names the check that failed.
pub fn verify_bundle(
    artifact: ArtifactInput<'_>,
    bundle_json: &[u8],
    policy: &Policy,
    root: &TrustedRoot,
) -> Result<Verified, VerifyError> {
    let bundle = Bundle::parse(bundle_json)?;
    let artifact = Digests::new(artifact);

    // 1. Who signed, and is that who the policy trusts?
    let (signing_key, verifier_der, spki_der, leaf, identity) = match (&bundle.material, policy) {
        (Material::Certificate { der, cert }, Policy::Identity { identity, issuer }) => {
            certificate::check_leaf_profile(cert)?;
            let issuing_ca = certificate::verify_fulcio_chain(cert, root)?;
            sct::verify(cert, der, issuing_ca, root)?;
            policy::check_identity(cert, identity, issuer)?;
            let key = certificate::public_key(cert)
                .map_err(|e| VerifyError::CertificateProfile(e.to_string()))?;
            (
                key,
                der.as_slice(),
                certificate::spki_der(cert)
                    .map_err(|e| VerifyError::CertificateProfile(e.to_string()))?,
                Some(cert.as_ref()),
                Some((identity.clone(), issuer.clone())),
            )
        }
        (Material::Certificate { .. }, Policy::Key(_)) => {
            return Err(VerifyError::Material(
                "the bundle is signed with a Fulcio certificate, not a key pair; verify it \
                 with --certificate-identity and --certificate-oidc-issuer"
                    .into(),
            ));
        }
        (Material::PublicKey, Policy::Identity { .. }) => {
            return Err(VerifyError::Material(
                "the bundle is signed with a key pair, not a certificate; verify it with \
                 --key PUBLIC.pem"
                    .into(),
            ));
        }
        (Material::PublicKey, Policy::Key(trusted)) => {
            let spki = trusted.spki_der.as_slice();
            (trusted.key.clone(), spki, spki.to_vec(), None, None)
        }
    };

    // 2. The signature over the artifact.
    match &bundle.content {
        Content::Message { digest, signature } => {
            if let Some((algorithm, recorded)) = digest {
                let alg = HashAlg::from_protobuf_name(algorithm).ok_or_else(|| {
                    VerifyError::Unsupported(format!("message digest algorithm {algorithm}"))
                })?;
                let Some(actual) = artifact.get(alg) else {
                    return Err(digest_unavailable(
                        &artifact,
                        alg,
                        "the bundle's message digest",
                    ));
                };
                if recorded.as_slice() != actual {
                    return Err(VerifyError::MessageDigestMismatch {
                        algorithm: alg.name(),
                        artifact: hex::encode(actual),
                        bundle: hex::encode(recorded),
                    });
                }
            }
            verify_artifact_signature(&signing_key, &artifact, signature)?;
        }
        Content::Dsse(env) => {
            signing_key
                .verify(&dsse::pae(&env.payload_type, &env.payload), &env.signature)
                .map_err(|e| {
                    VerifyError::ArtifactSignature(format!("the DSSE envelope signature: {e}"))
                })?;
            dsse::check_subject(env, &artifact)?;
        }
    }

    // 3. Timestamps over the signature.
    let mut signing_times = Vec::new();
    for token in &bundle.timestamps {
        let t = timestamp::verify(token, bundle.content.signature(), root)?;
        signing_times.push((TimeSource::Rfc3161, t));
    }

    // 4. Transparency log entries.
    if bundle.tlog_entries.is_empty() && leaf.is_some() {
        return Err(VerifyError::MissingTlogEntry);
    }
    let tsa_times: Vec<Timestamp> = signing_times.iter().map(|(_, t)| *t).collect();
    let expected = tlog::Expected {
        content: &bundle.content,
        artifact: &artifact,
        verifier_der,
        spki_der: &spki_der,
        is_certificate: leaf.is_some(),
    };
    for entry in &bundle.tlog_entries {
        if let Some(t) = tlog::verify_entry(entry, &expected, root, bundle.version, &tsa_times)? {
            signing_times.push((TimeSource::SignedEntryTimestamp, t));
        }
    }

    // 5. A short-lived certificate is only meaningful with a verified signing time inside it.
    if let Some(cert) = leaf {
        if signing_times.is_empty() {
            return Err(VerifyError::NoVerifiedTime);
        }
        let (not_before, not_after) = certificate::validity(cert);
        for (source, time) in &signing_times {
            if *time < not_before || *time > not_after {
                return Err(VerifyError::CertificateNotValidAtSigningTime {
                    time_source: source.describe(),
                    time: *time,
                    not_before,
                    not_after,
                });
            }
        }
    }

    let (identity, issuer) = identity.unzip();
    Ok(Verified {
        bundle_version: bundle.version,
        identity,
        issuer,
        signing_times,
        tlog_entries: bundle.tlog_entries.len(),
    })
}

fn verify_artifact_signature(
    key: &PublicKey,
    artifact: &Digests<'_>,
    signature: &[u8],
) -> Result<(), VerifyError> {
    let result = match (artifact.input(), key.default_hash()) {
        (ArtifactInput::Bytes(bytes), _) => key.verify(bytes, signature),
        (_, Some(alg)) => match artifact.get(alg) {
            Some(digest) => key.verify_prehash(alg, digest, signature),
            None => {
                let what = format!("the {} signature", key.kind());
                return Err(digest_unavailable(artifact, alg, &what));
            }
        },
        (_, None) => {
            return Err(VerifyError::Unsupported(format!(
                "a {} signature covers the artifact itself, not a digest of it; pass the file",
                key.kind()
            )));
        }
    };
    result.map_err(|e| {
        VerifyError::ArtifactSignature(format!(
            "the signature does not verify over the artifact ({e}); the file or the bundle \
             was altered, or the bundle is for another file"
        ))
    })
}

/// A check needs the artifact's digest under `alg`, but only a digest under another hash
/// function was given.
fn digest_unavailable(artifact: &Digests<'_>, alg: HashAlg, what: &str) -> VerifyError {
    VerifyError::Unsupported(format!(
        "{what} needs the artifact's {} digest, but only its {} digest was given; pass the file",
        alg.name(),
        artifact.given_name().unwrap_or("?"),
    ))
}
