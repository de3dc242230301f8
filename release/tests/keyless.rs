//! Keyless signing end to end against a fake Fulcio, Rekor and GitHub Actions token service
//! on 127.0.0.1 (`support/fake_sigstore.rs`), verified with the offline verifier and a trusted
//! root naming the fake's keys; and release verification against the release policy.

mod support;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use jiff::Timestamp;
use scimcp_release::ReleasePolicy;
use scimcp_release::keyless::{IdentityToken, KeylessSigner, Services, UreqTransport};
use scimcp_release::verify::{
    ArtifactInput, Policy, ReleaseVerifyError, TimeSource, TrustedRoot, VerifyError, bundle_path,
    verify_bundle, verify_release_files,
};
use serde_json::Value;
use support::fake_sigstore::{FakeSigstore, GITHUB_ISSUER, RUNTIME_BEARER, github_claims, jwt};

const REPOSITORY: &str = "scimcp/scimcp";
const RELEASE_WORKFLOW: &str = ".github/workflows/release.yml";
const SIGNING_WORKFLOW: &str = ".github/workflows/bundle-sign.yml";
const TAG: &str = "v1.2.3";

/// The claims of the release job: bundle-sign.yml called by release.yml at the tag.
fn release_claims() -> Value {
    github_claims(REPOSITORY, RELEASE_WORKFLOW, SIGNING_WORKFLOW, TAG)
}

fn release_identity() -> String {
    format!("https://github.com/{REPOSITORY}/{SIGNING_WORKFLOW}@refs/tags/{TAG}")
}

/// A fake Sigstore, and a directory (with spaces and non-ASCII letters in its path) holding
/// its trusted root and signing config.
struct Setup {
    fake: FakeSigstore,
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    root: PathBuf,
    config: PathBuf,
}

impl Setup {
    fn new(ambient_claims: Value) -> Self {
        let fake = FakeSigstore::start(ambient_claims);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("clés de publication");
        fs_err::create_dir_all(&dir).unwrap();
        let root = dir.join("trusted root.json");
        let config = dir.join("signing config.json");
        fs_err::write(&root, fake.trusted_root_json()).unwrap();
        fs_err::write(&config, fake.signing_config_json()).unwrap();
        Setup {
            fake,
            _tmp: tmp,
            dir,
            root,
            config,
        }
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.join(name);
        fs_err::write(&path, bytes).unwrap();
        path
    }

    /// `scimcp-release sign --keyless` against the fake, with `token` (or the ambient one).
    fn sign(&self, token: Option<&str>, ambient: bool, files: &[&Path]) -> Output {
        let mut args: Vec<&OsStr> = vec![
            "sign".as_ref(),
            "--keyless".as_ref(),
            "--signing-config".as_ref(),
            self.config.as_os_str(),
            "--trusted-root".as_ref(),
            self.root.as_os_str(),
        ];
        if let Some(token) = token {
            args.extend([OsStr::new("--identity-token"), OsStr::new(token)]);
        }
        args.extend(files.iter().map(|f| f.as_os_str()));
        let mut command = command(&args);
        if ambient {
            command
                .env(
                    "ACTIONS_ID_TOKEN_REQUEST_URL",
                    self.fake.actions_token_url(),
                )
                .env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", RUNTIME_BEARER);
        }
        command.output().unwrap()
    }

    /// `scimcp-release verify --tag TAG` with the fake's trusted root and `extra` arguments.
    fn verify_tag(&self, tag: &str, extra: &[&OsStr], files: &[&Path]) -> Output {
        let mut args: Vec<&OsStr> = vec![
            "verify".as_ref(),
            "--tag".as_ref(),
            tag.as_ref(),
            "--trusted-root".as_ref(),
            self.root.as_os_str(),
        ];
        args.extend_from_slice(extra);
        args.extend(files.iter().map(|f| f.as_os_str()));
        command(&args).output().unwrap()
    }
}

/// The binary with no ambient token, no proxy and no token variable from the caller.
fn command(args: &[&OsStr]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_scimcp-release"));
    command.args(args);
    for var in [
        "SIGSTORE_ID_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        command.env_remove(var);
    }
    command
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn keyless_bundles_verify_and_a_tampered_artifact_is_refused() {
    let setup = Setup::new(release_claims());
    let services = Services::from_signing_config(
        setup.fake.signing_config_json().as_bytes(),
        Timestamp::now(),
    )
    .unwrap();
    assert_eq!(services.fulcio, setup.fake.base_url());
    let root = TrustedRoot::from_json(setup.fake.trusted_root_json().as_bytes()).unwrap();
    let transport = UreqTransport::new();
    let token = IdentityToken::parse(&jwt(&release_claims())).unwrap();
    let mut signer = KeylessSigner::new(&transport, services, token, root.clone());

    let zip = b"bundle zip bytes".as_slice();
    let manifest = b"{\"files\": []}\n".as_slice();
    let signed_zip = signer.sign(zip).unwrap();
    let signed_manifest = signer.sign(manifest).unwrap();
    // One certificate for the run, one log entry per file.
    let calls = setup.fake.calls();
    assert_eq!((calls.fulcio, calls.rekor), (1, 2));
    assert_eq!(signed_zip.identity, release_identity());
    assert_eq!(signed_zip.issuer, GITHUB_ISSUER);

    // The v0.3 shape: a leaf certificate (not a chain) and a complete log entry.
    let bundle: Value = serde_json::from_str(&signed_zip.json).unwrap();
    assert_eq!(
        bundle["mediaType"],
        "application/vnd.dev.sigstore.bundle.v0.3+json"
    );
    let material = &bundle["verificationMaterial"];
    assert!(material["certificate"]["rawBytes"].is_string());
    assert!(material.get("x509CertificateChain").is_none());
    let entry = &material["tlogEntries"][0];
    for pointer in [
        "/logIndex",
        "/logId/keyId",
        "/integratedTime",
        "/inclusionPromise/signedEntryTimestamp",
        "/inclusionProof/logIndex",
        "/inclusionProof/rootHash",
        "/inclusionProof/treeSize",
        "/inclusionProof/checkpoint/envelope",
        "/canonicalizedBody",
    ] {
        assert!(
            entry.pointer(pointer).is_some_and(Value::is_string),
            "{pointer}"
        );
    }
    assert_eq!(entry["kindVersion"]["kind"], "hashedrekord");
    assert_eq!(entry["kindVersion"]["version"], "0.0.1");
    assert!(
        !entry["inclusionProof"]["hashes"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // The global index (SET) and the shard's index (Merkle proof) are carried separately.
    assert_ne!(entry["logIndex"], entry["inclusionProof"]["logIndex"]);
    assert_eq!(
        bundle["messageSignature"]["messageDigest"]["algorithm"],
        "SHA2_256"
    );

    let policy = Policy::Identity {
        identity: release_identity(),
        issuer: GITHUB_ISSUER.into(),
    };
    let verified = verify_bundle(
        ArtifactInput::Bytes(zip),
        signed_zip.json.as_bytes(),
        &policy,
        &root,
    )
    .unwrap();
    assert_eq!(verified.tlog_entries, 1);
    assert!(
        verified
            .signing_times
            .iter()
            .any(|(source, _)| *source == TimeSource::SignedEntryTimestamp)
    );
    verify_bundle(
        ArtifactInput::Bytes(manifest),
        signed_manifest.json.as_bytes(),
        &policy,
        &root,
    )
    .unwrap();

    // One flipped byte in the artifact is refused.
    let mut tampered = zip.to_vec();
    tampered[0] ^= 1;
    let err = verify_bundle(
        ArtifactInput::Bytes(&tampered),
        signed_zip.json.as_bytes(),
        &policy,
        &root,
    )
    .unwrap_err();
    assert!(
        matches!(err, VerifyError::MessageDigestMismatch { .. }),
        "{err}"
    );
    // And one file's bundle is not another's.
    let err = verify_bundle(
        ArtifactInput::Bytes(zip),
        signed_manifest.json.as_bytes(),
        &policy,
        &root,
    )
    .unwrap_err();
    assert!(
        matches!(err, VerifyError::MessageDigestMismatch { .. }),
        "{err}"
    );
}

#[test]
fn sign_keyless_then_verify_against_the_embedded_release_policy() {
    let setup = Setup::new(release_claims());
    let zip = setup.file("scimcp 1.2.3 x86_64-unknown-linux-gnu.zip", b"zip bytes");
    let manifest = setup.file("RELEASE.json", b"{\"version\": \"1.2.3\"}\n");
    let token = jwt(&release_claims());

    let out = setup.sign(Some(&token), false, &[&zip, &manifest]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&bundle_path(&zip).display().to_string()),
        "{stdout}"
    );
    assert!(
        stderr(&out).contains(&release_identity()),
        "{}",
        stderr(&out)
    );
    assert!(bundle_path(&manifest).is_file());

    // No identity flags: the embedded release.toml pins the signer for the tag.
    let out = setup.verify_tag(TAG, &[], &[&zip, &manifest]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&release_identity()), "{stdout}");
    assert!(stdout.contains("release.toml (embedded)"), "{stdout}");

    // Another release's tag names another identity.
    let out = setup.verify_tag("v1.2.4", &[], &[&zip]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("identity:"), "{}", stderr(&out));

    // A tag outside the scheme is refused before anything is read.
    let out = setup.verify_tag("1.2.3", &[], &[&zip]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("tag scheme"), "{}", stderr(&out));

    // One flipped byte in a release file.
    let mut bytes = fs_err::read(&zip).unwrap();
    bytes[0] ^= 0x20;
    fs_err::write(&zip, &bytes).unwrap();
    let out = setup.verify_tag(TAG, &[], &[&zip, &manifest]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("message digest"), "{}", stderr(&out));

    // A release file without its bundle.
    fs_err::remove_file(bundle_path(&manifest)).unwrap();
    let out = setup.verify_tag(TAG, &[], &[&manifest]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("has no Sigstore bundle beside it"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_ambient_github_actions_token_is_used_and_its_absence_explained() {
    let setup = Setup::new(release_claims());
    let file = setup.file("RELEASE.json", b"{}\n");

    let out = setup.sign(None, true, &[&file]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(setup.fake.calls().github, 1);
    let out = setup.verify_tag(TAG, &[], &[&file]);
    assert!(out.status.success(), "{}", stderr(&out));

    fs_err::remove_file(bundle_path(&file)).unwrap();
    let out = setup.sign(None, false, &[&file]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("no OIDC identity token"), "{err}");
    assert!(err.contains("id-token: write"), "{err}");
    assert!(!bundle_path(&file).exists());
}

#[test]
fn verify_tag_refuses_a_bundle_signed_for_another_identity() {
    let setup = Setup::new(release_claims());
    let fork = setup.file("fork.zip", b"look-alike release");
    let claims = github_claims("someone/fork", RELEASE_WORKFLOW, SIGNING_WORKFLOW, TAG);
    let out = setup.sign(Some(&jwt(&claims)), false, &[&fork]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = setup.verify_tag(TAG, &[], &[&fork]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("identity:"), "{err}");
    assert!(err.contains("someone/fork"), "{err}");

    // The release's signing workflow, but called from somebody else's workflow: the SAN
    // matches, the Build Config URI does not.
    let borrowed = setup.file("borrowed.zip", b"signed by a borrowed workflow");
    let mut claims = release_claims();
    claims["workflow_ref"] = "someone/fork/.github/workflows/evil.yml@refs/heads/main".into();
    let out = setup.sign(Some(&jwt(&claims)), false, &[&borrowed]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = setup.verify_tag(TAG, &[], &[&borrowed]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("build config"), "{}", stderr(&out));

    // Explicit identity flags still work (and are exact).
    let out = command(&[
        "verify".as_ref(),
        "--certificate-identity".as_ref(),
        release_identity().as_ref(),
        "--certificate-oidc-issuer".as_ref(),
        GITHUB_ISSUER.as_ref(),
        "--trusted-root".as_ref(),
        setup.root.as_os_str(),
        borrowed.as_os_str(),
    ])
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn an_unverifiable_bundle_is_never_written() {
    let setup = Setup::new(release_claims());
    let file = setup.file("a.zip", b"artifact");
    // The fake's services, but the public-good trusted root: the new bundle cannot verify.
    let out = command(&[
        "sign".as_ref(),
        "--keyless".as_ref(),
        "--identity-token".as_ref(),
        jwt(&release_claims()).as_ref(),
        "--signing-config".as_ref(),
        setup.config.as_os_str(),
        file.as_os_str(),
    ])
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("was not written"), "{}", stderr(&out));
    assert!(!bundle_path(&file).exists());
}

#[test]
fn release_policy_errors_name_the_file_and_the_field() {
    let setup = Setup::new(release_claims());
    let file = setup.file("a.zip", b"artifact");
    let good = include_str!("../../release.toml");
    for (name, text, field) in [
        (
            "no issuer.toml",
            good.replace(
                "issuer = \"https://token.actions.githubusercontent.com\"\n",
                "",
            ),
            "field `signer.issuer` is missing",
        ),
        (
            "bad tag.toml",
            good.replace("tag = \"v{version}\"", "tag = \"v{major}.{minor}\""),
            "field `tag`",
        ),
        (
            "bad target.toml",
            good.replace("\"x86_64-apple-darwin\"", "\"macos\""),
            "field `targets`",
        ),
    ] {
        let policy = setup.file(name, text.as_bytes());
        let out = setup.verify_tag(
            TAG,
            &["--release-policy".as_ref(), policy.as_os_str()],
            &[&file],
        );
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = stderr(&out);
        assert!(err.contains(&policy.display().to_string()), "{err}");
        assert!(err.contains(field), "{err}");
    }
}

#[test]
fn verify_release_files_with_a_key_pair_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("air gapped ñ");
    fs_err::create_dir_all(&dir).unwrap();
    let key = scimcp_release::sign::generate_key();
    fs_err::write(
        dir.join("release.pub"),
        scimcp_release::sign::public_key_pem(&key).unwrap(),
    )
    .unwrap();
    let policy_path = dir.join("release.toml");
    fs_err::write(
        &policy_path,
        "tag = \"v{version}\"\ntargets = [\"x86_64-unknown-linux-gnu\"]\n\n[signer]\npublic_key = \"release.pub\"\n",
    )
    .unwrap();
    let policy = ReleasePolicy::load(&policy_path).unwrap();
    let files: Vec<PathBuf> = ["a.zip", "RELEASE.json"]
        .iter()
        .map(|name| {
            let path = dir.join(name);
            fs_err::write(&path, name.as_bytes()).unwrap();
            let bundle = scimcp_release::sign::sign_bundle(&key, name.as_bytes()).unwrap();
            fs_err::write(bundle_path(&path), bundle).unwrap();
            path
        })
        .collect();

    let verified = verify_release_files(&files, &policy, TAG, None).unwrap();
    assert_eq!(verified.len(), 2);
    assert!(verified.iter().all(|v| v.verified.identity.is_none()));

    let err = verify_release_files(&files, &policy, "1.2.3", None).unwrap_err();
    assert!(matches!(err, ReleaseVerifyError::Policy(_)), "{err}");
    let err = verify_release_files(&[], &policy, TAG, None).unwrap_err();
    assert!(matches!(err, ReleaseVerifyError::NoFiles), "{err}");

    // The embedded (keyless) policy refuses a key-pair release.
    let err =
        verify_release_files(&files, &ReleasePolicy::embedded().unwrap(), TAG, None).unwrap_err();
    assert!(
        matches!(
            err,
            ReleaseVerifyError::Refused {
                source: VerifyError::Material(_),
                ..
            }
        ),
        "{err}"
    );

    // Every file needs its bundle, even when the others verify.
    fs_err::remove_file(bundle_path(&files[1])).unwrap();
    let err = verify_release_files(&files, &policy, TAG, None).unwrap_err();
    assert!(
        matches!(err, ReleaseVerifyError::MissingBundle { .. }),
        "{err}"
    );
}
