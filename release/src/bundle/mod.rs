//! `scimcp-release bundle`: one deterministic MCP bundle zip per target.
//!
//! Every entry sits under one folder, `scimcp-<version>-<target>/` (the zip's name without
//! `.zip`), so unpacking it in Downloads makes one folder, not a spill of six entries. That
//! folder holds `README.txt` (what it is, the one command to run, how to undo it),
//! `manifest.json` (MCP Bundle manifest), `bin/` (the suite's binaries for the target),
//! `adapters/` (every adapter: each manifest and every file under `adapters/` it may refer
//! to), `refsci/` (the reference CLI's source, no tests), `LICENSE` and `RELEASE.json` (every
//! other file's path inside the folder, size, mode and SHA-256; the suite and adapter
//! versions; the git commit). Beside the zips, a release-level `RELEASE.json` lists every
//! bundle with its SHA-256: that file and each zip are what gets signed. Each target also
//! gets `scimcp-<version>-<target>.mcpb` (the same entries with `manifest.json` at the
//! root, the MCP Bundle clients install), and the release `server.json`, its MCP Registry
//! entry naming each `.mcpb` with its SHA-256 (`crate::server_json`).
//!
//! Reproducible: entries sorted, one timestamp (`SOURCE_DATE_EPOCH`, else the commit time),
//! normalized modes, fixed compression. Two builds of one commit are byte-identical.

mod allowlist;
mod binaries;
mod error;
pub mod mcpb;
mod readme;
mod zipper;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use allowlist::{Allowlist, denied};
pub use binaries::BinarySource;
pub use error::BundleError;
use zipper::Entry;

/// Version of both `RELEASE.json` formats.
pub const RELEASE_SCHEMA_VERSION: u32 = 1;

/// What to bundle, from where, into where.
#[derive(Debug, Clone)]
pub struct BundleOptions {
    /// The repository root (holds `adapters/`, `refsci/`, `LICENSE`, `release/bundle.toml`).
    pub repo_root: PathBuf,
    pub binaries: BinarySource,
    /// Rust target triples, one bundle each.
    pub targets: Vec<String>,
    pub out_dir: PathBuf,
    /// Seconds since 1970 used as every entry's timestamp.
    pub epoch: i64,
    /// The commit the bundle is built from.
    pub git_commit: String,
    /// The release tag, when building for one.
    pub tag: Option<String>,
}

/// One file listed in a bundle's `RELEASE.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub path: String,
    pub size: u64,
    pub mode: String,
    pub sha256: String,
}

/// An adapter shipped in a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterRecord {
    pub name: String,
    pub version: String,
    pub sha256: String,
}

/// `RELEASE.json` inside a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleRelease {
    pub schema_version: u32,
    pub name: String,
    pub version: String,
    pub target: String,
    pub git_commit: String,
    pub source_date_epoch: i64,
    pub adapters: Vec<AdapterRecord>,
    pub files: Vec<FileRecord>,
}

/// One bundle in the release-level `RELEASE.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleRecord {
    pub file: String,
    pub target: String,
    pub size: u64,
    pub sha256: String,
}

/// The release-level `RELEASE.json` beside the zips.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseIndex {
    pub schema_version: u32,
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    pub git_commit: String,
    pub source_date_epoch: i64,
    pub bundles: Vec<BundleRecord>,
}

/// Build every target's bundle and the release index; returns the index.
pub fn build(opts: &BundleOptions) -> Result<ReleaseIndex, BundleError> {
    let allowlist = Allowlist::load(&opts.repo_root.join("release/bundle.toml"))?;
    let repo_files = with_adapter_files(&opts.repo_root, allowlist.select(&opts.repo_root)?)?;
    let adapters = adapters(&opts.repo_root)?;
    fs_err::create_dir_all(&opts.out_dir).map_err(|e| BundleError::io(&opts.out_dir, e))?;
    let version = scimcp_core::version::SUITE_VERSION.to_string();
    let mut bundles = Vec::new();
    let mut mcpbs = Vec::new();
    for target in &opts.targets {
        let folder = bundle_folder(&version, target);
        let mut entries = vec![Entry {
            path: "README.txt".into(),
            bytes: readme::readme(&version, target, &folder).into_bytes(),
            executable: false,
        }];
        for rel in &repo_files {
            let path = opts.repo_root.join(rel);
            let bytes = fs_err::read(&path).map_err(|e| BundleError::io(&path, e))?;
            entries.push(Entry {
                path: rel.clone(),
                bytes,
                executable: false,
            });
        }
        for (name, bytes) in opts.binaries.collect(&allowlist.binaries, target)? {
            entries.push(Entry {
                path: format!("bin/{name}"),
                bytes,
                executable: true,
            });
        }
        let manifest = mcpb::manifest(&version, target, "refsci", &tool_list());
        entries.push(Entry {
            path: "manifest.json".into(),
            bytes: pretty(&manifest),
            executable: false,
        });
        let release = BundleRelease {
            schema_version: RELEASE_SCHEMA_VERSION,
            name: "scimcp".into(),
            version: version.clone(),
            target: target.clone(),
            git_commit: opts.git_commit.clone(),
            source_date_epoch: opts.epoch,
            adapters: adapters.clone(),
            files: {
                let mut files: Vec<FileRecord> = entries
                    .iter()
                    .map(|e| FileRecord {
                        path: e.path.clone(),
                        size: e.bytes.len() as u64,
                        mode: if e.executable {
                            "0755".into()
                        } else {
                            "0644".into()
                        },
                        sha256: scimcp_core::hash::sha256_hex(&e.bytes),
                    })
                    .collect();
                files.sort_by(|a, b| a.path.cmp(&b.path));
                files
            },
        };
        entries.push(Entry {
            path: "RELEASE.json".into(),
            bytes: pretty(&release),
            executable: false,
        });
        // The `.mcpb` clients install (the MCP Registry entry names it): the same entries with
        // manifest.json at the root, as MCP Bundles have it, written the same reproducible way.
        let mut mcpb_entries = entries.clone();
        let mcpb = zipper::write_zip(&mut mcpb_entries, opts.epoch).map_err(BundleError::Zip)?;
        let mcpb_file = format!("{folder}.mcpb");
        scimcp_core::fs::write_atomic(
            &opts.out_dir.join(&mcpb_file),
            &mcpb,
            scimcp_core::fs::Privacy::KeepExisting,
        )?;
        mcpbs.push(crate::server_json::McpbAsset {
            file: mcpb_file,
            sha256: scimcp_core::hash::sha256_hex(&mcpb),
        });
        // RELEASE.json lists paths inside the folder (what an install copies into
        // versions/<semver>/); only the zip's entry names carry the folder.
        for e in &mut entries {
            e.path = format!("{folder}/{}", e.path);
        }
        let zip = zipper::write_zip(&mut entries, opts.epoch).map_err(BundleError::Zip)?;
        let file = format!("{folder}.zip");
        let path = opts.out_dir.join(&file);
        scimcp_core::fs::write_atomic(&path, &zip, scimcp_core::fs::Privacy::KeepExisting)?;
        bundles.push(BundleRecord {
            file,
            target: target.clone(),
            size: zip.len() as u64,
            sha256: scimcp_core::hash::sha256_hex(&zip),
        });
    }
    let index = ReleaseIndex {
        schema_version: RELEASE_SCHEMA_VERSION,
        name: "scimcp".into(),
        version,
        tag: opts.tag.clone(),
        git_commit: opts.git_commit.clone(),
        source_date_epoch: opts.epoch,
        bundles,
    };
    let path = opts.out_dir.join("RELEASE.json");
    scimcp_core::fs::write_atomic(
        &path,
        &pretty(&index),
        scimcp_core::fs::Privacy::KeepExisting,
    )?;
    // The MCP Registry entry of this version (server_json.rs), for `mcp-publisher publish`.
    let tag = opts
        .tag
        .clone()
        .unwrap_or_else(|| format!("v{}", index.version));
    scimcp_core::fs::write_atomic(
        &opts.out_dir.join("server.json"),
        &pretty(&crate::server_json::server_json(
            &index.version,
            &tag,
            &mcpbs,
        )),
        scimcp_core::fs::Privacy::KeepExisting,
    )?;
    Ok(index)
}

/// The Rust target triple of this machine, for the default bundle.
pub fn host_target() -> String {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "macos" => format!("{arch}-apple-darwin"),
        "windows" => format!("{arch}-pc-windows-msvc"),
        _ => format!("{arch}-unknown-linux-gnu"),
    }
}

/// The one top-level folder of the bundle of `version` for `target`, also its zip's name
/// without `.zip`.
pub fn bundle_folder(version: &str, target: &str) -> String {
    format!("scimcp-{version}-{target}")
}

/// Write only `manifest.json` for `target` into `out_dir` (for `mcpb validate`).
pub fn write_manifest(out_dir: &Path, target: &str) -> Result<PathBuf, BundleError> {
    mcpb::platform_of(target).ok_or_else(|| BundleError::UnknownTarget {
        target: target.into(),
    })?;
    fs_err::create_dir_all(out_dir).map_err(|e| BundleError::io(out_dir, e))?;
    let manifest = mcpb::manifest(
        scimcp_core::version::SUITE_VERSION,
        target,
        "refsci",
        &tool_list(),
    );
    let path = out_dir.join("manifest.json");
    fs_err::write(&path, pretty(&manifest)).map_err(|e| BundleError::io(&path, e))?;
    Ok(path)
}

fn pretty<T: Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("serializable");
    bytes.push(b'\n');
    bytes
}

/// The server's real tools as `release/tool-catalog.json` lists them. The file, not a link
/// to the server crate: a release tool has no business compiling the MCP server, and a test
/// in the server (`the_release_catalog_file_lists_these_tools`) fails when the two part.
fn tool_list() -> Vec<(String, String)> {
    #[derive(serde::Deserialize)]
    struct Tool {
        name: String,
        description: String,
    }
    let tools: Vec<Tool> = serde_json::from_str(include_str!("../../tool-catalog.json"))
        .expect("release/tool-catalog.json is the server's catalog, checked by its tests");
    tools.into_iter().map(|t| (t.name, t.description)).collect()
}

/// `selected` plus every file under `adapters/` (what the deny list refuses excepted): an
/// adapter is shipped whole, whatever files its manifest refers to and wherever they sit,
/// so adding an adapter never needs an allowlist edit.
fn with_adapter_files(root: &Path, mut selected: Vec<String>) -> Result<Vec<String>, BundleError> {
    let mut stack = vec![root.join("adapters")];
    while let Some(dir) = stack.pop() {
        let entries = match fs_err::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if dir == root.join("adapters") => return Err(BundleError::io(&dir, e)),
            Err(_) => continue,
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                if allowlist::denied(&rel).is_none() {
                    selected.push(rel);
                }
            }
        }
    }
    selected.sort();
    selected.dedup();
    Ok(selected)
}

/// Every adapter manifest under `adapters/`, validated, sorted by name.
fn adapters(root: &Path) -> Result<Vec<AdapterRecord>, BundleError> {
    let dir = root.join("adapters");
    let mut out = Vec::new();
    for entry in fs_err::read_dir(&dir)
        .map_err(|e| BundleError::io(&dir, e))?
        .flatten()
    {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "toml") {
            let a = scimcp_core::manifest::load_file(&path).map_err(|e| BundleError::Adapter {
                path: path.clone(),
                message: e.to_string(),
            })?;
            out.push(AdapterRecord {
                name: a.manifest.name.clone(),
                version: a.manifest.version.clone(),
                sha256: a.sha256().to_string(),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// `SOURCE_DATE_EPOCH` when set, else the commit time of `HEAD`.
pub fn source_date_epoch(repo_root: &Path) -> Result<i64, BundleError> {
    if let Ok(v) = std::env::var("SOURCE_DATE_EPOCH") {
        return v
            .trim()
            .parse()
            .map_err(|_| BundleError::NoEpoch(format!("SOURCE_DATE_EPOCH={v} is not an integer")));
    }
    let out = git(repo_root, &["log", "-1", "--format=%ct"]).map_err(BundleError::NoCommitTime)?;
    out.trim()
        .parse()
        .map_err(|_| BundleError::NoEpoch(format!("git printed '{out}'")))
}

/// The commit of `HEAD`, or `uncommitted` outside a checkout.
pub fn git_commit(repo_root: &Path) -> String {
    git(repo_root, &["rev-parse", "HEAD"])
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "uncommitted".into())
}

/// git's stdout in `dir`, within [`crate::child::GIT`]; the error names the command.
fn git(dir: &Path, args: &[&str]) -> Result<String, scimcp_process::ProcessError> {
    let mut cmd = std::process::Command::new("git");
    cmd.arg("-C").arg(dir).args(args);
    let name = format!("git {}", args.join(" "));
    Ok(crate::child::run(&name, cmd, crate::child::GIT)?
        .check()?
        .stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_every_adapter_ships_and_nothing_denied() {
        let root = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let path = root.path().join(rel);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
        };
        write("adapters/refsci.toml", "x");
        write("adapters/refsci/schemas/a.json", "{}");
        write("adapters/demo.toml", "x");
        write("adapters/demo/plans/isolation_forest.json", "{}");
        write("adapters/demo/README.md", "demo");
        write("adapters/demo/tests/test_demo.py", "no");
        write("adapters/demo/plans/x.json~", "no");
        write("refsci/README.md", "r");
        let selected = vec![
            "adapters/refsci.toml".to_string(),
            "refsci/README.md".to_string(),
        ];
        let all = with_adapter_files(root.path(), selected).unwrap();
        assert_eq!(
            all,
            [
                "adapters/demo.toml",
                "adapters/demo/README.md",
                "adapters/demo/plans/isolation_forest.json",
                "adapters/refsci.toml",
                "adapters/refsci/schemas/a.json",
                "refsci/README.md",
            ]
        );
    }
}
