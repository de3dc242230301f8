//! `scimcp-setup`: installs scimcp for a scientist: unpacks versions, provisions the
//! scientific runtime, registers the server in every MCP client, and repairs, upgrades,
//! rolls back and uninstalls without ever damaging a client's other settings or run data.
//!
//! The library is the whole installer; the binary only calls [`main`]. Paths come from an
//! injectable [`Host`] (platform, home, environment) and a [`Layout`] under the data root,
//! so every behaviour can be exercised against a fake home for any operating system.
//!
//! It must never unpack anything before its signature is verified, and never write under the
//! data root while downloading ([`remote`] fetches into a temporary directory).

pub mod adapters;
pub mod backup;
pub mod bundle;
pub mod cli;
pub mod clients;
pub mod commands;
pub mod current;
pub mod diff;
pub mod edit;
pub mod entry;
pub mod error;
pub mod faults;
pub mod host;
pub mod layout;
pub mod lock;
pub mod progress;
pub mod register;
pub mod remote;
pub mod remote_server;
pub mod runtime;
pub mod signature;
pub mod steps;
pub mod sweep;

use std::process::ExitCode;

use clap::Parser;

pub use commands::{Report, Setup};
pub use error::SetupError;
pub use host::{Host, Platform};
pub use layout::Layout;

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
pub fn run(setup: &Setup, command: Command) -> Result<(), SetupError> {
    let progress = progress::for_terminal(!setup.json);
    let report = match command {
        Command::Install(args) => commands::install::run(setup, &args, false, progress.as_ref()),
        Command::Repair(args) => commands::install::run(setup, &args, true, progress.as_ref()),
        Command::Upgrade(args) => commands::upgrade::run(setup, &args, progress.as_ref()),
        Command::Rollback => commands::rollback::run(setup),
        Command::Uninstall(args) => commands::uninstall::run(setup, &args),
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
