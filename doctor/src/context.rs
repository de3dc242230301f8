//! What every check reads: the host, the managed layout, the receipt, the registered
//! adapter's manifest and one runtime probe, each computed at most once and shared by the
//! checks running concurrently.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use scimcp_core::install_state::{InstallState, RuntimeRecord, ServerCommand};
use scimcp_core::manifest::Manifest;
use scimcp_core::runtime_probe::{RUNTIME_PROBE_SCRIPT, RuntimeProbe, requirement_names};
use scimcp_installer::layout::DEFAULT_ADAPTER;
use scimcp_installer::{Host, Layout};

use crate::check::CheckResult;

/// Limits and switches the checks run with.
#[derive(Debug, Clone)]
pub struct Options {
    /// Time limit of the import check (importing a scientific stack cold can take a while).
    pub import_timeout: Duration,
    /// Time limit of the whole MCP handshake.
    pub handshake_timeout: Duration,
    /// Skip the two slow checks (`runtime.import`, `server.handshake`).
    pub fast: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            import_timeout: Duration::from_secs(120),
            handshake_timeout: Duration::from_secs(60),
            fast: false,
        }
    }
}

/// The probe and manifest time limit: they only read metadata.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// Everything the checks share.
#[derive(Debug)]
pub struct Context {
    pub host: Host,
    pub layout: Layout,
    pub options: Options,
    /// The receipt: `Ok(None)` when nothing is installed, `Err` with the reason when it
    /// cannot be read.
    pub state: Result<Option<InstallState>, String>,
    manifest: OnceLock<Result<Manifest, String>>,
    probe: OnceLock<Result<RuntimeProbe, String>>,
}

impl Context {
    pub fn new(host: Host, layout: Layout, options: Options) -> Context {
        let state = InstallState::load(&layout.root).map_err(|e| e.to_string());
        Context {
            host,
            layout,
            options,
            state,
            manifest: OnceLock::new(),
            probe: OnceLock::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.layout.root
    }

    /// The receipt, or the skipped result every dependent check reports without one.
    pub fn installed(&self, id: &str) -> Result<&InstallState, CheckResult> {
        match &self.state {
            Ok(Some(state)) => Ok(state),
            Ok(None) => Err(CheckResult::skipped(
                id,
                format!(
                    "scimcp is not installed under {} (see install.layout)",
                    self.root().display()
                ),
            )),
            Err(_) => Err(CheckResult::skipped(
                id,
                "state.json cannot be read (see install.layout)",
            )),
        }
    }

    /// The command clients run: the recorded one, else the one the layout prescribes.
    pub fn server(&self) -> ServerCommand {
        match &self.state {
            Ok(Some(InstallState {
                server: Some(s), ..
            })) => s.clone(),
            _ => self.layout.server_command(&self.data_dirs()),
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

    /// The adapter the registered command serves (`--adapter NAME`).
    pub fn adapter(&self) -> String {
        adapter_of(&self.server().args).unwrap_or_else(|| DEFAULT_ADAPTER.to_string())
    }

    /// The runtime recorded for the registered adapter.
    pub fn runtime(&self, id: &str) -> Result<&RuntimeRecord, CheckResult> {
        let state = self.installed(id)?;
        let adapter = self.adapter();
        state.runtimes.get(&adapter).ok_or_else(|| {
            CheckResult::fail(
                id,
                format!(
                    "no scientific runtime is recorded for {adapter} (installed with --skip-runtime, \
                     or provisioning never finished)"
                ),
            )
            .remedy("scimcp-setup repair")
            .fixable()
        })
    }

    /// The registered adapter's manifest as the active version ships it (the one the
    /// installer provisioned from), else the copy embedded in this binary.
    pub fn manifest(&self) -> Result<&Manifest, &str> {
        self.manifest
            .get_or_init(|| {
                let name = self.adapter();
                let shipped = self
                    .layout
                    .current()
                    .join("adapters")
                    .join(format!("{name}.toml"));
                let adapter = if shipped.is_file() {
                    scimcp_core::manifest::load_file(&shipped)
                } else {
                    scimcp_core::manifest::resolve(&name)
                };
                adapter
                    .map(|a| a.manifest)
                    .map_err(|e| format!("adapter {name} cannot be loaded: {e}"))
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// The runtime probe (interpreter version, pinned distributions, package identity), run
    /// once on the recorded interpreter.
    pub fn probe(&self, runtime: &RuntimeRecord) -> Result<&RuntimeProbe, &str> {
        self.probe
            .get_or_init(|| {
                let manifest = self.manifest().map_err(str::to_string)?;
                run_probe(&runtime.interpreter, manifest)
            })
            .as_ref()
            .map_err(String::as_str)
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

fn run_probe(interpreter: &Path, manifest: &Manifest) -> Result<RuntimeProbe, String> {
    if !interpreter.is_file() {
        return Err(format!("{} does not exist", interpreter.display()));
    }
    let rt = &manifest.runtime;
    let mut cmd = scimcp_process::python_command(interpreter);
    cmd.args(["-c", RUNTIME_PROBE_SCRIPT])
        .arg(rt.package.clone().unwrap_or_default())
        .args(requirement_names(&rt.requirements));
    let out = scimcp_process::run(
        scimcp_process::Step::new("the runtime probe", cmd).timeout(PROBE_TIMEOUT),
    )
    .map_err(|e| format!("cannot run {}: {e}", interpreter.display()))?;
    if out.timed_out {
        return Err(format!(
            "{} did not answer within {} s",
            interpreter.display(),
            PROBE_TIMEOUT.as_secs()
        ));
    }
    if !out.success() {
        return Err(format!(
            "{} failed: {}",
            interpreter.display(),
            out.stderr_tail(3).join(" | ")
        ));
    }
    serde_json::from_str(out.stdout.trim())
        .map_err(|e| format!("unexpected runtime probe output: {e}"))
}

/// The platform name manifests use (`linux`, `macos`, `windows`).
pub fn platform_name(platform: scimcp_installer::Platform) -> &'static str {
    match platform {
        scimcp_installer::Platform::Linux => "linux",
        scimcp_installer::Platform::Macos => "macos",
        scimcp_installer::Platform::Windows => "windows",
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
