//! All of `scimcp-doctor`'s command-line parsing.

use std::path::PathBuf;

use clap::Parser;

#[derive(Parser, Debug)]
#[command(
    name = "scimcp-doctor",
    version,
    about = "Check that scimcp can run an analysis, and say how to fix what cannot",
    long_about = "Check that scimcp can run an analysis, and say how to fix what cannot.\n\n\
        Every check has a stable id, a status (ok, warn, fail, skipped), a one-line finding \
        and the exact command that fixes it. Nothing is changed unless --fix is given.\n\n\
        Exit status: 0 all ok, 1 warnings only, 2 any failure, or the doctor itself failed (an \
        unknown --check id, bad arguments)."
)]
pub struct Cli {
    /// Print the report as JSON (schema: docs/doctor-report.schema.json).
    #[arg(long)]
    pub json: bool,
    /// Run the installer's repair for what it can fix, then check again (before and after).
    #[arg(long)]
    pub fix: bool,
    /// Run only the check with this id (e.g. runtime.packages, client.cursor).
    #[arg(long, value_name = "ID")]
    pub check: Option<String>,
    /// Skip the slow checks that start the runtime or the server (runtime.import,
    /// server.handshake).
    #[arg(long)]
    pub fast: bool,
    /// With --fix: the Python to rebuild the scientific runtime from, when it must be rebuilt.
    #[arg(long, value_name = "PATH", requires = "fix")]
    pub python: Option<PathBuf>,
    /// Time limit of the import check, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub import_timeout: u64,
    /// Time limit of the MCP handshake, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub handshake_timeout: u64,
    /// Check only this adapter (repeatable; a name, or the path of its manifest); default:
    /// every installed adapter.
    #[arg(long = "adapter", value_name = "NAME|PATH")]
    pub adapters: Vec<String>,
    /// The Slurm configuration the server runs with (`scimcp serve --executor slurm
    /// --slurm-config FILE`): also check that cluster (cluster.slurm: the file, Slurm's
    /// commands, the controller, the partition and whether every workflow fits its limits).
    #[arg(long, value_name = "FILE")]
    pub slurm_config: Option<PathBuf>,
    /// Check only this remote scimcp server: a registered one by name or URL (its client
    /// entries and the handshake), or any server's URL (the handshake: initialize, tools/list
    /// and get_capabilities over Streamable HTTP, with the token from --token-env).
    #[arg(long, value_name = "NAME|URL", conflicts_with = "adapters")]
    pub remote: Option<String>,
    /// With --remote: the environment variable holding the token (default: the one the
    /// registration names, else SCIMCP_TOKEN).
    #[arg(
        long,
        value_name = "NAME",
        requires = "remote",
        conflicts_with = "no_token"
    )]
    pub token_env: Option<String>,
    /// With --remote: send no token.
    #[arg(long, requires = "remote")]
    pub no_token: bool,
    /// Trust the certificate authority in this PEM file for https:// servers, instead of the
    /// public authorities (a lab's own CA).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// List the ids of the checks that would run, and exit.
    #[arg(long, conflicts_with_all = ["check", "fix"])]
    pub list: bool,
}
