//! The published one-liner, `curl -LsSf …/scimcp-installer.sh | sh -s -- --adapter …`, run
//! for real against a fake release on 127.0.0.1: the installer script a release publishes
//! (scripts/release-installers.sh), this computer's signed bundle holding the scimcp-setup
//! under test, and its signature. It must end with scimcp installed in the per-user data
//! folder (`~/.local/share/scimcp`, no SCIMCP_HOME), the bundle's signature verified before
//! anything was unpacked, the adapters given passed through and registered; a bundle whose
//! signature does not verify must leave nothing installed.

#![cfg(unix)]

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::adapter::{Demo, write_adapter};
use common::fake_github::{FakeGitHub, Release};
use common::signed::{env, target, zip_dir, zip_dir_in};
use common::{fake_bundle, repo_root};
use serde_json::Value;

const VERSION: &str = "0.7.0";

/// The release: the published installers, the signed bundle (with the scimcp-setup under
/// test in its bin/, under the bundle's one top-level folder) and its signature.
fn release(e: &common::signed::Env) -> Release {
    let src = fake_bundle(&e.root.join("src"), "scimcp", Some(VERSION));
    fs_err::copy(
        env!("CARGO_BIN_EXE_scimcp-setup"),
        src.join("bin/scimcp-setup"),
    )
    .unwrap();
    let folder = format!("scimcp-{VERSION}-{}", target());
    let name = format!("{folder}.zip");
    let zip = e.root.join(&name);
    zip_dir_in(&src, &format!("{folder}/"), &zip);
    let bytes = fs_err::read(&zip).unwrap();
    let signature = e.sign(&bytes);
    let installers = e.root.join("installers");
    let status = Command::new(repo_root().join("scripts/release-installers.sh"))
        .arg(format!("v{VERSION}"))
        .arg(&installers)
        .status()
        .unwrap();
    assert!(status.success());
    Release {
        tag: format!("v{VERSION}"),
        assets: vec![
            (
                "scimcp-installer.sh".into(),
                fs_err::read(installers.join("scimcp-installer.sh")).unwrap(),
            ),
            (
                "scimcp-installer.ps1".into(),
                fs_err::read(installers.join("scimcp-installer.ps1")).unwrap(),
            ),
            (name.clone(), bytes),
            (format!("{name}.sigstore.json"), signature.into_bytes()),
        ],
    }
}

/// `curl -LsSf <release>/scimcp-installer.sh | sh -s -- ARGS` in the fake home, with the
/// release's files served from `base` (SCIMCP_DOWNLOAD_URL, the mirror setting).
fn one_liner(home: &Path, base: &str, args: &[&str]) -> Output {
    let quoted: Vec<String> = args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "curl -LsSf \"$BASE/scimcp-installer.sh\" | sh -s -- {}",
            quoted.join(" ")
        ))
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C.UTF-8")
        .env("BASE", base)
        .env("SCIMCP_DOWNLOAD_URL", base)
        .current_dir(home)
        .output()
        .unwrap()
}

#[test]
fn the_published_one_liner_installs_verifies_and_registers() {
    let e = env();
    let server = FakeGitHub::start(vec![release(&e)]);
    let base = format!("{}/dl/v{VERSION}", server.base);
    let demo = write_adapter(
        &e.root.join("mon adaptateur"),
        &Demo {
            name: "demo",
            ..Demo::default()
        },
    );
    fs_err::create_dir_all(e.home.join(".cursor")).unwrap();
    let policy = e.policy.display().to_string();
    let out = one_liner(
        &e.home,
        &base,
        &[
            "--adapter",
            "refsci",
            "--adapter",
            &demo.display().to_string(),
            "--skip-runtime",
            "--release-policy",
            &policy,
        ],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The per-user data folder, not ~/.cargo/bin, and the script says where it is.
    let data = e.home.join(".local/share/scimcp");
    assert!(
        stderr.contains(&format!("is installed in {}", data.display())),
        "{stderr}"
    );
    assert!(!e.home.join(".cargo").exists());
    let state: Value =
        serde_json::from_slice(&fs_err::read(data.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["active"], VERSION);
    assert_eq!(
        state["versions"][VERSION]["signature"]["status"], "verified",
        "{state:#}"
    );
    let adapters: Vec<&String> = state["adapters"].as_object().unwrap().keys().collect();
    assert_eq!(adapters, ["demo", "refsci"]);
    assert!(data.join("current/bin/scimcp-setup").is_file());
    // Registered in the client it found, one entry per adapter.
    let cursor: Value =
        serde_json::from_slice(&fs_err::read(e.home.join(".cursor/mcp.json")).unwrap()).unwrap();
    for entry in ["scimcp-refsci", "scimcp-demo"] {
        assert!(cursor["mcpServers"][entry].is_object(), "{cursor:#}");
    }
    // The installer script, the bundle and its signature: nothing else was fetched.
    let downloads = server.downloads();
    assert_eq!(downloads.len(), 3, "{downloads:?}");
    assert!(
        downloads.iter().any(|d| d.contains(".zip.sigstore.json")),
        "{downloads:?}"
    );
}

#[test]
fn a_bundle_that_does_not_verify_installs_nothing() {
    let e = env();
    let release = release(&e);
    let zip_name = release.assets[2].0.clone();
    let server = FakeGitHub::start(vec![release]);
    // Another build than the signed one: the signature no longer matches.
    let src = fake_bundle(&e.root.join("other"), "scimcp", Some(VERSION));
    fs_err::copy(
        env!("CARGO_BIN_EXE_scimcp-setup"),
        src.join("bin/scimcp-setup"),
    )
    .unwrap();
    fs_err::write(src.join("bin/scimcp"), "#!/bin/sh\necho tampered\n").unwrap();
    // In the layout of older bundles (files at the top): the script still finds scimcp-setup.
    let tampered = e.root.join("tampered.zip");
    zip_dir(&src, &tampered);
    server.replace_asset(&zip_name, fs_err::read(&tampered).unwrap());
    let base = format!("{}/dl/v{VERSION}", server.base);
    let policy = e.policy.display().to_string();
    let out = one_liner(
        &e.home,
        &base,
        &[
            "--client",
            "generic",
            "--skip-runtime",
            "--release-policy",
            &policy,
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("scimcp-setup install failed"), "{stderr}");
    let data = e.home.join(".local/share/scimcp");
    assert!(!data.join("versions").exists() && !data.join("state.json").exists());
}

/// A mirror (`SCIMCP_DOWNLOAD_URL`) serving a bundle signed with a key pair: without a
/// release policy naming that key it is refused, the hint names `--release-policy` (not
/// "download again", which cannot help), and the refusal, which says nothing was changed,
/// leaves the home exactly as it was: no data folder, no `.setup.lock`.
#[test]
fn a_key_pair_bundle_from_a_mirror_is_refused_naming_the_policy_and_leaves_nothing() {
    let e = env();
    let server = FakeGitHub::start(vec![release(&e)]);
    let base = format!("{}/dl/v{VERSION}", server.base);
    let before = scimcp_testkit::fingerprint(&e.home, &[]);
    let out = one_liner(&e.home, &base, &["--client", "generic", "--skip-runtime"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("nothing was changed"), "{stderr}");
    assert!(stderr.contains("signed with a key pair"), "{stderr}");
    assert!(stderr.contains("--release-policy FILE"), "{stderr}");
    assert!(!stderr.contains("again from the release page"), "{stderr}");
    assert_eq!(
        scimcp_testkit::fingerprint(&e.home, &[]),
        before,
        "a refused bundle left something in the home"
    );
}
