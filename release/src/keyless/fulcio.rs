//! Fulcio: trade the identity token and a proof of possession of the ephemeral key for a
//! short-lived code-signing certificate (`POST /api/v2/signingCert`, public-key request).

use base64ct::{Base64, Encoding};
use jiff::Timestamp;
use p256::ecdsa::{DerSignature, SigningKey, signature::Signer};
use p256::pkcs8::{EncodePublicKey, LineEnding};
use serde::Deserialize;
use x509_cert::Certificate;
use x509_cert::der::{Decode, Encode};

use super::error::{KeylessError, Service};
use super::http::{Transport, body_excerpt, with_retries};
use super::token::IdentityToken;
use crate::verify::pem_decode;

/// A certificate Fulcio issued for the ephemeral key.
#[derive(Debug, Clone)]
pub(crate) struct IssuedCertificate {
    pub(crate) der: Vec<u8>,
    pub(crate) cert: Certificate,
    pub(crate) not_after: Timestamp,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SigningCertResponse {
    signed_certificate_embedded_sct: Option<ChainHolder>,
    signed_certificate_detached_sct: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ChainHolder {
    chain: Chain,
}

#[derive(Deserialize)]
struct Chain {
    certificates: Vec<String>,
}

/// Ask Fulcio at `base_url` for a certificate binding `key` to the token's identity.
pub(crate) fn request_certificate(
    transport: &dyn Transport,
    base_url: &str,
    token: &IdentityToken,
    key: &SigningKey,
) -> Result<IssuedCertificate, KeylessError> {
    let url = format!("{base_url}/api/v2/signingCert");
    let fail = |problem: String| KeylessError::Service {
        service: Service::Fulcio,
        url: url.clone(),
        problem,
    };
    let public_pem = key
        .verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| KeylessError::Encode(e.to_string()))?;
    // The proof of possession: the ephemeral key's signature over the identity claim Fulcio
    // reads from the token, so only the holder of the key gets a certificate for it.
    let proof: DerSignature = key.sign(token.challenge().as_bytes());
    let request = serde_json::json!({
        "credentials": { "oidcIdentityToken": token.raw() },
        "publicKeyRequest": {
            "publicKey": { "algorithm": "ECDSA", "content": public_pem },
            "proofOfPossession": Base64::encode_string(proof.as_bytes()),
        },
    });
    let body = serde_json::to_vec(&request).map_err(|e| KeylessError::Encode(e.to_string()))?;
    let response =
        with_retries(|| transport.post_json(&url, Some(token.raw()), &body)).map_err(|source| {
            KeylessError::Unreachable {
                service: Service::Fulcio,
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
    let parsed: SigningCertResponse = serde_json::from_slice(&response.body).map_err(|e| {
        fail(format!(
            "the answer is not a signing certificate response: {e}"
        ))
    })?;
    let chain = match (
        parsed.signed_certificate_embedded_sct,
        parsed.signed_certificate_detached_sct,
    ) {
        (Some(holder), _) => holder.chain.certificates,
        (None, Some(_)) => {
            return Err(fail(
                "it issued a certificate with a detached SCT; bundles carry only embedded SCTs, \
                 so this Fulcio cannot be used"
                    .into(),
            ));
        }
        (None, None) => return Err(fail("the answer carries no certificate".into())),
    };
    let leaf_pem = chain
        .first()
        .ok_or_else(|| fail("the certificate chain is empty".into()))?;
    let (label, der) = pem_decode(leaf_pem).map_err(|e| fail(format!("leaf certificate: {e}")))?;
    if label != "CERTIFICATE" {
        return Err(fail(format!(
            "the leaf is a {label:?} PEM block, not a certificate"
        )));
    }
    let cert = Certificate::from_der(&der).map_err(|e| fail(format!("leaf certificate: {e}")))?;
    let ours = key
        .verifying_key()
        .to_public_key_der()
        .map_err(|e| KeylessError::Encode(e.to_string()))?;
    let theirs = cert
        .tbs_certificate()
        .subject_public_key_info()
        .to_der()
        .map_err(|e| fail(format!("leaf certificate key: {e}")))?;
    if ours.as_bytes() != theirs.as_slice() {
        return Err(fail("it issued the certificate for another key".into()));
    }
    let (_, not_after) = crate::verify::certificate_validity(&cert);
    Ok(IssuedCertificate {
        der,
        cert,
        not_after,
    })
}
