//! Public keys and signature checks: ECDSA P-256/P-384, Ed25519, and RSA PKCS#1 v1.5 (only
//! for certificate signatures of CAs that use it).

use p256::ecdsa::signature::Verifier;
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use sha2::{Digest, Sha256, Sha384, Sha512};
use x509_cert::der::oid::ObjectIdentifier;
use x509_cert::der::{Decode, Encode};
use x509_cert::spki::SubjectPublicKeyInfoOwned;

const ID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const SECP256R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const SECP384R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const ID_ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");

const ECDSA_WITH_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
const ECDSA_WITH_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");
const ECDSA_WITH_SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.4");
const SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const SHA384_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.12");
const SHA512_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.13");

const ID_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
const ID_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
const ID_SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");

/// A hash function named by a signature or digest algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HashAlg {
    Sha256,
    Sha384,
    Sha512,
}

impl HashAlg {
    pub(crate) fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            HashAlg::Sha256 => Sha256::digest(data).to_vec(),
            HashAlg::Sha384 => Sha384::digest(data).to_vec(),
            HashAlg::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    /// How messages name the hash function.
    pub(crate) fn name(self) -> &'static str {
        match self {
            HashAlg::Sha256 => "SHA-256",
            HashAlg::Sha384 => "SHA-384",
            HashAlg::Sha512 => "SHA-512",
        }
    }

    /// A protobuf-specs `HashAlgorithm` name (bundle message digests, Rekor v2 entries).
    pub(crate) fn from_protobuf_name(name: &str) -> Option<Self> {
        match name {
            "SHA2_256" => Some(HashAlg::Sha256),
            "SHA2_384" => Some(HashAlg::Sha384),
            "SHA2_512" => Some(HashAlg::Sha512),
            _ => None,
        }
    }

    /// A lower-case digest name, as in-toto subjects and Rekor v1 entries spell it.
    pub(crate) fn from_lower_name(name: &str) -> Option<Self> {
        match name {
            "sha256" => Some(HashAlg::Sha256),
            "sha384" => Some(HashAlg::Sha384),
            "sha512" => Some(HashAlg::Sha512),
            _ => None,
        }
    }

    /// The hash of a digest AlgorithmIdentifier OID (CMS, RFC 3161 message imprints).
    pub(crate) fn from_digest_oid(oid: &ObjectIdentifier) -> Option<Self> {
        match *oid {
            ID_SHA256 => Some(HashAlg::Sha256),
            ID_SHA384 => Some(HashAlg::Sha384),
            ID_SHA512 => Some(HashAlg::Sha512),
            _ => None,
        }
    }
}

/// How a signature algorithm OID (X.509 / CMS) says to verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignatureScheme {
    Ecdsa(HashAlg),
    RsaPkcs1(HashAlg),
    Ed25519,
}

impl SignatureScheme {
    pub(crate) fn from_oid(oid: &ObjectIdentifier) -> Option<Self> {
        match *oid {
            ECDSA_WITH_SHA256 => Some(SignatureScheme::Ecdsa(HashAlg::Sha256)),
            ECDSA_WITH_SHA384 => Some(SignatureScheme::Ecdsa(HashAlg::Sha384)),
            ECDSA_WITH_SHA512 => Some(SignatureScheme::Ecdsa(HashAlg::Sha512)),
            SHA256_WITH_RSA => Some(SignatureScheme::RsaPkcs1(HashAlg::Sha256)),
            SHA384_WITH_RSA => Some(SignatureScheme::RsaPkcs1(HashAlg::Sha384)),
            SHA512_WITH_RSA => Some(SignatureScheme::RsaPkcs1(HashAlg::Sha512)),
            ID_ED25519 => Some(SignatureScheme::Ed25519),
            _ => None,
        }
    }
}

/// A key could not be read, or cannot do what was asked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum KeyError {
    #[error("not a DER SubjectPublicKeyInfo: {0}")]
    Spki(String),
    #[error("not a PEM public key: {0}")]
    Pem(String),
    #[error("unsupported key type {0} (supported: ECDSA P-256/P-384, Ed25519, RSA)")]
    UnsupportedKey(String),
    #[error("invalid key: {0}")]
    Invalid(String),
}

/// A signature did not verify; the message says why.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SignatureError(pub(crate) String);

/// A verification key from a certificate, a trusted root or a PEM file.
#[derive(Clone, Debug)]
pub enum PublicKey {
    P256(p256::ecdsa::VerifyingKey),
    P384(p384::ecdsa::VerifyingKey),
    Ed25519(ed25519_dalek::VerifyingKey),
    Rsa(rsa::PublicKey),
}

impl PublicKey {
    /// Read a DER SubjectPublicKeyInfo.
    pub fn from_spki_der(der: &[u8]) -> Result<Self, KeyError> {
        let spki =
            SubjectPublicKeyInfoOwned::from_der(der).map_err(|e| KeyError::Spki(e.to_string()))?;
        Self::from_spki(&spki)
    }

    /// Read a PEM `PUBLIC KEY` (SubjectPublicKeyInfo), as written by `keygen` or cosign.
    pub fn from_pem(pem: &str) -> Result<Self, KeyError> {
        Self::from_spki_der(&spki_der_from_pem(pem)?)
    }

    pub(crate) fn from_spki(spki: &SubjectPublicKeyInfoOwned) -> Result<Self, KeyError> {
        let point = spki.subject_public_key.raw_bytes();
        let invalid = |e: &dyn std::fmt::Display| KeyError::Invalid(e.to_string());
        match spki.algorithm.oid {
            ID_EC_PUBLIC_KEY => {
                let curve = spki
                    .algorithm
                    .parameters
                    .as_ref()
                    .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
                    .ok_or_else(|| KeyError::Invalid("EC key without a named curve".into()))?;
                match curve {
                    SECP256R1 => p256::ecdsa::VerifyingKey::from_sec1_bytes(point)
                        .map(PublicKey::P256)
                        .map_err(|e| invalid(&e)),
                    SECP384R1 => p384::ecdsa::VerifyingKey::from_sec1_bytes(point)
                        .map(PublicKey::P384)
                        .map_err(|e| invalid(&e)),
                    other => Err(KeyError::UnsupportedKey(format!("EC curve {other}"))),
                }
            }
            ID_ED25519 => {
                let bytes: &[u8; 32] = point
                    .try_into()
                    .map_err(|_| KeyError::Invalid("Ed25519 key is not 32 bytes".into()))?;
                ed25519_dalek::VerifyingKey::from_bytes(bytes)
                    .map(PublicKey::Ed25519)
                    .map_err(|e| invalid(&e))
            }
            RSA_ENCRYPTION => {
                let der = spki.to_der().map_err(|e| invalid(&e))?;
                let spki_ref =
                    rsa::pkcs8::SubjectPublicKeyInfoRef::from_der(&der).map_err(|e| invalid(&e))?;
                rsa::PublicKey::try_from(spki_ref)
                    .map(PublicKey::Rsa)
                    .map_err(|e| invalid(&e))
            }
            other => Err(KeyError::UnsupportedKey(other.to_string())),
        }
    }

    /// A short name of the key type, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            PublicKey::P256(_) => "ECDSA P-256",
            PublicKey::P384(_) => "ECDSA P-384",
            PublicKey::Ed25519(_) => "Ed25519",
            PublicKey::Rsa(_) => "RSA",
        }
    }

    /// The hash this key type signs with when no algorithm is named (Sigstore's key details:
    /// P-256 with SHA-256, P-384 with SHA-384; Ed25519 signs the message itself).
    pub(crate) fn default_hash(&self) -> Option<HashAlg> {
        match self {
            PublicKey::P256(_) | PublicKey::Rsa(_) => Some(HashAlg::Sha256),
            PublicKey::P384(_) => Some(HashAlg::Sha384),
            PublicKey::Ed25519(_) => None,
        }
    }

    /// Verify `signature` over `message` with the key type's own hash (ECDSA signatures are
    /// DER). Used for artifact signatures, SETs, checkpoints and DSSE.
    pub(crate) fn verify(&self, message: &[u8], signature: &[u8]) -> Result<(), SignatureError> {
        match self {
            PublicKey::Ed25519(key) => {
                let sig = ed25519_dalek::Signature::from_slice(signature)
                    .map_err(|e| SignatureError(format!("malformed Ed25519 signature: {e}")))?;
                key.verify(message, &sig)
                    .map_err(|_| SignatureError("Ed25519 signature does not verify".into()))
            }
            _ => {
                let hash = self.default_hash().unwrap_or(HashAlg::Sha256);
                self.verify_prehash(hash, &hash.digest(message), signature)
            }
        }
    }

    /// Verify under an explicit scheme (X.509 and CMS name their signature algorithm).
    pub(crate) fn verify_scheme(
        &self,
        scheme: SignatureScheme,
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), SignatureError> {
        match (scheme, self) {
            (SignatureScheme::Ed25519, PublicKey::Ed25519(_)) => self.verify(message, signature),
            (SignatureScheme::Ecdsa(hash), PublicKey::P256(_) | PublicKey::P384(_))
            | (SignatureScheme::RsaPkcs1(hash), PublicKey::Rsa(_)) => {
                self.verify_prehash(hash, &hash.digest(message), signature)
            }
            (scheme, key) => Err(SignatureError(format!(
                "signature algorithm {scheme:?} does not fit a {} key",
                key.kind()
            ))),
        }
    }

    /// Verify a signature over an already computed digest (ECDSA and RSA only).
    pub(crate) fn verify_prehash(
        &self,
        hash: HashAlg,
        digest: &[u8],
        signature: &[u8],
    ) -> Result<(), SignatureError> {
        let bad = || SignatureError(format!("{} signature does not verify", self.kind()));
        match self {
            PublicKey::P256(key) => {
                let sig = p256::ecdsa::DerSignature::from_bytes(signature)
                    .map_err(|e| SignatureError(format!("malformed ECDSA signature: {e}")))?;
                key.verify_prehash(digest, &sig).map_err(|_| bad())
            }
            PublicKey::P384(key) => {
                let sig = p384::ecdsa::DerSignature::from_bytes(signature)
                    .map_err(|e| SignatureError(format!("malformed ECDSA signature: {e}")))?;
                key.verify_prehash(digest, &sig).map_err(|_| bad())
            }
            PublicKey::Rsa(key) => {
                let sig = rsa::pkcs1v15::Signature::try_from(signature)
                    .map_err(|e| SignatureError(format!("malformed RSA signature: {e}")))?;
                let result = match hash {
                    HashAlg::Sha256 => rsa::pkcs1v15::VerifyingKey::<Sha256>::new(key.clone())
                        .verify_prehash(digest, &sig),
                    HashAlg::Sha384 => rsa::pkcs1v15::VerifyingKey::<Sha384>::new(key.clone())
                        .verify_prehash(digest, &sig),
                    HashAlg::Sha512 => rsa::pkcs1v15::VerifyingKey::<Sha512>::new(key.clone())
                        .verify_prehash(digest, &sig),
                };
                result.map_err(|_| bad())
            }
            PublicKey::Ed25519(_) => Err(SignatureError(
                "Ed25519 signs the message itself; a digest alone cannot be verified".into(),
            )),
        }
    }
}

/// The DER SubjectPublicKeyInfo of a PEM `PUBLIC KEY`, for comparing with log entries.
pub(crate) fn spki_der_from_pem(pem: &str) -> Result<Vec<u8>, KeyError> {
    let (label, der) =
        super::encoding::pem_decode(pem).map_err(|e| KeyError::Pem(e.to_string()))?;
    if label != "PUBLIC KEY" {
        return Err(KeyError::Pem(format!(
            "expected a `PUBLIC KEY` block, found `{label}`"
        )));
    }
    Ok(der)
}
