//! The installer's errors. Each says what failed, where, and what to do next.

use std::borrow::Cow;
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
    #[error("--remote registers a server that runs elsewhere; {flag} is for a local installation")]
    RemoteWithLocalFlag { flag: &'static str },
    #[error(
        "the adapter {adapter}'s entry would be called {entry}, the name of the remote server \
         {url} registered here; nothing was changed"
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
    #[error("unknown client {0:?}")]
    UnknownClient(String, String),
    #[error("the adapter manifest {path} is invalid:\n{message}")]
    Manifest { path: PathBuf, message: String },
    #[error("there is no adapter named {name:?}")]
    UnknownAdapter { name: String, shipped: String },
    #[error("the adapter {name} is not installed here")]
    AdapterNotInstalled { name: String },
    #[error(
        "the copy of the adapter {name} ({copy}) is missing or damaged and its original \
         {original} is gone"
    )]
    AdapterCopyMissing {
        name: String,
        copy: PathBuf,
        original: PathBuf,
    },
    #[error("scimcp is not installed under {0}")]
    NotInstalled(PathBuf),
    #[error("there is no previous version to roll back to")]
    NoPrevious,
    #[error("the previous version {0} is no longer under versions/")]
    PreviousMissing(String),
    #[error("{mirror} holds no scimcp bundle (scimcp-<semver>*/ or scimcp-<semver>*.zip)")]
    EmptyMirror { mirror: PathBuf },
    #[error("{mirror} has no version {version}")]
    NoSuchVersion { mirror: PathBuf, version: String },
    #[error("{target} is older than the active {active}")]
    Downgrade { active: String, target: String },
    #[error("the active version {active} is damaged and this scimcp-setup is {running}")]
    CannotRepairVersion { active: String, running: String },
    #[error(
        "scimcp {active} is installed and this is {target}, an older version; nothing was changed"
    )]
    InstallOlder { active: String, target: String },
    #[error(
        "--purge deletes everything scimcp keeps, for every adapter; it cannot be combined \
         with --adapter"
    )]
    PurgeWithAdapter,
    #[error("--purge deletes every run and result under {0} and was not confirmed")]
    PurgeNeedsYes(PathBuf),
    #[error("the purge was not confirmed; nothing was deleted")]
    PurgeDeclined,
    #[error("the data folder {0} exists but is not a folder; nothing was changed")]
    DataDirNotADirectory(PathBuf),
    #[error("{0} client(s) could not be updated (see above); everything else was done")]
    ClientsFailed(usize),
}

impl scimcp_core::failure::Hint for SetupError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        use SetupError as E;
        Some(match self {
            E::Bundle(e) => return e.hint(),
            E::Lock(e) => return e.hint(),
            E::RemoteServer(e) => return e.hint(),
            E::Signature(e) => return e.hint(),
            E::NoHome(e) => return e.hint(),
            E::DataRoot(e) => return e.hint(),
            E::RemoteWithLocalFlag { .. } => "run the two as separate commands".into(),
            E::AdapterNameTaken { entry, url, .. } => format!(
                "run `scimcp-setup uninstall --remote {entry}`, then `scimcp-setup install \
                 --remote {url} --name OTHER`, before installing the adapter"
            )
            .into(),
            E::UnknownClient(_, ids) => {
                format!("`scimcp-setup clients` lists the ids: {ids}").into()
            }
            E::UnknownAdapter { shipped, .. } => format!(
                "the adapters that ship with scimcp are: {shipped} (or give the path of a \
                 manifest file, e.g. --adapter ./my-tool.toml)"
            )
            .into(),
            E::AdapterNotInstalled { .. } => {
                "`scimcp-setup status` lists the installed adapters".into()
            }
            E::AdapterCopyMissing { .. } => {
                "run `scimcp-setup install --adapter PATH` with the manifest again".into()
            }
            E::NotInstalled(_) => "run `scimcp-setup install` first".into(),
            E::PreviousMissing(_) => "run `scimcp-setup upgrade` or `repair` instead".into(),
            E::EmptyMirror { .. } | E::NoSuchVersion { .. } => {
                "point --from at a folder of scimcp release bundles, as published on the \
                 release page"
                    .into()
            }
            E::Downgrade { .. } => "pass --allow-downgrade to install it anyway".into(),
            E::CannotRepairVersion { active, .. } => {
                format!("run `scimcp-setup repair --from BUNDLE` with the {active} bundle").into()
            }
            E::InstallOlder { target, .. } => format!(
                "run the newer scimcp-setup, or go back on purpose with `scimcp-setup rollback` \
                 or `scimcp-setup upgrade --from MIRROR_DIR --version {target} --allow-downgrade`"
            )
            .into(),
            E::PurgeWithAdapter => {
                "--adapter alone removes only those adapters and keeps the runs".into()
            }
            E::PurgeNeedsYes(_) => "rerun with --yes to confirm".into(),
            E::DataDirNotADirectory(_) => {
                "move it aside, or choose another with --data-dir DIR".into()
            }
            E::ClientsFailed(_) => {
                "each failed client's line says why; fix that, then run `scimcp-setup repair`"
                    .into()
            }
            _ => return None,
        })
    }
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
