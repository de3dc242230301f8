//! `scimcp-doctor`: runs every check that decides whether an installation can run an
//! analysis (layout, runtime, packages, imports, identity, clients, handshake, state), each
//! with a stable id, a finding and a concrete remedy.
//!
//! Status: the command-line surface is fixed here; the checks arrive with the doctor
//! milestone and until then the binary refuses with "not implemented yet". It must never
//! modify anything unless `--fix` is given.

use std::process::ExitCode;

use clap::Parser;

#[derive(Parser, Debug)]
#[command(
    name = "scimcp-doctor",
    version,
    about = "Check that scimcp can run an analysis, and say how to fix what cannot"
)]
struct Cli {
    /// Machine-readable report.
    #[arg(long)]
    json: bool,
    /// Apply the installer's repair for fixable failures, then re-check.
    #[arg(long)]
    fix: bool,
    /// Run one check by id.
    #[arg(long)]
    check: Option<String>,
}

/// Entry point of the `scimcp-doctor` binary.
pub fn main() -> ExitCode {
    let _cli = Cli::parse();
    scimcp_core::planned::not_implemented("scimcp-doctor", "(checks)", "doctor milestone")
}
