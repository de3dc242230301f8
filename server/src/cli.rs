//! All of `scimcp`'s command-line parsing: the clap types, nothing that acts on them
//! (`commands` parses and dispatches, so this file imports no command).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "scimcp",
    version,
    about = "Serve a scientific command-line program to AI clients over MCP"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process; boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Run the MCP server for one adapter (stdio by default).
    Serve(ServeArgs),
    /// Work with adapter manifests.
    #[command(subcommand)]
    Adapter(AdapterCommand),
    /// Manage the bearer tokens of `serve --transport http` on a network address.
    Token(TokenArgs),
    /// Run one CWL CommandLineTool job through the MCP server (a cwl-runner: prints the CWL
    /// output object on stdout; exit 33 for an unsupported CWL feature).
    CwlRun(CwlRunArgs),
    /// Manage the run history: delete finished runs safely (`runs prune`).
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Internal: the run guard the server starts each run's CLI under.
    #[command(name = "__guard", hide = true)]
    Guard(crate::guard::GuardArgs),
    /// Internal: what a Slurm batch job runs on the compute node (a run's recorded plan).
    #[command(name = "__job", hide = true)]
    Job(crate::runs::job::JobArgs),
    /// Internal: enter the run sandbox, then exec the CLI (started by the run guard).
    #[command(name = "__sandbox", hide = true)]
    Sandbox(SandboxArgs),
}

/// Arguments of `scimcp cwl-run` (the cwl-runner interface).
#[derive(clap::Args, Debug)]
pub(crate) struct CwlRunArgs {
    /// Where the output files go (must exist; default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub outdir: Option<PathBuf>,
    /// Print only errors on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Serve tools with ShellCommandRequirement through `/bin/sh -c` (`serve
    /// --cwl-allow-shell`).
    #[arg(long)]
    pub allow_shell: bool,
    /// Serve tools that require a container from PATH instead (`serve --cwl-no-container`).
    #[arg(long)]
    pub no_container: bool,
    /// The CWL CommandLineTool document (a path or a file:// URI).
    pub tool: String,
    /// The job: the input values (YAML or JSON); without it every input takes its default.
    pub job: Option<String>,
}

/// Arguments of `scimcp __sandbox`.
#[derive(clap::Args, Debug)]
pub(crate) struct SandboxArgs {
    /// The sandbox policy, as JSON (scimcp_process::sandbox::Policy).
    #[arg(long)]
    pub policy: String,
    /// `required` refuses to start the CLI when a baseline protection cannot apply.
    #[arg(long, value_enum, default_value_t = RequirementArg::BestEffort)]
    pub requirement: RequirementArg,
    /// Where to write what was applied (JSON), before the CLI starts.
    #[arg(long, value_name = "FILE")]
    pub report: PathBuf,
    /// The CLI and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<std::ffi::OsString>,
}

/// `__sandbox --requirement`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RequirementArg {
    Required,
    #[value(name = "best_effort")]
    BestEffort,
}

// `serve --sandbox` and `__job --sandbox` take the same values; the enum lives beside the
// mode it selects, so the job runner (runs/job.rs) need not import this file.
pub(crate) use crate::sandbox_policy::SandboxArg;

/// Arguments of `scimcp serve`.
#[derive(clap::Args, Debug)]
pub(crate) struct ServeArgs {
    /// An embedded adapter's name (e.g. `refsci`) or the path of a manifest file.
    #[arg(long, default_value = "refsci")]
    pub adapter: String,
    /// For a CWL tool with ShellCommandRequirement: run its command line through
    /// `/bin/sh -c` (the plan shows the whole line). Without it such a tool is refused.
    #[arg(long)]
    pub cwl_allow_shell: bool,
    /// For a CWL tool that requires a container (DockerRequirement): run it from PATH in
    /// scimcp's sandbox instead, like cwltool --no-container (every plan says so). Without it
    /// such a tool is refused.
    #[arg(long)]
    pub cwl_no_container: bool,
    /// Python interpreter of the scientific runtime (the adapter's package installed in it).
    #[arg(long, env = "SCIMCP_PYTHON")]
    pub python: Option<PathBuf>,
    /// Transport to serve on.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    pub transport: Transport,
    /// Address for `--transport http`; port 0 picks a free port, printed on stderr. MCP is
    /// served at `http://ADDRESS/mcp`. A loopback address (127.0.0.1, localhost, [::1]) serves
    /// this computer without a token; any other (e.g. 0.0.0.0:8765) requires bearer tokens
    /// (`scimcp token add`) and TLS (--tls-cert/--tls-key, or --allow-plain-http behind a
    /// TLS proxy).
    #[arg(long, default_value = "127.0.0.1:8765")]
    pub listen: String,
    /// The token file (default: tokens.toml in scimcp's data directory). `SCIMCP_TOKEN`
    /// adds one more token, named `env`.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Require a bearer token on a loopback address too (a reverse proxy on this computer).
    #[arg(long)]
    pub require_token: bool,
    /// PEM certificate chain for HTTPS (the server's certificate first).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Serve a network address over plain HTTP: only behind a TLS-terminating reverse proxy
    /// or on a network you trust (tokens cross it in clear text otherwise).
    #[arg(long)]
    pub allow_plain_http: bool,
    /// A host name clients use to reach this server, accepted in `Host` (repeatable;
    /// NAME or NAME:PORT). Loopback names and the address a client connected to always are.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// A web page origin allowed to call the server from a browser (repeatable; e.g.
    /// https://notebook.lab.example:443). Pages from this computer always are.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// Whether start_analysis and cancel_run act only with `confirm: true` (plan-then-
    /// confirm). Default: required when tokens are required (a network address or
    /// --require-token), optional over stdio and loopback.
    #[arg(long, value_enum, value_name = "MODE")]
    pub confirm: Option<ConfirmArg>,
    /// The client's deadline for one tool call, in seconds (what its entry's timeout says;
    /// scimcp-setup writes 600 where the client has such a key). Waiting tools then wait at
    /// most this less 15 s (and at most 300 s) by default. Without it the deadline comes
    /// from the client's declared name, or a 45 s default for an unknown client.
    #[arg(long, env = "SCIMCP_CLIENT_TIMEOUT_S", value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub client_timeout_s: Option<u64>,
    /// Requests per second each token may make, sustained (bursts of five times as many).
    #[arg(long, value_name = "N", default_value_t = 10.0)]
    pub token_rate: f64,
    /// Requests each token may have in flight at once (a waiting get_run_result counts).
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub token_concurrency: usize,
    /// Extra directory whose datasets may be analysed (repeatable); the start directory is always allowed.
    #[arg(long = "data-dir")]
    pub data_dirs: Vec<PathBuf>,
    /// A variable every run gets, recorded in each run's plan (repeatable), over the
    /// adapter's own; e.g. a lab's thread count. Names that would change which code or
    /// interpreter runs (LD_*, PYTHONPATH, PATH, …) are refused.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// Where runs execute: `local` (child processes of this server) or `slurm` (batch jobs
    /// submitted with sbatch; the state directory must be on a file system the compute
    /// nodes share).
    #[arg(long, value_enum, default_value_t = ExecutorArg::Local)]
    pub executor: ExecutorArg,
    /// The Slurm executor's settings (TOML: partition, account, qos, directives,
    /// poll_interval_s, command_timeout_s, scimcp); see docs/SLURM.md.
    #[arg(long, value_name = "FILE")]
    pub slurm_config: Option<PathBuf>,
    /// Whether each run's CLI starts inside the kernel sandbox: `best-effort` (what this
    /// machine can enforce, each gap recorded), `required` (a run that cannot have every
    /// baseline protection is refused, naming it) or `off` (debugging; recorded as such).
    #[arg(long, value_enum, env = "SCIMCP_SANDBOX", default_value_t = SandboxArg::BestEffort)]
    pub sandbox: SandboxArg,
    /// Refuse new runs once the run history (scimcp's runs directory) holds this many bytes;
    /// `scimcp runs prune` frees it. Default: no limit.
    #[arg(long, env = "SCIMCP_MAX_HISTORY_BYTES", value_name = "BYTES")]
    pub max_history_bytes: Option<u64>,
    /// Refuse new runs once the volume of the runs directory has less free space than this.
    /// Default: no limit.
    #[arg(long, env = "SCIMCP_MIN_FREE_BYTES", value_name = "BYTES")]
    pub min_free_bytes: Option<u64>,
}

/// `--executor`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExecutorArg {
    Local,
    Slurm,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    Stdio,
    Http,
}

/// `--confirm`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConfirmArg {
    Required,
    Optional,
}

/// Arguments of `scimcp token`.
#[derive(clap::Args, Debug)]
pub(crate) struct TokenArgs {
    /// The token file (default: tokens.toml in scimcp's data directory).
    #[arg(long, value_name = "PATH", global = true)]
    pub token_file: Option<PathBuf>,
    /// Print a machine-readable report on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: TokenCommand,
}

#[derive(Subcommand, Debug)]
pub(crate) enum TokenCommand {
    /// Add a token for one person or client and print its secret (once: only its SHA-256
    /// is stored). The token file is created, private (0600), if missing.
    Add {
        /// A name for whoever holds it (letters, digits, '.', '_', '-'); runs record it.
        name: String,
    },
    /// Revoke a token: a running server refuses it from its next request.
    Revoke {
        /// The token's name, as `scimcp token list` shows it.
        name: String,
    },
    /// List the tokens' names, creation times and fingerprints (never the secrets).
    List,
}

/// `scimcp runs`.
#[derive(Subcommand, Debug)]
pub(crate) enum RunsCommand {
    /// Delete finished runs: those older than --older-than, beyond the --keep-newest, in a
    /// --state. Never a queued or running run, one a server holds, one an un-ended campaign
    /// names, or one a kept run took an artifact of as input. Try --dry-run first.
    Prune(PruneArgs),
}

/// Arguments of `scimcp runs prune`.
#[derive(clap::Args, Debug)]
pub(crate) struct PruneArgs {
    /// Only runs that ended (never-started ones: were created) at least this long ago:
    /// a whole number and a unit of s, m, h, d, w (e.g. 30d, 12h).
    #[arg(long, value_name = "DURATION")]
    pub older_than: Option<String>,
    /// Keep the newest N runs (of --adapter and --state), whatever their age.
    #[arg(long, value_name = "N")]
    pub keep_newest: Option<usize>,
    /// Only runs that ended in this state (repeatable). Default: any finished state.
    #[arg(long = "state", value_enum, value_name = "STATE")]
    pub states: Vec<PruneStateArg>,
    /// Only runs of this adapter (a name, or a manifest path as `serve --adapter` takes).
    /// Default: every adapter's runs.
    #[arg(long)]
    pub adapter: Option<String>,
    /// scimcp's data directory, whose `runs/` is pruned. Default: where `serve` keeps its
    /// runs (SCIMCP_HOME, else the platform data directory).
    #[arg(long, value_name = "PATH")]
    pub data_root: Option<PathBuf>,
    /// List what would be deleted, with sizes and a total; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print a machine-readable report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `runs prune --state`: the finished states.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PruneStateArg {
    Succeeded,
    #[value(name = "partial_failure")]
    PartialFailure,
    Failed,
    Cancelled,
}

#[derive(Subcommand, Debug)]
pub(crate) enum AdapterCommand {
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
