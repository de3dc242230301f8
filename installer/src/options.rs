//! What `install`, `repair` and `uninstall` take besides the [`crate::Setup`]: plain data,
//! so the doctor and tests call the library without clap. The command line resolves its
//! flags into these ([`crate::cli`] has the `From` impls).

use std::path::PathBuf;

/// How to install or repair (`scimcp-setup install|repair` flags).
#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    /// A bundle to install instead of the running binaries: a directory, a .zip, or an
    /// https:// address of a release's .zip.
    pub from: Option<PathBuf>,
    /// The interpreter to build the scientific runtime from.
    pub python: Option<PathBuf>,
    /// Register clients without provisioning the runtime.
    pub skip_runtime: bool,
    pub packages: PackageOptions,
    /// Folders the server may read datasets from (empty: keep the recorded ones).
    pub data_dirs: Vec<PathBuf>,
    pub signature: SignatureOptions,
    pub remote: RemoteOptions,
}

/// Where the runtime's packages come from; given, they replace the recorded ones.
#[derive(Debug, Clone, Default)]
pub struct PackageOptions {
    /// Wheelhouse folders, as pip's --find-links.
    pub find_links: Vec<PathBuf>,
    /// A package index other than PyPI, as pip's --index-url.
    pub index_url: Option<String>,
    /// Only the `find_links` folders.
    pub no_index: bool,
}

impl PackageOptions {
    /// Whether any was given.
    pub fn given(&self) -> bool {
        !self.find_links.is_empty() || self.index_url.is_some() || self.no_index
    }
}

/// How bundles are checked before they are unpacked.
#[derive(Debug, Clone, Default)]
pub struct SignatureOptions {
    /// Development only: accept unsigned material (recorded as an override).
    pub allow_unsigned: bool,
    /// A release policy file instead of the built-in one.
    pub release_policy: Option<PathBuf>,
    /// A Sigstore trusted root instead of the built-in one.
    pub trusted_root: Option<PathBuf>,
}

/// A remote server to register (or repair) instead of a local installation.
#[derive(Debug, Clone, Default)]
pub struct RemoteOptions {
    /// Its MCP endpoint's URL, or (to repair) the name it is registered under.
    pub remote: Option<String>,
    /// The environment variable the clients read the token from (default `SCIMCP_TOKEN`).
    pub token_env: Option<String>,
    /// Register it without a token.
    pub no_token: bool,
    /// The entry's name in every client (default `scimcp-remote-<host>`).
    pub name: Option<String>,
}

/// How to uninstall (`scimcp-setup uninstall` flags).
#[derive(Debug, Clone, Default)]
pub struct UninstallOptions {
    /// Also delete run data, datasets and backups.
    pub purge: bool,
    /// Remove only this remote server's entries (its name or URL).
    pub remote: Option<String>,
}
