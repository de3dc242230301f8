//! Signature verification before unpacking: signed zips (a key-pair release policy, signed
//! the way `scimcp-release sign --key` does) install and are recorded as verified; unsigned
//! material needs `--allow-unsigned` and is recorded as a development override; a tampered
//! zip is refused, override or not, with nothing changed.

use crate::common;

use common::signed::env;
use common::{fake_bundle, ok, refused};

fn install<'a>(from: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["install", "--skip-runtime", "--client", "generic"];
    args.extend_from_slice(extra);
    args.extend(["--from", from]);
    args
}

#[test]
fn signed_zip_installs_and_is_recorded_as_verified() {
    let e = env();
    let zip = e.zip(&e.root.join("downloads"), "1.4.0", true);
    let zip_arg = zip.display().to_string();
    let policy = e.policy.display().to_string();

    // Against the built-in (keyless) policy a key-pair signature is not the release signer.
    let out = e.run(&install(&zip_arg, &[]));
    refused(
        &out,
        &[
            "failed signature verification for tag v1.4.0",
            "signed with a key pair",
            "--release-policy FILE",
        ],
    );
    // Refused before the setup lock is taken: not even the data folder or the lock file.
    assert!(
        !e.data.exists(),
        "{:?}",
        fs_err::read_dir(&e.data).map(|d| d.count())
    );

    ok(e.run(&install(&zip_arg, &["--release-policy", &policy])));
    let state = e.state();
    let signature = &state["versions"]["1.4.0"]["signature"];
    assert_eq!(signature["status"], "verified", "{state:#}");
    let detail = signature["detail"].as_str().unwrap();
    assert!(
        detail.contains("tag v1.4.0") && detail.contains("scimcp-release.pub"),
        "{detail}"
    );
    assert_eq!(state["active"], "1.4.0");
    // `status` reports it, for people and for scripts.
    let out = ok(e.run(&["status"]));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("signature       verified: "),
        "{out:?}"
    );
    let out = ok(e.run(&["status", "--json"]));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["active_signature"]["status"], "verified");
}

#[test]
fn unsigned_material_needs_the_override_and_the_override_is_recorded() {
    let e = env();
    let zip = e.zip(&e.root.join("downloads"), "1.4.0", false);
    let zip_arg = zip.display().to_string();
    let policy = e.policy.display().to_string();

    let out = e.run(&install(&zip_arg, &["--release-policy", &policy]));
    refused(
        &out,
        &[
            "is not signed",
            ".sigstore.json beside it",
            "--allow-unsigned",
        ],
    );
    assert!(!e.data.join("state.json").exists());
    assert!(!e.data.join("versions").exists());

    // A bundle directory is unsigned material too.
    let dir = fake_bundle(&e.root.join("dirs"), "scimcp-1.3.0", Some("1.3.0"));
    let dir_arg = dir.display().to_string();
    let out = e.run(&install(&dir_arg, &[]));
    refused(&out, &["the bundle directory"]);

    ok(e.run(&install(&zip_arg, &["--allow-unsigned"])));
    let state = e.state();
    let signature = &state["versions"]["1.4.0"]["signature"];
    assert_eq!(signature["status"], "development-override", "{state:#}");
    assert!(
        signature["detail"]
            .as_str()
            .unwrap()
            .contains("--allow-unsigned"),
        "{state:#}"
    );
}

#[test]
fn a_tampered_zip_is_refused_and_nothing_changes() {
    let e = env();
    let policy = e.policy.display().to_string();
    let good = e.zip(&e.root.join("downloads"), "1.3.0", true);
    ok(e.run(&install(
        &good.display().to_string(),
        &["--release-policy", &policy],
    )));
    let before = e.tree();
    assert!(before.iter().any(|(p, _)| p.ends_with("state.json")));

    let bad = e.zip(&e.root.join("downloads"), "1.4.0", true);
    let genuine = fs_err::read(&bad).unwrap();
    let bad_arg = bad.display().to_string();
    // One flipped byte in a file's contents, or in the zip's own directory (which would
    // also make it unreadable): refused by the verifier, with or without the override (the
    // override is for unsigned material only).
    for (at, extra) in [
        (genuine.len() / 2, vec!["--release-policy", policy.as_str()]),
        (
            genuine.len() / 2,
            vec!["--release-policy", policy.as_str(), "--allow-unsigned"],
        ),
        (
            genuine.len() - 22,
            vec!["--release-policy", policy.as_str()],
        ),
    ] {
        let mut zip_bytes = genuine.clone();
        zip_bytes[at] ^= 0x01;
        fs_err::write(&bad, &zip_bytes).unwrap();
        let out = e.run(&install(&bad_arg, &extra));
        // The verifier's own reason is printed as the cause.
        refused(
            &out,
            &[
                "failed signature verification for tag v1.4.0",
                "message digest",
            ],
        );
        assert_eq!(e.tree(), before, "a refused bundle changed files");
    }
}

#[test]
fn upgrade_verifies_the_newer_bundle_before_switching() {
    let e = env();
    let policy = e.policy.display().to_string();
    let first = e.zip(&e.root.join("downloads"), "1.3.0", true);
    ok(e.run(&install(
        &first.display().to_string(),
        &["--release-policy", &policy],
    )));
    let mirror = e.root.join("mirror");
    e.zip(&mirror, "1.3.0", true);
    let newer = e.zip(&mirror, "1.4.0", true);
    let mirror_arg = mirror.display().to_string();
    let upgrade = [
        "upgrade",
        "--skip-runtime",
        "--release-policy",
        &policy,
        "--from",
        &mirror_arg,
    ];

    // The newest bundle's signature is for other bytes: refused, still on 1.3.0.
    let signature = scimcp_verify::bundle_path(&newer);
    let genuine = fs_err::read(&signature).unwrap();
    fs_err::write(&signature, e.sign(b"other bytes")).unwrap();
    let before = e.tree();
    let out = e.run(&upgrade);
    refused(&out, &["failed signature verification for tag v1.4.0"]);
    assert_eq!(e.tree(), before, "a refused upgrade changed files");

    // A damaged newer zip (its directory unreadable) is refused by the verifier too.
    let zip_genuine = fs_err::read(&newer).unwrap();
    let mut damaged = zip_genuine.clone();
    let at = damaged.len() - 22;
    damaged[at] ^= 0x01;
    fs_err::write(&newer, &damaged).unwrap();
    fs_err::write(&signature, &genuine).unwrap();
    let out = e.run(&upgrade);
    refused(&out, &["message digest"]);
    assert_eq!(e.tree(), before, "a refused upgrade changed files");
    fs_err::write(&newer, zip_genuine).unwrap();
    let out = ok(e.run(&upgrade));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("upgrade 1.3.0 -> 1.4.0"),
        "{out:?}"
    );
    let state = e.state();
    assert_eq!(state["active"], "1.4.0");
    assert_eq!(state["previous"], "1.3.0");
    assert_eq!(
        state["versions"]["1.4.0"]["signature"]["status"],
        "verified"
    );
    assert_eq!(
        state["versions"]["1.3.0"]["signature"]["status"],
        "verified"
    );
}
