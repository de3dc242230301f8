//! Bundles: byte-for-byte reproducible, complete, listed in RELEASE.json, and never carrying
//! what the deny list refuses.

use std::io::Read;
use std::path::{Path, PathBuf};

use scimcp_release::bundle::{self, BinarySource, BundleOptions, BundleRelease, ReleaseIndex};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Small stand-ins for the binaries: the bundler's job is the same whatever their size.
fn fake_binaries(dir: &Path, windows: bool) {
    for name in [
        "scimcp",
        "scimcp-setup",
        "scimcp-doctor",
        "scimcp-release",
        "scimcp-parity",
    ] {
        let file = if windows {
            format!("{name}.exe")
        } else {
            name.to_string()
        };
        fs_err::write(dir.join(file), format!("#!binary {name}\n").repeat(100)).unwrap();
    }
}

fn options(bins: &Path, out: &Path, targets: &[&str]) -> BundleOptions {
    BundleOptions {
        repo_root: repo_root(),
        binaries: BinarySource::Dir(bins.to_path_buf()),
        targets: targets.iter().map(|s| s.to_string()).collect(),
        out_dir: out.to_path_buf(),
        epoch: 1_767_225_600,
        git_commit: "0123456789abcdef0123456789abcdef01234567".into(),
        tag: Some("v0.1.0".into()),
    }
}

/// The file `name` inside the bundle's one top-level folder (the zip's name without `.zip`).
fn read_entry(zip_path: &Path, name: &str) -> Vec<u8> {
    let folder = zip_path.file_stem().unwrap().to_str().unwrap();
    let mut zip = zip::ZipArchive::new(fs_err::File::open(zip_path).unwrap()).unwrap();
    let mut entry = zip.by_name(&format!("{folder}/{name}")).unwrap();
    let mut bytes = Vec::new();
    entry.read_to_end(&mut bytes).unwrap();
    bytes
}

#[test]
fn two_builds_of_one_commit_are_byte_identical() {
    let bins = tempfile::tempdir().unwrap();
    fake_binaries(bins.path(), false);
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ia = bundle::build(&options(
        bins.path(),
        a.path(),
        &["x86_64-unknown-linux-gnu", "aarch64-apple-darwin"],
    ))
    .unwrap();
    let ib = bundle::build(&options(
        bins.path(),
        b.path(),
        &["x86_64-unknown-linux-gnu", "aarch64-apple-darwin"],
    ))
    .unwrap();
    assert_eq!(ia, ib);
    assert_eq!(ia.bundles.len(), 2);
    for rec in &ia.bundles {
        let (za, zb) = (
            fs_err::read(a.path().join(&rec.file)).unwrap(),
            fs_err::read(b.path().join(&rec.file)).unwrap(),
        );
        assert_eq!(za, zb, "{} differs between builds", rec.file);
        assert_eq!(scimcp_core::hash::sha256_hex(&za), rec.sha256);
    }
    assert_eq!(
        fs_err::read(a.path().join("RELEASE.json")).unwrap(),
        fs_err::read(b.path().join("RELEASE.json")).unwrap()
    );
}

#[test]
fn release_json_lists_every_file_with_its_hash_and_nothing_else_ships() {
    let bins = tempfile::tempdir().unwrap();
    fake_binaries(bins.path(), true);
    let out = tempfile::tempdir().unwrap();
    let index: ReleaseIndex = bundle::build(&options(
        bins.path(),
        out.path(),
        &["x86_64-pc-windows-msvc"],
    ))
    .unwrap();
    let zip_path = out.path().join(&index.bundles[0].file);
    let release: BundleRelease =
        serde_json::from_slice(&read_entry(&zip_path, "RELEASE.json")).unwrap();
    assert_eq!(release.version, scimcp_core::version::SUITE_VERSION);
    assert_eq!(
        release.git_commit,
        "0123456789abcdef0123456789abcdef01234567"
    );
    let adapters: Vec<&str> = release.adapters.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        adapters,
        ["geochemistrypi", "mafft", "refsci", "vina"],
        "every shipped adapter"
    );
    // One top-level folder, named like the zip: unpacking it makes one folder.
    let folder = format!(
        "scimcp-{}-x86_64-pc-windows-msvc/",
        scimcp_core::version::SUITE_VERSION
    );
    assert_eq!(
        index.bundles[0].file,
        format!("{}.zip", folder.trim_end_matches('/'))
    );
    let mut zip = zip::ZipArchive::new(fs_err::File::open(&zip_path).unwrap()).unwrap();
    let mut names: Vec<String> = (0..zip.len())
        .map(|i| {
            let name = zip.by_index(i).unwrap().name().unwrap().to_string();
            name.strip_prefix(&folder)
                .unwrap_or_else(|| panic!("{name} is outside {folder}"))
                .to_string()
        })
        .collect();
    names.retain(|n| n != "RELEASE.json");
    let listed: Vec<&str> = release.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(names, listed, "every entry listed, in order");
    for f in &release.files {
        assert_eq!(
            scimcp_core::hash::sha256_hex(&read_entry(&zip_path, &f.path)),
            f.sha256,
            "{}",
            f.path
        );
        assert!(
            bundle::denied(&f.path).is_none(),
            "{} must not ship",
            f.path
        );
        assert_eq!(f.mode == "0755", f.path.starts_with("bin/"), "{}", f.path);
    }
    for required in [
        "README.txt",
        "manifest.json",
        "LICENSE",
        "bin/scimcp.exe",
        "adapters/refsci.toml",
        "refsci/pyproject.toml",
        "refsci/src/refsci/cli.py",
    ] {
        assert!(
            listed.contains(&required),
            "{required} missing from {listed:?}"
        );
    }
    assert!(!listed.iter().any(|p| p.contains("tests/")));
    let readme = String::from_utf8(read_entry(&zip_path, "README.txt")).unwrap();
    assert!(
        readme.contains(r".\bin\scimcp-setup.exe install") && readme.contains("uninstall"),
        "{readme}"
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&read_entry(&zip_path, "manifest.json")).unwrap();
    assert_eq!(manifest["server"]["type"], "binary");
    assert_eq!(manifest["server"]["entry_point"], "bin/scimcp.exe");
    assert_eq!(
        manifest["server"]["mcp_config"]["command"],
        "${__dirname}/bin/scimcp.exe"
    );
    assert_eq!(
        manifest["compatibility"]["platforms"],
        serde_json::json!(["win32"])
    );
    let tools: Vec<&str> = manifest["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // The server's own tool names (the catalog file is held to the server by its tests).
    let catalog: Vec<serde_json::Value> =
        serde_json::from_str(include_str!("../../tool-catalog.json")).unwrap();
    let names: Vec<&str> = catalog
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, names);
    assert!(
        tools.contains(&"start_analysis") && tools.len() >= 11,
        "{tools:?}"
    );
}

#[test]
fn a_missing_binary_is_named() {
    let bins = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let e = bundle::build(&options(
        bins.path(),
        out.path(),
        &["x86_64-unknown-linux-gnu"],
    ))
    .unwrap_err();
    assert!(e.to_string().contains("no binary 'scimcp'"), "{e}");
}
