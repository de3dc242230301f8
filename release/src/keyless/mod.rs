//! Keyless signing: Sigstore bundles v0.3 bound to an OIDC identity instead of a long-lived
//! key, as the release workflow signs.
//!
//! For each artifact: an ephemeral ECDSA P-256 key (one per run, never written anywhere), a
//! Fulcio certificate for it ([`fulcio`], proof of possession over the token's identity
//! claim), an ECDSA-SHA256 signature over the artifact, a `hashedrekord` 0.0.1 entry in Rekor
//! v1 ([`rekor`]), and a bundle carrying the leaf certificate, the log entry (SET, inclusion
//! proof, checkpoint) and the message signature. Every bundle is verified offline with
//! [`crate::verify::verify_bundle`] against the trusted root before it is returned, so an
//! unverifiable bundle is never written.
//!
//! The network is reached only through [`Transport`] at the URLs of a signing config
//! ([`Services`]): the public-good instance by default, local fakes in tests. No RFC 3161
//! timestamp is requested: Rekor v1's SET is the signed time.

mod error;
mod fulcio;
mod http;
mod rekor;
mod services;
mod token;

use base64ct::{Base64, Encoding};
use jiff::{SignedDuration, Timestamp};
use p256::ecdsa::signature::hazmat::PrehashSigner;
use p256::ecdsa::{DerSignature, SigningKey};
use p256::elliptic_curve::Generate;
use sha2::{Digest, Sha256};

pub use error::{KeylessError, Service};
pub use http::{HttpResponse, Transport, TransportError, UreqTransport};
pub use services::Services;
pub use token::{
    ACTIONS_ID_TOKEN_REQUEST_TOKEN, ACTIONS_ID_TOKEN_REQUEST_URL, IdentityToken, identity_token,
};

use crate::verify::{ArtifactInput, BUNDLE_V03_MEDIA_TYPE, Policy, TrustedRoot, verify_bundle};

/// A certificate is renewed when less than this is left of it: the log's integrated time must
/// fall inside its validity, and the upload takes a moment.
const CERTIFICATE_MARGIN: SignedDuration = SignedDuration::from_secs(60);

/// A signed, self-verified bundle.
#[derive(Debug, Clone)]
pub struct SignedBundle {
    /// The bundle JSON (pretty, with a trailing newline).
    pub json: String,
    /// The certificate identity (SAN) and OIDC issuer the bundle verified with.
    pub identity: String,
    pub issuer: String,
    /// The entry's index in the transparency log.
    pub log_index: String,
}

/// Signs artifacts keylessly with one ephemeral key, reusing its certificate while it is
/// valid.
pub struct KeylessSigner<'a> {
    transport: &'a dyn Transport,
    services: Services,
    token: IdentityToken,
    root: TrustedRoot,
    key: SigningKey,
    certificate: Option<fulcio::IssuedCertificate>,
}

impl<'a> KeylessSigner<'a> {
    /// A signer for `token`'s identity; `root` is what each bundle is verified against before
    /// it is returned (the trusted root of the same Sigstore instance as `services`).
    pub fn new(
        transport: &'a dyn Transport,
        services: Services,
        token: IdentityToken,
        root: TrustedRoot,
    ) -> Self {
        KeylessSigner {
            transport,
            services,
            token,
            root,
            key: SigningKey::generate(),
            certificate: None,
        }
    }

    fn certificate(&mut self) -> Result<fulcio::IssuedCertificate, KeylessError> {
        let now = Timestamp::now();
        if let Some(cert) = &self.certificate
            && now
                .checked_add(CERTIFICATE_MARGIN)
                .is_ok_and(|renew_at| renew_at < cert.not_after)
        {
            return Ok(cert.clone());
        }
        self.token.check_not_expired(now)?;
        let cert = fulcio::request_certificate(
            self.transport,
            &self.services.fulcio,
            &self.token,
            &self.key,
        )?;
        self.certificate = Some(cert.clone());
        Ok(cert)
    }

    /// Sign `artifact`, log it, and return its verified bundle.
    pub fn sign(&mut self, artifact: &[u8]) -> Result<SignedBundle, KeylessError> {
        let cert = self.certificate()?;
        let digest = Sha256::digest(artifact);
        // ECDSA P-256 over the SHA-256 digest (computed once, also logged), DER-encoded as
        // Sigstore expects; RFC 6979 nonces.
        let signature: DerSignature = self
            .key
            .sign_prehash(&digest)
            .map_err(|e| KeylessError::Encode(format!("signing: {e}")))?;
        let entry = rekor::log_entry(
            self.transport,
            &self.services.rekor,
            &rekor::Record {
                artifact_sha256: &digest,
                signature: signature.as_bytes(),
                certificate_der: &cert.der,
            },
        )?;
        let bundle = serde_json::json!({
            "mediaType": BUNDLE_V03_MEDIA_TYPE,
            "verificationMaterial": {
                "certificate": { "rawBytes": Base64::encode_string(&cert.der) },
                "tlogEntries": [entry],
            },
            "messageSignature": {
                "messageDigest": {
                    "algorithm": "SHA2_256",
                    "digest": Base64::encode_string(&digest),
                },
                "signature": Base64::encode_string(signature.as_bytes()),
            },
        });
        let mut json = serde_json::to_string_pretty(&bundle)
            .map_err(|e| KeylessError::Encode(e.to_string()))?;
        json.push('\n');

        // The bundle must verify as any verifier will check it: against the certificate's
        // own identity here; the release policy's pinned identity is checked by `verify`.
        let identity = crate::verify::subject_alt_names(&cert.cert)
            .into_iter()
            .next()
            .unwrap_or_default();
        let issuer = crate::verify::oidc_issuer(&cert.cert).unwrap_or_default();
        let policy = Policy::Identity {
            identity: identity.clone(),
            issuer: issuer.clone(),
        };
        verify_bundle(
            ArtifactInput::Bytes(artifact),
            json.as_bytes(),
            &policy,
            &self.root,
        )
        .map_err(KeylessError::SelfCheck)?;
        let log_index = bundle["verificationMaterial"]["tlogEntries"][0]["logIndex"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        Ok(SignedBundle {
            json,
            identity,
            issuer,
            log_index,
        })
    }
}
