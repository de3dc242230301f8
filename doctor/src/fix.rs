//! `--fix`: run the installed `scimcp-setup repair` for the failures it can fix, then check
//! again, so the report shows before and after.
//!
//! The repair is the installer's (it may provision a runtime, and it holds the layout's
//! lock), so the doctor runs the installer's binary as a child rather than linking the
//! installer: the doctor stays free of its download and progress code. The binary is found
//! beside the doctor's own executable, else in the active version (`<root>/current/bin`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use scimcp_setup_model::host::Platform;

use crate::check::{CheckResult, Status};
use crate::context::Context;
use crate::report::{FixRecord, summarize};

/// Repair what `before` found fixable. Returns the record; the caller re-runs the checks.
pub fn repair(ctx: &Context, before: &[CheckResult], python: Option<PathBuf>) -> FixRecord {
    let mut record = FixRecord {
        repaired: false,
        command: None,
        steps: Vec::new(),
        error: None,
        before: before.to_vec(),
        before_summary: summarize(before),
    };
    let fixable: Vec<&CheckResult> = before
        .iter()
        .filter(|c| c.fixable && matches!(c.status, Status::Warn | Status::Fail))
        .collect();
    if fixable.is_empty() {
        return record;
    }
    // A fixable finding about the whole installation repairs every adapter; otherwise only
    // the adapters with a fixable finding are repaired. A remote server's findings repair
    // only that server's entries.
    let everything = fixable
        .iter()
        .any(|c| c.adapter.is_none() && c.remote.is_none());
    let adapters: Vec<String> = ctx
        .adapter_names()
        .into_iter()
        .filter(|a| everything || fixable.iter().any(|c| c.adapter.as_deref() == Some(a)))
        .collect();
    let mut repairs: Vec<Repair> = Vec::new();
    for adapter in &adapters {
        // Only the clients the adapter is registered in, plus those a check asks to fix:
        // --fix must not register an adapter in a client the user never chose.
        let mut clients: BTreeSet<String> = ctx
            .record(adapter)
            .map(|a| a.clients.keys().cloned().collect())
            .unwrap_or_default();
        clients.extend(
            fixable
                .iter()
                .filter(|c| c.adapter.as_deref() == Some(adapter))
                .filter_map(|c| c.id.strip_prefix("client.").map(String::from)),
        );
        clients.insert("generic".to_string());
        let mut command = format!("scimcp-setup repair --adapter {adapter}");
        push_clients(&mut command, &clients);
        if let Some(py) = &python {
            command.push_str(&format!(
                " --python {}",
                crate::check::shell_quote(&py.display().to_string())
            ));
        }
        // Repair re-applies the active version already on disk; it unpacks nothing, so
        // there is no signature to check and no override to ask for.
        let mut args = vec!["--adapter".to_string(), adapter.clone()];
        if let Some(py) = &python {
            args.push("--python".to_string());
            args.push(py.display().to_string());
        }
        repairs.push(Repair {
            label: adapter.clone(),
            command,
            args,
            clients,
        });
    }
    for target in &ctx.remotes {
        let Some(name) = &target.name else { continue };
        let asked: Vec<String> = fixable
            .iter()
            .filter(|c| c.remote.as_deref() == Some(name.as_str()))
            .filter_map(|c| c.id.strip_prefix("client.").map(String::from))
            .collect();
        if asked.is_empty() {
            continue;
        }
        // The clients it is registered in: --fix never adds it to a client the user did not
        // choose.
        let mut clients: BTreeSet<String> = target.clients.iter().cloned().collect();
        clients.extend(asked);
        let mut command = format!(
            "scimcp-setup repair --remote {}",
            crate::check::shell_quote(name)
        );
        push_clients(&mut command, &clients);
        repairs.push(Repair {
            label: name.clone(),
            command,
            args: vec!["--remote".to_string(), name.clone()],
            clients,
        });
    }
    let mut commands = Vec::new();
    let mut errors = Vec::new();
    let setup = if repairs.is_empty() {
        None
    } else {
        Some(setup_binary(&ctx.layout.root, ctx.host.platform))
    };
    for r in repairs {
        commands.push(r.command);
        let binary = match &setup {
            Some(Ok(binary)) => binary,
            Some(Err(e)) => {
                errors.push(format!("{}: {e}", r.label));
                continue;
            }
            None => unreachable!("a repair needs the binary"),
        };
        match run_repair(binary, &ctx.layout.root, &r.args, &r.clients) {
            Ok(report) => {
                record.steps.extend(steps_of(&report));
                errors.extend(
                    report
                        .clients
                        .iter()
                        .filter_map(|c| c.error.as_ref().map(|e| format!("{}: {e}", c.id))),
                );
            }
            Err(e) => errors.push(format!("{}: {e}", r.label)),
        }
    }
    if commands.is_empty() {
        return record;
    }
    record.repaired = true;
    record.command = Some(commands.join(" && "));
    if !errors.is_empty() {
        record.error = Some(errors.join("; "));
    }
    record
}

/// One `scimcp-setup repair` run: an adapter's or a remote server's, in its own clients.
struct Repair {
    /// What the error of a failed run is prefixed with.
    label: String,
    /// The equivalent command line, for the report.
    command: String,
    /// `--adapter NAME [--python PATH]` or `--remote NAME`.
    args: Vec<String>,
    clients: BTreeSet<String>,
}

fn push_clients(command: &mut String, clients: &BTreeSet<String>) {
    for c in clients {
        command.push_str(&format!(" --client {c}"));
    }
}

/// A repair may provision a runtime (downloads included): its own steps have their limits,
/// this one only stops a repair that hangs.
const REPAIR_LIMIT: Duration = Duration::from_secs(3 * 3600);

/// Why one `scimcp-setup repair` did not report; the fix record shows it after the repair's
/// label.
#[derive(Debug, thiserror::Error)]
enum RepairError {
    #[error(
        "the repair needs {name}, which is neither beside scimcp-doctor nor in the active \
         version (looked at {}); install scimcp again (`scimcp-setup install`)",
        looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NoSetupBinary { name: String, looked: Vec<PathBuf> },
    /// The repair could not be run, or it failed without a report.
    #[error(transparent)]
    Run(#[from] scimcp_process::ProcessError),
    /// The repair's own JSON failure, by its message.
    #[error("{message}")]
    Refused { message: String },
    #[error("`scimcp-setup repair` printed no report")]
    NoReport,
}

/// The `scimcp-setup` binary: beside this executable, else in the active version.
fn setup_binary(root: &Path, platform: Platform) -> Result<PathBuf, RepairError> {
    let name = format!("scimcp-setup{}", platform.exe_suffix());
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(&name)));
    let installed = root.join("current").join("bin").join(&name);
    let candidates: Vec<PathBuf> = beside.into_iter().chain([installed]).collect();
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    Err(RepairError::NoSetupBinary {
        name,
        looked: candidates,
    })
}

/// What `scimcp-setup repair --json` reports (the part the fix record shows).
#[derive(Debug, serde::Deserialize)]
struct SetupReport {
    /// Always there in a report (never in a failure), so the two are told apart.
    #[allow(dead_code)]
    command: String,
    #[serde(default)]
    steps: Vec<String>,
    #[serde(default)]
    clients: Vec<SetupClient>,
}

#[derive(Debug, serde::Deserialize)]
struct SetupClient {
    id: String,
    #[serde(default)]
    entry: String,
    #[serde(default)]
    outcome: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

/// Run `scimcp-setup repair ARGS --client … --json --yes` on the same data root. Its report
/// is on stdout, also when a client failed; any other failure is its JSON error there.
fn run_repair(
    binary: &Path,
    root: &Path,
    args: &[String],
    clients: &BTreeSet<String>,
) -> Result<SetupReport, RepairError> {
    let mut command = Command::new(binary);
    command.arg("repair").args(args);
    for c in clients {
        command.arg("--client").arg(c);
    }
    command
        .args(["--json", "--yes"])
        .env(scimcp_core::dirs::HOME_ENV, root);
    let step = scimcp_process::Step::new("`scimcp-setup repair`", command).timeout(REPAIR_LIMIT);
    let captured = scimcp_process::run(step)?;
    let stdout = captured.stdout.trim();
    if let Ok(report) = serde_json::from_str::<SetupReport>(stdout) {
        return Ok(report);
    }
    #[derive(serde::Deserialize)]
    struct Failure {
        message: String,
    }
    if let Ok(f) = serde_json::from_str::<Failure>(stdout) {
        return Err(RepairError::Refused { message: f.message });
    }
    match captured.check() {
        Err(e) => Err(e.into()),
        Ok(_) => Err(RepairError::NoReport),
    }
}

fn steps_of(report: &SetupReport) -> Vec<String> {
    let mut steps = report.steps.clone();
    for c in &report.clients {
        if let Some(word) = &c.outcome {
            steps.push(format!("client {} ({}): {word}", c.id, c.entry));
        }
    }
    steps
}
