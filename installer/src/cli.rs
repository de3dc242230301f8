//! All of `scimcp-setup`'s command-line parsing.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::options::{
    InstallOptions, PackageOptions, RemoteOptions, SignatureOptions, UninstallOptions,
};

#[derive(Parser, Debug)]
#[command(
    name = "scimcp-setup",
    version,
    about = "Install scimcp and register it with your AI clients",
    long_about = "Install scimcp and register it with your AI clients.\n\n\
        With no subcommand, `install` runs: it unpacks this version under the scimcp data \
        directory, provisions each adapter's scientific runtime, and registers each adapter's \
        server (`scimcp-<adapter>`) in every MCP client found on this computer (plus a generic \
        mcp.json any other client can use). Nothing else in a client's configuration is \
        changed; every file is backed up first.\n\n\
        Adapters: `--adapter NAME` (one that ships with scimcp, e.g. refsci) or `--adapter \
        PATH` (a manifest file), repeatable, on every subcommand. Without it, a command acts \
        on every installed adapter (refsci when none is installed yet).\n\n\
        A lab's shared server: `install --remote https://HOST:PORT/mcp` registers a scimcp \
        server that runs elsewhere (Streamable HTTP) in every client that can take one, the \
        token as a reference to an environment variable (--token-env, default SCIMCP_TOKEN), \
        never the token itself; nothing is installed locally."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags every subcommand accepts.
#[derive(Args, Debug, Clone, Default)]
pub struct GlobalArgs {
    /// Only this client (repeatable); default: every detected client plus the generic file.
    /// See `scimcp-setup clients` for the ids.
    #[arg(long = "client", global = true, value_name = "NAME")]
    pub clients: Vec<String>,
    /// Print the exact diff of every file that would change, and change nothing.
    #[arg(long, global = true)]
    pub dry_run: bool,
    /// Print a machine-readable JSON report on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Answer yes to confirmations (needed for `uninstall --purge` without a terminal).
    #[arg(long, short = 'y', global = true)]
    pub yes: bool,
    /// A project directory, for the project-scope clients (claude-code-project,
    /// cursor-project, vscode-workspace).
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// The adapter to act on (repeatable): the name of one that ships with scimcp (refsci,
    /// …) or the path of a manifest file. Default: every installed adapter (refsci when none
    /// is installed yet). Each adapter gets its own runtime and its own entry
    /// (`scimcp-<adapter>`) in every client.
    #[arg(long = "adapter", global = true, value_name = "NAME|PATH")]
    pub adapters: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Install (the default): unpack, provision the runtime, register clients.
    Install(InstallArgs),
    /// Re-apply everything idempotently: entries, the runtime, the `current` version.
    Repair(InstallArgs),
    /// Move to the newest release (from GitHub, or a local mirror with --from).
    #[command(long_about = "Move to the newest release.\n\n\
        By default the releases of the repository the release policy pins (scimcp/scimcp) are \
        listed on GitHub, and the newest one newer than the active version that ships a bundle \
        for this computer (scimcp-<semver>-<target>.zip) is downloaded with its signature \
        (.zip.sigstore.json). With --from MIRROR_DIR a local directory of bundles \
        (scimcp-<semver>[-<target>] directories or .zip files) is used instead. Either way the \
        signature is verified against the release policy before anything is unpacked, the \
        previous version is kept for `rollback`, and older versions are refused unless \
        --allow-downgrade. Set GH_TOKEN (or GITHUB_TOKEN) if GitHub limits your request rate.")]
    Upgrade(UpgradeArgs),
    /// Go back to the previous version (one atomic switch).
    Rollback,
    /// Remove scimcp's client entries, versions and runtimes; keep run data. With
    /// --adapter, remove only those adapters (their entries, runtimes and records).
    Uninstall(UninstallArgs),
    /// Show what is installed, active and registered.
    Status,
    /// List known MCP clients and whether scimcp is registered in each.
    Clients,
}

/// Arguments of `install` and `repair`.
#[derive(Args, Debug, Clone, Default)]
pub struct InstallArgs {
    /// Install from this bundle instead of the running binaries: a directory, a .zip, or
    /// the https:// address of a release's .zip (its .sigstore.json is fetched from beside it).
    #[arg(long, value_name = "BUNDLE")]
    pub from: Option<PathBuf>,
    /// Python interpreter to build the scientific runtime from (it must be within the
    /// adapter's Python range). Default: found on this computer (uv, PATH, pyenv, the py
    /// launcher), or installed with `uv python install` when uv is present.
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Do not provision the scientific runtime (client registration only).
    #[arg(long)]
    pub skip_runtime: bool,
    #[command(flatten)]
    pub packages: PackageArgs,
    /// A folder the server may read datasets from (repeatable). Given, these folders replace
    /// the ones in use; by default the recorded folders are kept, and a first install uses
    /// `<Documents>/scimcp` (or `~/scimcp`). Created when missing.
    #[arg(long = "data-dir", value_name = "DIR")]
    pub data_dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub signature: SignatureArgs,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// A remote server to register instead of installing locally (`install`/`repair`).
#[derive(Args, Debug, Clone, Default)]
pub struct RemoteArgs {
    /// Register a scimcp server that runs elsewhere, by the URL of its MCP endpoint
    /// (Streamable HTTP, `scimcp serve --transport http`), e.g. https://lab-server:8443/mcp;
    /// with `repair`, also the name of a registered one. Nothing is installed on this
    /// computer. https:// only, or http:// for a server on this computer.
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,
    /// The environment variable the clients read the bearer token from (the files hold only
    /// this name, never the token). Default: SCIMCP_TOKEN.
    #[arg(
        long,
        value_name = "NAME",
        requires = "remote",
        conflicts_with = "no_token"
    )]
    pub token_env: Option<String>,
    /// Register the server without a token (a server on this computer, or behind a proxy
    /// that authenticates).
    #[arg(long, requires = "remote")]
    pub no_token: bool,
    /// The entry's name in every client; default: scimcp-remote-<host>.
    #[arg(long, value_name = "NAME", requires = "remote")]
    pub name: Option<String>,
}

/// Where the runtime's packages come from. Given, they replace the ones recorded for each
/// adapter this command provisions; otherwise the recorded ones are used again (`repair`,
/// `upgrade`), so an air-gapped lab's wheelhouse keeps working.
#[derive(Args, Debug, Clone, Default)]
pub struct PackageArgs {
    /// A folder of wheels (a wheelhouse) to install from (repeatable), as pip's
    /// --find-links.
    #[arg(long = "find-links", value_name = "DIR")]
    pub find_links: Vec<PathBuf>,
    /// Another package index than PyPI (a mirror), as pip's --index-url.
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
    /// Use no index at all: only the --find-links folders (for a computer without network).
    #[arg(long, requires = "find_links")]
    pub no_index: bool,
}

/// How bundles are checked before they are unpacked.
#[derive(Args, Debug, Clone, Default)]
pub struct SignatureArgs {
    /// Development only: install unsigned material (a bundle directory, or a zip without
    /// its .sigstore.json). Recorded in state.json as a development override. A signature
    /// that is present but does not verify is refused even with this flag.
    #[arg(long)]
    pub allow_unsigned: bool,
    /// Verify against this release policy (release.toml format) instead of the one built
    /// in, e.g. a key-pair policy for an air-gapped release.
    #[arg(long, value_name = "FILE")]
    pub release_policy: Option<PathBuf>,
    /// Use this Sigstore trusted root (trusted_root.json) instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub trusted_root: Option<PathBuf>,
}

/// Arguments of `upgrade`.
#[derive(Args, Debug, Clone)]
pub struct UpgradeArgs {
    /// A local directory of bundles (`scimcp-<semver>*/` or `.zip`) to use instead of
    /// GitHub releases.
    #[arg(long, value_name = "MIRROR_DIR", conflicts_with_all = ["repo", "github_api"])]
    pub from: Option<PathBuf>,
    /// The GitHub repository whose releases to use; default: the one the release policy
    /// pins.
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// The GitHub REST API root, e.g. a GitHub Enterprise server's
    /// (`https://HOST/api/v3`); default `https://api.github.com`.
    #[arg(long, value_name = "URL", env = "SCIMCP_GITHUB_API")]
    pub github_api: Option<String>,
    /// Install this version instead of the newest.
    #[arg(long, value_name = "SEMVER")]
    pub version: Option<semver::Version>,
    /// Allow moving to an older version.
    #[arg(long)]
    pub allow_downgrade: bool,
    /// Only say whether a newer version is available (and which); download and change
    /// nothing.
    #[arg(long)]
    pub check: bool,
    /// Python interpreter to build a new runtime from.
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Do not provision the scientific runtime.
    #[arg(long)]
    pub skip_runtime: bool,
    #[command(flatten)]
    pub packages: PackageArgs,
    #[command(flatten)]
    pub signature: SignatureArgs,
}

/// Arguments of `uninstall`.
#[derive(Args, Debug, Clone, Default)]
pub struct UninstallArgs {
    /// Also delete run data, datasets and backups (asks first unless --yes).
    #[arg(long, conflicts_with = "remote")]
    pub purge: bool,
    /// Remove only this remote server's entries (by its name or URL, as `status` lists
    /// them); local adapters and every other entry stay.
    #[arg(long, value_name = "NAME|URL")]
    pub remote: Option<String>,
}

impl From<InstallArgs> for InstallOptions {
    fn from(a: InstallArgs) -> InstallOptions {
        InstallOptions {
            from: a.from,
            python: a.python,
            skip_runtime: a.skip_runtime,
            packages: a.packages.into(),
            data_dirs: a.data_dirs,
            signature: a.signature.into(),
            remote: RemoteOptions {
                remote: a.remote.remote,
                token_env: a.remote.token_env,
                no_token: a.remote.no_token,
                name: a.remote.name,
            },
        }
    }
}

impl From<PackageArgs> for PackageOptions {
    fn from(a: PackageArgs) -> PackageOptions {
        PackageOptions {
            find_links: a.find_links,
            index_url: a.index_url,
            no_index: a.no_index,
        }
    }
}

impl From<SignatureArgs> for SignatureOptions {
    fn from(a: SignatureArgs) -> SignatureOptions {
        SignatureOptions {
            allow_unsigned: a.allow_unsigned,
            release_policy: a.release_policy,
            trusted_root: a.trusted_root,
        }
    }
}

impl From<UninstallArgs> for UninstallOptions {
    fn from(a: UninstallArgs) -> UninstallOptions {
        UninstallOptions {
            purge: a.purge,
            remote: a.remote,
        }
    }
}
