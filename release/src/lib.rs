//! `scimcp-release`: builds deterministic MCP bundles, signs them and verifies Sigstore
//! bundles offline, and runs the release preflight a tag needs.
//!
//! Status: the command-line surface is fixed here; the subcommands arrive with the release
//! milestone and until then refuse with "not implemented yet".

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "scimcp-release",
    version,
    about = "Bundle, sign, verify and preflight scimcp releases"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build one deterministic MCP bundle zip per target.
    Bundle,
    /// Sign release artifacts (keyless Sigstore or a key pair).
    Sign,
    /// Verify a Sigstore bundle offline against the pinned identity.
    Verify,
    /// Sigstore conformance protocol: verify one bundle.
    VerifyBundle,
    /// Run every gate a tag needs, in a temporary directory.
    Preflight,
}

/// Entry point of the `scimcp-release` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let name = match cli.command {
        Command::Bundle => "bundle",
        Command::Sign => "sign",
        Command::Verify => "verify",
        Command::VerifyBundle => "verify-bundle",
        Command::Preflight => "preflight",
    };
    scimcp_core::planned::not_implemented("scimcp-release", name, "release milestone")
}
