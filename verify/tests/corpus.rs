//! Real production bundles (`tests/corpus/corpus.toml`): npm provenance, PEP 740 and Sigstore
//! attestations, SLSA generator outputs, sigstore-java and sigstore-js releases, from several
//! publishers and years, Rekor v1 and v2, SET- and RFC 3161-timed.
//!
//! - every bundle verifies against the public-good trusted root with its real identity;
//! - six negative controls per bundle (a wrong identity, a wrong issuer, a different artifact,
//!   one flipped byte in the signature, the certificate and the inclusion proof) are each
//!   refused by the check meant to catch them;
//! - 1,000 random single-byte mutations of the bundles' signed content are all refused, and
//!   none panics.
//!
//! The bundles are data from other repositories, kept in `tests/corpus/files/` (or wherever
//! `SCIMCP_SIGSTORE_CORPUS` points); a signed file that is another project's code is kept
//! only as the digest the bundle binds.

// The counts docs/RELEASE.md quotes are printed (`-- --nocapture`) so anyone can rerun them.
#![allow(clippy::print_stdout)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use base64ct::{Base64, Encoding};
use scimcp_verify::{ArtifactInput, Policy, TrustedRoot, VerifyError, verify_bundle};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct Corpus {
    bundle: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    file: String,
    artifact: Option<String>,
    sha256: Option<String>,
    sha512: Option<String>,
    publisher: String,
    year: u16,
    identity: String,
    issuer: String,
    rekor: String,
    time: String,
}

/// One corpus bundle, loaded.
struct Case {
    entry: Entry,
    bundle: Vec<u8>,
    artifact: Artifact,
}

#[derive(Clone)]
enum Artifact {
    Bytes(Vec<u8>),
    Sha256([u8; 32]),
    Sha512([u8; 64]),
}

impl Artifact {
    fn input(&self) -> ArtifactInput<'_> {
        match self {
            Artifact::Bytes(b) => ArtifactInput::Bytes(b),
            Artifact::Sha256(d) => ArtifactInput::Sha256(*d),
            Artifact::Sha512(d) => ArtifactInput::Sha512(*d),
        }
    }

    /// Another artifact: the bytes with one more byte, or the digest with one bit flipped.
    fn other(&self) -> Artifact {
        match self {
            Artifact::Bytes(b) => Artifact::Bytes([b.as_slice(), b"\n"].concat()),
            Artifact::Sha256(d) => Artifact::Sha256(flip_first(*d)),
            Artifact::Sha512(d) => Artifact::Sha512(flip_first(*d)),
        }
    }
}

fn flip_first<const N: usize>(mut d: [u8; N]) -> [u8; N] {
    d[0] ^= 1;
    d
}

fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SCIMCP_SIGSTORE_CORPUS") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/files")
}

fn digest<const N: usize>(hex_digest: &str) -> [u8; N] {
    hex::decode(hex_digest)
        .unwrap()
        .try_into()
        .expect("digest length")
}

/// The corpus: every bundle of corpus.toml with its artifact or digest.
fn cases() -> Vec<Case> {
    let index = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/corpus.toml");
    let corpus: Corpus = toml::from_str(&fs_err::read_to_string(index).unwrap()).unwrap();
    let dir = corpus_dir();
    assert!(
        dir.is_dir(),
        "the corpus directory {} is missing (SCIMCP_SIGSTORE_CORPUS?)",
        dir.display()
    );
    corpus
        .bundle
        .into_iter()
        .map(|entry| {
            let artifact = match (&entry.artifact, &entry.sha256, &entry.sha512) {
                (Some(file), None, None) => Artifact::Bytes(fs_err::read(dir.join(file)).unwrap()),
                (None, Some(d), None) => Artifact::Sha256(digest(d)),
                (None, None, Some(d)) => Artifact::Sha512(digest(d)),
                _ => panic!("{}: exactly one of artifact, sha256, sha512", entry.file),
            };
            Case {
                bundle: fs_err::read(dir.join(&entry.file)).unwrap(),
                entry,
                artifact,
            }
        })
        .collect()
}

fn policy(identity: &str, issuer: &str) -> Policy {
    Policy::Identity {
        identity: identity.to_owned(),
        issuer: issuer.to_owned(),
    }
}

fn verify(
    case: &Case,
    bundle: &[u8],
    artifact: &Artifact,
    policy: &Policy,
) -> Result<(), VerifyError> {
    static ROOT: std::sync::LazyLock<TrustedRoot> =
        std::sync::LazyLock::new(|| TrustedRoot::production().unwrap());
    verify_bundle(artifact.input(), bundle, policy, &ROOT).map(|verified| {
        assert_eq!(
            verified.identity.as_deref(),
            Some(case.entry.identity.as_str())
        )
    })
}

fn real_policy(case: &Case) -> Policy {
    policy(&case.entry.identity, &case.entry.issuer)
}

#[test]
fn every_genuine_bundle_verifies_with_its_real_identity() {
    let cases = cases();
    let mut refused = Vec::new();
    for case in &cases {
        if let Err(e) = verify(case, &case.bundle, &case.artifact, &real_policy(case)) {
            refused.push(format!("{}: {e}", case.entry.file));
        }
    }
    assert!(
        refused.is_empty(),
        "genuine bundles refused:\n{}",
        refused.join("\n")
    );

    // The corpus must stay as broad as docs/RELEASE.md says.
    let publishers: BTreeSet<&str> = cases
        .iter()
        .map(|c| c.entry.publisher.split(" (").next().unwrap())
        .collect();
    let years: BTreeSet<u16> = cases.iter().map(|c| c.entry.year).collect();
    assert!(cases.len() >= 25, "{} bundles", cases.len());
    assert!(publishers.len() >= 8, "publishers: {publishers:?}");
    assert!(years.len() >= 3, "years: {years:?}");
    assert!(
        cases.iter().any(|c| c.entry.rekor.starts_with("v2")),
        "no Rekor v2 bundle"
    );
    assert!(
        cases.iter().any(|c| c.entry.time.contains("RFC 3161")),
        "no RFC 3161 bundle"
    );
    println!(
        "{} genuine bundles accepted ({} publishers, years {years:?})",
        cases.len(),
        publishers.len()
    );
}

/// The bundle JSON with `edit` applied to its parsed form.
fn edited(bundle: &[u8], edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut json: Value = serde_json::from_slice(bundle).unwrap();
    edit(&mut json);
    serde_json::to_vec(&json).unwrap()
}

/// Flip one bit of byte `at` (negative: from the end) of the base64 string at `pointer`.
fn flip_b64(json: &mut Value, pointer: &str, at: isize) {
    let field = json
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}"));
    let mut bytes = Base64::decode_vec(field.as_str().unwrap()).unwrap();
    let at = if at < 0 {
        bytes.len() - at.unsigned_abs()
    } else {
        at as usize
    };
    bytes[at] ^= 0x01;
    *field = Value::String(Base64::encode_string(&bytes));
}

fn certificate_pointer(json: &Value) -> &'static str {
    let vm = &json["verificationMaterial"];
    if vm.get("certificate").is_some() {
        "/verificationMaterial/certificate/rawBytes"
    } else {
        "/verificationMaterial/x509CertificateChain/certificates/0/rawBytes"
    }
}

/// Where the serial number's last byte sits in a certificate's DER: a change there leaves the
/// certificate well-formed (the same names, key and extensions) but breaks the CA's signature.
fn serial_last_byte(der: &[u8]) -> usize {
    // Certificate SEQUENCE, TBSCertificate SEQUENCE (both long-form lengths), [0] version (5
    // bytes), then INTEGER serial.
    let header = |at: usize| match der[at + 1] {
        l if l < 0x80 => 2,
        l => 2 + usize::from(l & 0x7f),
    };
    let tbs = header(0);
    let version = tbs + header(tbs);
    let serial = version + 5;
    assert_eq!(der[serial], 0x02, "serial INTEGER");
    serial + 2 + usize::from(der[serial + 1]) - 1
}

#[test]
fn every_negative_control_is_refused_by_its_check() {
    let cases = cases();
    let mut wrong = Vec::new();
    let mut refused = 0;
    for case in &cases {
        let json: Value = serde_json::from_slice(&case.bundle).unwrap();
        let real = real_policy(case);
        let dsse = json.get("dsseEnvelope").is_some();
        let cert_pointer = certificate_pointer(&json);
        let entry = &json["verificationMaterial"]["tlogEntries"][0];
        let has_proof_hashes = entry["inclusionProof"]["hashes"]
            .as_array()
            .is_some_and(|h| !h.is_empty());

        type Check = fn(&VerifyError) -> bool;
        let controls: Vec<(&str, Vec<u8>, Artifact, Policy, Check)> = vec![
            (
                "wrong identity",
                case.bundle.clone(),
                case.artifact.clone(),
                policy(&format!("{}x", case.entry.identity), &case.entry.issuer),
                |e| matches!(e, VerifyError::IdentityMismatch { .. }),
            ),
            (
                "wrong issuer",
                case.bundle.clone(),
                case.artifact.clone(),
                policy(&case.entry.identity, "https://accounts.example.com"),
                |e| matches!(e, VerifyError::IssuerMismatch { .. }),
            ),
            (
                "different artifact",
                case.bundle.clone(),
                case.artifact.other(),
                real.clone(),
                if dsse {
                    |e| matches!(e, VerifyError::Dsse(_))
                } else {
                    |e| matches!(e, VerifyError::MessageDigestMismatch { .. })
                },
            ),
            (
                "flipped signature byte",
                edited(&case.bundle, |j| {
                    let pointer = if dsse {
                        "/dsseEnvelope/signatures/0/sig"
                    } else {
                        "/messageSignature/signature"
                    };
                    flip_b64(j, pointer, -1);
                }),
                case.artifact.clone(),
                real.clone(),
                |e| matches!(e, VerifyError::ArtifactSignature(_)),
            ),
            (
                "flipped certificate byte",
                edited(&case.bundle, |j| {
                    let der =
                        Base64::decode_vec(j.pointer(cert_pointer).unwrap().as_str().unwrap())
                            .unwrap();
                    flip_b64(j, cert_pointer, serial_last_byte(&der) as isize);
                }),
                case.artifact.clone(),
                real.clone(),
                |e| matches!(e, VerifyError::CertificateChain(_)),
            ),
            if has_proof_hashes {
                (
                    "flipped inclusion proof byte",
                    edited(&case.bundle, |j| {
                        flip_b64(
                            j,
                            "/verificationMaterial/tlogEntries/0/inclusionProof/hashes/0",
                            0,
                        )
                    }),
                    case.artifact.clone(),
                    real.clone(),
                    |e| matches!(e, VerifyError::InclusionProof(_)),
                )
            } else {
                (
                    "flipped signed entry timestamp byte (no inclusion proof)",
                    edited(&case.bundle, |j| {
                        flip_b64(
                            j,
                            "/verificationMaterial/tlogEntries/0/inclusionPromise/signedEntryTimestamp",
                            -1,
                        )
                    }),
                    case.artifact.clone(),
                    real.clone(),
                    |e| matches!(e, VerifyError::SignedEntryTimestamp(_)),
                )
            },
        ];
        for (what, bundle, artifact, policy, intended) in controls {
            match verify(case, &bundle, &artifact, &policy) {
                Err(e) if intended(&e) => refused += 1,
                Err(e) => wrong.push(format!(
                    "{} / {what}: refused by another check: {e}",
                    case.entry.file
                )),
                Ok(()) => wrong.push(format!("{} / {what}: ACCEPTED", case.entry.file)),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "negative controls not refused as intended:\n{}",
        wrong.join("\n")
    );
    assert_eq!(refused, cases.len() * 6);
    println!("{refused} negative controls refused by their intended check");
}

/// A small deterministic generator (xorshift64*), so a failing mutation can be replayed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The JSON pointers of a bundle's signed or log-bound fields: what a signature, a log entry,
/// a SET, a checkpoint or the artifact covers. A mutation anywhere in them must be refused.
///
/// Left out, because nothing signs them and changing them may rightly still verify: the media
/// type's spelling, DSSE key ids, a key's hint, a log entry's index and integrated time when no
/// SET signs them (Rekor v2), and RFC 3161 tokens, which carry unsigned parts (embedded
/// certificates this verifier never uses); their signed content is covered by the timestamp
/// fuzz target and the conformance vectors.
fn signed_fields(json: &Value) -> Vec<String> {
    let mut fields = Vec::new();
    if json.get("dsseEnvelope").is_some() {
        for f in ["payload", "payloadType", "signatures/0/sig"] {
            fields.push(format!("/dsseEnvelope/{f}"));
        }
    } else {
        fields.push("/messageSignature/signature".into());
        if json.pointer("/messageSignature/messageDigest").is_some() {
            fields.push("/messageSignature/messageDigest/digest".into());
        }
    }
    fields.push(certificate_pointer(json).into());
    let entries = json["verificationMaterial"]["tlogEntries"]
        .as_array()
        .unwrap();
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("/verificationMaterial/tlogEntries/{i}");
        for f in [
            "canonicalizedBody",
            "logId/keyId",
            "kindVersion/kind",
            "kindVersion/version",
        ] {
            fields.push(format!("{at}/{f}"));
        }
        if entry.get("inclusionPromise").is_some() {
            for f in [
                "inclusionPromise/signedEntryTimestamp",
                "logIndex",
                "integratedTime",
            ] {
                fields.push(format!("{at}/{f}"));
            }
        }
        if let Some(proof) = entry.get("inclusionProof") {
            for f in ["logIndex", "rootHash", "treeSize", "checkpoint/envelope"] {
                fields.push(format!("{at}/inclusionProof/{f}"));
            }
            for j in 0..proof["hashes"].as_array().map_or(0, Vec::len) {
                fields.push(format!("{at}/inclusionProof/hashes/{j}"));
            }
        }
    }
    fields.retain(|f| json.pointer(f).is_some_and(Value::is_string));
    fields
}

/// Whether two values of one field mean the same (base64 that decodes to the same bytes).
fn same_meaning(a: &str, b: &str) -> bool {
    a == b || matches!((Base64::decode_vec(a), Base64::decode_vec(b)), (Ok(x), Ok(y)) if x == y)
}

#[test]
fn a_thousand_single_byte_mutations_of_signed_content_are_refused() {
    const MUTATIONS: usize = 1_000;
    let cases = cases();
    let mut rng = XorShift(0x005c_13c9_2026);
    let mut accepted = Vec::new();
    let mut no_ops = 0;
    for n in 0..MUTATIONS {
        let case = &cases[n % cases.len()];
        let mut json: Value = serde_json::from_slice(&case.bundle).unwrap();
        let fields = signed_fields(&json);
        let pointer = &fields[rng.below(fields.len())];
        let field = json.pointer_mut(pointer).unwrap();
        let original = field.as_str().unwrap().to_owned();
        // One byte of the field's JSON text: an ASCII character (not an escape such as the
        // checkpoint's newlines) replaced by another printable one that needs no escaping, so
        // the serialized bundle differs in exactly that byte.
        let positions: Vec<usize> = original
            .char_indices()
            .filter(|(_, c)| c.is_ascii_graphic() || *c == ' ')
            .map(|(i, _)| i)
            .collect();
        let at = positions[rng.below(positions.len())];
        let replacement = loop {
            let b = b' ' + rng.below(95) as u8;
            if b != original.as_bytes()[at] && b != b'"' && b != b'\\' {
                break b;
            }
        };
        let mut mutated = original.clone().into_bytes();
        mutated[at] = replacement;
        let mutated = String::from_utf8(mutated).unwrap();
        *field = Value::String(mutated.clone());
        let bundle = serde_json::to_vec(&json).unwrap();

        let outcome = std::panic::catch_unwind(|| {
            verify(case, &bundle, &case.artifact, &real_policy(case)).is_ok()
        });
        match outcome {
            Err(_) => panic!(
                "mutation {n} ({} {pointer} byte {at}) panicked",
                case.entry.file
            ),
            Ok(false) => {}
            Ok(true) if same_meaning(&original, &mutated) => no_ops += 1,
            Ok(true) => accepted.push(format!(
                "mutation {n}: {} {pointer} byte {at} -> {:?}",
                case.entry.file, replacement as char
            )),
        }
    }
    assert!(
        accepted.is_empty(),
        "mutated bundles accepted:\n{}",
        accepted.join("\n")
    );
    println!(
        "{MUTATIONS} single-byte mutations of signed content: none accepted, none panicked \
         ({no_ops} left the bundle's meaning unchanged)"
    );
}
