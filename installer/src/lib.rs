//! `scimcp-setup`: installs scimcp for a scientist: unpacks verified versions, provisions
//! the scientific runtime, registers the server in every MCP client, and repairs, upgrades,
//! rolls back and uninstalls without ever damaging a client's other settings or run data.
//!
//! Status: the command-line surface is fixed here; the subcommands arrive with the
//! installer milestone and until then refuse with "not implemented yet".

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "scimcp-setup",
    version,
    about = "Install scimcp and register it with your AI clients"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Install (the default): unpack, provision the runtime, register clients.
    Install,
    /// Re-apply everything idempotently.
    Repair,
    /// Move to the newest verified release.
    Upgrade,
    /// Go back to the previous version.
    Rollback,
    /// Remove scimcp's entries, binaries and runtimes; keep run data.
    Uninstall,
    /// Show what is installed, active and registered.
    Status,
    /// List known MCP clients and whether scimcp is registered in each.
    Clients,
}

/// Entry point of the `scimcp-setup` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let name = match cli.command.unwrap_or(Command::Install) {
        Command::Install => "install",
        Command::Repair => "repair",
        Command::Upgrade => "upgrade",
        Command::Rollback => "rollback",
        Command::Uninstall => "uninstall",
        Command::Status => "status",
        Command::Clients => "clients",
    };
    scimcp_core::planned::not_implemented("scimcp-setup", name, "installer milestone")
}
