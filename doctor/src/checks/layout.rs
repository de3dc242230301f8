//! `install.layout`: `current` names the recorded active version, its binaries are there,
//! executable and report that version, and `state.json` agrees with the disk.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use scimcp_core::install_state::{InstallState, STATE_FILE, SignatureStatus};
use scimcp_setup_model::host::is_executable;

use crate::check::{CheckResult, Status, shell_quote};
use crate::context::{Context, short, sorted_entries};

/// The suite's binaries a version may carry; `scimcp` is the one clients run.
const BINARIES: &[&str] = &[
    "scimcp",
    "scimcp-setup",
    "scimcp-doctor",
    "scimcp-release",
    "scimcp-parity",
];

const VERSION_TIMEOUT: Duration = Duration::from_secs(20);

pub fn check(ctx: &Context, id: &str) -> CheckResult {
    let root = ctx.root();
    let state = match &ctx.state {
        Err(e) => {
            let path = InstallState::path(root);
            let aside = path.with_file_name(format!("{STATE_FILE}.broken"));
            return CheckResult::fail(id, e.to_string()).remedy(format!(
                "mv {} {} && scimcp-setup repair",
                shell_quote(&path.display().to_string()),
                shell_quote(&aside.display().to_string())
            ));
        }
        Ok(None) => {
            return CheckResult::fail(
                id,
                format!(
                    "scimcp is not installed under {}: there is no {STATE_FILE}",
                    root.display()
                ),
            )
            .remedy("scimcp-setup install")
            .fixable();
        }
        Ok(Some(state)) => state,
    };
    let mut problems: Vec<(Status, String)> = Vec::new();
    let exe = ctx.layout.platform.exe_suffix();
    if state.active.is_none() && state.adapters.is_empty() && !state.remotes.is_empty() {
        return CheckResult::skipped(
            id,
            format!(
                "nothing is installed on this computer: it only registers remote servers ({})",
                state.remotes.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        );
    }
    let Some(active) = state.active.clone() else {
        return CheckResult::fail(id, format!("{STATE_FILE} records no active version"))
            .remedy("scimcp-setup repair")
            .fixable();
    };
    let current = scimcp_setup_model::current::read(&ctx.layout);
    match &current {
        None => problems.push((
            Status::Fail,
            "`current` is missing or names no version".to_string(),
        )),
        Some(v) if v.to_string() != active => problems.push((
            Status::Fail,
            format!("`current` points at {v}, but {STATE_FILE} records {active} as active"),
        )),
        Some(_) => {}
    }
    let version_dir = root.join("versions").join(&active);
    let mut reported = Vec::new();
    if !version_dir.is_dir() {
        problems.push((
            Status::Fail,
            format!(
                "the active version's directory {} is missing",
                short(root, &version_dir)
            ),
        ));
    } else {
        let bin = version_dir.join("bin");
        let required = required_binaries(&version_dir, exe);
        for name in BINARIES {
            let file = format!("{name}{exe}");
            let path = bin.join(&file);
            let rel = short(root, &path);
            if !path.exists() {
                if required.contains(&file) {
                    problems.push((Status::Fail, format!("{rel} is missing")));
                }
                continue;
            }
            if !is_executable(&path) {
                problems.push((Status::Fail, format!("{rel} is not executable")));
                continue;
            }
            match version_of(&path) {
                Ok(v) if v == format!("{name} {active}") => reported.push(file),
                Ok(v) => problems.push((
                    Status::Fail,
                    format!("{rel} reports {v:?}, expected \"{name} {active}\""),
                )),
                Err(e) => problems.push((Status::Fail, format!("{rel} does not run: {e}"))),
            }
        }
        if !ctx.layout.stable_server_binary().is_file() {
            problems.push((
                Status::Fail,
                format!(
                    "the registered command {} does not exist",
                    ctx.layout.stable_server_binary().display()
                ),
            ));
        }
    }
    problems.extend(state_vs_disk(ctx, state, &active));
    let unsigned = development_override(state, &active);
    let ok = format!(
        "current → {active}; {} report {active}; {STATE_FILE} matches the disk",
        reported
            .iter()
            .map(|f| format!("bin/{f}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if problems.is_empty()
        && let Some(note) = unsigned
    {
        // Nothing a repair could change: only a signed bundle replaces what was unpacked.
        return CheckResult::warn(id, note).remedy(
            "for anything but development, install a signed release: scimcp-setup upgrade, or \
             scimcp-setup install --from scimcp-<version>-<target>.zip with its .sigstore.json \
             beside it",
        );
    }
    problems.extend(unsigned.map(|note| (Status::Warn, note)));
    CheckResult::from_problems(id, ok, problems)
        .remedy("scimcp-setup repair")
        .fixable()
}

/// The warning for an active version installed under `--allow-unsigned`: its bundle's
/// signature was never checked, which is fine on a developer's machine and nowhere else.
fn development_override(state: &InstallState, active: &str) -> Option<String> {
    let signature = state.versions.get(active)?.signature.as_ref()?;
    (signature.status == SignatureStatus::DevelopmentOverride).then(|| {
        format!(
            "the active version {active} is a development override recorded in {STATE_FILE} \
             ({}); nothing checked who built it",
            signature.detail
        )
    })
}

/// The binaries a version must have: the server clients run and the installer that repairs
/// it, plus every binary its `RELEASE.json` lists (a release bundle names all of its files).
fn required_binaries(version_dir: &Path, exe: &str) -> Vec<String> {
    let mut required = vec![format!("scimcp{exe}"), format!("scimcp-setup{exe}")];
    let listed: Option<serde_json::Value> = scimcp_core::fs::read_regular(
        &version_dir.join("RELEASE.json"),
        scimcp_core::fs::CONFIG_READ_LIMIT,
    )
    .ok()
    .flatten()
    .and_then(|b| serde_json::from_slice(&b).ok());
    let files = listed
        .as_ref()
        .and_then(|r| r.get("files"))
        .and_then(|f| f.as_array())
        .cloned()
        .unwrap_or_default();
    for f in files {
        if let Some(name) = f
            .get("path")
            .and_then(|p| p.as_str())
            .and_then(|p| p.strip_prefix("bin/"))
            && !required.iter().any(|r| r == name)
        {
            required.push(name.to_string());
        }
    }
    required
}

/// Why a binary did not say its version.
#[derive(Debug, thiserror::Error)]
enum VersionError {
    #[error(transparent)]
    Run(#[from] scimcp_process::ProcessError),
    #[error("`--version` did not answer within {seconds} s")]
    TimedOut { seconds: u64 },
    #[error("`--version` failed: {}", stderr_head.join(" | "))]
    Failed { stderr_head: Vec<String> },
}

/// `NAME VERSION` as the binary prints it for `--version`.
fn version_of(path: &Path) -> Result<String, VersionError> {
    let mut cmd = Command::new(path);
    cmd.arg("--version");
    let out =
        scimcp_process::run(scimcp_process::Step::new("--version", cmd).timeout(VERSION_TIMEOUT))?;
    if out.timed_out {
        return Err(VersionError::TimedOut {
            seconds: VERSION_TIMEOUT.as_secs(),
        });
    }
    if !out.success() {
        return Err(VersionError::Failed {
            stderr_head: out.stderr_head(2),
        });
    }
    Ok(out.stdout.trim().to_string())
}

/// Where the receipt and the disk disagree.
fn state_vs_disk(ctx: &Context, state: &InstallState, active: &str) -> Vec<(Status, String)> {
    let root = ctx.root();
    let mut problems = Vec::new();
    for (version, record) in &state.versions {
        if !record.dir.is_dir() && version != active {
            problems.push((
                Status::Warn,
                format!(
                    "version {version} is recorded but {} is gone (rollback to it is impossible)",
                    short(root, &record.dir)
                ),
            ));
        }
    }
    if !state.versions.contains_key(active) {
        problems.push((
            Status::Fail,
            format!("the active version {active} has no record in {STATE_FILE}"),
        ));
    }
    for dir in sorted_entries(&ctx.layout.versions_dir()) {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if dir.is_dir() && !state.versions.contains_key(&name) {
            problems.push((
                Status::Warn,
                format!("{} is on disk but not in {STATE_FILE}", short(root, &dir)),
            ));
        }
    }
    let data_dirs = ctx.layout.data_dirs(&ctx.host, &state.data_dirs);
    for (name, record) in &state.adapters {
        let Some(server) = &record.server else {
            continue;
        };
        let serve_arg = crate::context::adapter_of(&server.args).unwrap_or_else(|| name.clone());
        let prescribed = ctx.layout.server_command(&serve_arg, &data_dirs);
        if *server != prescribed {
            problems.push((
                Status::Warn,
                format!(
                    "{STATE_FILE} records the {name} server command `{} {}` but this layout runs \
                     `{} {}`",
                    server.command.display(),
                    server.args.join(" "),
                    prescribed.command.display(),
                    prescribed.args.join(" ")
                ),
            ));
        }
    }
    problems
}
