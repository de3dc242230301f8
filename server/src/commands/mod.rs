//! One module per subcommand, and [`run`]: parse the command line ([`crate::cli`]) and
//! dispatch to the subcommand's module.

pub(crate) mod adapter;
pub(crate) mod cwl_run;
pub(crate) mod runs;
pub(crate) mod sandbox;
pub(crate) mod serve;
pub(crate) mod token;

use std::process::ExitCode;

use clap::Parser as _;

use crate::cli::{AdapterCommand, Cli, Command};

pub(crate) fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Adapter(AdapterCommand::Check { manifest, json }) => {
            adapter::check(&manifest, json)
        }
        Command::Adapter(AdapterCommand::List) => adapter::list(),
        Command::Token(args) => token::run(args),
        Command::CwlRun(args) => cwl_run::run(args),
        Command::Runs(crate::cli::RunsCommand::Prune(args)) => runs::prune(args),
        Command::Guard(args) => crate::guard::run(args),
        Command::Job(args) => crate::runs::job::run(args),
        Command::Sandbox(args) => sandbox::run(args),
    }
}
