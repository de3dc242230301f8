//! Tampering: start from valid conformance bundles, change one thing, and check the refusal
//! names the check that caught it (by error variant, not by message).

use std::path::{Path, PathBuf};

use base64ct::{Base64, Encoding};
use scimcp_release::verify::{
    ArtifactInput, Policy, TrustedRoot, Verified, VerifyError, verify_bundle,
};
use serde_json::Value;

const IDENTITY: &str = "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const ISSUER: &str = "https://token.actions.githubusercontent.com";

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance")
}

fn artifact() -> Vec<u8> {
    fs_err::read(data().join("a.txt")).unwrap()
}

fn bundle(case: &str) -> Value {
    serde_json::from_slice(&fs_err::read(data().join(case).join("bundle.sigstore.json")).unwrap())
        .unwrap()
}

fn root(case: &str) -> TrustedRoot {
    let custom = data().join(case).join("trusted_root.json");
    if custom.exists() {
        TrustedRoot::from_json(&fs_err::read(custom).unwrap()).unwrap()
    } else {
        TrustedRoot::production().unwrap()
    }
}

fn identity() -> Policy {
    Policy::Identity {
        identity: IDENTITY.into(),
        issuer: ISSUER.into(),
    }
}

fn check(
    case: &str,
    artifact: &[u8],
    bundle: &Value,
    policy: &Policy,
) -> Result<Verified, VerifyError> {
    verify_bundle(
        ArtifactInput::Bytes(artifact),
        &serde_json::to_vec(bundle).unwrap(),
        policy,
        &root(case),
    )
}

/// Decode the base64 string at `pointer`, let `f` change the bytes, and store them back.
fn edit_b64(bundle: &mut Value, pointer: &str, f: impl FnOnce(&mut Vec<u8>)) {
    let slot = bundle
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}"));
    let mut bytes = Base64::decode_vec(slot.as_str().unwrap()).unwrap();
    f(&mut bytes);
    *slot = Value::String(Base64::encode_string(&bytes));
}

const HAPPY: &str = "happy-path-v0.3";

#[test]
fn the_untampered_bundles_verify() {
    check(HAPPY, &artifact(), &bundle(HAPPY), &identity()).unwrap();
    check(
        "rekor2-happy-path",
        &artifact(),
        &bundle("rekor2-happy-path"),
        &identity(),
    )
    .unwrap();
}

#[test]
fn flipped_artifact_byte() {
    let mut altered = artifact();
    altered[0] ^= 0x01;
    let err = check(HAPPY, &altered, &bundle(HAPPY), &identity()).unwrap_err();
    assert!(
        matches!(err, VerifyError::MessageDigestMismatch { .. }),
        "{err}"
    );

    // Without the (unauthenticated) digest hint, the signature itself must catch it.
    let mut no_hint = bundle(HAPPY);
    no_hint["messageSignature"]
        .as_object_mut()
        .unwrap()
        .remove("messageDigest");
    let err = check(HAPPY, &altered, &no_hint, &identity()).unwrap_err();
    assert!(matches!(err, VerifyError::ArtifactSignature(_)), "{err}");
}

#[test]
fn flipped_signature_byte() {
    let mut b = bundle(HAPPY);
    // The last byte is inside the DER integer `s`, so the encoding stays valid.
    edit_b64(&mut b, "/messageSignature/signature", |sig| {
        *sig.last_mut().unwrap() ^= 0x01;
    });
    let err = check(HAPPY, &artifact(), &b, &identity()).unwrap_err();
    assert!(matches!(err, VerifyError::ArtifactSignature(_)), "{err}");
}

#[test]
fn flipped_certificate_byte() {
    let mut b = bundle(HAPPY);
    // Change one letter of the SAN inside the DER: still a well-formed certificate, but the
    // Fulcio CA's signature no longer covers it.
    edit_b64(
        &mut b,
        "/verificationMaterial/certificate/rawBytes",
        |der| {
            let needle = b"extremely-dangerous";
            let at = der.windows(needle.len()).position(|w| w == needle).unwrap();
            der[at] = b'X';
        },
    );
    let err = check(HAPPY, &artifact(), &b, &identity()).unwrap_err();
    assert!(matches!(err, VerifyError::CertificateChain(_)), "{err}");
}

#[test]
fn flipped_inclusion_proof_byte() {
    let mut b = bundle(HAPPY);
    edit_b64(
        &mut b,
        "/verificationMaterial/tlogEntries/0/inclusionProof/hashes/3",
        |h| h[7] ^= 0x80,
    );
    let err = check(HAPPY, &artifact(), &b, &identity()).unwrap_err();
    assert!(matches!(err, VerifyError::InclusionProof(_)), "{err}");
}

#[test]
fn flipped_signed_entry_timestamp_byte() {
    let mut b = bundle(HAPPY);
    edit_b64(
        &mut b,
        "/verificationMaterial/tlogEntries/0/inclusionPromise/signedEntryTimestamp",
        |s| *s.last_mut().unwrap() ^= 0x01,
    );
    let err = check(HAPPY, &artifact(), &b, &identity()).unwrap_err();
    assert!(matches!(err, VerifyError::SignedEntryTimestamp(_)), "{err}");
}

#[test]
fn altered_integrated_time() {
    let mut b = bundle(HAPPY);
    let t = &mut b["verificationMaterial"]["tlogEntries"][0]["integratedTime"];
    let moved = t.as_str().unwrap().parse::<i64>().unwrap() + 1;
    *t = Value::String(moved.to_string());
    let err = check(HAPPY, &artifact(), &b, &identity()).unwrap_err();
    assert!(matches!(err, VerifyError::SignedEntryTimestamp(_)), "{err}");
}

#[test]
fn flipped_checkpoint_signature_byte() {
    let mut b = bundle(HAPPY);
    let slot = b
        .pointer_mut("/verificationMaterial/tlogEntries/0/inclusionProof/checkpoint/envelope")
        .unwrap();
    let text = slot.as_str().unwrap().to_owned();
    let (head, sig_line) = text.trim_end().rsplit_once(' ').unwrap();
    let mut sig = Base64::decode_vec(sig_line).unwrap();
    *sig.last_mut().unwrap() ^= 0x01;
    *slot = Value::String(format!("{head} {}\n", Base64::encode_string(&sig)));
    let err = check(HAPPY, &artifact(), &b, &identity()).unwrap_err();
    assert!(matches!(err, VerifyError::Checkpoint(_)), "{err}");
}

#[test]
fn flipped_rfc3161_timestamp_byte() {
    let case = "rekor2-happy-path";
    let mut b = bundle(case);
    // The last byte is inside the TSA's signature.
    edit_b64(
        &mut b,
        "/verificationMaterial/timestampVerificationData/rfc3161Timestamps/0/signedTimestamp",
        |t| *t.last_mut().unwrap() ^= 0x01,
    );
    let err = check(case, &artifact(), &b, &identity()).unwrap_err();
    assert!(matches!(err, VerifyError::Timestamp(_)), "{err}");
}

#[test]
fn wrong_identity() {
    let policy = Policy::Identity {
        identity: format!("{IDENTITY}x"),
        issuer: ISSUER.into(),
    };
    let err = check(HAPPY, &artifact(), &bundle(HAPPY), &policy).unwrap_err();
    match err {
        VerifyError::IdentityMismatch { expected, found } => {
            assert_eq!(expected, format!("{IDENTITY}x"));
            assert_eq!(found, vec![IDENTITY.to_owned()]);
        }
        other => panic!("expected an identity refusal, got {other}"),
    }
}

#[test]
fn wrong_issuer() {
    let policy = Policy::Identity {
        identity: IDENTITY.into(),
        issuer: "https://accounts.google.com".into(),
    };
    let err = check(HAPPY, &artifact(), &bundle(HAPPY), &policy).unwrap_err();
    match err {
        VerifyError::IssuerMismatch { found, .. } => assert_eq!(found.as_deref(), Some(ISSUER)),
        other => panic!("expected an issuer refusal, got {other}"),
    }
}

#[test]
fn digest_only_artifact() {
    use sha2::Digest;
    let digest: [u8; 32] = sha2::Sha256::digest(artifact()).into();
    verify_bundle(
        ArtifactInput::Sha256(digest),
        &serde_json::to_vec(&bundle(HAPPY)).unwrap(),
        &identity(),
        &root(HAPPY),
    )
    .unwrap();
}
