//! What every check reads: the host, the managed layout, the receipt, for each adapter the
//! doctor checks its manifest and one runtime probe (each computed at most once and shared by
//! the checks running concurrently), and the remote servers to check.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use scimcp_core::install_state::StateError;
use scimcp_core::install_state::{
    AdapterRecord, AdapterSource, InstallState, RuntimeRecord, ServerCommand,
};
use scimcp_core::manifest::Manifest;
use scimcp_core::runtime_probe::RuntimeProbe;
use scimcp_setup_model::host::Host;
use scimcp_setup_model::layout::DEFAULT_ADAPTER;
use scimcp_setup_model::layout::Layout;

use crate::check::CheckResult;
use crate::probe::run_probe;
use crate::unavailable::{ManifestUnavailable, ProbeError};

/// Limits and switches the checks run with.
#[derive(Debug, Clone)]
pub struct Options {
    /// Time limit of the import check (importing a scientific stack cold can take a while).
    pub import_timeout: Duration,
    /// Time limit of the whole MCP handshake.
    pub handshake_timeout: Duration,
    /// Skip the two slow checks (`runtime.import`, `server.handshake`).
    pub fast: bool,
    /// Only these adapters (`--adapter`); empty: every installed one.
    pub adapters: Vec<String>,
    /// The Slurm executor's configuration (`--slurm-config`): the server submits to Slurm,
    /// so `cluster.slurm` checks the cluster. Nothing installed records it.
    pub slurm_config: Option<PathBuf>,
    /// Only this remote server (`--remote NAME|URL`), and nothing local.
    pub remote: Option<String>,
    /// With `--remote` for a server that is not registered: the token's variable
    /// (`--token-env`; default: SCIMCP_TOKEN), or none (`--no-token`).
    pub token_env: Option<String>,
    pub no_token: bool,
    /// Certificates to trust for https:// servers instead of the public authorities.
    pub ca_cert: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            import_timeout: Duration::from_secs(120),
            handshake_timeout: Duration::from_secs(60),
            fast: false,
            adapters: Vec::new(),
            slurm_config: None,
            remote: None,
            token_env: None,
            no_token: false,
            ca_cert: None,
        }
    }
}

/// One adapter the checks are about, with its manifest and runtime probe (computed once).
#[derive(Debug)]
pub struct AdapterCtx {
    pub name: String,
    manifest: OnceLock<Result<Manifest, ManifestUnavailable>>,
    probe: OnceLock<Result<RuntimeProbe, ProbeError>>,
}

/// A remote server the checks are about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTarget {
    /// The registration's name; `None` for a `--remote URL` that is not registered here.
    pub name: Option<String>,
    pub url: String,
    /// The environment variable holding the token (`None`: no token).
    pub token_env: Option<String>,
    /// The clients it is registered in, by id.
    pub clients: Vec<String>,
}

impl RemoteTarget {
    /// How reports name it: the registration's name, else the URL.
    pub fn label(&self) -> String {
        self.name.clone().unwrap_or_else(|| self.url.clone())
    }
}

/// The remote servers to check: `--remote` (a registered one by name or URL, else the URL
/// itself, validated as the installer validates it), else every registered one.
pub fn remote_targets(
    state: Option<&InstallState>,
    options: &Options,
) -> Result<Vec<RemoteTarget>, scimcp_setup_model::remote_server::RemoteServerError> {
    use scimcp_setup_model::remote_server::{
        DEFAULT_TOKEN_ENV, RemoteUrl, check_token_env, find_recorded,
    };
    let target = |name: &str, r: &scimcp_core::install_state::RemoteRecord| RemoteTarget {
        name: Some(name.to_string()),
        url: r.url.clone(),
        token_env: r.token_env.clone(),
        clients: r.clients.keys().cloned().collect(),
    };
    let Some(given) = &options.remote else {
        return Ok(state
            .map(|s| s.remotes.iter().map(|(n, r)| target(n, r)).collect())
            .unwrap_or_default());
    };
    let recorded = state.and_then(|s| find_recorded(s, given));
    let mut found = match recorded {
        Some((name, record)) => target(name, record),
        None => RemoteTarget {
            name: None,
            url: RemoteUrl::parse(given)?.to_string(),
            token_env: Some(DEFAULT_TOKEN_ENV.to_string()),
            clients: Vec::new(),
        },
    };
    if options.no_token {
        found.token_env = None;
    } else if let Some(var) = &options.token_env {
        check_token_env(var)?;
        found.token_env = Some(var.clone());
    }
    Ok(vec![found])
}

/// Everything the checks share.
#[derive(Debug)]
pub struct Context {
    pub host: Host,
    pub layout: Layout,
    pub options: Options,
    /// The receipt: `Ok(None)` when nothing is installed, `Err` with the reason when it
    /// cannot be read.
    pub state: Result<Option<InstallState>, StateError>,
    /// The adapters checked: `--adapter`, else every installed one, else refsci; none with
    /// `--remote`, or when only remote servers are registered here.
    pub adapters: Vec<AdapterCtx>,
    /// The remote servers checked.
    pub remotes: Vec<RemoteTarget>,
}

impl Context {
    pub fn new(host: Host, layout: Layout, options: Options) -> Context {
        let state = InstallState::load(&layout.root);
        let mut names: Vec<String> = options
            .adapters
            .iter()
            .map(|a| scimcp_setup_model::adapters::adapter_name(a).unwrap_or_else(|_| a.clone()))
            .collect();
        if names.is_empty() {
            names = match &state {
                Ok(Some(s)) => s.adapters.keys().cloned().collect(),
                _ => Vec::new(),
            };
        }
        let remote_only = match &state {
            Ok(Some(s)) => s.adapters.is_empty() && !s.remotes.is_empty() && s.active.is_none(),
            _ => false,
        };
        if names.is_empty() && !remote_only {
            names.push(DEFAULT_ADAPTER.to_string());
        }
        if options.remote.is_some() {
            names.clear();
        }
        names.dedup();
        // `--adapter` checks only those adapters. An invalid --remote is refused before a
        // context is built ([`crate::run`]).
        let remotes = if options.adapters.is_empty() || options.remote.is_some() {
            remote_targets(state.as_ref().ok().and_then(Option::as_ref), &options)
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        Context {
            host,
            layout,
            options,
            state,
            remotes,
            adapters: names
                .into_iter()
                .map(|name| AdapterCtx {
                    name,
                    manifest: OnceLock::new(),
                    probe: OnceLock::new(),
                })
                .collect(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.layout.root
    }

    /// The adapters' names.
    pub fn adapter_names(&self) -> Vec<String> {
        self.adapters.iter().map(|a| a.name.clone()).collect()
    }

    /// The receipt, or the skipped result every dependent check reports without one.
    pub fn installed(&self, id: &str) -> Result<&InstallState, Box<CheckResult>> {
        match &self.state {
            Ok(Some(state)) => Ok(state),
            Ok(None) => Err(Box::new(CheckResult::skipped(
                id,
                format!(
                    "scimcp is not installed under {} (see install.layout)",
                    self.root().display()
                ),
            ))),
            Err(_) => Err(Box::new(CheckResult::skipped(
                id,
                "state.json cannot be read (see install.layout)",
            ))),
        }
    }

    /// The receipt's record of `adapter`.
    pub fn record(&self, adapter: &str) -> Option<&AdapterRecord> {
        match &self.state {
            Ok(Some(state)) => state.adapters.get(adapter),
            _ => None,
        }
    }

    /// The receipt's record of `adapter`, or the result every dependent check reports
    /// without one.
    pub fn installed_adapter(
        &self,
        id: &str,
        adapter: &str,
    ) -> Result<&AdapterRecord, Box<CheckResult>> {
        let _ = self.installed(id)?;
        self.record(adapter).ok_or_else(|| {
            Box::new(
                CheckResult::fail(id, format!("the adapter {adapter} is not installed here"))
                    .remedy(format!("scimcp-setup install --adapter {adapter}"))
                    .fixable(),
            )
        })
    }

    /// The command `adapter`'s entries run: the recorded one, else the one the layout
    /// prescribes for a shipped adapter of that name.
    pub fn server(&self, adapter: &str) -> ServerCommand {
        match self.record(adapter).and_then(|a| a.server.clone()) {
            Some(s) => s,
            None => self.layout.server_command(adapter, &self.data_dirs()),
        }
    }

    /// The data folders the installer chose (recorded, else the default one).
    pub fn data_dirs(&self) -> Vec<PathBuf> {
        let recorded = match &self.state {
            Ok(Some(state)) => state.data_dirs.clone(),
            _ => Vec::new(),
        };
        self.layout.data_dirs(&self.host, &recorded)
    }

    fn adapter(&self, name: &str) -> &AdapterCtx {
        self.adapters
            .iter()
            .find(|a| a.name == name)
            .expect("a check is planned only for an adapter of the context")
    }

    /// The runtime recorded for `adapter`.
    pub fn runtime(&self, id: &str, adapter: &str) -> Result<&RuntimeRecord, Box<CheckResult>> {
        let state = self.installed(id)?;
        self.installed_adapter(id, adapter)?;
        state.runtimes.get(adapter).ok_or_else(|| {
            Box::new(CheckResult::fail(
                id,
                format!(
                    "no scientific runtime is recorded for {adapter} (installed with --skip-runtime, \
                     or provisioning never finished)"
                ),
            )
            .remedy("scimcp-setup repair")
            .fixable())
        })
    }

    /// The directory `adapter`'s `package_source` is relative to: the active version, or
    /// the managed copy of a file adapter.
    pub fn package_base(&self, adapter: &str) -> PathBuf {
        match self.record(adapter).map(|a| &a.source) {
            Some(AdapterSource::File { manifest, .. }) => {
                scimcp_setup_model::adapters::package_base(manifest)
            }
            _ => self.layout.current(),
        }
    }

    /// `adapter`'s manifest: a file adapter's managed copy, a shipped adapter as the active
    /// version ships it (the one the installer provisioned from), else as this binary embeds
    /// it.
    pub fn manifest(&self, adapter: &str) -> Result<&Manifest, &ManifestUnavailable> {
        self.adapter(adapter)
            .manifest
            .get_or_init(|| {
                let loaded = match self.record(adapter).map(|a| &a.source) {
                    Some(AdapterSource::File { manifest, .. }) => {
                        scimcp_core::manifest::load_file(manifest)
                    }
                    // `--adapter PATH` of an adapter that is not installed: that file.
                    _ if let Some(given) = self.given_manifest(adapter) => {
                        scimcp_core::manifest::load_file(&given)
                    }
                    _ => {
                        let shipped = self
                            .layout
                            .current()
                            .join("adapters")
                            .join(format!("{adapter}.toml"));
                        if shipped.is_file() {
                            scimcp_core::manifest::load_file(&shipped)
                        } else {
                            scimcp_core::manifest::resolve(adapter)
                        }
                    }
                };
                loaded
                    .map(|a| a.manifest)
                    .map_err(|source| ManifestUnavailable {
                        adapter: adapter.to_string(),
                        source,
                    })
            })
            .as_ref()
    }

    /// The manifest file `--adapter` gave for `adapter`, when it was given as a path.
    fn given_manifest(&self, adapter: &str) -> Option<PathBuf> {
        self.options
            .adapters
            .iter()
            .filter(|a| a.ends_with(".toml") || a.contains(['/', '\\']))
            .map(PathBuf::from)
            .find(|p| scimcp_core::manifest::load_file(p).is_ok_and(|a| a.manifest.name == adapter))
    }

    /// The runtime probe (interpreter version, pinned distributions, package identity), run
    /// once on `adapter`'s recorded interpreter.
    pub fn probe(
        &self,
        adapter: &str,
        runtime: &RuntimeRecord,
    ) -> Result<&RuntimeProbe, &ProbeError> {
        self.adapter(adapter)
            .probe
            .get_or_init(|| {
                let manifest = self.manifest(adapter).map_err(Clone::clone)?;
                run_probe(&runtime.interpreter, manifest)
            })
            .as_ref()
    }
}

/// The value after `--adapter` in a server's arguments.
pub fn adapter_of(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--adapter" {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix("--adapter=") {
            return Some(v.to_string());
        }
    }
    None
}

/// The platform name manifests use (`linux`, `macos`, `windows`).
pub fn platform_name(platform: scimcp_setup_model::host::Platform) -> &'static str {
    match platform {
        scimcp_setup_model::host::Platform::Linux => "linux",
        scimcp_setup_model::host::Platform::Macos => "macos",
        scimcp_setup_model::host::Platform::Windows => "windows",
    }
}

/// `path` relative to the data root when it is inside it, for shorter findings.
pub fn short(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// A directory listing sorted by name (empty when unreadable).
pub fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs_err::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}
