//! `upgrade` from GitHub releases and `install --from URL`, against a fake GitHub on
//! 127.0.0.1 (no network): discovery across pages, the newest stable release with a bundle for
//! this computer, download, signature verification before anything is unpacked, downgrade and
//! up-to-date handling, refusals that change nothing and leave no download behind.

use crate::common;

use std::path::Path;

use common::fake_github::{FakeGitHub, Release};
use common::signed::{Env, env, target};
use common::{ok, refused, stdout};

fn zip_name(version: &str) -> String {
    format!("scimcp-{version}-{}.zip", target())
}

/// A release `v<version>` with this computer's bundle and, when `signed`, its signature.
fn release(e: &Env, version: &str, signed: bool) -> Release {
    let dir = e.root.join("built").join(version);
    let zip = e.zip(&dir, version, signed);
    let mut assets = vec![(zip_name(version), fs_err::read(&zip).unwrap())];
    if signed {
        let sig = scimcp_verify::bundle_path(&zip);
        assets.push((
            format!("{}.sigstore.json", zip_name(version)),
            fs_err::read(sig).unwrap(),
        ));
    }
    Release {
        tag: format!("v{version}"),
        assets,
    }
}

/// Install `version` from a local signed zip (the starting point of every upgrade test).
fn install_local(e: &Env, version: &str) {
    let zip = e.zip(&e.root.join("local"), version, true);
    let policy = e.policy.display().to_string();
    ok(e.run(&install_args(&zip.display().to_string(), &policy)));
}

fn install_args<'a>(from: &'a str, policy: &'a str) -> Vec<&'a str> {
    vec![
        "install",
        "--skip-runtime",
        "--client",
        "generic",
        "--release-policy",
        policy,
        "--from",
        from,
    ]
}

fn upgrade_args<'a>(api: &'a str, policy: &'a str) -> Vec<&'a str> {
    vec![
        "upgrade",
        "--skip-runtime",
        "--release-policy",
        policy,
        "--repo",
        "scimcp-test/scimcp",
        "--github-api",
        api,
    ]
}

fn empty(dir: &Path) -> bool {
    fs_err::read_dir(dir).map_or(true, |mut d| d.next().is_none())
}

#[test]
fn upgrade_installs_the_newest_signed_github_release_and_keeps_runs() {
    let e = env();
    install_local(&e, "1.3.0");
    let runs = e.data.join("runs").join("r-before");
    fs_err::create_dir_all(&runs).unwrap();
    fs_err::write(runs.join("result.json"), b"{\"ok\":true}").unwrap();

    // Five releases over three pages. 1.5.0-rc.1 is a pre-release and 1.6.0 ships no bundle
    // for this computer: neither is offered, so 1.4.0 is the newest.
    let mut other_target = release(&e, "1.6.0", true);
    for asset in &mut other_target.assets {
        asset.0 = asset.0.replace(target(), "riscv64gc-unknown-none-elf");
    }
    let github = FakeGitHub::start(vec![
        other_target,
        release(&e, "1.5.0-rc.1", true),
        release(&e, "1.4.0", true),
        release(&e, "1.3.0", true),
        release(&e, "1.2.0", true),
    ]);
    let policy = e.policy.display().to_string();

    // --check says what an upgrade would install, and downloads and changes nothing.
    let before = e.tree();
    let mut check = upgrade_args(&github.base, &policy);
    check.push("--check");
    let out = ok(e.run_networked(&check));
    assert!(
        stdout(&out).contains(
            "scimcp 1.4.0 is available in the releases of scimcp-test/scimcp (you have 1.3.0)"
        ),
        "{out:?}"
    );
    check.push("--json");
    let report: serde_json::Value =
        serde_json::from_slice(&ok(e.run_networked(&check)).stdout).unwrap();
    assert_eq!(report["available"], "1.4.0", "{report:#}");
    assert_eq!(report["active"], "1.3.0", "{report:#}");
    assert!(github.downloads().is_empty(), "{:?}", github.downloads());
    assert_eq!(e.tree(), before);
    github.clear_log();

    let out = ok(e.run_networked(&upgrade_args(&github.base, &policy)));
    assert!(stdout(&out).contains("upgrade 1.3.0 -> 1.4.0"), "{out:?}");

    let listing: Vec<String> = github
        .requests()
        .into_iter()
        .filter(|r| r.contains("/repos/scimcp-test/scimcp/releases"))
        .collect();
    assert_eq!(listing.len(), 3, "every page is read: {listing:?}");
    let downloads = github.downloads();
    let name = zip_name("1.4.0");
    assert!(
        downloads
            .iter()
            .all(|r| r.contains("accept=application/octet-stream")),
        "{downloads:?}"
    );
    assert_eq!(
        downloads.len(),
        4,
        "the zip and its signature, each through the asset API and its redirect: {downloads:?}"
    );

    let state = e.state();
    assert_eq!(state["active"], "1.4.0");
    assert_eq!(state["previous"], "1.3.0");
    let record = &state["versions"]["1.4.0"];
    assert_eq!(record["signature"]["status"], "verified");
    assert_eq!(
        record["source"],
        format!("{name} (release 1.4.0 of scimcp-test/scimcp)")
    );
    assert_eq!(
        fs_err::read(runs.join("result.json")).unwrap(),
        b"{\"ok\":true}"
    );
    assert!(empty(&e.tmp()), "the download was not cleaned up");

    // Again: nothing newer, a success that downloads and changes nothing; so says --check.
    github.clear_log();
    let before = e.tree();
    let out = ok(e.run_networked(&upgrade_args(&github.base, &policy)));
    assert!(stdout(&out).contains("already at 1.4.0"), "{out:?}");
    let mut check = upgrade_args(&github.base, &policy);
    check.extend(["--check", "--json"]);
    let report: serde_json::Value =
        serde_json::from_slice(&ok(e.run_networked(&check)).stdout).unwrap();
    assert!(report.get("available").is_none(), "{report:#}");
    assert!(github.downloads().is_empty(), "{:?}", github.downloads());
    assert_eq!(e.tree(), before);

    // An older release only on purpose.
    let mut older = upgrade_args(&github.base, &policy);
    older.extend(["--version", "1.2.0"]);
    let out = e.run_networked(&older);
    refused(&out, &["--allow-downgrade"]);
    assert!(github.downloads().is_empty(), "{:?}", github.downloads());
    assert_eq!(e.tree(), before);
    older.push("--allow-downgrade");
    let out = ok(e.run_networked(&older));
    assert!(stdout(&out).contains("upgrade 1.4.0 -> 1.2.0"), "{out:?}");
    assert_eq!(e.state()["active"], "1.2.0");

    // A version no release has is named, with the ones that exist.
    let mut missing = upgrade_args(&github.base, &policy);
    missing.extend(["--version", "1.5.0", "--allow-downgrade"]);
    let out = e.run_networked(&missing);
    refused(&out, &["no release 1.5.0", "1.2.0, 1.3.0, 1.4.0"]);
    assert_eq!(
        fs_err::read(runs.join("result.json")).unwrap(),
        b"{\"ok\":true}"
    );
}

#[test]
fn a_github_release_that_fails_verification_changes_nothing() {
    let e = env();
    install_local(&e, "1.3.0");
    let github = FakeGitHub::start(vec![release(&e, "1.4.0", true)]);
    let policy = e.policy.display().to_string();
    let before = e.tree();

    // The signature is genuine but for other bytes.
    github.replace_asset(
        &format!("{}.sigstore.json", zip_name("1.4.0")),
        e.sign(b"other bytes").into_bytes(),
    );
    let out = e.run_networked(&upgrade_args(&github.base, &policy));
    refused(&out, &["failed signature verification for tag v1.4.0"]);
    assert_eq!(e.tree(), before, "a refused release changed files");
    assert!(empty(&e.tmp()), "the refused download was left behind");
    assert_eq!(e.state()["active"], "1.3.0");

    // No signature at all: refused before anything is downloaded.
    let github = FakeGitHub::start(vec![release(&e, "1.4.0", false)]);
    let out = e.run_networked(&upgrade_args(&github.base, &policy));
    refused(&out, &["not its signature"]);
    assert!(github.downloads().is_empty(), "{:?}", github.downloads());
    assert_eq!(e.tree(), before);
}

#[test]
fn unreachable_or_rate_limited_github_says_what_to_do() {
    let e = env();
    install_local(&e, "1.3.0");
    let policy = e.policy.display().to_string();
    let before = e.tree();

    let github = FakeGitHub::start(vec![release(&e, "1.4.0", true)]);
    github.set_listing_status(Some(403));
    let out = e.run_networked(&upgrade_args(&github.base, &policy));
    refused(
        &out,
        &[
            "cannot list the releases of scimcp-test/scimcp",
            "GH_TOKEN",
            "--from MIRROR_DIR",
        ],
    );

    // A server that is gone.
    let base = github.base.clone();
    drop(github);
    let out = e.run_networked(&upgrade_args(&base, &policy));
    refused(&out, &["cannot list the releases"]);

    // Plain HTTP to another computer is refused before any connection.
    let out = e.run_networked(&upgrade_args("http://example.org/api", &policy));
    refused(&out, &["only fetched over https://"]);

    // A key-pair policy names no repository: --repo is required, and said so.
    let out = e.run_networked(&["upgrade", "--skip-runtime", "--release-policy", &policy]);
    refused(&out, &["--repo OWNER/NAME"]);
    assert_eq!(e.tree(), before);
}

#[test]
fn install_takes_a_release_url() {
    let e = env();
    let github = FakeGitHub::start(vec![
        release(&e, "1.4.0", true),
        release(&e, "1.5.0", false),
    ]);
    let policy = e.policy.display().to_string();
    let url = format!("{}/dl/v1.4.0/{}", github.base, zip_name("1.4.0"));
    ok(e.run_networked(&install_args(&url, &policy)));
    let state = e.state();
    assert_eq!(state["active"], "1.4.0");
    assert_eq!(state["versions"]["1.4.0"]["source"], url);
    assert_eq!(
        state["versions"]["1.4.0"]["signature"]["status"],
        "verified"
    );
    assert!(
        github
            .downloads()
            .iter()
            .any(|r| r.contains(&format!("{}.sigstore.json", zip_name("1.4.0")))),
        "{:?}",
        github.downloads()
    );
    assert!(empty(&e.tmp()));

    // A signature that exists but cannot be fetched is a failed download, not "unsigned".
    github.set_failing(Some((".sigstore.json", 500)));
    let before = e.tree();
    let out = e.run_networked(&install_args(&url, &policy));
    refused(&out, &["downloading", ".sigstore.json", "500"]);
    assert_eq!(e.tree(), before);
    assert!(empty(&e.tmp()));
    github.set_failing(None);

    // A release without a signature: refused unless unsigned material is allowed.
    let before = e.tree();
    let unsigned = format!("{}/dl/v1.5.0/{}", github.base, zip_name("1.5.0"));
    let out = e.run_networked(&install_args(&unsigned, &policy));
    refused(&out, &["is not signed"]);
    assert_eq!(e.tree(), before);
    let mut allowed = install_args(&unsigned, &policy);
    allowed.push("--allow-unsigned");
    ok(e.run_networked(&allowed));
    let state = e.state();
    assert_eq!(state["active"], "1.5.0");
    assert_eq!(
        state["versions"]["1.5.0"]["signature"]["status"],
        "development-override"
    );
    let before = e.tree();

    // Addresses that are not a bundle, or not safe, are refused before any download.
    github.clear_log();
    for (bad, expected) in [
        (
            format!("{}/dl/v1.4.0/notes.txt", github.base),
            "does not name a scimcp bundle",
        ),
        (
            format!("http://example.org/{}", zip_name("1.4.0")),
            "only fetched over https://",
        ),
    ] {
        let out = e.run_networked(&["install", "--skip-runtime", "--from", &bad]);
        refused(&out, &[expected]);
    }
    assert!(github.requests().is_empty(), "{:?}", github.requests());
    assert_eq!(e.tree(), before);
}
