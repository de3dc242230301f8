//! The release preflight refuses what a tag must not have: a lightweight tag, a tag at
//! another commit, crates at different versions, a test slipped into the bundle allowlist;
//! and passes a clean clone with an annotated tag at HEAD. Each case runs on a fresh clone
//! of this repository, never on the checkout itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh clone of HEAD with a committer identity for new commits and tags.
fn clone() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("clone");
    let out = Command::new("git")
        .arg("clone")
        .arg("--quiet")
        .arg(repo_root())
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    git(&dir, &["config", "user.email", "preflight@example.invalid"]);
    git(&dir, &["config", "user.name", "Preflight Test"]);
    (tmp, dir)
}

fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "--quiet", "-m", message]);
}

fn preflight(dir: &Path, only: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scimcp-release"))
        .args(["preflight", "--repo"])
        .arg(dir)
        .args(["--only", only, "--quick"])
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[test]
fn an_annotated_tag_at_head_on_a_clean_clone_passes() {
    let (_tmp, dir) = clone();
    git(
        &dir,
        &["tag", "-a", &format!("v{VERSION}"), "-m", "release"],
    );
    let out = preflight(&dir, "checkout,tag,versions");
    assert!(
        out.status.success(),
        "{}{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(text.contains("not release evidence"), "{text}");
}

#[test]
fn a_lightweight_tag_is_refused() {
    let (_tmp, dir) = clone();
    git(&dir, &["tag", &format!("v{VERSION}")]);
    let out = preflight(&dir, "checkout,tag");
    assert!(!out.status.success());
    assert!(
        stdout(&out).contains("is a lightweight tag"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_tag_at_another_commit_is_refused() {
    let (_tmp, dir) = clone();
    git(
        &dir,
        &["tag", "-a", &format!("v{VERSION}"), "-m", "release"],
    );
    fs_err::write(dir.join("NOTES.txt"), "a later commit\n").unwrap();
    commit_all(&dir, "a commit after the tag");
    let out = preflight(&dir, "tag");
    assert!(!out.status.success());
    assert!(stdout(&out).contains("not at HEAD"), "{}", stdout(&out));
}

#[test]
fn crates_at_different_versions_are_refused() {
    let (_tmp, dir) = clone();
    let manifest = dir.join("core/Cargo.toml");
    let text = fs_err::read_to_string(&manifest)
        .unwrap()
        .replace("\nversion.workspace = true", "\nversion = \"9.9.9\"");
    fs_err::write(&manifest, text).unwrap();
    commit_all(&dir, "drift one crate's version");
    git(
        &dir,
        &["tag", "-a", &format!("v{VERSION}"), "-m", "release"],
    );
    let out = preflight(&dir, "checkout,tag,versions");
    assert!(!out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("crate scimcp-core has version 9.9.9"),
        "{text}"
    );
}

#[test]
fn a_test_slipped_into_the_bundle_allowlist_is_refused() {
    let (_tmp, dir) = clone();
    let list = dir.join("release/bundle.toml");
    let text = fs_err::read_to_string(&list).unwrap().replace(
        "\"LICENSE\",",
        "\"LICENSE\",\n  \"refsci/tests/test_cli.py\",",
    );
    fs_err::write(&list, text).unwrap();
    commit_all(&dir, "ship a test by mistake");
    git(
        &dir,
        &["tag", "-a", &format!("v{VERSION}"), "-m", "release"],
    );
    let bins = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_scimcp-release"))
        .args(["preflight", "--repo"])
        .arg(&dir)
        .args(["--only", "bundle", "--bin-dir"])
        .arg(bins.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("refsci/tests/test_cli.py") && text.contains("never ships"),
        "{text}"
    );
}

#[test]
fn an_uncommitted_change_fails_the_checkout_step() {
    let (_tmp, dir) = clone();
    fs_err::write(dir.join("stray.txt"), "oops").unwrap();
    let out = preflight(&dir, "checkout");
    assert!(!out.status.success());
    assert!(stdout(&out).contains("stray.txt"), "{}", stdout(&out));
}
