//! Registering one adapter's (or remote server's) entry in each client: plan, show or
//! apply, and what becomes of the client's record in the receipt.

use std::path::Path;

use scimcp_core::install_state::{ClientRecord, InstallState, entry_name};

use super::report::{ClientReport, FileDiff, Report};
use super::setup::Setup;
use crate::clients::Client;
use crate::register::{self, ClientPlan, How, Intent, Outcome, Planner, Serves};

/// Plan and (unless dry-run) apply `intent` for `adapter`'s entry in `clients`, updating
/// the adapter's client records. Per-client failures land in the report; the others still
/// proceed. An entry an older scimcp wrote under another name (`scimcp`) is removed first
/// (only while it is still what scimcp wrote) and added again as `scimcp-<adapter>`; so is
/// a project entry recorded in another project than `--project`'s (it moves).
pub fn register_clients(
    setup: &Setup,
    state: &mut InstallState,
    adapter: &str,
    clients: &[&'static dyn Client],
    intent: Intent,
    report: &mut Report,
) {
    let desired = entry_name(adapter);
    let server = setup.adapter_server(state, adapter);
    let backups = setup.layout.backups_dir();
    for client in cli_last(setup, clients) {
        let mut recorded = state
            .adapters
            .get(adapter)
            .and_then(|a| a.clients.get(client.id()))
            .cloned();
        let project =
            setup.recorded_project(client, recorded.as_ref(), intent == Intent::Uninstall);
        let cx = setup.context_in(project.as_deref());
        let mut line = ClientReport::new(cx, client, &desired);
        line.adapter = adapter.to_string();
        // The receipt keeps one entry per client: registering another project's while the
        // first stays would lose track of the first, which no uninstall could then find. So
        // the entry moves (removed there only while it is still what scimcp wrote).
        let moved_from = match intent {
            Intent::Uninstall => None,
            _ => setup.other_project(client, recorded.as_ref()),
        };
        if intent != Intent::Uninstall
            && let Some(old) = recorded
                .clone()
                .filter(|r| r.name != desired || moved_from.is_some())
        {
            let planner = Planner {
                cx: setup.context_in(moved_from.as_deref().or(project.as_deref())),
                name: &old.name,
                server: Serves::Command(&server),
                backups_dir: &backups,
            };
            let renamed = planner
                .plan(client, Intent::Uninstall, Some(&old))
                .map_err(|e| e.to_string())
                .and_then(|plan| {
                    if setup.dry_run {
                        add_diff(&plan, report);
                        Ok(())
                    } else {
                        register::apply(&plan, &backups)
                            .map(drop)
                            .map_err(|e| e.to_string())
                    }
                });
            match renamed {
                Ok(()) => {
                    report.step(match &moved_from {
                        Some(dir) => format!(
                            "move the entry `{}` of {} from the project {} to this one \
                             (scimcp keeps one project per client)",
                            old.name,
                            client.name(),
                            dir.display()
                        ),
                        None => format!(
                            "rename the entry `{}` an older scimcp wrote in {} to `{desired}`",
                            old.name,
                            client.name()
                        ),
                    });
                    if !setup.dry_run
                        && let Some(a) = state.adapters.get_mut(adapter)
                    {
                        a.clients.remove(client.id());
                    }
                    recorded = None;
                }
                Err(e) if moved_from.is_some() => {
                    line.error = Some(format!(
                        "the entry `{}` in the project {} could not be removed, and scimcp \
                         keeps one project per client: {e}",
                        old.name,
                        moved_from.as_deref().unwrap_or(Path::new("")).display()
                    ));
                    report.clients.push(line);
                    continue;
                }
                Err(e) => {
                    line.error = Some(format!(
                        "the entry `{}` an older scimcp wrote could not be renamed: {e}",
                        old.name
                    ));
                    report.clients.push(line);
                    continue;
                }
            }
        }
        let name = match (&recorded, intent) {
            (Some(r), Intent::Uninstall) => r.name.clone(),
            _ => desired.clone(),
        };
        line.entry = name.clone();
        let planner = Planner {
            cx,
            name: &name,
            server: Serves::Command(&server),
            backups_dir: &backups,
        };
        let change = carry_out(
            setup,
            &planner,
            client,
            intent,
            recorded.as_ref(),
            report,
            &mut line,
        );
        if let Some(a) = state.adapters.get_mut(adapter) {
            change.apply_to(&mut a.clients, client.id());
        }
        report.clients.push(line);
    }
}

/// `clients` with the one registered through its own CLI (Claude Code's `claude`) last: it
/// is the slowest and the least under our control.
pub(crate) fn cli_last(setup: &Setup, clients: &[&'static dyn Client]) -> Vec<&'static dyn Client> {
    let cx = setup.client_context();
    let mut ordered: Vec<&'static dyn Client> = clients.to_vec();
    ordered.sort_by_key(|c| c.cli(cx).is_some());
    ordered
}

/// What becomes of a client's record in the receipt after one registration.
#[derive(Debug)]
pub(crate) enum RecordChange {
    /// scimcp's entry is there: record it.
    Set(Box<ClientRecord>),
    /// scimcp has no entry there any more.
    Remove,
    /// Nothing to record (a dry run, a failure, steps to do by hand).
    Keep,
}

impl RecordChange {
    pub(crate) fn apply_to(
        self,
        records: &mut std::collections::BTreeMap<String, ClientRecord>,
        id: &str,
    ) {
        match self {
            RecordChange::Set(r) => {
                records.insert(id.to_string(), *r);
            }
            RecordChange::Remove => {
                records.remove(id);
            }
            RecordChange::Keep => {}
        }
    }
}

/// Plan `intent` for `client` with `planner`; show the change in a dry run, else apply it.
/// Fills in the report `line` and says what becomes of the client's record.
pub(crate) fn carry_out(
    setup: &Setup,
    planner: &Planner<'_>,
    client: &'static dyn Client,
    intent: Intent,
    recorded: Option<&ClientRecord>,
    report: &mut Report,
    line: &mut ClientReport,
) -> RecordChange {
    let plan = match planner.plan(client, intent, recorded) {
        Ok(plan) => plan,
        Err(e) => {
            line.error = Some(e.to_string());
            return RecordChange::Keep;
        }
    };
    line.location = plan.location();
    line.outcome = Some(plan.outcome.clone());
    if let How::Manual { steps, .. } = &plan.how {
        line.manual_steps = Some(steps.clone());
    }
    if setup.dry_run {
        add_diff(&plan, report);
        return RecordChange::Keep;
    }
    match register::apply(&plan, planner.backups_dir) {
        Ok(applied) => match register::record(&plan, recorded, &applied) {
            Some(r) => RecordChange::Set(Box::new(r)),
            None if plan.outcome != Outcome::Manual => RecordChange::Remove,
            None => RecordChange::Keep,
        },
        Err(e) => {
            line.error = Some(e.to_string());
            RecordChange::Keep
        }
    }
}

fn add_diff(plan: &ClientPlan, report: &mut Report) {
    match &plan.how {
        How::File {
            file,
            before,
            after,
            ..
        } if plan.changes() => report.diffs.push(FileDiff {
            path: file.path.clone(),
            diff: crate::diff::unified(&file.path, before.as_deref(), after.as_deref()),
        }),
        How::Cli {
            cli, remove, add, ..
        } if plan.changes() => {
            let mut lines = String::new();
            if *remove {
                lines.push_str(&format!(
                    "would run: {} mcp remove --scope user {}\n",
                    cli.program.display(),
                    plan.name
                ));
            }
            if *add {
                lines.push_str(&format!(
                    "would run: {} mcp add-json --scope user {} '{}'\n",
                    cli.program.display(),
                    plan.name,
                    plan.entry
                ));
            }
            report.diffs.push(FileDiff {
                path: cli.program.clone(),
                diff: lines,
            });
        }
        _ => {}
    }
}
