//! `scimcp-release keygen --out DIR`: a new key pair for key-pair signing.

use anyhow::{Context, bail};
use scimcp_core::fs::publish_once;

use crate::cli::KeygenArgs;
use crate::sign;

pub(crate) const PRIVATE_KEY_FILE: &str = "scimcp-release.key";
pub(crate) const PUBLIC_KEY_FILE: &str = "scimcp-release.pub";

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: &KeygenArgs) -> anyhow::Result<()> {
    fs_err::create_dir_all(&args.out)?;
    let private = args.out.join(PRIVATE_KEY_FILE);
    let public = args.out.join(PUBLIC_KEY_FILE);
    // Never replace a key: a lost private key cannot be recovered, and a replaced public key
    // would silently change what verifiers trust.
    for path in [&private, &public] {
        if path.exists() {
            bail!(
                "{} already exists; keygen never replaces a key (choose another --out)",
                path.display()
            );
        }
    }
    let key = sign::generate_key();
    publish_once(&private, sign::private_key_pem(&key)?.as_bytes())
        .with_context(|| format!("writing the private key {}", private.display()))?;
    publish_once(&public, sign::public_key_pem(&key)?.as_bytes())
        .with_context(|| format!("writing the public key {}", public.display()))?;
    println!("{}", private.display());
    println!("{}", public.display());
    Ok(())
}
