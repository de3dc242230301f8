//! `state.json`: the installer's receipt, the one record of what is installed, active,
//! provisioned and registered under the data root.
//!
//! The installer writes it (atomically, under its setup lock); the server reads the recorded
//! interpreter of an adapter's runtime from it, and the doctor compares what it finds on
//! disk with what is recorded here. The schema is versioned: a reader refuses a file whose
//! `schema_version` is newer than it knows, so an old binary never misreads a newer
//! installer's receipt. Unknown fields are ignored, so adding a field stays compatible.
//!
//! Each installed adapter has its own record ([`AdapterRecord`]): where its manifest came
//! from, the command its client entries run, the name of those entries (`scimcp-<adapter>`),
//! every client it is registered in, and where its packages come from. Its runtime is in
//! [`InstallState::runtimes`] under the adapter's name, where the server looks it up. A
//! receipt written before adapters were a choice (one `scimcp` entry serving refsci, recorded
//! at the top level) is read as the record of that one adapter ([`InstallState::migrate`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The `schema_version` this build writes and the newest it reads.
pub const STATE_SCHEMA_VERSION: u32 = 1;

/// The file name of the receipt under the data root.
pub const STATE_FILE: &str = "state.json";

/// The adapter every installation served before adapters were a choice.
pub const LEGACY_ADAPTER: &str = "refsci";

/// The client entry name installations used before each adapter had its own entry.
pub const LEGACY_ENTRY_NAME: &str = "scimcp";

/// The name of `adapter`'s entry in every client: `scimcp-<adapter>`, so two adapters never
/// collide.
pub fn entry_name(adapter: &str) -> String {
    format!("{LEGACY_ENTRY_NAME}-{adapter}")
}

/// Everything the installer has done under one data root.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InstallState {
    pub schema_version: u32,
    /// The version `current` points at, when one is active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<String>,
    /// The version `rollback` returns to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
    /// Every unpacked version under `versions/`, by semver.
    #[serde(default)]
    pub versions: BTreeMap<String, VersionRecord>,
    /// The runtime in force for each adapter of the active version, by adapter name (the
    /// server reads its interpreter here).
    #[serde(default)]
    pub runtimes: BTreeMap<String, RuntimeRecord>,
    /// Every installed adapter, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub adapters: BTreeMap<String, AdapterRecord>,
    /// Every remote server registered in the clients (`scimcp-setup install --remote URL`),
    /// by the name of its entry. A remote registration needs no version, runtime or data
    /// folder on this computer: the server runs elsewhere.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub remotes: BTreeMap<String, RemoteRecord>,
    /// The folders the server may read datasets from (`--data-dir` in every registered
    /// command): the user's, created by the installer when missing and never deleted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_dirs: Vec<PathBuf>,
    /// Receipts written before adapters were a choice: the command of the one `scimcp` entry.
    /// [`InstallState::migrate`] moves it into the refsci adapter's record.
    #[serde(rename = "server", default, skip_serializing_if = "Option::is_none")]
    pub legacy_server: Option<ServerCommand>,
    /// Receipts written before adapters were a choice: the clients of the one `scimcp`
    /// entry, by client id. [`InstallState::migrate`] moves them into the refsci adapter's
    /// record.
    #[serde(
        rename = "clients",
        default,
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub legacy_clients: BTreeMap<String, ClientRecord>,
}

/// One installed adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdapterRecord {
    /// Where its manifest comes from.
    pub source: AdapterSource,
    /// The command every client entry of this adapter runs (`scimcp serve --adapter …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerCommand>,
    /// Every client it is registered in, by client id.
    #[serde(default)]
    pub clients: BTreeMap<String, ClientRecord>,
    /// Where its runtime's packages come from (a wheelhouse, another index); `repair` and
    /// `upgrade` reuse them.
    #[serde(default, skip_serializing_if = "PackageSources::is_default")]
    pub packages: PackageSources,
}

/// One remote server (Streamable HTTP) registered in the clients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteRecord {
    /// The server's MCP endpoint, as validated (`https://lab-server:8443/mcp`).
    pub url: String,
    /// The environment variable the clients read the bearer token from (the files hold only
    /// a reference to it, never the secret); absent for a server that takes no token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// Every client it is registered in, by client id.
    #[serde(default)]
    pub clients: BTreeMap<String, ClientRecord>,
}

/// Where an adapter's manifest comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AdapterSource {
    /// Shipped with scimcp: `versions/<semver>/adapters/<name>.toml`, embedded in the server.
    Shipped,
    /// A manifest file the user named (`--adapter PATH`), copied with the files it refers to
    /// into `manifest`'s directory under the data root, which the registered command names.
    File {
        /// The path the user gave, as an absolute path.
        original: PathBuf,
        /// The managed copy (`<data root>/adapters/<name>/<file>`).
        manifest: PathBuf,
    },
}

/// Package sources for `pip install` / `uv pip install`, recorded so a repair installs from
/// the same places (an air-gapped lab's wheelhouse, a mirror).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageSources {
    /// Local wheelhouses (`--find-links DIR`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub find_links: Vec<PathBuf>,
    /// Another package index (`--index-url URL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_url: Option<String>,
    /// No index at all: only the wheelhouses (`--no-index`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_index: bool,
}

impl PackageSources {
    /// No wheelhouse, the default index.
    pub fn is_default(&self) -> bool {
        *self == PackageSources::default()
    }
}

/// One unpacked version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionRecord {
    /// Where the version's files are (`<data root>/versions/<semver>`).
    pub dir: PathBuf,
    /// What it was installed from: a bundle directory, a zip, or the running binaries.
    pub source: String,
    /// When it was unpacked (RFC 3339, UTC).
    pub installed_at: String,
    /// The runtimes this version was provisioned with, by adapter, so rollback restores them.
    #[serde(default)]
    pub runtimes: BTreeMap<String, RuntimeRecord>,
    /// Whether the version's files were signature-verified before they were unpacked. Absent
    /// in receipts written before verification existed, or rebuilt for files already on disk
    /// (`scimcp-setup status` reports that as not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureRecord>,
}

/// How a version's provenance was established when it was unpacked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureRecord {
    pub status: SignatureStatus,
    /// Who or what vouches for the files: the verified signer (certificate identity and
    /// issuer, or the trusted public key) and the release policy, or why nothing does.
    pub detail: String,
}

/// The outcome recorded in [`SignatureRecord::status`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignatureStatus {
    /// The bundle's Sigstore signature verified against the release policy.
    Verified,
    /// Unsigned material installed because the user passed `--allow-unsigned`.
    DevelopmentOverride,
    /// The binaries of the running `scimcp-setup` (a developer's own build): nothing was
    /// downloaded, so there is no signature to check.
    LocalBuild,
}

impl SignatureStatus {
    /// The name written to `state.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureStatus::Verified => "verified",
            SignatureStatus::DevelopmentOverride => "development-override",
            SignatureStatus::LocalBuild => "local-build",
        }
    }
}

/// A provisioned scientific runtime (a private virtual environment for a python adapter).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeRecord {
    /// Absolute path of the interpreter the server launches the CLI with.
    pub interpreter: PathBuf,
    /// The runtime directory (`<data root>/runtimes/<adapter>-<hash>`).
    pub dir: PathBuf,
    /// SHA-256 over the requirements, the interpreter version and the bundled package
    /// source: a directory is reused only when this matches.
    pub requirements_hash: String,
    /// The exact pins that were installed.
    pub requirements: Vec<String>,
    /// The interpreter's version, e.g. `3.11.7`.
    pub python_version: String,
    /// `uv` or `venv+pip`.
    pub provisioner: String,
    /// Installed version of each pinned distribution as the runtime reported it.
    #[serde(default)]
    pub versions: BTreeMap<String, Option<String>>,
    /// Identity of the adapter's package as installed (same hash `get_environment` reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<PackageRecord>,
    /// The interpreter the environment was created from, and why it was chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<BaseInterpreter>,
}

/// The base interpreter of a runtime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseInterpreter {
    /// `sys.executable` of the base interpreter.
    pub path: PathBuf,
    /// Its version, e.g. `3.9.18`.
    pub version: String,
    /// Where it was found: `--python`, `uv python find`, `uv python install`, `PATH`,
    /// `pyenv`, `py launcher`, `python.org framework`.
    pub found_by: String,
    /// Why this one, in one line (the range it meets, what was passed over).
    pub reason: String,
}

/// The installed adapter package: version and the hash over its files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageRecord {
    pub name: String,
    pub version: Option<String>,
    pub files: u64,
    /// SHA-256 over sorted `relpath\0sha256\n` lines of the package's import directory.
    pub sha256: Option<String>,
}

/// The command registered in every client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCommand {
    pub command: PathBuf,
    pub args: Vec<String>,
}

/// One client registration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientRecord {
    /// The entry's name in the client: `scimcp-<adapter>` ([`entry_name`]); `scimcp` in a
    /// record an older scimcp wrote (the next install, repair or upgrade renames the entry).
    #[serde(default = "legacy_entry_name")]
    pub name: String,
    /// The configuration file, or the client CLI that manages it.
    pub location: String,
    /// `file` (scimcp edited the file) or `cli` (the client's own CLI did).
    pub method: String,
    /// The entry scimcp wrote, as JSON: uninstall removes only an entry still equal to it.
    pub entry: serde_json::Value,
    /// Whether scimcp created the file (it may delete it again when nothing else is left).
    #[serde(default)]
    pub created_file: bool,
    /// Backups of the file's previous bytes, oldest first.
    #[serde(default)]
    pub backups: Vec<PathBuf>,
    /// The file scimcp actually wrote when `location` is a symbolic link (the link's final
    /// target, e.g. a file in a dotfiles repository); absent for an ordinary file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<PathBuf>,
    /// SHA-256 of the bytes scimcp last wrote to the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_sha256: Option<String>,
    /// The file as it was before scimcp added its entry. While the file still holds exactly
    /// the bytes scimcp wrote (`written_sha256`), uninstall puts these bytes back unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pristine: Option<Pristine>,
    /// Whether scimcp created the object that holds its entry (Zed's `context_servers`, VS
    /// Code's `servers`, …): uninstall removes it again when nothing else is in it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created_container: bool,
}

/// A client file's bytes from before scimcp's entry was added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pristine {
    /// The backup holding them.
    pub backup: PathBuf,
    /// Their SHA-256 (a backup that no longer matches is not used).
    pub sha256: String,
}

fn legacy_entry_name() -> String {
    LEGACY_ENTRY_NAME.to_string()
}

/// Why `state.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Not readable, not a regular file, or larger than [`crate::fs::CONFIG_READ_LIMIT`].
    #[error(transparent)]
    Read(#[from] crate::fs::ReadError),
    #[error(
        "{path} is not a valid scimcp state file (line {line}, column {column}): {message}; \
         run `scimcp-setup repair` to rebuild it"
    )]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "{path} has schema version {found}, newer than this scimcp understands ({STATE_SCHEMA_VERSION}); \
         use the scimcp that wrote it, or upgrade"
    )]
    TooNew { path: PathBuf, found: u32 },
}

impl InstallState {
    /// An empty receipt in the current schema.
    pub fn new() -> InstallState {
        InstallState {
            schema_version: STATE_SCHEMA_VERSION,
            ..InstallState::default()
        }
    }

    /// `<data root>/state.json`.
    pub fn path(data_root: &Path) -> PathBuf {
        data_root.join(STATE_FILE)
    }

    /// Read the receipt under `data_root`; `Ok(None)` when nothing was ever installed there.
    pub fn load(data_root: &Path) -> Result<Option<InstallState>, StateError> {
        let path = Self::path(data_root);
        let Some(bytes) = crate::fs::read_regular(&path, crate::fs::CONFIG_READ_LIMIT)? else {
            return Ok(None);
        };
        let state: InstallState =
            serde_json::from_slice(&bytes).map_err(|e| StateError::Parse {
                path: path.clone(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            })?;
        if state.schema_version > STATE_SCHEMA_VERSION {
            return Err(StateError::TooNew {
                path,
                found: state.schema_version,
            });
        }
        let mut state = state;
        state.migrate();
        Ok(Some(state))
    }

    /// Bring a receipt written before adapters were a choice into the current shape: its
    /// one `scimcp` entry (top-level `server` and `clients`) and its runtimes become adapter
    /// records, refsci's with the clients whose entries are still called `scimcp` (the next
    /// install, repair or upgrade renames them). A receipt that already has adapter records
    /// is left as it is.
    pub fn migrate(&mut self) {
        if !self.adapters.is_empty() {
            return;
        }
        let legacy = self.legacy_server.is_some() || !self.legacy_clients.is_empty();
        let mut names: Vec<String> = self.runtimes.keys().cloned().collect();
        if legacy && !names.iter().any(|n| n == LEGACY_ADAPTER) {
            names.push(LEGACY_ADAPTER.to_string());
        }
        for name in names {
            let refsci = name == LEGACY_ADAPTER;
            let record = AdapterRecord {
                source: AdapterSource::Shipped,
                server: if refsci {
                    self.legacy_server.take()
                } else {
                    None
                },
                clients: if refsci {
                    std::mem::take(&mut self.legacy_clients)
                } else {
                    BTreeMap::new()
                },
                packages: PackageSources::default(),
            };
            self.adapters.insert(name, record);
        }
    }

    /// The recorded interpreter of `adapter`'s active runtime.
    pub fn interpreter(&self, adapter: &str) -> Option<&Path> {
        self.runtimes.get(adapter).map(|r| r.interpreter.as_path())
    }
}

/// The interpreter the installer provisioned for `adapter` under `data_root`, if any: what
/// the server uses when neither `--python` nor `SCIMCP_PYTHON` is given.
pub fn recorded_interpreter(
    data_root: &Path,
    adapter: &str,
) -> Result<Option<PathBuf>, StateError> {
    Ok(InstallState::load(data_root)?.and_then(|s| s.interpreter(adapter).map(Path::to_path_buf)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_the_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        assert!(InstallState::load(dir.path()).unwrap().is_none());
        let mut state = InstallState::new();
        state.runtimes.insert(
            "refsci".into(),
            RuntimeRecord {
                interpreter: dir.path().join("runtimes/refsci-ab/bin/python"),
                dir: dir.path().join("runtimes/refsci-ab"),
                requirements_hash: "ab".into(),
                requirements: vec!["numpy==2.1.3".into()],
                python_version: "3.11.7".into(),
                provisioner: "venv+pip".into(),
                versions: BTreeMap::new(),
                package: None,
                base: None,
            },
        );
        state.adapters.insert(
            "refsci".into(),
            AdapterRecord {
                source: AdapterSource::Shipped,
                server: None,
                clients: BTreeMap::new(),
                packages: PackageSources::default(),
            },
        );
        state.remotes.insert(
            "scimcp-remote-lab".into(),
            RemoteRecord {
                url: "https://lab:8443/mcp".into(),
                token_env: Some("SCIMCP_TOKEN".into()),
                clients: BTreeMap::new(),
            },
        );
        crate::fs::write_json_atomic(&InstallState::path(dir.path()), &state).unwrap();
        assert_eq!(InstallState::load(dir.path()).unwrap().unwrap(), state);
        assert_eq!(
            recorded_interpreter(dir.path(), "refsci").unwrap().unwrap(),
            dir.path().join("runtimes/refsci-ab/bin/python")
        );
        assert!(recorded_interpreter(dir.path(), "other").unwrap().is_none());
    }

    #[test]
    fn refuses_newer_schema_and_names_position_of_bad_json() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(InstallState::path(dir.path()), br#"{"schema_version": 99}"#).unwrap();
        let err = InstallState::load(dir.path()).unwrap_err();
        assert!(matches!(err, StateError::TooNew { found: 99, .. }), "{err}");
        fs_err::write(
            InstallState::path(dir.path()),
            b"{\n  \"schema_version\": 1,\n",
        )
        .unwrap();
        let err = InstallState::load(dir.path()).unwrap_err();
        assert!(matches!(err, StateError::Parse { line: 3, .. }), "{err}");
    }

    #[test]
    fn a_receipt_from_before_adapters_becomes_refsci_s_record_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let legacy = serde_json::json!({
            "schema_version": 1,
            "active": "0.1.0",
            "versions": {},
            "runtimes": {"refsci": {
                "interpreter": "/d/runtimes/refsci-ab/bin/python", "dir": "/d/runtimes/refsci-ab",
                "requirements_hash": "ab", "requirements": [], "python_version": "3.11.7",
                "provisioner": "venv+pip"
            }},
            "server": {"command": "/d/current/bin/scimcp", "args": ["serve", "--adapter", "refsci"]},
            "clients": {"cursor": {
                "location": "/h/.cursor/mcp.json", "method": "file",
                "entry": {"command": "/d/current/bin/scimcp", "args": ["serve", "--adapter", "refsci"]}
            }}
        });
        fs_err::write(
            InstallState::path(dir.path()),
            serde_json::to_vec(&legacy).unwrap(),
        )
        .unwrap();
        let state = InstallState::load(dir.path()).unwrap().unwrap();
        assert!(state.legacy_server.is_none() && state.legacy_clients.is_empty());
        let refsci = &state.adapters[LEGACY_ADAPTER];
        assert_eq!(refsci.clients["cursor"].name, "scimcp");
        assert_eq!(refsci.source, AdapterSource::Shipped);
        assert_eq!(
            refsci.server.as_ref().unwrap().command,
            PathBuf::from("/d/current/bin/scimcp")
        );
        assert_eq!(refsci.clients["cursor"].method, "file");
        assert_eq!(state.runtimes["refsci"].base, None);
        // Written back, it is in the current shape and reads back the same.
        crate::fs::write_json_atomic(&InstallState::path(dir.path()), &state).unwrap();
        let text = fs_err::read_to_string(InstallState::path(dir.path())).unwrap();
        assert!(!text.contains("\"server\": {\n    \"command"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(
            json.get("clients").is_none() && json.get("server").is_none(),
            "{text}"
        );
        assert_eq!(InstallState::load(dir.path()).unwrap().unwrap(), state);
        assert_eq!(entry_name("geochemistrypi"), "scimcp-geochemistrypi");
    }

    #[test]
    fn a_current_receipt_is_not_migrated() {
        let mut state = InstallState::new();
        state.adapters.insert(
            "demo".into(),
            AdapterRecord {
                source: AdapterSource::File {
                    original: "/x/demo.toml".into(),
                    manifest: "/d/adapters/demo/demo.toml".into(),
                },
                server: None,
                clients: BTreeMap::new(),
                packages: PackageSources {
                    find_links: vec!["/wheels".into()],
                    index_url: None,
                    no_index: true,
                },
            },
        );
        let before = state.clone();
        state.migrate();
        assert_eq!(state, before);
        assert!(InstallState::new().adapters.is_empty());
    }
}
