//! `scimcp-setup`: installs scimcp for a scientist: unpacks versions, provisions the
//! scientific runtime, registers the server in every MCP client, and repairs, upgrades,
//! rolls back and uninstalls without ever damaging a client's other settings or run data.
//!
//! The library is the whole installer; the binary only calls [`main`]. Paths come from an
//! injectable [`Host`] (platform, home, environment) and a [`Layout`] under the data root,
//! so every behaviour can be exercised against a fake home for any operating system.
//!
//! It must never unpack anything before its signature is verified, and never write under the
//! data root while downloading (downloads go to a temporary directory).

mod adapters;
mod bundle;
mod checked_bundle;
mod cli;
mod commands;
mod diff;
mod error;
mod lock;
mod options;
mod progress;
mod remote;
mod runtime;
mod signature;
mod steps;
mod sweep;

// What the installer shares with the doctor lives in scimcp-setup-model; its modules keep
// their old paths here (`crate::layout`, `crate::clients`, …).
use scimcp_setup_model::{
    backup, clients, current, edit, entry, faults, host, layout, register, remote_server,
};

use std::process::ExitCode;

use clap::Parser;

// The commands, as a library: what the binary, the doctor's `--fix` and the tests run.
pub use commands::install::{install, repair};
pub use commands::uninstall::run as uninstall;
pub use commands::{Report, Setup, adapter_name};
pub use error::SetupError;
pub use options::{
    InstallOptions, PackageOptions, RemoteOptions, SignatureOptions, UninstallOptions,
};
pub use progress::{Progress, Silent, for_terminal as terminal_progress};

// Where things are: the host, the data root's layout, the active version.
pub use current::read as read_current;
pub use host::{Host, NoHomeDir, Platform, is_executable};
pub use layout::{DEFAULT_ADAPTER, Layout};

// The clients and their entries, read-only: for the doctor's checks and for the tests that
// inspect what an install wrote.
pub use backup::latest as latest_backup;
pub use clients::{
    Client, ClientContext, all as all_clients, by_id as client_by_id, recorded_project,
};
pub use edit::{EditError, Format, Slot};
pub use entry::Entry;
pub use register::{
    ClientStatus, Outcome, read_text as read_client_file, remote_status, status as client_status,
};
pub use remote_server::{
    DEFAULT_TOKEN_ENV, RemoteServer, RemoteServerError, RemoteUrl, check_token_env,
    find_recorded as find_remote,
};

// A runtime's files, for the doctor's identity and package checks.
pub use adapters::package_base;
pub use runtime::files::{FilesReport, check_files as check_runtime_files, site_packages};

/// What the integration tests of this crate (and only they) reach: the knobs they turn
/// through the environment and a few helpers to build fake bundles. Not a stable API.
#[doc(hidden)]
pub mod testing {
    pub use crate::bundle::copy_tree;
    pub use crate::faults::{PAUSE_ENV, PAUSE_STAGED_ENV};
    pub use crate::remote::github::host_target;
    pub use crate::steps::TIMEOUT_ENV;
}

use cli::{Cli, Command, InstallArgs};

/// Resolve the settings for this process: the real host and the data root.
fn resolve(global: &cli::GlobalArgs) -> Result<Setup, SetupError> {
    let host = Host::from_process()?;
    let root = scimcp_core::dirs::data_root()?;
    let root = std::path::absolute(&root).unwrap_or(root);
    let project = global
        .project
        .as_ref()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()));
    Ok(Setup {
        layout: Layout::new(&root, host.platform),
        host,
        clients: global.clients.clone(),
        project,
        dry_run: global.dry_run,
        json: global.json,
        yes: global.yes,
        adapters: global.adapters.clone(),
    })
}

/// Run one command. Every error, a client that could not be updated included, is a failure
/// its user can act on: `main` exits [`scimcp_core::exit::FAILURE`].
fn run(setup: &Setup, command: Command) -> Result<(), SetupError> {
    let progress = progress::for_terminal(!setup.json);
    let report = match command {
        Command::Install(args) => install(setup, &args.into(), progress.as_ref()),
        Command::Repair(args) => repair(setup, &args.into(), progress.as_ref()),
        Command::Upgrade(args) => commands::upgrade::run(setup, &args, progress.as_ref()),
        Command::Rollback => commands::rollback::run(setup),
        Command::Uninstall(args) => uninstall(setup, &args.into()),
        Command::Status => return commands::status::run(setup).map(|_| ()),
        Command::Clients => return commands::clients::run(setup),
    };
    progress.finish();
    let report = report?;
    report.print(setup.json);
    match report.failures() {
        0 => Ok(()),
        n => Err(SetupError::ClientsFailed(n)),
    }
}

/// Entry point of the `scimcp-setup` binary.
pub fn main() -> ExitCode {
    use scimcp_core::{exit, failure::Failure};
    let cli = Cli::parse();
    let json = cli.global.json;
    let command = cli
        .command
        .unwrap_or_else(|| Command::Install(InstallArgs::default()));
    match resolve(&cli.global).and_then(|setup| run(&setup, command)) {
        Ok(()) => exit::code(exit::SUCCESS),
        Err(e) => {
            // A report already on stdout says which clients failed: one JSON document there.
            let reported = matches!(e, SetupError::ClientsFailed(_));
            Failure::with_hint_of(&e).print(json && !reported);
            exit::code(exit::FAILURE)
        }
    }
}
