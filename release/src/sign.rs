//! Key-pair signing for air-gapped maintainers and tests: ECDSA P-256 keys in PKCS#8 PEM, and
//! Sigstore bundles v0.3 with a `publicKey` hint and a message signature.
//!
//! Such a bundle has no transparency log entry and no timestamp: nothing is published, and
//! the only trust is the public key handed to `verify --key`. Keyless signing (Fulcio and
//! Rekor) is a separate path.

use base64ct::{Base64, Encoding};
use p256::ecdsa::{DerSignature, SigningKey, signature::Signer};
use p256::elliptic_curve::Generate;
use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use sha2::{Digest, Sha256};

use crate::verify::BUNDLE_V03_MEDIA_TYPE;

/// A key-pair operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error(
        "not a PKCS#8 PEM ECDSA P-256 private key ({0}); create one with \
         `scimcp-release keygen --out DIR`"
    )]
    PrivateKey(String),
    #[error("cannot encode the key: {0}")]
    Encode(String),
}

/// A fresh P-256 signing key from the operating system's random source.
pub fn generate_key() -> SigningKey {
    SigningKey::generate()
}

/// The private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
pub fn private_key_pem(key: &SigningKey) -> Result<String, SignError> {
    key.to_pkcs8_pem(LineEnding::LF)
        .map(|pem| pem.to_string())
        .map_err(|e| SignError::Encode(e.to_string()))
}

/// The public key as SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
pub fn public_key_pem(key: &SigningKey) -> Result<String, SignError> {
    key.verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| SignError::Encode(e.to_string()))
}

/// Read a PKCS#8 PEM private key.
pub fn load_private_key(pem: &str) -> Result<SigningKey, SignError> {
    SigningKey::from_pkcs8_pem(pem.trim()).map_err(|e| SignError::PrivateKey(e.to_string()))
}

/// Sign `artifact` and return the bundle JSON (pretty, with a trailing newline).
pub fn sign_bundle(key: &SigningKey, artifact: &[u8]) -> Result<String, SignError> {
    let spki = key
        .verifying_key()
        .to_public_key_der()
        .map_err(|e| SignError::Encode(e.to_string()))?;
    // Deterministic ECDSA (RFC 6979) over SHA-256 of the artifact, DER-encoded as Sigstore
    // expects for PKIX_ECDSA_P256_SHA_256.
    let signature: DerSignature = key.sign(artifact);
    let bundle = serde_json::json!({
        "mediaType": BUNDLE_V03_MEDIA_TYPE,
        "verificationMaterial": {
            // The hint names the key (sha256 of its DER); verification never trusts it.
            "publicKey": { "hint": Base64::encode_string(&Sha256::digest(spki.as_bytes())) },
            "tlogEntries": [],
        },
        "messageSignature": {
            "messageDigest": {
                "algorithm": "SHA2_256",
                "digest": Base64::encode_string(&Sha256::digest(artifact)),
            },
            "signature": Base64::encode_string(signature.as_bytes()),
        },
    });
    let mut json =
        serde_json::to_string_pretty(&bundle).map_err(|e| SignError::Encode(e.to_string()))?;
    json.push('\n');
    Ok(json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{
        ArtifactInput, Policy, TrustedKey, TrustedRoot, VerifyError, verify_bundle,
    };

    #[test]
    fn pem_round_trip_and_sign_verify() {
        let key = generate_key();
        let reloaded = load_private_key(&private_key_pem(&key).unwrap()).unwrap();
        let trusted = TrustedKey::from_pem(&public_key_pem(&reloaded).unwrap()).unwrap();
        let bundle = sign_bundle(&reloaded, b"artifact").unwrap();
        let root = TrustedRoot::production().unwrap();
        let policy = Policy::Key(trusted);
        verify_bundle(
            ArtifactInput::Bytes(b"artifact"),
            bundle.as_bytes(),
            &policy,
            &root,
        )
        .unwrap();
        let err = verify_bundle(
            ArtifactInput::Bytes(b"artifacT"),
            bundle.as_bytes(),
            &policy,
            &root,
        )
        .unwrap_err();
        assert!(
            matches!(err, VerifyError::MessageDigestMismatch { .. }),
            "{err}"
        );
    }
}
