//! `scimcp-release verify` (release artifacts) and `verify-bundle` (the sigstore-conformance
//! protocol), both thin over [`crate::verify::verify_bundle`].

use anyhow::{Context, bail};

use crate::cli::{TrustArgs, VerifyArgs, VerifyBundleArgs};
use crate::commands::sign::bundle_path;
use crate::verify::{ArtifactInput, Policy, TrustedKey, TrustedRoot, Verified, verify_bundle};

fn policy(trust: &TrustArgs) -> anyhow::Result<Policy> {
    match (
        &trust.key,
        &trust.certificate_identity,
        &trust.certificate_oidc_issuer,
    ) {
        (Some(path), None, None) => {
            let pem = fs_err::read_to_string(path)?;
            let key = TrustedKey::from_pem(&pem)
                .with_context(|| format!("reading the public key {}", path.display()))?;
            Ok(Policy::Key(key))
        }
        (None, Some(identity), Some(issuer)) => Ok(Policy::Identity {
            identity: identity.clone(),
            issuer: issuer.clone(),
        }),
        _ => bail!(
            "say who must have signed: --key PUBLIC.pem, or --certificate-identity and \
             --certificate-oidc-issuer"
        ),
    }
}

fn trusted_root(trust: &TrustArgs) -> anyhow::Result<TrustedRoot> {
    match &trust.trusted_root {
        Some(path) => {
            let bytes = fs_err::read(path)?;
            TrustedRoot::from_json(&bytes)
                .with_context(|| format!("reading the trusted root {}", path.display()))
        }
        None => Ok(TrustedRoot::production()?),
    }
}

fn describe(verified: &Verified) -> String {
    match (&verified.identity, &verified.issuer) {
        (Some(identity), Some(issuer)) => format!("signed by {identity} (issuer {issuer})"),
        _ => "signed by the given key".to_owned(),
    }
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: &VerifyArgs) -> anyhow::Result<()> {
    if args.bundle.is_some() && args.files.len() != 1 {
        bail!("--bundle names the bundle of one file; pass a single FILE or drop --bundle");
    }
    let policy = policy(&args.trust)?;
    let root = trusted_root(&args.trust)?;
    for file in &args.files {
        let bundle_file = args.bundle.clone().unwrap_or_else(|| bundle_path(file));
        let artifact = fs_err::read(file)?;
        let bundle = fs_err::read(&bundle_file)?;
        let verified = verify_bundle(ArtifactInput::Bytes(&artifact), &bundle, &policy, &root)
            .with_context(|| {
                format!(
                    "{} refused by its bundle {}",
                    file.display(),
                    bundle_file.display()
                )
            })?;
        println!("verified: {} ({})", file.display(), describe(&verified));
    }
    Ok(())
}

fn parse_digest(s: &str) -> anyhow::Result<Option<[u8; 32]>> {
    let Some(hex_digest) = s.strip_prefix("sha256:") else {
        return Ok(None);
    };
    let bytes = hex::decode(hex_digest).context("sha256:<hex> must be 64 hex digits")?;
    let digest: [u8; 32] = bytes
        .try_into()
        .map_err(|_| anyhow::anyhow!("sha256:<hex> must be 64 hex digits"))?;
    Ok(Some(digest))
}

pub(crate) fn run_conformance(args: &VerifyBundleArgs) -> anyhow::Result<()> {
    if args.staging && args.trust.trusted_root.is_none() {
        bail!("the staging trusted root is not embedded; pass --trusted-root");
    }
    let policy = policy(&args.trust)?;
    let root = trusted_root(&args.trust)?;
    let bundle = fs_err::read(&args.bundle)?;
    let artifact_bytes;
    let artifact = match parse_digest(&args.file_or_digest)? {
        Some(digest) => ArtifactInput::Sha256(digest),
        None => {
            artifact_bytes = fs_err::read(&args.file_or_digest)?;
            ArtifactInput::Bytes(&artifact_bytes)
        }
    };
    verify_bundle(artifact, &bundle, &policy, &root)
        .with_context(|| format!("bundle {} refused", args.bundle.display()))?;
    Ok(())
}
