//! `uninstall`: remove scimcp's client entries (only those still equal to what scimcp
//! wrote), the managed versions, runtimes and the receipt. Run data (`runs/`), datasets and
//! backups stay; `--purge` is the only way to delete them, and it asks first.

use std::io::{BufRead, IsTerminal, Write};

use super::install::{finish, lock};
use super::{Report, Setup, register_clients, remove_tree};
use crate::cli::UninstallArgs;
use crate::error::SetupError;
use crate::register::Intent;

pub fn run(setup: &Setup, args: &UninstallArgs) -> Result<Report, SetupError> {
    let mut report = Report::new("uninstall", setup);
    if args.purge && !setup.dry_run && !setup.yes {
        confirm_purge(setup)?;
    }
    let _lock = lock(setup, &mut report)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    let recorded: Vec<String> = state.clients.keys().cloned().collect();
    let clients = setup.select(&recorded)?;
    register_clients(setup, &mut state, &clients, Intent::Uninstall, &mut report);
    let failures = report.failures();
    let layout = &setup.layout;
    let mut doomed = vec![
        layout.current(),
        layout.versions_dir(),
        layout.runtimes_dir(),
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
    state.server = None;
    if state.clients.is_empty() && failures == 0 {
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
