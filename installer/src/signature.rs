//! Signature checks before anything is unpacked: a zip bundle must carry
//! `<zip>.sigstore.json` that verifies against the release policy for the tag of the bundle's
//! version. A bundle directory, or a zip without a signature, is unsigned material, refused
//! unless the user passes `--allow-unsigned`; the running binaries are a local build (the
//! developer's own `cargo build`, nothing downloaded) and are recorded as such.
//!
//! A signature that is present but does not verify is refused even with `--allow-unsigned`:
//! the override is for material nobody signed, not for material that fails its signature.

use std::path::{Path, PathBuf};

use scimcp_core::install_state::{SignatureRecord, SignatureStatus};
use scimcp_verify::ReleasePolicy;
use scimcp_verify::release_policy::SignerPolicy;
use scimcp_verify::{ReleaseVerifyError, VerifyError, bundle_path, verify_release_files};

use crate::bundle::{Bundle, BundleKind};
use crate::options::SignatureOptions;

/// Why a bundle's provenance was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    #[error("{what} is not signed ({missing}); nothing was changed")]
    Unsigned { what: String, missing: String },
    #[error(
        "{bundle} is signed for version {signed} (its name) but holds version {found} \
         (its RELEASE.json); nothing was changed"
    )]
    VersionMismatch {
        bundle: PathBuf,
        signed: String,
        found: String,
    },
    // The verifier's errors are large; boxed so every `Result<_, SetupError>` stays small.
    #[error("the release policy cannot be used")]
    Policy(#[source] Box<scimcp_verify::release_policy::PolicyError>),
    #[error(
        "{bundle} failed signature verification for tag {tag} (release policy {policy}); \
         nothing was changed"
    )]
    Refused {
        bundle: PathBuf,
        tag: String,
        policy: String,
        remedy: Remedy,
        #[source]
        source: Box<ReleaseVerifyError>,
    },
}

/// What to do about a refused signature: the verifier's own advice names its command-line
/// options (`--key`), not the installer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// A key-pair signature checked against a keyless policy (the built-in one): the bundle
    /// is someone's own build, trusted only through a policy naming that key.
    KeyPairBundle,
    /// A keyless signature checked against a key-pair `--release-policy`.
    KeylessBundle,
    /// The bytes or the signature are not the release's.
    DownloadAgain,
}

impl scimcp_core::failure::Hint for SignatureError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            SignatureError::Unsigned { .. } => Some(
                "install a signed release bundle (scimcp-<version>-<target>.zip with its \
                 .sigstore.json beside it), or, for development only, pass --allow-unsigned \
                 (recorded in state.json as a development override)"
                    .into(),
            ),
            SignatureError::Refused { remedy, .. } => Some(match remedy {
                Remedy::KeyPairBundle => "this bundle is signed with a key pair, not by scimcp's \
                     release workflow: if you trust that key (your own or your lab's build), pass \
                     --release-policy FILE, a release policy whose [signer] names its public key \
                     (public_key = \"KEY.pub\"); through the installer script: \
                     sh -s -- --release-policy FILE. --allow-unsigned does not apply to a signed \
                     bundle"
                    .into(),
                Remedy::KeylessBundle => "this bundle is signed by a release workflow (keyless), \
                     not with the key your --release-policy names: install it without \
                     --release-policy to check it against scimcp's release workflow"
                    .into(),
                Remedy::DownloadAgain => "the bundle or its signature is not the release's: \
                     download both (the .zip and its .sigstore.json) again from the release page"
                    .into(),
            }),
            SignatureError::VersionMismatch { .. } | SignatureError::Policy(_) => None,
        }
    }
}

/// Check `bundle` before it is unpacked; returns what to record for it.
pub fn check(bundle: &Bundle, args: &SignatureOptions) -> Result<SignatureRecord, SignatureError> {
    match &bundle.kind {
        BundleKind::Running { bin_dir, .. } => Ok(SignatureRecord {
            status: SignatureStatus::LocalBuild,
            detail: format!("the running binaries in {}", bin_dir.display()),
        }),
        BundleKind::Dir(dir) => unsigned(
            args,
            format!("the bundle directory {}", dir.display()),
            "only .zip release bundles carry a Sigstore signature".to_owned(),
        ),
        BundleKind::Zip(zip) => {
            let signature = bundle_path(zip);
            if !signature.is_file() {
                return unsigned(
                    args,
                    format!("the bundle {}", zip.display()),
                    format!("there is no {} beside it", signature.display()),
                );
            }
            verify_zip(zip, &bundle.version, args)
        }
    }
}

fn unsigned(
    args: &SignatureOptions,
    what: String,
    missing: String,
) -> Result<SignatureRecord, SignatureError> {
    if !args.allow_unsigned {
        return Err(SignatureError::Unsigned { what, missing });
    }
    Ok(SignatureRecord {
        status: SignatureStatus::DevelopmentOverride,
        detail: format!("--allow-unsigned: {what} is unsigned ({missing})"),
    })
}

/// The release policy bundles are checked against: `--release-policy`, or the built-in one.
pub fn release_policy(args: &SignatureOptions) -> Result<ReleasePolicy, SignatureError> {
    match &args.release_policy {
        Some(path) => ReleasePolicy::load(path),
        None => ReleasePolicy::embedded(),
    }
    .map_err(|e| SignatureError::Policy(Box::new(e)))
}

/// Verify `zip` for `version` against the release policy (its signature must be beside it).
pub(crate) fn verify_zip(
    zip: &Path,
    version: &semver::Version,
    args: &SignatureOptions,
) -> Result<SignatureRecord, SignatureError> {
    let policy = release_policy(args)?;
    // The version comes from the bundle's RELEASE.json (or its name); for a keyless release
    // the tag is part of the pinned identity, so a bundle relabelled as another version
    // fails here rather than installing under the wrong name.
    let tag = policy.tag.render(version);
    let verified = verify_release_files(
        &[zip.to_path_buf()],
        &policy,
        &tag,
        args.trusted_root.as_deref(),
    )
    .map_err(|source| SignatureError::Refused {
        bundle: zip.to_path_buf(),
        tag: tag.clone(),
        policy: policy.source.clone(),
        remedy: match (&source, &policy.signer) {
            (
                ReleaseVerifyError::Refused {
                    source: VerifyError::Material(_),
                    ..
                },
                SignerPolicy::Keyless(_),
            ) => Remedy::KeyPairBundle,
            (
                ReleaseVerifyError::Refused {
                    source: VerifyError::Material(_),
                    ..
                },
                SignerPolicy::Key(_),
            ) => Remedy::KeylessBundle,
            _ => Remedy::DownloadAgain,
        },
        source: Box::new(source),
    })?;
    let signer = match (&policy.signer, verified.first()) {
        (SignerPolicy::Key(key), _) => format!("the key pair {}", key.path.display()),
        (SignerPolicy::Keyless(_), Some(file)) => format!(
            "{} (issuer {})",
            file.verified
                .identity
                .as_deref()
                .unwrap_or("an unnamed identity"),
            file.verified.issuer.as_deref().unwrap_or("unknown"),
        ),
        (SignerPolicy::Keyless(w), None) => w.identity(&tag),
    };
    Ok(SignatureRecord {
        status: SignatureStatus::Verified,
        detail: format!(
            "{} verified for tag {tag} against release policy {}: signed by {signer}",
            bundle_path(zip).file_name().map_or_else(
                || zip.display().to_string(),
                |n| n.to_string_lossy().into_owned()
            ),
            policy.source
        ),
    })
}
