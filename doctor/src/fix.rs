//! `--fix`: run the installer's own repair for the failures it can fix (the same code path
//! as `scimcp-setup repair`), then check again, so the report shows before and after.

use std::collections::BTreeSet;
use std::path::PathBuf;

use scimcp_installer::{InstallOptions, RemoteOptions, Report as SetupReport, Setup};

use crate::check::{CheckResult, Status};
use crate::context::Context;
use crate::report::{FixRecord, summarize};

/// Repair what `before` found fixable. Returns the record; the caller re-runs the checks.
pub fn repair(
    ctx: &Context,
    before: &[CheckResult],
    python: Option<PathBuf>,
    quiet: bool,
) -> FixRecord {
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
        repairs.push(Repair {
            label: adapter.clone(),
            command,
            adapters: vec![adapter.clone()],
            clients,
            options: InstallOptions {
                python: python.clone(),
                ..InstallOptions::default()
            },
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
            adapters: Vec::new(),
            clients,
            options: InstallOptions {
                remote: RemoteOptions {
                    remote: Some(name.clone()),
                    ..RemoteOptions::default()
                },
                ..InstallOptions::default()
            },
        });
    }
    let mut commands = Vec::new();
    let mut errors = Vec::new();
    let progress = scimcp_installer::terminal_progress(!quiet);
    for r in repairs {
        commands.push(r.command);
        let setup = Setup {
            host: ctx.host.clone(),
            layout: ctx.layout.clone(),
            clients: r.clients.into_iter().collect(),
            project: None,
            dry_run: false,
            json: true,
            yes: true,
            adapters: r.adapters,
        };
        match scimcp_installer::repair(&setup, &r.options, progress.as_ref()) {
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
    progress.finish();
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
    adapters: Vec<String>,
    clients: BTreeSet<String>,
    options: InstallOptions,
}

fn push_clients(command: &mut String, clients: &BTreeSet<String>) {
    for c in clients {
        command.push_str(&format!(" --client {c}"));
    }
}

fn steps_of(report: &SetupReport) -> Vec<String> {
    let mut steps = report.steps.clone();
    for c in &report.clients {
        if let Some(outcome) = &c.outcome {
            let word = serde_json::to_value(outcome)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            steps.push(format!("client {} ({}): {word}", c.id, c.entry));
        }
    }
    steps
}
