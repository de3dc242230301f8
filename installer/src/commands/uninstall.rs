//! `uninstall`: remove scimcp's client entries (only those still equal to what scimcp
//! wrote) — every adapter's and every remote server's — the managed versions, runtimes and
//! the receipt. Run data (`runs/`), datasets and backups stay; `--purge` is the only way to
//! delete them, and it asks first. `--adapter` removes only those adapters, `--remote` only
//! that remote server's entries.

use std::io::{BufRead, IsTerminal, Write};

use super::registration::register_clients;
use super::report::Report;
use super::session::{finish, lock};
use super::setup::Setup;
use super::tree::remove_tree;
use crate::error::SetupError;
use crate::options::UninstallOptions;
use crate::register::Intent;

pub fn run(setup: &Setup, args: &UninstallOptions) -> Result<Report, SetupError> {
    if let Some(remote) = &args.remote {
        if !setup.adapters.is_empty() {
            return Err(SetupError::RemoteWithLocalFlag { flag: "--adapter" });
        }
        return super::remote::uninstall(setup, remote);
    }
    if !setup.adapters.is_empty() {
        return adapters(setup, args);
    }
    let mut report = Report::new("uninstall", setup);
    if args.purge && !setup.dry_run && !setup.yes {
        confirm_purge(setup)?;
    }
    let _lock = lock(setup, &mut report)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    for adapter in state.adapters.keys().cloned().collect::<Vec<_>>() {
        let recorded: Vec<String> = state.adapters[&adapter].clients.keys().cloned().collect();
        let clients = setup.select(&recorded)?;
        register_clients(
            setup,
            &mut state,
            &adapter,
            &clients,
            Intent::Uninstall,
            &mut report,
        );
    }
    for (name, record) in state.remotes.clone() {
        let remote = crate::remote_server::RemoteServer::from_record(&name, &record);
        super::remote::remove(setup, &mut state, &remote, &mut report)?;
    }
    let failures = report.failures();
    let layout = &setup.layout;
    let mut doomed = vec![
        layout.current(),
        layout.versions_dir(),
        layout.runtimes_dir(),
        layout.adapters_dir(),
        layout.launcher_dir(),
        layout.scratch_dir(),
    ];
    if args.purge {
        doomed.extend([
            layout.runs_dir(),
            layout.root.join("datasets"),
            layout.backups_dir(),
        ]);
    }
    for path in &doomed {
        if fs_err::symlink_metadata(path).is_ok() {
            if *path != layout.scratch_dir() {
                report.step(format!("remove {}", path.display()));
            }
            if !setup.dry_run {
                remove_tree(path)?;
            }
        }
    }
    if !args.purge && layout.runs_dir().exists() {
        report.step(format!("keep run data in {}", layout.runs_dir().display()));
    }
    // The data folders hold the user's own datasets: never deleted, not even by --purge.
    for dir in setup.data_dirs(&state) {
        if dir.is_dir() {
            report.step(format!("keep your data folder {}", dir.display()));
        }
    }
    if setup.dry_run {
        return Ok(report);
    }
    // Entries that could not be removed stay recorded, so a later uninstall retries them.
    state.active = None;
    state.previous = None;
    state.versions.clear();
    state.runtimes.clear();
    state.adapters.retain(|_, a| !a.clients.is_empty());
    for a in state.adapters.values_mut() {
        a.server = None;
    }
    if state.adapters.is_empty() && state.remotes.is_empty() && failures == 0 {
        let path = scimcp_core::install_state::InstallState::path(&layout.root);
        if path.exists() {
            report.step(format!("remove {}", path.display()));
            remove_tree(&path)?;
        }
        let _ = fs_err::remove_dir(layout.clients_dir());
        if args.purge {
            let _ = fs_err::remove_file(layout.lock_path());
            let _ = fs_err::remove_dir(&layout.root);
        }
        return Ok(report);
    }
    finish(setup, &before, &state, &mut report)?;
    Ok(report)
}

/// `uninstall --adapter NAME…`: only these adapters' entries (where they are still what
/// scimcp wrote), runtimes, managed copies and records; the version, the other adapters and
/// every other entry stay exactly as they are.
fn adapters(setup: &Setup, args: &UninstallOptions) -> Result<Report, SetupError> {
    if args.purge {
        return Err(SetupError::PurgeWithAdapter);
    }
    let mut report = Report::new("uninstall", setup);
    let _lock = lock(setup, &mut report)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    let names = setup.installed_adapters(&state)?;
    for name in &names {
        if !state.adapters.contains_key(name) {
            return Err(SetupError::AdapterNotInstalled { name: name.clone() });
        }
    }
    let layout = &setup.layout;
    for name in &names {
        let failures = report.failures();
        let recorded: Vec<String> = state.adapters[name].clients.keys().cloned().collect();
        let clients = setup.select(&recorded)?;
        register_clients(
            setup,
            &mut state,
            name,
            &clients,
            Intent::Uninstall,
            &mut report,
        );
        let mut dirs: Vec<std::path::PathBuf> = fs_err::read_dir(layout.runtimes_dir())
            .map(|rd| {
                rd.flatten()
                    .filter(|e| {
                        crate::adapters::owns_runtime(name, &e.file_name().to_string_lossy())
                    })
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        dirs.sort();
        for dir in dirs {
            report.step(format!("remove the {name} runtime {}", dir.display()));
            if !setup.dry_run {
                remove_tree(&dir)?;
            }
        }
        if let Some(record) = state.adapters.get(name)
            && let scimcp_core::install_state::AdapterSource::File { manifest, .. } = &record.source
        {
            report.step(format!(
                "remove the copy of the adapter {name} ({})",
                manifest.display()
            ));
            if !setup.dry_run {
                crate::adapters::remove_copy(layout, record)?;
            }
        }
        state.runtimes.remove(name);
        for v in state.versions.values_mut() {
            v.runtimes.remove(name);
        }
        // Entries that could not be removed stay recorded, so a later uninstall retries them.
        if report.failures() == failures {
            state.adapters.remove(name);
        } else if let Some(a) = state.adapters.get_mut(name) {
            a.server = None;
        }
    }
    if !setup.dry_run {
        finish(setup, &before, &state, &mut report)?;
    }
    Ok(report)
}

fn confirm_purge(setup: &Setup) -> Result<(), SetupError> {
    if !std::io::stdin().is_terminal() {
        return Err(SetupError::PurgeNeedsYes(setup.layout.runs_dir()));
    }
    let mut err = std::io::stderr();
    let _ = write!(
        err,
        "Delete every run and result under {}? This cannot be undone. [y/N] ",
        setup.layout.runs_dir().display()
    );
    let _ = err.flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    if matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(())
    } else {
        Err(SetupError::PurgeDeclined)
    }
}
