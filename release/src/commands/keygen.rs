//! `scimcp-release keygen --out DIR`: a new key pair for key-pair signing.

use scimcp_core::fs::publish_once;

use super::error::CommandError;
use crate::cli::KeygenArgs;
use crate::sign;

pub(crate) const PRIVATE_KEY_FILE: &str = "scimcp-release.key";
pub(crate) const PUBLIC_KEY_FILE: &str = "scimcp-release.pub";

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: &KeygenArgs) -> Result<(), CommandError> {
    fs_err::create_dir_all(&args.out)?;
    let private = args.out.join(PRIVATE_KEY_FILE);
    let public = args.out.join(PUBLIC_KEY_FILE);
    // Never replace a key: a lost private key cannot be recovered, and a replaced public key
    // would silently change what verifiers trust.
    for path in [&private, &public] {
        if path.exists() {
            return Err(CommandError::KeyExists { path: path.clone() });
        }
    }
    let key = sign::generate_key();
    let write = |which, path: &std::path::Path, pem: String| {
        publish_once(path, pem.as_bytes()).map_err(|source| CommandError::WriteKey {
            which,
            path: path.to_path_buf(),
            source,
        })
    };
    write("private", &private, sign::private_key_pem(&key)?)?;
    write("public", &public, sign::public_key_pem(&key)?)?;
    println!("{}", private.display());
    println!("{}", public.display());
    Ok(())
}
