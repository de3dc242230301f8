//! Why a bundle was refused: one variant per check, each naming the check and its specifics.

use jiff::Timestamp;

use super::trust_root::TrustRootError;

/// A refusal from [`crate::verify_bundle`]. Every variant names the check that failed
/// so a maintainer can tell a tampered artifact from an expired certificate at a glance.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The bundle is not JSON, or its JSON does not have the shape of a Sigstore bundle.
    #[error("bundle format: {0}")]
    BundleFormat(String),

    /// The bundle's `mediaType` is not a Sigstore bundle version this verifier knows.
    #[error(
        "bundle media type: {0:?} is not a supported Sigstore bundle (v0.1, v0.2 or v0.3); \
         re-create the bundle with a current Sigstore client"
    )]
    UnsupportedMediaType(String),

    /// The bundle's certificate chain carries a self-signed root: roots come from the trusted
    /// root only, never from the bundle.
    #[error(
        "certificate chain: the bundle carries a root certificate ({subject}); such bundles \
         are refused, because roots must come from the trusted root, never from the bundle \
         (re-create it without the root, or as a v0.3 bundle, which holds only the leaf)"
    )]
    ChainContainsRoot { subject: String },

    /// The trusted root is unusable.
    #[error("trusted root: {0}")]
    TrustRoot(#[from] TrustRootError),

    /// The signing certificate does not chain to a Fulcio CA of the trusted root.
    #[error("certificate chain: {0}")]
    CertificateChain(String),

    /// The signing certificate is not a code-signing leaf (EKU, key usage, CA flag).
    #[error("certificate profile: {0}")]
    CertificateProfile(String),

    /// No embedded signed certificate timestamp verifies against a CT log of the trusted root.
    #[error("certificate transparency (SCT): {0}")]
    Sct(String),

    /// The certificate's subject alternative names do not include the expected identity.
    #[error(
        "identity: the certificate was issued to {found:?}, not to the expected identity \
         {expected:?}"
    )]
    IdentityMismatch {
        expected: String,
        found: Vec<String>,
    },

    /// The certificate's OIDC issuer is not the expected one.
    #[error(
        "OIDC issuer: the certificate's issuer is {}, not the expected {expected:?}",
        found.as_deref().map_or("absent".to_owned(), |f| format!("{f:?}"))
    )]
    IssuerMismatch {
        expected: String,
        found: Option<String>,
    },

    /// The bundle's verification material does not fit the policy (a key bundle checked
    /// against an identity, or the other way round), or the given key is not the bundle's.
    #[error("verification material: {0}")]
    Material(String),

    /// The bundle's recorded digest of the artifact is not the artifact's digest.
    #[error(
        "message digest: the bundle records {algorithm} {bundle}, but the artifact's is \
         {artifact}; this bundle is for another file"
    )]
    MessageDigestMismatch {
        algorithm: &'static str,
        artifact: String,
        bundle: String,
    },

    /// The signature does not verify over the artifact (or the DSSE envelope).
    #[error("artifact signature: {0}")]
    ArtifactSignature(String),

    /// The DSSE envelope or its in-toto statement is malformed or not about the artifact.
    #[error("DSSE envelope: {0}")]
    Dsse(String),

    /// A keyless bundle has no transparency log entry.
    #[error(
        "transparency log: the bundle has no log entry; keyless bundles must be logged \
         (key-pair bundles are verified with --key)"
    )]
    MissingTlogEntry,

    /// The entry's log is not a transparency log of the trusted root.
    #[error("transparency log: entry from log {log_id} which is not in the trusted root")]
    UnknownLog { log_id: String },

    /// The log entry's body is not a record of this bundle's signature, key and artifact.
    #[error("transparency log entry: {0}")]
    TlogBody(String),

    /// The Merkle inclusion proof does not lead to its root hash.
    #[error("inclusion proof: {0}")]
    InclusionProof(String),

    /// The checkpoint (signed tree head) is malformed, unsigned by the log, or for another tree.
    #[error("checkpoint: {0}")]
    Checkpoint(String),

    /// The signed entry timestamp (inclusion promise) does not verify.
    #[error("signed entry timestamp (SET): {0}")]
    SignedEntryTimestamp(String),

    /// A trust-root key (log, CT log or authority) was used outside its validity window.
    #[error("trusted root validity: {what} is valid {window}, not at {time}")]
    OutsideTrustWindow {
        what: String,
        window: String,
        time: Timestamp,
    },

    /// An RFC 3161 timestamp is malformed, untrusted or not over this signature.
    #[error("RFC 3161 timestamp: {0}")]
    Timestamp(String),

    /// No source of verified signed time (SET or trusted timestamp) exists.
    #[error(
        "signing time: the bundle has no verified signing time (neither a signed entry \
         timestamp nor a trusted RFC 3161 timestamp), so the short-lived certificate cannot \
         be checked"
    )]
    NoVerifiedTime,

    /// The certificate was not valid at a verified signing time.
    #[error(
        "certificate validity: the certificate is valid from {not_before} to {not_after}, but \
         the {time_source} says it signed at {time}"
    )]
    CertificateNotValidAtSigningTime {
        time_source: &'static str,
        time: Timestamp,
        not_before: Timestamp,
        not_after: Timestamp,
    },

    /// Something this verifier does not implement (an algorithm or entry kind).
    #[error("unsupported: {0}")]
    Unsupported(String),
}
