//! `--fix`: run the installer's own repair for the failures it can fix (the same code path
//! as `scimcp-setup repair`), then check again, so the report shows before and after.

use std::collections::BTreeSet;
use std::path::PathBuf;

use scimcp_installer::cli::{InstallArgs, SignatureArgs};
use scimcp_installer::commands::install;
use scimcp_installer::{Report as SetupReport, Setup};

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
    let mut commands = Vec::new();
    let mut errors = Vec::new();
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
        let setup = Setup {
            host: ctx.host.clone(),
            layout: ctx.layout.clone(),
            clients: clients.iter().cloned().collect(),
            project: None,
            dry_run: false,
            json: true,
            yes: true,
            adapters: vec![adapter.clone()],
        };
        let mut command = format!("scimcp-setup repair --adapter {adapter}");
        for c in &clients {
            command.push_str(&format!(" --client {c}"));
        }
        if let Some(py) = &python {
            command.push_str(&format!(
                " --python {}",
                crate::check::shell_quote(&py.display().to_string())
            ));
        }
        commands.push(command);
        // Repair re-applies the active version already on disk; it unpacks nothing, so
        // there is no signature to check and no override to ask for.
        let args = InstallArgs {
            data_dirs: Vec::new(),
            from: None,
            python: python.clone(),
            skip_runtime: false,
            packages: Default::default(),
            signature: SignatureArgs::default(),
            remote: Default::default(),
        };
        let progress = scimcp_installer::progress::for_terminal(!quiet);
        let result = install::run(&setup, &args, true, progress.as_ref());
        progress.finish();
        match result {
            Ok(report) => {
                record.steps.extend(steps_of(&report));
                errors.extend(
                    report
                        .clients
                        .iter()
                        .filter_map(|c| c.error.as_ref().map(|e| format!("{}: {e}", c.id))),
                );
            }
            Err(e) => errors.push(format!("{adapter}: {e}")),
        }
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
        let setup = Setup {
            host: ctx.host.clone(),
            layout: ctx.layout.clone(),
            clients: clients.iter().cloned().collect(),
            project: None,
            dry_run: false,
            json: true,
            yes: true,
            adapters: Vec::new(),
        };
        let mut command = format!(
            "scimcp-setup repair --remote {}",
            crate::check::shell_quote(name)
        );
        for c in &clients {
            command.push_str(&format!(" --client {c}"));
        }
        commands.push(command);
        let args = InstallArgs {
            remote: scimcp_installer::cli::RemoteArgs {
                remote: Some(name.clone()),
                ..Default::default()
            },
            ..Default::default()
        };
        match install::run(&setup, &args, true, &scimcp_installer::progress::Silent) {
            Ok(report) => {
                record.steps.extend(steps_of(&report));
                errors.extend(
                    report
                        .clients
                        .iter()
                        .filter_map(|c| c.error.as_ref().map(|e| format!("{}: {e}", c.id))),
                );
            }
            Err(e) => errors.push(format!("{name}: {e}")),
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
