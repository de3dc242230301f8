//! `scimcp-release sign --key PRIVATE.pem FILE...`: key-pair bundles beside each file.

use std::path::{Path, PathBuf};

use anyhow::Context;
use scimcp_core::fs::{Privacy, write_atomic};

use crate::cli::SignArgs;
use crate::sign;

/// `<file>.sigstore.json`, the bundle name Sigstore clients look for.
pub(crate) fn bundle_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".sigstore.json");
    PathBuf::from(name)
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: &SignArgs) -> anyhow::Result<()> {
    let key_path = args.key.as_deref().context("--key is required")?;
    let pem = fs_err::read_to_string(key_path)?;
    let key = sign::load_private_key(&pem)
        .with_context(|| format!("reading the private key {}", key_path.display()))?;
    for file in &args.files {
        let artifact = fs_err::read(file)?;
        let bundle = sign::sign_bundle(&key, &artifact)?;
        let out = bundle_path(file);
        write_atomic(&out, bundle.as_bytes(), Privacy::KeepExisting)?;
        println!("{}", out.display());
    }
    Ok(())
}
