//! The sigstore-conformance bundle-verification vectors (`tests/data/conformance/`, copied
//! from sigstore/sigstore-conformance `test/assets/bundle-verify/`): every case through the
//! library, a few through the binary's `verify-bundle` command.
//!
//! Layout (the vectors' README): a case ending in `_fail` must be refused; the default
//! artifact is `a.txt` beside the cases; optional `artifact`, `identity`, `issuer`, `key.pub`
//! and `trusted_root.json` override the defaults.

use std::path::{Path, PathBuf};
use std::process::Command;

use scimcp_release::verify::{
    ArtifactInput, Policy, TrustedKey, TrustedRoot, VerifyError, verify_bundle,
};

const DEFAULT_IDENTITY: &str = "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const DEFAULT_ISSUER: &str = "https://token.actions.githubusercontent.com";

/// Cases this verifier still gets wrong, with the reason. The test fails if one of them
/// starts passing, so the list stays honest.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance")
}

fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = fs_err::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    cases
}

fn read_trimmed(path: &Path) -> Option<String> {
    fs_err::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
}

fn artifact_path(case: &Path) -> PathBuf {
    let own = case.join("artifact");
    if own.exists() {
        own
    } else {
        data_dir().join("a.txt")
    }
}

/// Run one case through the library; `Err` carries the refusal.
fn run_case(case: &Path) -> Result<(), String> {
    let policy = match read_trimmed(&case.join("key.pub")) {
        Some(pem) => Policy::Key(TrustedKey::from_pem(&pem).map_err(|e| format!("key: {e}"))?),
        None => Policy::Identity {
            identity: read_trimmed(&case.join("identity"))
                .unwrap_or_else(|| DEFAULT_IDENTITY.into()),
            issuer: read_trimmed(&case.join("issuer")).unwrap_or_else(|| DEFAULT_ISSUER.into()),
        },
    };
    let root_path = case.join("trusted_root.json");
    let root = if root_path.exists() {
        TrustedRoot::from_json(&fs_err::read(&root_path).unwrap())
            .map_err(|e| VerifyError::from(e).to_string())?
    } else {
        TrustedRoot::production().unwrap()
    };
    let artifact = fs_err::read(artifact_path(case)).unwrap();
    let bundle = fs_err::read(case.join("bundle.sigstore.json")).unwrap();
    verify_bundle(ArtifactInput::Bytes(&artifact), &bundle, &policy, &root)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn every_conformance_vector() {
    let cases = cases();
    assert!(
        cases.len() >= 70,
        "expected the full vector set, found {}",
        cases.len()
    );
    let mut wrong = Vec::new();
    let mut known_still_wrong = 0;
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let should_pass = !name.ends_with("_fail");
        let outcome = run_case(case);
        let right = outcome.is_ok() == should_pass;
        match (KNOWN_FAILURES.iter().find(|(n, _)| *n == name), right) {
            (None, true) => {}
            (None, false) => wrong.push(format!("{name}: expected {}, got {outcome:?}", if should_pass { "ok" } else { "refusal" })),
            (Some(_), false) => known_still_wrong += 1,
            (Some((_, why)), true) => wrong.push(format!(
                "{name} is listed as a known failure ({why}) but is now right: remove it from KNOWN_FAILURES"
            )),
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} vectors wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    assert_eq!(known_still_wrong, KNOWN_FAILURES.len());
}

/// Each `_fail` vector must be refused for its own reason, not by accident.
#[test]
fn failing_vectors_are_refused_by_the_right_check() {
    let expect: &[(&str, &str)] = &[
        (
            "bundle-empty-certificate-chain_fail",
            "bundle format: the certificate chain is empty",
        ),
        ("bundle-from-wrong-instance_fail", "certificate chain:"),
        (
            "bundle-invalid-base64-signature_fail",
            "bundle format: message signature",
        ),
        (
            "bundle-malformed-json_fail",
            "bundle format: not a Sigstore bundle",
        ),
        (
            "bundle-negative-log-index_fail",
            "log entry index is negative",
        ),
        ("bundle-unknown-version_fail", "bundle media type:"),
        ("bundle-with-root-cert_fail", "carries a root certificate"),
        (
            "checkpoint-bad-keyhint_fail",
            "checkpoint: no signature line",
        ),
        (
            "checkpoint-wrong-roothash_fail",
            "checkpoint: the signed checkpoint is for tree size",
        ),
        (
            "dsse-invalid-sig_fail",
            "artifact signature: the DSSE envelope signature",
        ),
        (
            "dsse-mismatch-envelope_fail",
            "transparency log entry: the entry records payload",
        ),
        (
            "dsse-mismatch-sig_fail",
            "transparency log entry: the entry records another signature",
        ),
        (
            "inclusion-proof-corrupted-hash_fail",
            "inclusion proof: the proof leads to root",
        ),
        (
            "incorrect-public-key_fail",
            "transparency log entry: the entry records another certificate",
        ),
        ("integrated-time-in-future_fail", "certificate validity:"),
        ("intoto-expired-certificate_fail", "certificate chain:"),
        ("intoto-log-entry-mismatch_fail", "transparency log entry:"),
        (
            "intoto-missing-inclusion-proof_fail",
            "inclusion proof: the log entry has no inclusion proof",
        ),
        (
            "intoto-set-outside-signing-cert-validity_fail",
            "signed entry timestamp says",
        ),
        (
            "intoto-tsa-timestamp-outside-cert-validity_fail",
            "RFC 3161 timestamp says",
        ),
        (
            "invalid-checkpoint-signature_fail",
            "checkpoint: the signature from rekor.sigstore.dev does not verify",
        ),
        ("invalid-ct-key_fail", "certificate transparency (SCT):"),
        (
            "invalid-inclusion-proof_fail",
            "inclusion proof: the proof leads to root",
        ),
        ("managed-key-no-key_fail", "verification material:"),
        ("managed-key-wrong-key_fail", "key: not a PEM public key"),
        ("message-digest-mismatch_fail", "message digest:"),
        (
            "rekor2-checkpoint-missing-log-signature_fail",
            "checkpoint:",
        ),
        ("rekor2-checkpoint-missing-origin_fail", "checkpoint:"),
        (
            "rekor2-checkpoint-missing-root-hash_fail",
            "checkpoint: no root hash line",
        ),
        (
            "rekor2-checkpoint-missing-size_fail",
            "checkpoint: the tree size line",
        ),
        (
            "rekor2-checkpoint-no-matching-signature_fail",
            "checkpoint: origin",
        ),
        (
            "rekor2-dsse-invalid-sig_fail",
            "artifact signature: the DSSE envelope signature",
        ),
        (
            "rekor2-dsse-mismatch-envelope_fail",
            "transparency log entry: the entry records another digest",
        ),
        (
            "rekor2-dsse-mismatch-sig_fail",
            "transparency log entry: the entry records another signature",
        ),
        (
            "rekor2-no-inclusion-proof_fail",
            "inclusion proof: the log entry has no inclusion proof",
        ),
        (
            "rekor2-no-timestamp_fail",
            "signing time: the bundle has no verified signing time",
        ),
        (
            "rekor2-timestamp-outside-trust-root-tsa-validity_fail",
            "RFC 3161 timestamp: https://timestamp.sigstage.dev/api/v1/timestamp: the trusted root trusts",
        ),
        (
            "rekor2-timestamp-outside-tsa-cert-validity_fail",
            "RFC 3161 timestamp: https://localhost:3000/api/v1/timestamp: the TSA certificate is valid",
        ),
        (
            "rekor2-timestamp-payload-mismatch_fail",
            "RFC 3161 timestamp: the message imprint",
        ),
        (
            "rekor2-timestamp-untrusted-tsa-with-embedded-cert_fail",
            "not in the trusted root",
        ),
        (
            "rekor2-timestamp-untrusted-tsa-without-embedded-cert_fail",
            "not in the trusted root",
        ),
        (
            "rekor2-timestamp-with-incorrect-time_fail",
            "RFC 3161 timestamp says",
        ),
        (
            "set-invalid-signature_fail",
            "signed entry timestamp (SET):",
        ),
        (
            "signature-mismatch_fail",
            "artifact signature: the signature does not verify",
        ),
        (
            "trust-root-tlog-missing-validity-start_fail",
            "validity window has no start",
        ),
        (
            "wrong-hashedrekord-artifact_fail",
            "transparency log entry: the entry records artifact sha256",
        ),
        (
            "wrong-hashedrekord-cert-and-sig_fail",
            "transparency log entry: the entry records another signature",
        ),
        (
            "wrong-hashedrekord-entry_fail",
            "transparency log entry: the entry records artifact sha256",
        ),
        ("wrong-material_fail", "message digest:"),
    ];
    let failing = cases()
        .iter()
        .filter(|c| c.file_name().unwrap().to_string_lossy().ends_with("_fail"))
        .count();
    assert_eq!(
        expect.len(),
        failing,
        "every _fail vector needs an expected reason here"
    );
    let mut wrong = Vec::new();
    for (name, needle) in expect {
        match run_case(&data_dir().join(name)) {
            Ok(()) => wrong.push(format!("{name}: accepted")),
            Err(e) if e.contains(needle) => {}
            Err(e) => wrong.push(format!("{name}: refused without {needle:?}: {e}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scimcp-release"))
}

fn conformance_cli(case: &str, artifact: &str) -> std::process::Output {
    let dir = data_dir().join(case);
    let mut cmd = binary();
    cmd.arg("verify-bundle")
        .arg("--bundle")
        .arg(dir.join("bundle.sigstore.json"));
    if dir.join("key.pub").exists() {
        cmd.arg("--key").arg(dir.join("key.pub"));
    } else {
        cmd.args(["--certificate-identity", DEFAULT_IDENTITY])
            .args(["--certificate-oidc-issuer", DEFAULT_ISSUER]);
    }
    if dir.join("trusted_root.json").exists() {
        cmd.arg("--trusted-root").arg(dir.join("trusted_root.json"));
    }
    cmd.arg(artifact).output().unwrap()
}

#[test]
fn binary_follows_the_conformance_protocol() {
    let a_txt = data_dir().join("a.txt");
    let a_txt = a_txt.to_str().unwrap();
    for case in [
        "happy-path-v0.3",
        "rekor2-happy-path",
        "managed-key-happy-path",
    ] {
        let out = conformance_cli(case, a_txt);
        assert!(
            out.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The digest form of FILE_OR_DIGEST.
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        fs_err::read(a_txt).unwrap(),
    ));
    let out = conformance_cli("happy-path-v0.2", &format!("sha256:{digest}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    for case in ["set-invalid-signature_fail", "rekor2-no-timestamp_fail"] {
        let out = conformance_cli(case, a_txt);
        assert_eq!(out.status.code(), Some(1), "{case} must be refused");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("error: "), "{case}: {stderr}");
    }
}
