//! The installer's errors. Each says what failed, where, and what to do next.

use std::path::PathBuf;

/// A setup command failed as a whole (per-client failures are reported per client).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    #[error(transparent)]
    State(#[from] scimcp_core::install_state::StateError),
    #[error(transparent)]
    Bundle(#[from] crate::bundle::BundleError),
    #[error(transparent)]
    Signature(#[from] crate::signature::SignatureError),
    #[error(transparent)]
    Provision(#[from] crate::runtime::ProvisionError),
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
    #[error(transparent)]
    RemoteServer(#[from] crate::remote_server::RemoteServerError),
    #[error(
        "--remote registers a server that runs elsewhere; {flag} is for a local installation. \
         Run the two as separate commands"
    )]
    RemoteWithLocalFlag { flag: &'static str },
    #[error(
        "the adapter {adapter}'s entry would be called {entry}, the name of the remote server \
         {url} registered here; nothing was changed. Run `scimcp-setup uninstall --remote \
         {entry}`, then `scimcp-setup install --remote {url} --name OTHER`, before installing \
         the adapter"
    )]
    AdapterNameTaken {
        adapter: String,
        entry: String,
        url: String,
    },
    #[error(transparent)]
    NoHome(#[from] crate::host::NoHomeDir),
    #[error(transparent)]
    DataRoot(#[from] scimcp_core::dirs::NoHome),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: scimcp_core::fs::WriteError,
    },
    #[error("{action} {path} failed: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("unknown client {0:?}; `scimcp-setup clients` lists the ids: {1}")]
    UnknownClient(String, String),
    #[error("the adapter manifest {path} is invalid:\n{message}")]
    Manifest { path: PathBuf, message: String },
    #[error(
        "there is no adapter named {name:?}; the adapters that ship with scimcp are: {shipped} \
         (or give the path of a manifest file, e.g. --adapter ./my-tool.toml)"
    )]
    UnknownAdapter { name: String, shipped: String },
    #[error(
        "the adapter {name} is not installed here; `scimcp-setup status` lists the installed \
         adapters"
    )]
    AdapterNotInstalled { name: String },
    #[error(
        "the copy of the adapter {name} ({copy}) is missing or damaged and its original \
         {original} is gone; run `scimcp-setup install --adapter PATH` with the manifest again"
    )]
    AdapterCopyMissing {
        name: String,
        copy: PathBuf,
        original: PathBuf,
    },
    #[error("scimcp is not installed under {0}; run `scimcp-setup install` first")]
    NotInstalled(PathBuf),
    #[error("there is no previous version to roll back to")]
    NoPrevious,
    #[error(
        "the previous version {0} is no longer under versions/; run `scimcp-setup upgrade` or `repair` instead"
    )]
    PreviousMissing(String),
    #[error("{mirror} holds no scimcp bundle (scimcp-<semver>*/ or scimcp-<semver>*.zip)")]
    EmptyMirror { mirror: PathBuf },
    #[error("{mirror} has no version {version}")]
    NoSuchVersion { mirror: PathBuf, version: String },
    #[error(
        "{target} is older than the active {active}; pass --allow-downgrade to install it anyway"
    )]
    Downgrade { active: String, target: String },
    #[error(
        "the active version {active} is damaged and this scimcp-setup is {running}; run \
         `scimcp-setup repair --from BUNDLE` with the {active} bundle"
    )]
    CannotRepairVersion { active: String, running: String },
    #[error(
        "scimcp {active} is installed and this is {target}, an older version; nothing was changed. \
         Run the newer scimcp-setup, or go back on purpose with `scimcp-setup rollback` or \
         `scimcp-setup upgrade --from MIRROR_DIR --version {target} --allow-downgrade`"
    )]
    InstallOlder { active: String, target: String },
    #[error(
        "--purge deletes everything scimcp keeps, for every adapter; it cannot be combined \
         with --adapter (which removes only those adapters and keeps the runs)"
    )]
    PurgeWithAdapter,
    #[error("--purge deletes every run and result under {0}; rerun with --yes to confirm")]
    PurgeNeedsYes(PathBuf),
    #[error("the purge was not confirmed; nothing was deleted")]
    PurgeDeclined,
    #[error(
        "the data folder {0} exists but is not a folder; move it aside, or choose another with \
         --data-dir DIR; nothing was changed"
    )]
    DataDirNotADirectory(PathBuf),
    #[error("{0} client(s) could not be updated (see above); everything else was done")]
    ClientsFailed(usize),
}

impl SetupError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> SetupError {
        let path = path.into();
        move |source| SetupError::Io {
            action,
            path,
            source,
        }
    }

    pub(crate) fn write(
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(scimcp_core::fs::WriteError) -> SetupError {
        let path = path.into();
        move |source| SetupError::Write { path, source }
    }
}
