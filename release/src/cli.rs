//! All of `scimcp-release`'s command-line parsing.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

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
    /// Sign release artifacts with a key pair (`--key`); keyless signing is not implemented yet.
    Sign(SignArgs),
    /// Write a new ECDSA P-256 key pair for key-pair signing.
    Keygen(KeygenArgs),
    /// Verify artifacts against their Sigstore bundles (`FILE.sigstore.json`), offline.
    Verify(VerifyArgs),
    /// Sigstore conformance protocol: verify one bundle.
    VerifyBundle(VerifyBundleArgs),
    /// Run every gate a tag needs, in a temporary directory.
    Preflight,
}

/// Arguments of `scimcp-release sign`.
#[derive(Args, Debug)]
pub(crate) struct SignArgs {
    /// PKCS#8 PEM ECDSA P-256 private key (from `keygen`). Without it, keyless signing is
    /// requested, which is not implemented yet.
    #[arg(long)]
    pub key: Option<PathBuf>,
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

pub(crate) fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bundle => {
            return scimcp_core::planned::not_implemented(
                "scimcp-release",
                "bundle",
                "release milestone",
            );
        }
        Command::Preflight => {
            return scimcp_core::planned::not_implemented(
                "scimcp-release",
                "preflight",
                "release milestone",
            );
        }
        Command::Sign(args) if args.key.is_none() => {
            return scimcp_core::planned::not_implemented(
                "scimcp-release",
                "sign (keyless)",
                "release milestone; use --key for key-pair signing",
            );
        }
        Command::Sign(args) => crate::commands::sign::run(&args),
        Command::Keygen(args) => crate::commands::keygen::run(&args),
        Command::Verify(args) => crate::commands::verify::run(&args),
        Command::VerifyBundle(args) => crate::commands::verify::run_conformance(&args),
    };
    crate::commands::finish(result)
}
