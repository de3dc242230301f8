//! All of `scimcp`'s command-line parsing.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "scimcp",
    version,
    about = "Serve a scientific command-line program to AI clients over MCP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the MCP server for one adapter (stdio by default).
    Serve(ServeArgs),
    /// Work with adapter manifests.
    #[command(subcommand)]
    Adapter(AdapterCommand),
    /// Internal: the run guard the server starts each run's CLI under.
    #[command(name = "__guard", hide = true)]
    Guard(crate::guard::GuardArgs),
}

/// Arguments of `scimcp serve`.
#[derive(clap::Args, Debug)]
pub(crate) struct ServeArgs {
    /// An embedded adapter's name (e.g. `refsci`) or the path of a manifest file.
    #[arg(long, default_value = "refsci")]
    pub adapter: String,
    /// Python interpreter of the scientific runtime (the adapter's package installed in it).
    #[arg(long, env = "SCIMCP_PYTHON")]
    pub python: Option<PathBuf>,
    /// Transport to serve on.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    pub transport: Transport,
    /// Address for `--transport http` (loopback only: 127.0.0.1, localhost or [::1]; port 0
    /// picks a free port, printed on stderr). MCP is served at `http://ADDRESS/mcp`.
    #[arg(long, default_value = "127.0.0.1:8765")]
    pub listen: String,
    /// Extra directory whose datasets may be analysed (repeatable); the start directory is always allowed.
    #[arg(long = "data-dir")]
    pub data_dirs: Vec<PathBuf>,
    /// A variable every run gets, recorded in each run's plan (repeatable), over the
    /// adapter's own; e.g. a lab's thread count. Names that would change which code or
    /// interpreter runs (LD_*, PYTHONPATH, PATH, …) are refused.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    Stdio,
    Http,
}

#[derive(Subcommand, Debug)]
enum AdapterCommand {
    /// Validate a manifest file (or an embedded adapter's name) and print its hash.
    Check {
        /// Manifest path or embedded adapter name.
        manifest: String,
        /// Print a machine-readable report.
        #[arg(long)]
        json: bool,
    },
    /// List the embedded adapters.
    List,
}

pub(crate) fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => crate::commands::serve::run(args),
        Command::Adapter(AdapterCommand::Check { manifest, json }) => {
            crate::commands::adapter::check(&manifest, json)
        }
        Command::Adapter(AdapterCommand::List) => crate::commands::adapter::list(),
        Command::Guard(args) => crate::guard::run(args),
    }
}
