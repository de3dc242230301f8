//! `scimcp-release sign --keyless | --key PRIVATE.pem FILE...`: a Sigstore bundle beside each
//! file (`<file>.sigstore.json`).

use std::path::Path;

use jiff::Timestamp;
use scimcp_core::fs::{Privacy, write_atomic};

use super::error::CommandError;
use super::trust::trusted_root;
use crate::cli::SignArgs;
use crate::keyless::{KeylessSigner, Services, UreqTransport, identity_token};
use crate::sign;
use crate::verify::bundle_path;

pub(crate) fn run(args: &SignArgs) -> Result<(), CommandError> {
    if args.keyless {
        return run_keyless(args);
    }
    let key_path = args.key.as_deref().ok_or(CommandError::NoSigningMode)?;
    let pem = fs_err::read_to_string(key_path)?;
    let key = sign::load_private_key(&pem).map_err(|source| CommandError::PrivateKey {
        path: key_path.to_path_buf(),
        source,
    })?;
    let mut bundles = Vec::with_capacity(args.files.len());
    for file in &args.files {
        let artifact = fs_err::read(file)?;
        bundles.push((file.as_path(), sign::sign_bundle(&key, &artifact)?));
    }
    write_bundles(&bundles)
}

fn run_keyless(args: &SignArgs) -> Result<(), CommandError> {
    let services = match &args.signing_config {
        Some(path) => Services::from_signing_config(&fs_err::read(path)?, Timestamp::now())
            .map_err(|source| CommandError::SigningConfig {
                path: path.clone(),
                source,
            })?,
        None => Services::production()?,
    };
    let root = trusted_root(args.trusted_root.as_deref())?;
    let transport = UreqTransport::new();
    let token = identity_token(args.identity_token.as_deref(), &transport, &|name| {
        std::env::var(name).ok()
    })?;
    let mut signer = KeylessSigner::new(&transport, services, token, root);
    let mut bundles = Vec::with_capacity(args.files.len());
    for file in &args.files {
        let artifact = fs_err::read(file)?;
        let signed = signer
            .sign(&artifact)
            .map_err(|source| CommandError::Signing {
                file: file.clone(),
                source,
            })?;
        log_signed(file, &signed);
        bundles.push((file.as_path(), signed.json));
    }
    // Nothing is written until every file is signed and its bundle verified.
    write_bundles(&bundles)
}

#[allow(clippy::print_stderr)]
fn log_signed(file: &Path, signed: &crate::keyless::SignedBundle) {
    eprintln!(
        "signed {} as {} (issuer {}), transparency log index {}",
        file.display(),
        signed.identity,
        signed.issuer,
        signed.log_index
    );
}

#[allow(clippy::print_stdout)]
fn write_bundles(bundles: &[(&Path, String)]) -> Result<(), CommandError> {
    for (file, bundle) in bundles {
        let out = bundle_path(file);
        write_atomic(&out, bundle.as_bytes(), Privacy::KeepExisting)?;
        println!("{}", out.display());
    }
    Ok(())
}
