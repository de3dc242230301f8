//! The release's MCP Registry entry: `scimcp-release bundle` writes one `.mcpb` per target
//! (an MCP Bundle: `manifest.json` at the zip's root) and a `server.json` naming each with
//! its download URL and the SHA-256 of the file written, valid against the vendored registry
//! schema.

use std::path::{Path, PathBuf};

use scimcp_release::bundle::{self, BinarySource, BundleOptions};
use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn the_bundle_writes_mcpb_files_and_a_valid_server_json_naming_their_hashes() {
    let bins = tempfile::tempdir().unwrap();
    for name in [
        "scimcp",
        "scimcp-setup",
        "scimcp-doctor",
        "scimcp-release",
        "scimcp-parity",
    ] {
        fs_err::write(bins.path().join(name), format!("#!binary {name}\n")).unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let targets = ["x86_64-unknown-linux-gnu", "aarch64-apple-darwin"];
    let index = bundle::build(&BundleOptions {
        repo_root: repo_root(),
        binaries: BinarySource::Dir(bins.path().to_path_buf()),
        targets: targets.iter().map(|s| s.to_string()).collect(),
        out_dir: out.path().to_path_buf(),
        epoch: 1_767_225_600,
        git_commit: "0123456789abcdef0123456789abcdef01234567".into(),
        tag: Some("v9.8.7".into()),
    })
    .unwrap();
    let entry: Value =
        serde_json::from_slice(&fs_err::read(out.path().join("server.json")).unwrap()).unwrap();
    let schema: Value =
        serde_json::from_str(include_str!("../../schemas/server.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&entry)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(entry["version"], index.version.as_str());
    let packages = entry["packages"].as_array().unwrap();
    assert_eq!(packages.len(), targets.len());
    for (package, target) in packages.iter().zip(targets) {
        let file = format!("scimcp-{}-{target}.mcpb", index.version);
        let bytes = fs_err::read(out.path().join(&file)).unwrap();
        assert_eq!(package["registryType"], "mcpb");
        assert_eq!(
            package["identifier"],
            format!("https://github.com/scimcp/scimcp/releases/download/v9.8.7/{file}")
        );
        assert_eq!(package["fileSha256"], scimcp_core::hash::sha256_hex(&bytes));
        // An MCP Bundle: manifest.json (and the binaries) at the root, not under a folder.
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let manifest: Value =
            serde_json::from_reader(zip.by_name("manifest.json").unwrap()).unwrap();
        assert_eq!(manifest["version"], index.version.as_str());
        assert!(zip.by_name("bin/scimcp").is_ok());
    }
}
