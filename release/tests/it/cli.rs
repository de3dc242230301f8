//! The `scimcp-release` binary: key-pair round trip (keygen → sign → verify), keyless verify
//! against the embedded root, and the subcommands that still say "not implemented yet".

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const IDENTITY: &str = "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const ISSUER: &str = "https://token.actions.githubusercontent.com";

fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scimcp-release"))
        .args(args)
        .output()
        .unwrap()
}

macro_rules! args {
    ($($a:expr),* $(,)?) => { &[$(std::ffi::OsStr::new(&$a)),*] };
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance")
}

#[test]
fn key_pair_round_trip() {
    // A path with spaces and non-ASCII letters, as every path may have.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("clés de publication");
    let keys = dir.join("keys");
    let out = run(args!["keygen", "--out", keys]);
    assert!(out.status.success(), "{}", stderr(&out));
    let private = keys.join("scimcp-release.key");
    let public = keys.join("scimcp-release.pub");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs_err::metadata(&private).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the private key must be owner-only");
    }

    // keygen never replaces a key.
    let again = run(args!["keygen", "--out", keys]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("already exists"),
        "{}",
        stderr(&again)
    );

    let a = dir.join("release 1.zip");
    let b = dir.join("notes.txt");
    fs_err::write(&a, b"zip bytes").unwrap();
    fs_err::write(&b, b"release notes").unwrap();
    let out = run(args!["sign", "--key", private, a, b]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bundle_a = dir.join("release 1.zip.sigstore.json");
    let json: serde_json::Value =
        serde_json::from_slice(&fs_err::read(&bundle_a).unwrap()).unwrap();
    assert_eq!(
        json["mediaType"],
        "application/vnd.dev.sigstore.bundle.v0.3+json"
    );
    assert!(json["verificationMaterial"]["publicKey"]["hint"].is_string());
    assert_eq!(
        json["verificationMaterial"]["tlogEntries"],
        serde_json::json!([])
    );

    let out = run(args!["verify", "--key", public, a, b]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("verified:"), "{stdout}");

    // One flipped byte in the artifact: refused, and the reason names the check.
    let mut bytes = fs_err::read(&a).unwrap();
    bytes[3] ^= 0x20;
    fs_err::write(&a, &bytes).unwrap();
    let out = run(args!["verify", "--key", public, a]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("message digest"), "{}", stderr(&out));

    // Another key does not verify the untouched file.
    let other = dir.join("other");
    assert!(run(args!["keygen", "--out", other]).status.success());
    let out = run(args![
        "verify",
        "--key",
        other.join("scimcp-release.pub"),
        b
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("artifact signature"),
        "{}",
        stderr(&out)
    );

    // A key-pair bundle is not a keyless one.
    let out = run(args![
        "verify",
        "--certificate-identity",
        IDENTITY,
        "--certificate-oidc-issuer",
        ISSUER,
        b
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("verification material"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn keyless_verify_reads_the_bundle_beside_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a.txt");
    fs_err::copy(conformance().join("a.txt"), &file).unwrap();
    fs_err::copy(
        conformance().join("happy-path-v0.3/bundle.sigstore.json"),
        tmp.path().join("a.txt.sigstore.json"),
    )
    .unwrap();
    let out = run(args![
        "verify",
        "--certificate-identity",
        IDENTITY,
        "--certificate-oidc-issuer",
        ISSUER,
        file
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(IDENTITY));

    let out = run(args![
        "verify",
        "--certificate-identity",
        "https://github.com/someone/else/.github/workflows/release.yml@refs/heads/main",
        "--certificate-oidc-issuer",
        ISSUER,
        file
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("identity:"), "{}", stderr(&out));
}

#[test]
fn an_unknown_preflight_step_is_refused_with_the_list() {
    let out = run(args!["preflight", "--only", "nonsense"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown preflight step 'nonsense'")
            && stderr(&out).contains("checkout, tag"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn sign_needs_a_mode() {
    let out = run(args!["sign", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--keyless"), "{}", stderr(&out));
}

/// A file that is not there cannot be verified: exit 1 (a failure its user can act on, like
/// a refused signature; STYLE.md), with `error:` naming the file and a `hint:`.
#[test]
fn verifying_a_missing_file_exits_1_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("scimcp-0.1.0-x86_64-unknown-linux-gnu.zip");
    for out in [
        run(args!["verify", "--tag", "v0.1.0", missing]),
        run(args!["verify", "--key", dir.path().join("k.pem"), missing]),
    ] {
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("error: there is no file {}\n", missing.display())),
            "{err}"
        );
        assert!(
            err.contains("\n  hint: give the path of a release file"),
            "{err}"
        );
    }
    // A step the preflight does not know is an argument error (2, as clap's own): its hint
    // lists the steps.
    let out = run(args!["preflight", "--only", "nonsense"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("  hint: --only and --skip take these steps: checkout, tag"),
        "{}",
        stderr(&out)
    );
}
