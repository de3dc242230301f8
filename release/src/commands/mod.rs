//! One module per subcommand; each returns its [`CommandError`], and [`main`] turns the
//! outcome into an exit status ([`scimcp_core::exit`]), printing the error, its causes and a
//! hint on stderr. This is the binary's edge: the library below returns typed errors only.

use std::process::ExitCode;

use clap::Parser as _;
use scimcp_core::exit;

use crate::cli::{Cli, Command};

mod bundle;
mod error;
mod keygen;
mod preflight;
mod sign;
mod trust;
mod verify;

use error::CommandError;

/// Parse the command line and run the subcommand: exit 0 on success, otherwise the failed
/// command's [`CommandError::exit_status`] (clap exits 2 itself for what it checks).
pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<u8, CommandError> = match cli.command {
        Command::Bundle(args) => bundle::run(&args).map(|()| exit::SUCCESS),
        Command::Preflight(args) => preflight::run(&args).map(exit::verdict),
        Command::Sign(args) => sign::run(&args).map(|()| exit::SUCCESS),
        Command::Keygen(args) => keygen::run(&args).map(|()| exit::SUCCESS),
        Command::Verify(args) => verify::run(&args).map(|()| exit::SUCCESS),
        Command::VerifyBundle(args) => verify::run_conformance(&args).map(|()| exit::SUCCESS),
    };
    match result {
        Ok(status) => exit::code(status),
        Err(err) => {
            err.report();
            exit::code(err.exit_status())
        }
    }
}
