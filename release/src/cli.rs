//! All of `scimcp-release`'s command-line parsing: what the commands take, nothing of what
//! they do ([`crate::commands`] dispatches), so this file imports nothing of the crate.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "scimcp-release",
    version,
    about = "Bundle, sign, verify and preflight scimcp releases"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Build one deterministic MCP bundle zip per target.
    Bundle(BundleArgs),
    /// Sign release artifacts: keyless (`--keyless`, Fulcio and Rekor) or with a key pair (`--key`).
    Sign(SignArgs),
    /// Write a new ECDSA P-256 key pair for key-pair signing.
    Keygen(KeygenArgs),
    /// Verify artifacts against their Sigstore bundles (`FILE.sigstore.json`), offline.
    Verify(VerifyArgs),
    /// Sigstore conformance protocol: verify one bundle.
    VerifyBundle(VerifyBundleArgs),
    /// Run every gate a tag needs, in a temporary directory.
    Preflight(PreflightArgs),
}

/// Arguments of `scimcp-release preflight`.
#[derive(Args, Debug)]
pub(crate) struct PreflightArgs {
    /// The repository root.
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// The release tag (default: v<workspace version>).
    #[arg(long)]
    pub tag: Option<String>,
    /// Run only the quick parity shard; the report then says it is not release evidence.
    #[arg(long)]
    pub quick: bool,
    /// Run only these steps (comma-separated): checkout, tag, versions, lint, tests, bundle,
    /// signature, lifecycle, parity.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Skip these steps (comma-separated); the report then is not release evidence.
    #[arg(long, value_delimiter = ',')]
    pub skip: Vec<String>,
    /// Directory of the built suite binaries (default: next to this executable).
    #[arg(long)]
    pub bin_dir: Option<PathBuf>,
    /// Python of the development runtime (default: SCIMCP_PYTHON, else <repo>/.venv).
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// The interpreter of one adapter's runtime for the parity gate, `ADAPTER=PATH`
    /// (repeatable; default: <repo>/.venv-ADAPTER when it exists).
    #[arg(long, value_name = "ADAPTER=PATH")]
    pub adapter_python: Vec<String>,
    /// Where preflight.json and preflight.md go (default: <repo>/target/preflight).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Keep the work directory even when everything passed.
    #[arg(long)]
    pub keep_workdir: bool,
}

/// Arguments of `scimcp-release bundle`.
#[derive(Args, Debug)]
pub(crate) struct BundleArgs {
    /// Rust target triple (repeatable; default: this machine's).
    #[arg(long = "target")]
    pub targets: Vec<String>,
    /// Directory holding the built binaries (default: the directory of this executable).
    #[arg(long, conflicts_with = "from_dist")]
    pub bin_dir: Option<PathBuf>,
    /// Directory of `dist build` archives to take the binaries from (all targets).
    #[arg(long)]
    pub from_dist: Option<PathBuf>,
    /// The repository root (holds release/bundle.toml, adapters/, refsci/).
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// Where the zips and the release-level RELEASE.json go.
    #[arg(long, default_value = "target/bundles")]
    pub out: PathBuf,
    /// The release tag, recorded in RELEASE.json.
    #[arg(long)]
    pub tag: Option<String>,
    /// Write only manifest.json (for `mcpb validate`).
    #[arg(long)]
    pub manifest_only: bool,
}

/// Arguments of `scimcp-release sign`.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["key", "keyless"])))]
pub(crate) struct SignArgs {
    /// Key-pair signing with this PKCS#8 PEM ECDSA P-256 private key (from `keygen`).
    #[arg(long)]
    pub key: Option<PathBuf>,
    /// Keyless signing: a Fulcio certificate for your OIDC identity, each signature logged in
    /// Rekor.
    #[arg(long)]
    pub keyless: bool,
    /// OIDC identity token for --keyless; without it, the GitHub Actions job's token
    /// (audience `sigstore`) is requested.
    #[arg(long, env = "SIGSTORE_ID_TOKEN", hide_env_values = true)]
    pub identity_token: Option<String>,
    /// Signing config JSON naming the Fulcio and Rekor to use (default: the public-good
    /// instance's, embedded).
    #[arg(long, requires = "keyless")]
    pub signing_config: Option<PathBuf>,
    /// Trusted root JSON each new bundle must verify against before it is written (default:
    /// the embedded public-good root).
    #[arg(long, requires = "keyless")]
    pub trusted_root: Option<PathBuf>,
    /// Files to sign; each gets `<file>.sigstore.json` beside it.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Arguments of `scimcp-release keygen`.
#[derive(Args, Debug)]
pub(crate) struct KeygenArgs {
    /// Directory for `scimcp-release.key` (private, 0600) and `scimcp-release.pub`.
    #[arg(long)]
    pub out: PathBuf,
}

/// Who must have signed: a key, or a pinned certificate identity and issuer.
#[derive(Args, Debug)]
pub(crate) struct TrustArgs {
    /// PEM public key of a key-pair signer.
    #[arg(long, conflicts_with_all = ["certificate_identity", "certificate_oidc_issuer"])]
    pub key: Option<PathBuf>,
    /// Exact certificate identity (SAN), e.g. a workflow URI.
    #[arg(long, requires = "certificate_oidc_issuer")]
    pub certificate_identity: Option<String>,
    /// Exact OIDC issuer of the certificate.
    #[arg(long, requires = "certificate_identity")]
    pub certificate_oidc_issuer: Option<String>,
    /// Trusted root JSON replacing the embedded public-good root.
    #[arg(long)]
    pub trusted_root: Option<PathBuf>,
}

/// Arguments of `scimcp-release verify`.
#[derive(Args, Debug)]
pub(crate) struct VerifyArgs {
    #[command(flatten)]
    pub trust: TrustArgs,
    /// The release tag (e.g. v1.2.3): verify against the signer the release policy pins for
    /// it, with no identity flags.
    #[arg(long, conflicts_with_all = ["key", "certificate_identity", "bundle"])]
    pub tag: Option<String>,
    /// Release policy replacing the embedded `release.toml` (with --tag).
    #[arg(long, requires = "tag")]
    pub release_policy: Option<PathBuf>,
    /// Bundle path (only with a single file); defaults to `<file>.sigstore.json`.
    #[arg(long)]
    pub bundle: Option<PathBuf>,
    /// Files to verify.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Arguments of `scimcp-release verify-bundle` (sigstore-conformance CLI protocol).
#[derive(Args, Debug)]
pub(crate) struct VerifyBundleArgs {
    /// Use the staging instance's trusted root (not embedded: refused unless --trusted-root).
    #[arg(long)]
    pub staging: bool,
    /// The bundle to verify.
    #[arg(long)]
    pub bundle: PathBuf,
    #[command(flatten)]
    pub trust: TrustArgs,
    /// The artifact path, or `sha256:<hex>`.
    pub file_or_digest: String,
}
