//! Why a `scimcp-release` command failed: each variant says what failed and where (the
//! library's own errors keep their messages, wrapped whole), and carries its exit status
//! ([`CommandError::exit_status`]) and its hint, so the binary's edge picks both by matching
//! a type, never by searching an error chain.

use std::borrow::Cow;
use std::path::PathBuf;

use scimcp_core::exit;
use scimcp_core::failure::{Failure, Hint};
use scimcp_core::fs::WriteError;

use crate::bundle::BundleError;
use crate::keyless::KeylessError;
use crate::preflight::PreflightError;
use crate::sign::SignError;
use crate::verify::release_policy::PolicyError;
use crate::verify::{KeyError, ReleaseVerifyError, TrustRootError, VerifyError};

#[derive(Debug, thiserror::Error)]
pub(crate) enum CommandError {
    /// Reading an input file or writing to stdout; `fs_err` names the path.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("cannot locate this executable")]
    NoExe(#[source] std::io::Error),
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error(transparent)]
    Preflight(#[from] PreflightError),
    #[error(transparent)]
    Sign(#[from] SignError),
    #[error(transparent)]
    Keyless(#[from] KeylessError),
    #[error(transparent)]
    EmbeddedRoot(#[from] TrustRootError),
    #[error(transparent)]
    ReleasePolicy(#[from] PolicyError),
    /// Boxed: the release verifier's error is several times the size of the others.
    #[error(transparent)]
    ReleaseVerify(Box<ReleaseVerifyError>),
    #[error("reading the trusted root {}", path.display())]
    TrustedRoot {
        path: PathBuf,
        #[source]
        source: TrustRootError,
    },
    #[error("{} already exists; keygen never replaces a key (choose another --out)", path.display())]
    KeyExists { path: PathBuf },
    /// `which` is `private` or `public`.
    #[error("writing the {which} key {}", path.display())]
    WriteKey {
        which: &'static str,
        path: PathBuf,
        #[source]
        source: WriteError,
    },
    #[error("--key or --keyless is required")]
    NoSigningMode,
    #[error("reading the private key {}", path.display())]
    PrivateKey {
        path: PathBuf,
        #[source]
        source: SignError,
    },
    #[error("reading the signing config {}", path.display())]
    SigningConfig {
        path: PathBuf,
        #[source]
        source: KeylessError,
    },
    #[error("signing {}", file.display())]
    Signing {
        file: PathBuf,
        #[source]
        source: KeylessError,
    },
    #[error("reading the public key {}", path.display())]
    PublicKey {
        path: PathBuf,
        #[source]
        source: KeyError,
    },
    #[error(
        "say who must have signed: --tag vX.Y.Z (the signer release.toml pins for that \
         release), --key PUBLIC.pem, or --certificate-identity and \
         --certificate-oidc-issuer"
    )]
    NoSigner,
    /// A missing file is a mistyped path, not a refusal.
    #[error("there is no file {}", file.display())]
    MissingFile { file: PathBuf },
    #[error("--bundle names the bundle of one file; pass a single FILE or drop --bundle")]
    BundleOfOneFile,
    #[error("{} refused by its bundle {}", file.display(), bundle.display())]
    Refused {
        file: PathBuf,
        bundle: PathBuf,
        #[source]
        source: VerifyError,
    },
    /// `sha256:` followed by something that is not 64 hex digits.
    #[error("sha256:<hex> must be 64 hex digits")]
    BadDigest(#[source] Option<hex::FromHexError>),
    #[error("the staging trusted root is not embedded; pass --trusted-root")]
    StagingRoot,
    #[error("bundle {} refused", bundle.display())]
    BundleRefused {
        bundle: PathBuf,
        #[source]
        source: VerifyError,
    },
}

impl From<ReleaseVerifyError> for CommandError {
    fn from(e: ReleaseVerifyError) -> Self {
        CommandError::ReleaseVerify(Box::new(e))
    }
}

impl CommandError {
    /// [`exit::ERROR`] for an argument error (an unknown preflight step: clap could not check
    /// it), [`exit::FAILURE`] for everything else: a refused signature, a failed preflight, a
    /// missing file, the network (STYLE.md's "user/env failure").
    pub(crate) fn exit_status(&self) -> u8 {
        match self {
            CommandError::Preflight(e) => e.exit_status(),
            _ => exit::FAILURE,
        }
    }

    /// Print the error, its causes and its hint on stderr.
    pub(crate) fn report(&self) {
        Failure::with_hint_of(self).print(false);
    }
}

impl Hint for CommandError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            CommandError::MissingFile { .. } => Some(
                "give the path of a release file (as `scimcp-release bundle` wrote it), with \
                 its signature FILE.sigstore.json beside it"
                    .into(),
            ),
            CommandError::Preflight(e) => e.hint(),
            // The hints of errors further down (a `Hinted`, a missing home) are found by
            // `Failure::with_hint_of` in the chain.
            _ => None,
        }
    }
}
