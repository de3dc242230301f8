//! Why a release could not be found or fetched.

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
