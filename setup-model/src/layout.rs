//! The managed layout under the data root, exactly as DESIGN.md fixes it:
//!
//! ```text
//! <root>/versions/<semver>/      bin/, adapters/, refsci/ of one unpacked bundle
//! <root>/current                 the active version (symlink on Unix, pointer file on Windows)
//! <root>/runtimes/<adapter>-<hash>/   provisioned scientific runtimes
//! <root>/adapters/<name>/        the copy of an adapter installed from a manifest file
//! <root>/state.json              the receipt (scimcp_core::install_state)
//! <root>/backups/                previous bytes of every client file scimcp changed
//! <root>/runs/                   the server's runs: never deleted except by `uninstall --purge`
//! <root>/clients/mcp.json        the generic client file any other MCP client can be pointed at
//! <root>/.setup.lock             the cross-process lock every mutating command holds
//! <root>/.tmp/                   scratch space on the same file system (renamed into place)
//! <root>/data/                   the data folder of installs made before it moved to a visible one
//! ```
//!
//! The data folders the server may read datasets from are explicit: `<Documents>/scimcp`
//! by default (else `~/scimcp`), or the folders given with `install --data-dir`, recorded in
//! `state.json` and kept from then on. They are the user's: created when missing, never
//! deleted, never moved.

use std::path::{Path, PathBuf};

use scimcp_core::install_state::ServerCommand;

use crate::host::{Host, Platform};

/// The adapter installed when none is named and none is installed yet.
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

    /// Copies of the adapters installed from manifest files (`--adapter PATH`), by name.
    pub fn adapters_dir(&self) -> PathBuf {
        self.root.join("adapters")
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

    /// The data folder used when none is chosen, one a scientist finds in a file browser:
    /// `<Documents>/scimcp` (the platform's Documents folder, else `~/Documents` when it
    /// exists), else `~/scimcp`. Never a folder under the data root, which is hidden on Linux
    /// (`~/.local/share`) and macOS (`~/Library`) — except `<root>/data` when it already
    /// exists: an install made before this default keeps the folder holding its files.
    pub fn default_data_dir(&self, host: &Host) -> PathBuf {
        let name = scimcp_core::version::SUITE_NAME;
        if let Some(documents) = &host.documents {
            return documents.join(name);
        }
        let legacy = self.root.join("data");
        if legacy.is_dir() {
            return legacy;
        }
        let documents = host.home.join("Documents");
        if documents.is_dir() {
            documents.join(name)
        } else {
            host.home.join(name)
        }
    }

    /// The data folders in force: the `recorded` ones, else the default one.
    pub fn data_dirs(&self, host: &Host, recorded: &[PathBuf]) -> Vec<PathBuf> {
        if recorded.is_empty() {
            vec![self.default_data_dir(host)]
        } else {
            recorded.to_vec()
        }
    }

    /// The command and arguments scimcp registers in every client for one adapter: the
    /// server, the adapter (`adapter`: a shipped adapter's name or a manifest's path) and
    /// every data folder it may read datasets from.
    pub fn server_command(&self, adapter: &str, data_dirs: &[PathBuf]) -> ServerCommand {
        let mut args: Vec<String> = vec!["serve".into(), "--adapter".into(), adapter.into()];
        for dir in data_dirs {
            args.push("--data-dir".into());
            args.push(dir.to_string_lossy().into_owned());
        }
        ServerCommand {
            command: self.stable_server_binary(),
            args,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout_and_host(dir: &Path) -> (Layout, Host) {
        let home = dir.join("home");
        fs_err::create_dir_all(&home).unwrap();
        let root = home.join(".local/share/scimcp");
        (
            Layout::new(&root, Platform::Linux),
            Host::fake(Platform::Linux, &home, &[]),
        )
    }

    #[test]
    fn the_default_data_folder_is_one_a_file_browser_shows() {
        let dir = tempfile::tempdir().unwrap();
        let (layout, mut host) = layout_and_host(dir.path());
        // No Documents folder at all: the home's own scimcp folder, never under ~/.local.
        assert_eq!(layout.default_data_dir(&host), host.home.join("scimcp"));
        // A ~/Documents without xdg-user-dirs naming it.
        fs_err::create_dir(host.home.join("Documents")).unwrap();
        assert_eq!(
            layout.default_data_dir(&host),
            host.home.join("Documents/scimcp")
        );
        // The platform's own Documents folder wins (xdg-user-dirs, macOS, Windows).
        host.documents = Some(host.home.join("Mes documents"));
        assert_eq!(
            layout.default_data_dir(&host),
            host.home.join("Mes documents/scimcp")
        );
    }

    #[test]
    fn an_existing_data_folder_is_never_moved() {
        let dir = tempfile::tempdir().unwrap();
        let (layout, host) = layout_and_host(dir.path());
        fs_err::create_dir(host.home.join("Documents")).unwrap();
        // What state.json records is kept, whatever the default is now.
        let recorded = vec![layout.root.join("data")];
        assert_eq!(layout.data_dirs(&host, &recorded), recorded);
        // An install from before the default moved, whose receipt names no folder: the
        // folder under the data root holds its files, so it stays in use.
        fs_err::create_dir_all(layout.root.join("data")).unwrap();
        assert_eq!(layout.data_dirs(&host, &[]), recorded);
    }
}
