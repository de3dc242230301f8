//! `scimcp-parity`: proves that an analysis run through the MCP server gives the same
//! artifacts as the same analysis typed directly at the scientific CLI.
//!
//! This crate drives the built `scimcp` binary only as a real MCP client would (over
//! stdio, through [`client::McpSession`]); it must never call the server's planner, since the
//! direct side of each scenario is written out literally.
//!
//! Status: the MCP client is complete and used by the end-to-end tests and the quickstart;
//! scenario files, snapshots and the gate arrive with the parity milestone, and until then
//! the `run`, `check` and `review` subcommands refuse with "not implemented yet".

pub mod client;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "scimcp-parity",
    version,
    about = "Compare direct-CLI runs with runs through the scimcp MCP server"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run every scenario and record snapshots.
    Run,
    /// Verify scenarios against the snapshots without writing (CI mode).
    Check,
    /// Show what drifted.
    Review,
}

/// Entry point of the `scimcp-parity` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let name = match cli.command {
        Command::Run => "run",
        Command::Check => "check",
        Command::Review => "review",
    };
    scimcp_core::planned::not_implemented("scimcp-parity", name, "parity milestone")
}
