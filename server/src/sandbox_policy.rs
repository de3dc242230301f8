//! The run sandbox as the server decides it (issue 29): the mode this server runs in
//! (`serve --sandbox`), the [`Policy`] one run's CLI gets, the `scimcp __sandbox` argv that
//! applies it, and a denial read back from the CLI's stderr. The kernel side is
//! `scimcp_process::sandbox`; nothing here enforces anything, and nothing here may grant
//! the user's home, other runs or scimcp's own state beyond what a run is due.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use scimcp_process::sandbox::{Applied, Policy, Requirement};
use serde::{Deserialize, Serialize};

use crate::plan::PlannedSandbox;

/// The hidden subcommand that enters the sandbox and execs the CLI.
pub const SUBCOMMAND: &str = "__sandbox";

/// The file (in the run's directory, outside its working directory, so the CLI cannot
/// rewrite it) where `__sandbox` writes what it applied.
pub const REPORT_FILE: &str = "sandbox.json";

/// How long the interpreter's path probe may take (it imports nothing but `sys`).
const PATH_PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// `serve --sandbox` / `SCIMCP_SANDBOX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A run that cannot have every baseline protection is refused, naming it.
    Required,
    /// What this machine can enforce; each gap is recorded.
    BestEffort,
    /// No sandbox (debugging, and the test that shows the sandbox is what stops a CLI).
    Off,
}

/// `serve --sandbox` and `__job --sandbox`: the command-line spelling of a [`Mode`].
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SandboxArg {
    Required,
    BestEffort,
    Off,
}

impl From<SandboxArg> for Mode {
    fn from(arg: SandboxArg) -> Mode {
        match arg {
            SandboxArg::Required => Mode::Required,
            SandboxArg::BestEffort => Mode::BestEffort,
            SandboxArg::Off => Mode::Off,
        }
    }
}

// One server, one mode, set once at `serve`'s start: the run executor that reads it is built
// elsewhere (runs/mod.rs), so the mode travels beside it rather than through it.
static MODE: OnceLock<Mode> = OnceLock::new();

/// Set this process's mode (first call wins).
pub fn set_mode(mode: Mode) {
    let _ = MODE.set(mode);
}

/// This process's mode: best-effort unless `serve` said otherwise.
pub fn mode() -> Mode {
    MODE.get().copied().unwrap_or(Mode::BestEffort)
}

impl Mode {
    fn requirement(self) -> Requirement {
        match self {
            Mode::Required => Requirement::Required,
            Mode::BestEffort | Mode::Off => Requirement::BestEffort,
        }
    }
}

/// A workflow's `[workflow.sandbox]` as the plan and `get_capabilities` show it (`None`
/// when it declares nothing).
pub fn declared(workflow: &scimcp_core::Workflow) -> Option<PlannedSandbox> {
    workflow.sandbox.as_ref().map(|s| PlannedSandbox {
        network: s.network,
        shared_memory: s.shared_memory,
        read_only: s.read_only.clone(),
        read_write: s.read_write.clone(),
    })
}

/// What `get_environment` says of the sandbox: this server's mode and what this machine can
/// enforce.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SandboxReport {
    pub mode: Mode,
    /// Each protection as a run without network would get it here (`probe`).
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub support: scimcp_process::sandbox::Support,
}

/// This server's [`SandboxReport`].
pub fn report() -> SandboxReport {
    SandboxReport {
        mode: mode(),
        support: scimcp_process::sandbox::probe(),
    }
}

/// The environment a run of a validated plan starts in that is not part of the plan (so
/// not of its hash: the same plan hashes the same on every machine and in every mode):
/// `validate_analysis`'s `environment`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedEnvironment {
    pub sandbox: PlannedProtections,
}

/// The sandbox a run of this plan would get on this server now: the mode, whether the
/// workflow asked for the network, and each protection as this machine would apply it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedProtections {
    pub mode: Mode,
    /// The workflow declares `[workflow.sandbox] network = true`: TCP (and UDP) are not
    /// requested.
    pub network: bool,
    /// Every baseline protection applies (or is not requested): `--sandbox required` runs it.
    pub complete: bool,
    /// Each protection with its state (`enforced`, `partial`, `not_enforced` with a reason,
    /// `not_requested`); with the mode off, all `not_requested`.
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub protections: Vec<scimcp_process::sandbox::ProtectionState>,
}

/// The [`PlannedEnvironment`] of a plan with these declared grants, in this server's mode.
pub fn planned_environment(grants: Option<&PlannedSandbox>) -> PlannedEnvironment {
    planned_in(mode(), grants)
}

fn planned_in(mode: Mode, grants: Option<&PlannedSandbox>) -> PlannedEnvironment {
    let network = grants.is_some_and(|g| g.network);
    let protections = match mode {
        Mode::Off => off_report().protections,
        Mode::Required | Mode::BestEffort => {
            scimcp_process::sandbox::probe_for(network).protections
        }
    };
    let complete = protections
        .iter()
        .filter(|p| p.protection.is_baseline())
        .all(|p| p.state.is_satisfied());
    PlannedEnvironment {
        sandbox: PlannedProtections {
            mode,
            network,
            complete,
            protections,
        },
    }
}

/// Under `--sandbox required`, why a run cannot start here: the first baseline protection
/// this machine cannot enforce (the network's only when the workflow does not ask for it).
pub fn unavailable(grants: Option<&PlannedSandbox>) -> Option<crate::envelope::Issue> {
    use scimcp_process::sandbox::Protection;
    if mode() != Mode::Required {
        return None;
    }
    let network = grants.is_some_and(|g| g.network);
    let support = scimcp_process::sandbox::probe();
    let gap = support.protections.iter().find(|p| {
        p.protection.is_baseline()
            && !p.state.is_satisfied()
            && !(network && p.protection == Protection::Tcp)
    })?;
    Some(crate::envelope::Issue {
        field: "sandbox".into(),
        message: format!(
            "sandbox_unavailable: the server requires the run sandbox (--sandbox required), and \
             this machine cannot enforce {} ({}); run on a machine that can, or start the \
             server with --sandbox best-effort",
            gap.protection,
            gap.state.reason().unwrap_or("not enforced")
        ),
        allowed: Vec::new(),
    })
}

/// The sandbox one run's CLI gets: the system defaults, `runtime` read-only, the working
/// directory and the adapter's state directory read-write, then the workflow's grants.
pub fn policy(
    runtime: &[PathBuf],
    work_dir: &Path,
    state_dir: &Path,
    grants: Option<&PlannedSandbox>,
) -> Policy {
    let mut policy = Policy::new();
    for path in runtime {
        policy = policy.allow_read_resolved(path);
    }
    policy = policy.allow_write(work_dir).allow_write(state_dir);
    let Some(grants) = grants else {
        return policy;
    };
    if grants.shared_memory {
        policy = policy.allow_shared_memory();
    }
    policy = policy.allow_network(grants.network);
    let home = scimcp_core::dirs::home_dir();
    for path in grants
        .read_only
        .iter()
        .filter_map(|p| expand(p, home.as_deref()))
    {
        policy = policy.allow_read_resolved(path);
    }
    for path in grants
        .read_write
        .iter()
        .filter_map(|p| expand(p, home.as_deref()))
    {
        policy = policy.allow_write(path);
    }
    policy
}

/// A declared grant as a path: `~/x` under `home` (none without a home), else as written.
fn expand(grant: &str, home: Option<&Path>) -> Option<PathBuf> {
    match grant.strip_prefix("~/") {
        Some(rest) => home.map(|h| h.join(rest)),
        None => Some(PathBuf::from(grant)),
    }
}

/// The argv that starts `program args` inside the sandbox, writing what applied to `report`;
/// `None` when the mode is off, or where the CLI starts directly (a unit test's executable is
/// the test harness, not scimcp; Windows has no exec).
pub fn wrap(
    mode: Mode,
    policy: &Policy,
    report: &Path,
    program: &Path,
    args: &[String],
) -> Option<(PathBuf, Vec<String>)> {
    if mode == Mode::Off || !cfg!(unix) || cfg!(test) {
        return None;
    }
    let scimcp = std::env::current_exe().ok()?;
    let requirement = match mode.requirement() {
        Requirement::Required => "required",
        Requirement::BestEffort => "best_effort",
    };
    let mut argv = vec![
        SUBCOMMAND.to_string(),
        "--policy".into(),
        serde_json::to_string(policy).ok()?,
        "--requirement".into(),
        requirement.into(),
        "--report".into(),
        report.to_str()?.to_string(),
        "--".into(),
        program.to_str()?.to_string(),
    ];
    argv.extend(args.iter().cloned());
    Some((scimcp, argv))
}

/// What the sandbox applied to a run, as `__sandbox` reported it (the file stays, a record), or, with the
/// mode off, every protection not requested.
pub fn take_report(mode: Mode, report: &Path) -> Option<Applied> {
    if mode == Mode::Off {
        return Some(off_report());
    }
    let bytes = fs_err::read(report).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The record of a run started with the sandbox off.
pub fn off_report() -> Applied {
    let mut applied = Applied {
        landlock_abi: None,
        protections: scimcp_process::sandbox::probe().protections,
        skipped_paths: Vec::new(),
    };
    for p in &mut applied.protections {
        p.state = scimcp_process::sandbox::State::NotRequested;
    }
    applied
}

/// The paths of the runtime that runs `program`: the program (and what it links to); for a
/// Python interpreter also its prefixes and every directory on its `sys.path` (packages,
/// editable source directories a `.pth` names). Asked once per interpreter and remembered.
pub async fn runtime_paths(program: &Path, is_python: bool) -> Vec<PathBuf> {
    static KNOWN: OnceLock<Mutex<HashMap<PathBuf, Vec<PathBuf>>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Default::default);
    if let Some(paths) = known.lock().ok().and_then(|k| k.get(program).cloned()) {
        return paths;
    }
    let mut paths = vec![program.to_path_buf()];
    if let Ok(resolved) = fs_err::canonicalize(program)
        && let Some(dir) = resolved.parent()
    {
        // A tool's own bin directory, and the prefix above it (its lib, share, libexec); a
        // version manager's `shims` directory (pyenv, rbenv, asdf) likewise, as its shims
        // run the manager's own scripts and the versions it keeps beside them.
        paths.push(dir.to_path_buf());
        if dir.file_name().is_some_and(|n| n == "bin" || n == "shims")
            && let Some(prefix) = dir.parent()
        {
            paths.push(prefix.to_path_buf());
        }
    }
    if is_python {
        let interpreter = program.to_path_buf();
        if let Ok(found) = tokio::task::spawn_blocking(move || python_paths(&interpreter)).await {
            paths.extend(found);
        }
    }
    let home = scimcp_core::dirs::home_dir().and_then(|h| fs_err::canonicalize(h).ok());
    let mut kept: Vec<PathBuf> = Vec::new();
    for path in paths {
        if too_broad(&path, home.as_deref()) || kept.contains(&path) {
            continue;
        }
        kept.push(path);
    }
    if let Ok(mut k) = known.lock() {
        k.insert(program.to_path_buf(), kept.clone());
    }
    kept
}

/// A runtime path that would grant the whole file system or the user's whole home (an
/// interpreter at `~/bin/python`): left out, as the runtime never needs that much.
fn too_broad(path: &Path, home: Option<&Path>) -> bool {
    let canonical = fs_err::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    canonical.parent().is_none() || home.is_some_and(|h| h.starts_with(&canonical))
}

const PATH_PROBE: &str = "import json, sys\n\
print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix] + sys.path))";

/// The interpreter's prefixes and `sys.path`, the existing absolute ones.
fn python_paths(interpreter: &Path) -> Vec<PathBuf> {
    let mut cmd = scimcp_process::python_command(interpreter);
    cmd.arg("-c").arg(PATH_PROBE);
    let step =
        scimcp_process::Step::new("the interpreter's path probe", cmd).timeout(PATH_PROBE_TIMEOUT);
    let Ok(out) = scimcp_process::run(step).and_then(scimcp_process::Captured::check) else {
        return Vec::new();
    };
    let listed: Vec<String> = serde_json::from_str(out.stdout.trim()).unwrap_or_default();
    listed
        .into_iter()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.exists())
        .collect()
}

/// The readable denial: when the CLI's stderr shows a permission error, what the sandbox
/// denied (the path, when the line names one) and how a workflow that needs it declares it.
pub fn denial_message(stderr: &str) -> Option<String> {
    const MARKERS: [&str; 3] = ["Permission denied", "EACCES", "Operation not permitted"];
    let line = stderr
        .lines()
        .find(|l| MARKERS.iter().any(|m| l.contains(m)))?;
    Some(match denied_path(line) {
        Some(path) => format!(
            "the sandbox denied access to {path}; declare it under [workflow.sandbox] \
             read_only (or read_write, to write it) if the workflow needs it (the CLI said: {})",
            line.trim()
        ),
        None => format!(
            "the sandbox denied an access or a connection; a workflow that needs the network \
             declares [workflow.sandbox] network = true, one that needs a path declares it \
             under read_only or read_write (the CLI said: {})",
            line.trim()
        ),
    })
}

/// The path a permission error names: quoted (Python's `Permission denied: '/x'`), else the
/// first word that is an absolute path.
fn denied_path(line: &str) -> Option<String> {
    for quote in ['\'', '"'] {
        let mut parts = line.split(quote);
        while let (Some(_), Some(inside)) = (parts.next(), parts.next()) {
            if inside.starts_with('/') {
                return Some(inside.to_string());
            }
        }
    }
    line.split_whitespace()
        .map(|w| w.trim_end_matches([':', ',', ')', ';']))
        .find(|w| w.starts_with('/') && w.len() > 1)
        .map(str::to_string)
}

/// Whether `__sandbox` itself refused (exit 125 without a report): its own stderr line.
pub fn refusal(stderr: &str) -> Option<&str> {
    stderr
        .lines()
        .find(|l| l.starts_with("scimcp: sandbox: "))
        .map(|l| l.trim_start_matches("scimcp: sandbox: "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_permission_error_names_the_path() {
        let stderr = "Traceback (most recent call last):\n  File \"x.py\", line 1\n\
                      PermissionError: [Errno 13] Permission denied: '/root/.ssh/id_ed25519'\n";
        let message = denial_message(stderr).unwrap();
        assert!(
            message.starts_with("the sandbox denied access to /root/.ssh/id_ed25519;"),
            "{message}"
        );
        assert!(
            message.contains("[workflow.sandbox] read_only"),
            "{message}"
        );
    }

    #[test]
    fn a_shell_denial_names_the_path_and_a_bare_one_says_what_to_declare() {
        let message = denial_message("sh: 1: cannot create /tmp/x: Permission denied").unwrap();
        assert!(message.contains("denied access to /tmp/x;"), "{message}");
        let bare = denial_message("connect: Operation not permitted").unwrap();
        assert!(bare.contains("network = true"), "{bare}");
        assert_eq!(denial_message("all fine\n"), None);
    }

    #[test]
    fn grants_expand_under_the_home_and_the_runtime_is_read_only() {
        let grants = PlannedSandbox {
            network: true,
            shared_memory: false,
            read_only: vec!["/opt/tool/share".into()],
            read_write: vec!["~/.cache/tool".into()],
        };
        let p = policy(
            &[PathBuf::from("/opt/runtime")],
            Path::new("/runs/r1/work"),
            Path::new("/state/a"),
            Some(&grants),
        );
        assert!(p.network);
        assert!(p.read_only.contains(&PathBuf::from("/opt/runtime")));
        assert!(p.read_only.contains(&PathBuf::from("/opt/tool/share")));
        assert!(p.read_write.contains(&PathBuf::from("/runs/r1/work")));
        assert!(p.read_write.contains(&PathBuf::from("/state/a")));
        if let Some(home) = scimcp_core::dirs::home_dir() {
            assert!(p.read_write.contains(&home.join(".cache/tool")));
            assert!(!p.read_only.contains(&home) && !p.read_write.contains(&home));
        }
        let plain = policy(&[], Path::new("/w"), Path::new("/s"), None);
        assert!(!plain.network);
    }

    #[test]
    fn the_planned_environment_follows_the_mode_and_the_declared_network() {
        use scimcp_process::sandbox::{Protection, State};
        let state = |env: &PlannedEnvironment, p: Protection| {
            env.sandbox
                .protections
                .iter()
                .find(|s| s.protection == p)
                .map(|s| s.state.clone())
                .unwrap()
        };
        let online = PlannedSandbox {
            network: true,
            ..PlannedSandbox::default()
        };
        let env = planned_in(Mode::BestEffort, Some(&online));
        assert!(env.sandbox.network);
        assert_eq!(state(&env, Protection::Tcp), State::NotRequested);
        let here = scimcp_process::sandbox::probe();
        let env = planned_in(Mode::Required, None);
        assert!(!env.sandbox.network);
        assert_eq!(env.sandbox.protections, here.protections);
        assert_eq!(env.sandbox.complete, here.is_complete());
        let off = planned_in(Mode::Off, None);
        assert!(off.sandbox.complete);
        assert!(
            off.sandbox
                .protections
                .iter()
                .all(|p| p.state == State::NotRequested)
        );
        let json = serde_json::to_value(&off).unwrap();
        assert_eq!(json["sandbox"]["mode"], "off");
    }

    #[test]
    fn the_root_and_the_home_are_never_runtime_paths() {
        assert!(too_broad(Path::new("/"), None));
        assert!(too_broad(Path::new("/home"), Some(Path::new("/home/u"))));
        assert!(!too_broad(
            Path::new("/home/u/venv"),
            Some(Path::new("/home/u"))
        ));
    }
}
