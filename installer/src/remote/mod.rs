//! Releases over the network: finding scimcp releases on GitHub ([`github`]) and downloading a
//! bundle with its Sigstore signature ([`download`]) into a private temporary directory.
//!
//! Nothing here trusts what it downloads, and nothing here writes under the data root: the
//! caller verifies the signature ([`crate::signature`]) before anything is unpacked, exactly
//! as for a bundle the user copied by hand. Transport security is still required (HTTPS, or
//! plain HTTP to this computer only), so a network attacker cannot even choose which signed
//! release is offered.

pub mod download;
pub mod github;

pub use download::{download_bundle, download_bundle_url};
pub use github::{GitHubSource, RemoteBundle};

/// Why a release could not be found or fetched. Each message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error(
        "refusing {url}: releases are only fetched over https:// (plain http:// is accepted \
         only for this computer: localhost, 127.0.0.1, [::1])"
    )]
    Insecure { url: String },
    #[error(
        "cannot list the releases of {repo} at {api}: {message}. Nothing was changed. Check the \
         network connection (behind a proxy, set HTTPS_PROXY); if GitHub limits the request \
         rate, set GH_TOKEN; or upgrade from a local directory of bundles with --from MIRROR_DIR"
    )]
    Discovery {
        repo: String,
        api: String,
        message: String,
    },
    #[error(
        "{repo} has no release with a bundle for this computer ({asset}); nothing was changed. \
         Pre-releases are never offered. Releases seen: {seen}"
    )]
    NoRelease {
        repo: String,
        asset: String,
        seen: String,
    },
    #[error(
        "{repo} has no release {version} with a bundle for this computer ({asset}); nothing \
         was changed. Releases with one: {available}"
    )]
    NoSuchRelease {
        repo: String,
        version: String,
        asset: String,
        available: String,
    },
    #[error(
        "release {version} of {repo} has {asset} but not its signature {asset}.sigstore.json; \
         every release bundle must be signed, so it is refused and nothing was changed"
    )]
    UnsignedRelease {
        repo: String,
        version: String,
        asset: String,
    },
    #[error(
        "the release policy {policy} pins a key pair and names no GitHub repository; pass \
         --repo OWNER/NAME to say where its releases are published"
    )]
    NoRepository { policy: String },
    #[error("--repo {0:?} is not OWNER/NAME (for example scimcp/scimcp)")]
    BadRepository(String),
    #[error(
        "{url} does not name a scimcp bundle: the last part of the address must be \
         scimcp-<MAJOR.MINOR.PATCH>-<target>.zip"
    )]
    NotABundleUrl { url: String },
    #[error(
        "downloading {url} failed: {message}. Nothing was changed; run the command again, or \
         download the file and its .sigstore.json by hand and pass the local path with --from"
    )]
    Download { url: String, message: String },
    #[error("cannot create a download directory in the system's temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
}

/// Refuse anything but HTTPS, except plain HTTP to this computer (a local mirror or a test
/// server). Parsed by hand: only the scheme and the host are needed, and no URL crate is
/// otherwise built for the installer.
pub fn check_url(url: &str) -> Result<(), RemoteError> {
    let insecure = || RemoteError::Insecure {
        url: url.to_owned(),
    };
    if url
        .get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    {
        return Ok(());
    }
    let rest = url
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .map(|_| &url[7..])
        .ok_or_else(insecure)?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(insecure());
    }
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    match host.to_ascii_lowercase().as_str() {
        "localhost" | "127.0.0.1" | "::1" => Ok(()),
        _ => Err(insecure()),
    }
}

/// Whether `--from` names an address rather than a local path.
pub fn is_url(text: &str) -> bool {
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http() {
        for ok in [
            "https://api.github.com",
            "HTTPS://example.org/x.zip",
            "http://127.0.0.1:8080/repos",
            "http://localhost/x",
            "http://[::1]:9/x",
        ] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.org/x.zip",
            "http://127.0.0.1.evil.org/x",
            "http://localhost@evil.org/x",
            "ftp://127.0.0.1/x",
            "file:///tmp/x.zip",
            "127.0.0.1/x",
        ] {
            assert!(
                matches!(check_url(bad), Err(RemoteError::Insecure { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn urls_are_told_from_paths() {
        assert!(is_url("https://x/y.zip"));
        assert!(is_url("HTTP://127.0.0.1/y.zip"));
        assert!(!is_url("scimcp-1.0.0.zip"));
        assert!(!is_url("./https:/x"));
    }
}
