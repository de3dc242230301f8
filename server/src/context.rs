//! What every tool and resource shares: the settings `scimcp serve` resolved at start-up
//! ([`ServerSettings`]) and the context opened from them ([`ServerContext`]: the adapter,
//! the runtime, the dataset catalog, the run and campaign managers, the validators and the
//! confirmations issued). It sits below the rmcp handler (`server.rs`), the tools and the
//! resources, and imports none of them.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use scimcp_core::Adapter;

use crate::datasets::DatasetCatalog;
use crate::runs::RunManager;
use crate::runtime::ScientificRuntime;
use crate::validate::Validators;

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
    ) -> anyhow::Result<ServerSettings> {
        let adapter =
            scimcp_core::manifest::resolve(adapter).map_err(|e| match e.split_hint() {
                Some((message, hint)) => anyhow::Error::new(scimcp_core::failure::Hinted::new(
                    format!("invalid adapter: {message}"),
                    hint,
                )),
                None => anyhow::anyhow!("invalid adapter:\n{e}"),
            })?;
        let run_env = parse_run_env(run_env)?;
        let start_dir = std::env::current_dir()
            .and_then(fs_err::canonicalize)
            .context("cannot resolve the server's start directory")?;
        let data_dirs = data_dirs
            .into_iter()
            .map(|d| {
                fs_err::canonicalize(&d).with_context(|| {
                    format!("--data-dir {} is not an existing directory", d.display())
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let data_root = scimcp_core::dirs::data_root()?;
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
fn parse_run_env(args: &[String]) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let mut env = std::collections::BTreeMap::new();
    for arg in args {
        let Some((name, value)) = arg.split_once('=') else {
            anyhow::bail!("--env {arg:?} is not NAME=VALUE; write e.g. --env OMP_NUM_THREADS=4");
        };
        if let Some(problem) = scimcp_core::run_env::manifest_env_problem(name, value) {
            anyhow::bail!("--env {arg:?}: {problem}");
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

impl ServerContext {
    /// Open the state directories, recover interrupted runs and prepare validators.
    pub async fn open(settings: ServerSettings) -> anyhow::Result<Arc<ServerContext>> {
        let adapter = Arc::new(settings.adapter);
        // The adapter's canonical form and hash are needed by the first validation, not by
        // the handshake: the blocking pool computes them while the server starts answering.
        drop(tokio::task::spawn_blocking({
            let adapter = Arc::clone(&adapter);
            move || {
                adapter.sha256();
            }
        }));
        let runtime = ScientificRuntime::resolve(&adapter, settings.python, settings.run_env)
            .with_run_root(settings.data_root.clone());
        if let Some(problem) = runtime.problem() {
            tracing::warn!("{problem}");
        }
        scimcp_core::fs::create_private_dir(&settings.data_root).with_context(|| {
            format!(
                "cannot create the data directory {}",
                settings.data_root.display()
            )
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
        let runs = RunManager::open(runs_dir.clone(), &adapter, settings.executor)
            .with_context(|| format!("cannot open the runs directory {}", runs_dir.display()))?;
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
        let campaigns = crate::campaigns::CampaignManager::open(campaigns_dir.clone())
            .with_context(|| {
                format!(
                    "cannot open the campaigns directory {}",
                    campaigns_dir.display()
                )
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
