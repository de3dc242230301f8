//! `install --remote URL`, `repair --remote NAME|URL` and `uninstall --remote NAME|URL`:
//! register a remote scimcp server (Streamable HTTP, `scimcp serve --transport http` on a
//! lab's analysis machine) in every client that can take one, re-apply it, remove it.
//!
//! Runbook:
//! 1. take the setup lock;
//! 2. validate the URL, the entry name and the token variable (nothing is written before
//!    they pass; see [`crate::remote_server`]);
//! 3. plan, back up, write and verify each client's file: one entry per client, in that
//!    client's shape for remote servers, the token only as a reference the client resolves
//!    (an environment variable, or VS Code's password prompt). A client that cannot take the
//!    entry without the secret itself gets the steps to add it by hand instead;
//! 4. record the remote and every client it is registered in in `state.json`.
//!
//! A remote registration needs no version, runtime or data folder on this computer: the
//! server runs elsewhere. It lives beside the local adapters in the receipt and in the
//! clients, under its own name, so installing, repairing or uninstalling one never touches
//! the other.

use scimcp_core::install_state::{InstallState, RemoteRecord};

use super::registration::{carry_out, cli_last};
use super::report::{ClientReport, RemoteSummary, Report};
use super::session::{finish, lock};
use super::setup::Setup;
use crate::clients::Client;
use crate::error::SetupError;
use crate::host::Platform;
use crate::options::{InstallOptions, RemoteOptions};
use crate::register::{Intent, Outcome, Planner, Serves};
use crate::remote_server::{
    DEFAULT_TOKEN_ENV, RemoteServer, RemoteServerError, RemoteUrl, check_name, check_token_env,
    default_name, find_recorded,
};

/// `install --remote URL` (or `repair --remote NAME|URL` when `repair`).
pub fn install(setup: &Setup, args: &InstallOptions, repair: bool) -> Result<Report, SetupError> {
    refuse_local_flags(args)?;
    if !setup.adapters.is_empty() {
        return Err(SetupError::RemoteWithLocalFlag { flag: "--adapter" });
    }
    let mut report = Report::new(if repair { "repair" } else { "install" }, setup);
    // Refused before the lock is taken: a bad address leaves no trace under the data root.
    resolve(&args.remote, &setup.load_state()?)?;
    let _lock = lock(setup, &mut report)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    let (remote, url) = resolve(&args.remote, &state)?;
    if url.as_ref().is_some_and(|u| u.path_added) {
        report.step(format!(
            "use {} (scimcp serves MCP at {})",
            remote.url,
            crate::remote_server::MCP_PATH
        ));
    }
    let record = state
        .remotes
        .entry(remote.name.clone())
        .or_insert_with(|| remote.record());
    record.url = remote.url.clone();
    record.token_env = remote.token_env.clone();
    let recorded: Vec<String> = record.clients.keys().cloned().collect();
    let clients = setup.select(&recorded)?;
    let intent = if repair {
        Intent::Repair
    } else {
        Intent::Install
    };
    register(setup, &mut state, &remote, &clients, intent, &mut report);
    report.remote = Some(RemoteSummary::from(&remote));
    if !setup.dry_run {
        notes(setup, &remote, &mut report);
    }
    // A registration written nowhere (every client failed, or a dry run) is not recorded.
    if state.remotes[&remote.name].clients.is_empty() && !before.remotes.contains_key(&remote.name)
    {
        state.remotes.remove(&remote.name);
    }
    finish(setup, &before, &state, &mut report)?;
    Ok(report)
}

/// `repair` without `--remote`: re-apply every recorded remote in the clients it is
/// registered in (and the generic file).
pub(crate) fn repair_recorded(
    setup: &Setup,
    state: &mut InstallState,
    report: &mut Report,
) -> Result<(), SetupError> {
    for (name, record) in state.remotes.clone() {
        let remote = RemoteServer::from_record(&name, &record);
        if !recorded_secrets(&remote).is_empty() {
            report.notes.push(secret_recorded_note(&name));
            continue;
        }
        let recorded: Vec<String> = record.clients.keys().cloned().collect();
        let clients = setup.select(&recorded)?;
        register(setup, state, &remote, &clients, Intent::Repair, report);
    }
    Ok(())
}

/// Why a recorded remote is not written again.
fn secret_recorded_note(name: &str) -> String {
    format!(
        "{name} is not written again: an older scimcp recorded it with an address or token \
         variable that carries a secret. `scimcp-setup uninstall --remote {name}` removes its \
         entries and the backups that hold the secret; then register the plain address with \
         the token in an environment variable."
    )
}

/// `repair` on a computer with remote registrations only: re-apply them, nothing local.
pub(crate) fn repair_only(setup: &Setup) -> Result<Report, SetupError> {
    let mut report = Report::new("repair", setup);
    let _lock = lock(setup, &mut report)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    repair_recorded(setup, &mut state, &mut report)?;
    finish(setup, &before, &state, &mut report)?;
    Ok(report)
}

/// `uninstall --remote NAME|URL`: remove that server's entries (where they are still what
/// scimcp wrote) and its record; adapters, versions and every other entry stay as they are.
pub fn uninstall(setup: &Setup, given: &str) -> Result<Report, SetupError> {
    let mut report = Report::new("uninstall", setup);
    let not_registered = || RemoteServerError::NotRegistered {
        given: crate::remote_server::redact(given),
    };
    if find_recorded(&setup.load_state()?, given).is_none() {
        return Err(not_registered().into());
    }
    let _lock = lock(setup, &mut report)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    let Some((name, record)) = find_recorded(&state, given) else {
        return Err(not_registered().into());
    };
    let remote = RemoteServer::from_record(name, record);
    remove(setup, &mut state, &remote, &mut report)?;
    report.remote = Some(RemoteSummary::from(&remote));
    if setup.dry_run {
        return Ok(report);
    }
    if is_empty(&state) {
        // Nothing else was ever installed here: the receipt goes as a full uninstall's does.
        let path = InstallState::path(&setup.layout.root);
        if path.exists() {
            report.step(format!("remove {}", path.display()));
            super::tree::remove_tree(&path)?;
        }
        let _ = fs_err::remove_dir(setup.layout.clients_dir());
        return Ok(report);
    }
    finish(setup, &before, &state, &mut report)?;
    Ok(report)
}

/// Remove `remote`'s entries from the clients it is recorded in (and the generic file, and
/// the clients `--client` names), and its record when every removal succeeded.
pub(crate) fn remove(
    setup: &Setup,
    state: &mut InstallState,
    remote: &RemoteServer,
    report: &mut Report,
) -> Result<(), SetupError> {
    let failures = report.failures();
    let recorded: Vec<String> = state
        .remotes
        .get(&remote.name)
        .map(|r| r.clients.keys().cloned().collect())
        .unwrap_or_default();
    let clients = setup.select(&recorded)?;
    register(setup, state, remote, &clients, Intent::Uninstall, report);
    // Entries that could not be removed stay recorded, so a later uninstall retries them.
    if !setup.dry_run && report.failures() == failures {
        state.remotes.remove(&remote.name);
        // An older scimcp accepted addresses (and variable names) that carry a secret and
        // wrote them into the client files; every backup of those files holds it too.
        for secret in recorded_secrets(remote) {
            let gone = crate::backup::forget_containing(&setup.layout.backups_dir(), &secret);
            if gone > 0 {
                report.step(format!(
                    "delete {gone} backup(s) of client files that held the secret in {}'s \
                     address or token variable",
                    remote.name
                ));
            }
        }
    }
    Ok(())
}

/// What of a recorded remote today's checks refuse as a secret: its URL, its token
/// variable's "name".
fn recorded_secrets(remote: &RemoteServer) -> Vec<String> {
    let mut secrets = Vec::new();
    if RemoteUrl::parse(&remote.url).is_err() {
        secrets.push(remote.url.clone());
    }
    if let Some(var) = &remote.token_env
        && check_token_env(var).is_err()
    {
        secrets.push(var.clone());
    }
    secrets
}

/// Whether the receipt records nothing at all any more.
fn is_empty(state: &InstallState) -> bool {
    state.active.is_none()
        && state.versions.is_empty()
        && state.runtimes.is_empty()
        && state.adapters.is_empty()
        && state.remotes.is_empty()
}

/// Plan and (unless dry-run) apply `intent` for `remote`'s entry in `clients`, updating its
/// client records.
pub(crate) fn register(
    setup: &Setup,
    state: &mut InstallState,
    remote: &RemoteServer,
    clients: &[&'static dyn Client],
    intent: Intent,
    report: &mut Report,
) {
    let backups = setup.layout.backups_dir();
    for client in cli_last(setup, clients) {
        let recorded = state
            .remotes
            .get(&remote.name)
            .and_then(|r| r.clients.get(client.id()))
            .cloned();
        let project =
            setup.recorded_project(client, recorded.as_ref(), intent == Intent::Uninstall);
        let cx = setup.context_in(project.as_deref());
        let planner = Planner {
            cx,
            name: &remote.name,
            server: Serves::Remote(remote),
            backups_dir: &backups,
        };
        let mut line = ClientReport::new(cx, client, &remote.name);
        line.remote = Some(remote.shown_url());
        if intent != Intent::Uninstall
            && let Some(other) = setup.other_project(client, recorded.as_ref())
        {
            line.error = Some(format!(
                "{} has {} registered in the project {}, and scimcp keeps one project per \
                 client: `scimcp-setup uninstall --remote {}` removes it there (and from the \
                 other clients), then install again",
                client.name(),
                remote.name,
                other.display(),
                remote.name
            ));
            report.clients.push(line);
            continue;
        }
        let change = carry_out(
            setup,
            &planner,
            client,
            intent,
            recorded.as_ref(),
            report,
            &mut line,
        );
        if let Some(r) = state.remotes.get_mut(&remote.name) {
            change.apply_to(&mut r.clients, client.id());
        }
        for secret in recorded_secrets(remote) {
            let shown = crate::remote_server::redact(&secret);
            for text in [line.manual_steps.as_mut(), Some(&mut line.location)]
                .into_iter()
                .flatten()
            {
                *text = text.replace(&secret, &shown);
            }
        }
        report.clients.push(line);
    }
}

/// `--from`, `--python`, … describe a local installation; combined with `--remote` they
/// would silently do nothing.
fn refuse_local_flags(args: &InstallOptions) -> Result<(), SetupError> {
    let local = [
        ("--from", args.from.is_some()),
        ("--python", args.python.is_some()),
        ("--skip-runtime", args.skip_runtime),
        ("--find-links/--index-url/--no-index", args.packages.given()),
        ("--data-dir", !args.data_dirs.is_empty()),
        ("--allow-unsigned", args.signature.allow_unsigned),
        ("--release-policy", args.signature.release_policy.is_some()),
        ("--trusted-root", args.signature.trusted_root.is_some()),
    ];
    match local.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(SetupError::RemoteWithLocalFlag { flag }),
        None => Ok(()),
    }
}

/// The remote server `args` name: a recorded one by name, or a URL (validated) with the
/// name `--name` gives, the one it is recorded under, or `scimcp-remote-<host>`. The token
/// variable is `--token-env`, none with `--no-token`, else the recorded one, else
/// [`DEFAULT_TOKEN_ENV`].
fn resolve(
    args: &RemoteOptions,
    state: &InstallState,
) -> Result<(RemoteServer, Option<RemoteUrl>), SetupError> {
    let given = args.remote.as_deref().unwrap_or_default();
    let by_name = state.remotes.get_key_value(given);
    let (url, parsed) = match by_name {
        Some((name, record)) => {
            let remote = RemoteServer::from_record(name, record);
            if !recorded_secrets(&remote).is_empty() {
                return Err(RemoteServerError::RecordedSecret { name: name.clone() }.into());
            }
            (record.url.clone(), None)
        }
        None => {
            let parsed = RemoteUrl::parse(given)?;
            (parsed.to_string(), Some(parsed))
        }
    };
    let recorded: Option<(&String, &RemoteRecord)> =
        by_name.or_else(|| state.remotes.iter().find(|(_, r)| r.url == url));
    let name = match (&args.name, recorded, &parsed) {
        (Some(n), _, _) => n.clone(),
        (None, Some((n, _)), _) => n.clone(),
        (None, None, Some(p)) => default_name(p),
        (None, None, None) => unreachable!("a recorded name or a parsed URL"),
    };
    check_name(&name, state)?;
    if let Some(other) = state.remotes.get(&name).filter(|r| r.url != url) {
        return Err(RemoteServerError::NameInUse {
            name,
            recorded: other.url.clone(),
            url,
        }
        .into());
    }
    let token_env = if args.no_token {
        None
    } else {
        let var = match (&args.token_env, recorded) {
            (Some(v), _) => v.clone(),
            (None, Some((_, r))) => match &r.token_env {
                Some(v) => v.clone(),
                None => DEFAULT_TOKEN_ENV.to_string(),
            },
            (None, None) => DEFAULT_TOKEN_ENV.to_string(),
        };
        check_token_env(&var)?;
        Some(var)
    };
    Ok((
        RemoteServer {
            name,
            url,
            token_env,
        },
        parsed,
    ))
}

/// What the scientist does next: where the token goes, how to check the connection.
fn notes(setup: &Setup, remote: &RemoteServer, report: &mut Report) {
    let registered = |id: &str| {
        report.clients.iter().any(|c| {
            c.id == id
                && c.error.is_none()
                && matches!(
                    c.outcome,
                    Some(Outcome::Added | Outcome::Replaced | Outcome::Unchanged)
                )
        })
    };
    let (vscode, continue_dev) = (
        registered("vscode") || registered("vscode-workspace"),
        registered("continue"),
    );
    let mut notes = Vec::new();
    match &remote.token_env {
        Some(var) => {
            let how = match setup.host.platform {
                Platform::Windows => format!(
                    "run `setx {var} <token>` once (it applies to programs started afterwards)"
                ),
                Platform::Macos => format!(
                    "add `export {var}=<token>` to ~/.zprofile for clients started from a \
                     terminal, and run `launchctl setenv {var} <token>` after logging in for \
                     apps started from the Dock"
                ),
                Platform::Linux => format!(
                    "add `export {var}=<token>` to ~/.profile (read at login, so apps started \
                     from the desktop see it too)"
                ),
            };
            notes.push(format!(
                "Set the environment variable {var} to your token before you start your AI \
                 clients: {how}. The token is the secret `scimcp token add NAME` printed on the \
                 server; the client files hold only the variable's name, never the token."
            ));
            if vscode {
                notes.push(format!(
                    "VS Code does not read {var}: it asks for the token the first time it starts \
                     {} and keeps it in its secret storage.",
                    remote.name
                ));
            }
            if continue_dev {
                notes.push(format!(
                    "Continue reads the token as its secret {var} (`${{{{ secrets.{var} }}}}`): \
                     put a line `{var}=<token>` in ~/.continue/.env."
                ));
            }
        }
        None => notes.push(format!(
            "{} is registered without a token (--no-token): the server must accept requests \
             without one (a loopback server, or a proxy that authenticates).",
            remote.name
        )),
    }
    notes.extend(super::approvals::notes(report));
    notes.push(format!(
        "Quit and reopen your AI clients so they connect to {}. `scimcp-doctor --remote {}` \
         checks the connection (initialize, tools/list, get_capabilities) with the token from \
         your environment; `scimcp-setup uninstall --remote {}` removes the entries again.",
        remote.url, remote.name, remote.name
    ));
    report.notes.extend(notes);
}
