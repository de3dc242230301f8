//! The managed layout under the data root, exactly as DESIGN.md fixes it:
//!
//! ```text
//! <root>/versions/<semver>/      bin/, adapters/, refsci/ of one unpacked bundle
//! <root>/current                 the active version (symlink on Unix, pointer file on Windows)
//! <root>/runtimes/<adapter>-<hash>/   provisioned scientific runtimes
//! <root>/state.json              the receipt (scimcp_core::install_state)
//! <root>/backups/                previous bytes of every client file scimcp changed
//! <root>/runs/                   the server's runs: never deleted except by `uninstall --purge`
//! <root>/clients/mcp.json        the generic client file any other MCP client can be pointed at
//! <root>/.setup.lock             the cross-process lock every mutating command holds
//! <root>/.tmp/                   scratch space on the same file system (renamed into place)
//! ```

use std::path::{Path, PathBuf};

use scimcp_core::install_state::ServerCommand;

use crate::host::Platform;

/// The name of the adapter every registered entry serves (the one that ships with scimcp).
pub const DEFAULT_ADAPTER: &str = "refsci";

/// Paths of the managed layout under one data root.
#[derive(Debug, Clone)]
pub struct Layout {
    pub root: PathBuf,
    pub platform: Platform,
}

impl Layout {
    pub fn new(root: &Path, platform: Platform) -> Layout {
        Layout {
            root: root.to_path_buf(),
            platform,
        }
    }

    pub fn versions_dir(&self) -> PathBuf {
        self.root.join("versions")
    }

    pub fn version_dir(&self, version: &semver::Version) -> PathBuf {
        self.versions_dir().join(version.to_string())
    }

    pub fn current(&self) -> PathBuf {
        self.root.join("current")
    }

    pub fn runtimes_dir(&self) -> PathBuf {
        self.root.join("runtimes")
    }

    pub fn backups_dir(&self) -> PathBuf {
        self.root.join("backups")
    }

    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    pub fn clients_dir(&self) -> PathBuf {
        self.root.join("clients")
    }

    pub fn lock_path(&self) -> PathBuf {
        self.root.join(".setup.lock")
    }

    pub fn scratch_dir(&self) -> PathBuf {
        self.root.join(".tmp")
    }

    /// Windows only: the stable launcher directory (`<root>\bin`), refreshed from the active
    /// version on every switch, because a pointer file cannot be walked through like a
    /// symlink and Windows clients need a real `scimcp.exe` at a path that never changes.
    pub fn launcher_dir(&self) -> PathBuf {
        self.root.join("bin")
    }

    /// The binary every client entry runs. It never names a version, so an upgrade or a
    /// rollback switches what runs without rewriting a single client file.
    pub fn stable_server_binary(&self) -> PathBuf {
        match self.platform {
            Platform::Windows => self.launcher_dir().join("scimcp.exe"),
            _ => self.current().join("bin").join("scimcp"),
        }
    }

    /// The command and arguments scimcp registers in every client.
    pub fn server_command(&self) -> ServerCommand {
        ServerCommand {
            command: self.stable_server_binary(),
            args: vec!["serve".into(), "--adapter".into(), DEFAULT_ADAPTER.into()],
        }
    }
}
