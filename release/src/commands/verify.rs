//! `scimcp-release verify` (release artifacts: against the release policy's pinned signer with
//! `--tag`, or an explicit identity or key) and `verify-bundle` (the sigstore-conformance
//! protocol), thin over [`crate::verify::verify_release_files`] and
//! [`crate::verify::verify_bundle`].

use super::error::CommandError;
use super::trust::trusted_root;
use crate::cli::{TrustArgs, VerifyArgs, VerifyBundleArgs};
use crate::release_policy::ReleasePolicy;
use crate::verify::{
    ArtifactInput, Policy, TrustedKey, Verified, bundle_path, verify_bundle, verify_release_files,
};

fn policy(trust: &TrustArgs) -> Result<Policy, CommandError> {
    match (
        &trust.key,
        &trust.certificate_identity,
        &trust.certificate_oidc_issuer,
    ) {
        (Some(path), None, None) => {
            let pem = fs_err::read_to_string(path)?;
            let key = TrustedKey::from_pem(&pem).map_err(|source| CommandError::PublicKey {
                path: path.clone(),
                source,
            })?;
            Ok(Policy::Key(key))
        }
        (None, Some(identity), Some(issuer)) => Ok(Policy::Identity {
            identity: identity.clone(),
            issuer: issuer.clone(),
        }),
        _ => Err(CommandError::NoSigner),
    }
}

fn describe(verified: &Verified) -> String {
    match (&verified.identity, &verified.issuer) {
        (Some(identity), Some(issuer)) => format!("signed by {identity} (issuer {issuer})"),
        _ => "signed by the given key".to_owned(),
    }
}

/// A missing file is a mistyped path, not a refusal: say so before any verification.
fn require_files(files: &[std::path::PathBuf]) -> Result<(), CommandError> {
    for file in files {
        if !file.is_file() {
            return Err(CommandError::MissingFile { file: file.clone() });
        }
    }
    Ok(())
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: &VerifyArgs) -> Result<(), CommandError> {
    require_files(&args.files)?;
    if let Some(tag) = &args.tag {
        return run_release(args, tag);
    }
    if args.bundle.is_some() && args.files.len() != 1 {
        return Err(CommandError::BundleOfOneFile);
    }
    let policy = policy(&args.trust)?;
    let root = trusted_root(args.trust.trusted_root.as_deref())?;
    for file in &args.files {
        let bundle_file = args.bundle.clone().unwrap_or_else(|| bundle_path(file));
        let artifact = fs_err::read(file)?;
        let bundle = fs_err::read(&bundle_file)?;
        let verified = verify_bundle(ArtifactInput::Bytes(&artifact), &bundle, &policy, &root)
            .map_err(|source| CommandError::Refused {
                file: file.clone(),
                bundle: bundle_file.clone(),
                source,
            })?;
        println!("verified: {} ({})", file.display(), describe(&verified));
    }
    Ok(())
}

/// `verify --tag`: every file against the signer the release policy pins for the tag.
#[allow(clippy::print_stdout)]
fn run_release(args: &VerifyArgs, tag: &str) -> Result<(), CommandError> {
    let policy = match &args.release_policy {
        Some(path) => ReleasePolicy::load(path)?,
        None => ReleasePolicy::embedded()?,
    };
    let verified = verify_release_files(
        &args.files,
        &policy,
        tag,
        args.trust.trusted_root.as_deref(),
    )?;
    for file in &verified {
        println!(
            "verified: {} ({}, release {tag}, policy {})",
            file.file.display(),
            describe(&file.verified),
            policy.source
        );
    }
    Ok(())
}

fn parse_digest(s: &str) -> Result<Option<[u8; 32]>, CommandError> {
    let Some(hex_digest) = s.strip_prefix("sha256:") else {
        return Ok(None);
    };
    let bytes = hex::decode(hex_digest).map_err(|e| CommandError::BadDigest(Some(e)))?;
    let digest: [u8; 32] = bytes
        .try_into()
        .map_err(|_| CommandError::BadDigest(None))?;
    Ok(Some(digest))
}

pub(crate) fn run_conformance(args: &VerifyBundleArgs) -> Result<(), CommandError> {
    if args.staging && args.trust.trusted_root.is_none() {
        return Err(CommandError::StagingRoot);
    }
    let policy = policy(&args.trust)?;
    let root = trusted_root(args.trust.trusted_root.as_deref())?;
    let bundle = fs_err::read(&args.bundle)?;
    let artifact_bytes;
    let artifact = match parse_digest(&args.file_or_digest)? {
        Some(digest) => ArtifactInput::Sha256(digest),
        None => {
            artifact_bytes = fs_err::read(&args.file_or_digest)?;
            ArtifactInput::Bytes(&artifact_bytes)
        }
    };
    verify_bundle(artifact, &bundle, &policy, &root).map_err(|source| {
        CommandError::BundleRefused {
            bundle: args.bundle.clone(),
            source,
        }
    })?;
    Ok(())
}
