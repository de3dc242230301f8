//! What every tool and resource shares: the settings `scimcp serve` resolved at start-up
//! ([`ServerSettings`]) and the context opened from them ([`ServerContext`]: the adapter,
//! the runtime, the dataset catalog, the run and campaign managers, the validators and the
//! confirmations issued). It sits below the rmcp handler (`server.rs`), the tools and the
//! resources, and imports none of them.

use std::path::PathBuf;
use std::sync::Arc;

use scimcp_core::Adapter;
use scimcp_core::dirs::NoHome;
use scimcp_core::failure::Hinted;
use scimcp_core::manifest::ManifestErrors;

use crate::datasets::DatasetCatalog;
use crate::runs::RunManager;
use crate::runtime::ScientificRuntime;
use crate::validate::Validators;

/// Why the server cannot start: each names the flag, directory or manifest at fault. The
/// hint of an invalid adapter (and of a missing home) stays in the chain, where
/// `Failure::new` finds it.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// One manifest problem that has a hint: the message, with the hint beside it.
    #[error("{0}")]
    AdapterHinted(#[source] Hinted),
    #[error("invalid adapter:\n{0}")]
    Adapter(ManifestErrors),
    #[error("--env {arg:?} is not NAME=VALUE; write e.g. --env OMP_NUM_THREADS=4")]
    EnvNotNameValue { arg: String },
    #[error("--env {arg:?}: {problem}")]
    EnvRefused { arg: String, problem: String },
    #[error("cannot resolve the server's start directory")]
    StartDir(#[source] std::io::Error),
    #[error("--data-dir {} is not an existing directory", path.display())]
    DataDirMissing {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    NoHome(#[source] NoHome),
    #[error("cannot create the data directory {}", path.display())]
    DataRoot {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot open the runs directory {}", path.display())]
    RunsDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot open the campaigns directory {}", path.display())]
    CampaignsDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Whether `start_analysis` and `cancel_run` act only with `confirm: true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmMode {
    /// Without `confirm: true` they change nothing and answer with what would happen
    /// (plan-then-confirm). The default when the server is reachable from a network.
    Required,
    /// Without `confirm` they act at once; `confirm: false` still asks for a preview. The
    /// default over stdio and loopback HTTP.
    Optional,
}

impl ConfirmMode {
    pub fn word(self) -> &'static str {
        match self {
            ConfirmMode::Required => "required",
            ConfirmMode::Optional => "optional",
        }
    }
}

/// What `scimcp serve` was asked to serve, resolved and checked.
#[derive(Debug)]
pub struct ServerSettings {
    pub adapter: Adapter,
    pub python: Option<PathBuf>,
    /// Canonical start directory (relative dataset paths resolve against it).
    pub start_dir: PathBuf,
    /// Canonical extra dataset directories.
    pub data_dirs: Vec<PathBuf>,
    /// scimcp's data root (runs, materialized datasets).
    pub data_root: PathBuf,
    /// The operator's `--env` variables for every run.
    pub run_env: std::collections::BTreeMap<String, String>,
    /// Plan-then-confirm for starting and cancelling runs.
    pub confirm: ConfirmMode,
    /// Where runs execute.
    pub executor: crate::runs::executor::Executor,
    /// The client's deadline for one tool call (`--client-timeout-s`).
    pub client_timeout_s: Option<u64>,
}

impl ServerSettings {
    /// Resolve the adapter, the start directory, the data directories and the data root.
    pub fn resolve(
        adapter: &str,
        python: Option<PathBuf>,
        data_dirs: Vec<PathBuf>,
        run_env: &[String],
    ) -> Result<ServerSettings, StartError> {
        Self::resolve_choice(adapter.into(), python, data_dirs, run_env)
    }

    /// [`ServerSettings::resolve`] with the operator's choices for a CWL tool.
    pub(crate) fn resolve_choice(
        adapter: crate::adapter_source::AdapterChoice<'_>,
        python: Option<PathBuf>,
        data_dirs: Vec<PathBuf>,
        run_env: &[String],
    ) -> Result<ServerSettings, StartError> {
        let adapter =
            crate::adapter_source::resolve(adapter).map_err(|e| match e.split_hint() {
                Some((message, hint)) => StartError::AdapterHinted(Hinted::new(
                    format!("invalid adapter: {message}"),
                    hint,
                )),
                None => StartError::Adapter(e),
            })?;
        let run_env = parse_run_env(run_env)?;
        let start_dir = std::env::current_dir()
            .and_then(fs_err::canonicalize)
            .map_err(StartError::StartDir)?;
        let data_dirs = data_dirs
            .into_iter()
            .map(|d| {
                fs_err::canonicalize(&d)
                    .map_err(|source| StartError::DataDirMissing { path: d, source })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let data_root = scimcp_core::dirs::data_root().map_err(StartError::NoHome)?;
        // Flag and SCIMCP_PYTHON (clap reads both) win; then the runtime scimcp-setup
        // provisioned for this adapter. An unreadable state file is a warning, not a crash:
        // the server still starts and says what is missing.
        let python = match python.filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => Some(p),
            None => {
                match scimcp_core::install_state::recorded_interpreter(
                    &data_root,
                    &adapter.manifest.name,
                ) {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::warn!("{e}");
                        None
                    }
                }
            }
        };
        Ok(ServerSettings {
            adapter,
            python,
            start_dir,
            data_dirs,
            data_root,
            run_env,
            confirm: ConfirmMode::Optional,
            executor: crate::runs::executor::Executor::Local,
            client_timeout_s: None,
        })
    }
}

/// `--env NAME=VALUE` arguments, each checked by the rules a manifest's `env` follows.
fn parse_run_env(
    args: &[String],
) -> Result<std::collections::BTreeMap<String, String>, StartError> {
    let mut env = std::collections::BTreeMap::new();
    for arg in args {
        let Some((name, value)) = arg.split_once('=') else {
            return Err(StartError::EnvNotNameValue { arg: arg.clone() });
        };
        if let Some(problem) = scimcp_core::run_env::manifest_env_problem(name, value) {
            return Err(StartError::EnvRefused {
                arg: arg.clone(),
                problem: problem.to_string(),
            });
        }
        env.insert(name.to_string(), value.to_string());
    }
    Ok(env)
}

/// Everything the tools share.
#[derive(Debug)]
pub struct ServerContext {
    pub adapter: Arc<Adapter>,
    pub runtime: ScientificRuntime,
    pub datasets: DatasetCatalog,
    pub runs: Arc<RunManager>,
    pub campaigns: Arc<crate::campaigns::CampaignManager>,
    pub(crate) validators: Validators,
    pub data_root: PathBuf,
    /// Plan-then-confirm for starting and cancelling runs.
    pub confirm: ConfirmMode,
    /// The confirmations (validation and preview ids) this process issued.
    pub(crate) grants: crate::grants::Grants,
    /// The client's deadline for one tool call, when `--client-timeout-s` told it.
    pub client_timeout_s: Option<u64>,
}

/// How long after the start the adapter's hash is computed in the background.
const FINGERPRINT_AFTER: std::time::Duration = std::time::Duration::from_millis(30);

impl ServerContext {
    /// Open the state directories, recover interrupted runs and prepare validators.
    pub async fn open(settings: ServerSettings) -> Result<Arc<ServerContext>, StartError> {
        let adapter = Arc::new(settings.adapter);
        // The adapter's canonical form and hash are needed by the first validation, not by
        // the handshake: the blocking pool computes them once the first answers are out (on
        // two cores, a millisecond of hashing beside the start delayed the handshake), and a
        // validation that comes sooner computes them itself.
        drop(tokio::spawn({
            let adapter = Arc::clone(&adapter);
            async move {
                tokio::time::sleep(FINGERPRINT_AFTER).await;
                drop(tokio::task::spawn_blocking(move || {
                    adapter.sha256();
                }));
            }
        }));
        let runtime = ScientificRuntime::resolve(&adapter, settings.python, settings.run_env)
            .with_run_root(settings.data_root.clone());
        if let Some(problem) = runtime.problem() {
            tracing::warn!("{problem}");
        }
        scimcp_core::fs::create_private_dir(&settings.data_root).map_err(|source| {
            StartError::DataRoot {
                path: settings.data_root.clone(),
                source,
            }
        })?;
        let datasets_root = settings.data_root.join("datasets");
        let datasets = DatasetCatalog::new(
            &adapter,
            settings.start_dir,
            settings.data_dirs,
            &datasets_root,
        );
        if let Some(note) = datasets.start_dir_note() {
            tracing::warn!("{note}");
        }
        let runs_dir = settings.data_root.join("runs");
        let runs =
            RunManager::open(runs_dir.clone(), &adapter, settings.executor).map_err(|source| {
                StartError::RunsDir {
                    path: runs_dir.clone(),
                    source,
                }
            })?;
        let runs = Arc::new(runs);
        if runs.has_detached_runs() {
            // Their results record the runtime identity, as the first server's would have.
            let probe = runtime.probe().await.ok();
            let n = runs.reattach(probe);
            tracing::info!("re-attached to {n} batch job(s) of earlier runs");
        }
        let campaigns_dir = settings
            .data_root
            .join("campaigns")
            .join(&adapter.manifest.name);
        let campaigns =
            crate::campaigns::CampaignManager::open(campaigns_dir.clone()).map_err(|source| {
                StartError::CampaignsDir {
                    path: campaigns_dir.clone(),
                    source,
                }
            })?;
        let validators = Validators::new(&adapter);
        tracing::info!(adapter = adapter.manifest.name, version = adapter.manifest.version, runs = %runs_dir.display(), "scimcp server ready");
        Ok(Arc::new(ServerContext {
            adapter,
            runtime,
            datasets,
            runs,
            campaigns: Arc::new(campaigns),
            validators,
            data_root: settings.data_root,
            confirm: settings.confirm,
            grants: crate::grants::Grants::default(),
            client_timeout_s: settings.client_timeout_s,
        }))
    }
}
