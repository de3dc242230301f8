//! Fetching a bundle and its `.sigstore.json` into a fresh temporary directory (outside the
//! data root, so a refused or interrupted download leaves no trace there), through
//! self_update's downloader: proxies from the environment, a size cap, redirects.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::RemoteError;
use super::github::RemoteBundle;
use super::url::check_url;
use crate::bundle::version_from_name;
use crate::progress::Progress;

/// Far above any real bundle (tens of MB), low enough that a hostile server cannot fill the
/// disk before the signature is checked.
const MAX_BUNDLE_BYTES: u64 = 1 << 30;
/// A Sigstore bundle is a few kilobytes.
const MAX_SIGNATURE_BYTES: u64 = 1 << 20;
/// Generous, for slow links: the point is only that a stalled server cannot hang the
/// installer for ever.
const BUNDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
const SIGNATURE_TIMEOUT: Duration = Duration::from_secs(120);
/// The message of a download the server does not have.
const NOT_FOUND: &str = "not found (HTTP 404)";

/// A downloaded bundle, deleted with `dir`.
#[derive(Debug)]
pub struct Downloaded {
    pub dir: tempfile::TempDir,
    /// `<dir>/scimcp-<version>-<target>.zip`, with its `.sigstore.json` beside it when the
    /// release has one.
    pub zip: PathBuf,
    /// Where it came from, for the receipt.
    pub origin: String,
}

/// Download a release's bundle and signature. A release without a signature is refused
/// before anything is downloaded, unless unsigned material is explicitly allowed (the
/// signature check then records the development override).
pub fn download_bundle(
    repo: &str,
    bundle: &RemoteBundle,
    allow_unsigned: bool,
    progress: &dyn Progress,
) -> Result<Downloaded, RemoteError> {
    if bundle.signature.is_none() && !allow_unsigned {
        return Err(RemoteError::UnsignedRelease {
            repo: repo.to_owned(),
            version: bundle.version.to_string(),
            asset: bundle.zip.name().to_owned(),
        });
    }
    let dir = temp_dir()?;
    let zip = dir.path().join(bundle.zip.name());
    progress.step(&format!("downloading {}", bundle.zip.name()));
    fetch(
        bundle.zip.download_url(),
        &zip,
        MAX_BUNDLE_BYTES,
        BUNDLE_TIMEOUT,
        progress,
    )?;
    if let Some(signature) = &bundle.signature {
        fetch(
            signature.download_url(),
            &scimcp_verify::bundle_path(&zip),
            MAX_SIGNATURE_BYTES,
            SIGNATURE_TIMEOUT,
            progress,
        )?;
    }
    Ok(Downloaded {
        dir,
        zip,
        origin: format!(
            "{} (release {} of {repo})",
            bundle.zip.name(),
            bundle.version
        ),
    })
}

/// Download the bundle at `url` and `<url>.sigstore.json`, for `install --from URL`. A missing
/// signature (404) is left for the signature check to refuse or, with `--allow-unsigned`,
/// record.
pub fn download_bundle_url(url: &str, progress: &dyn Progress) -> Result<Downloaded, RemoteError> {
    check_url(url)?;
    let not_a_bundle = || RemoteError::NotABundleUrl {
        url: url.to_owned(),
    };
    let (base, suffix) = match url.find(['?', '#']) {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let name = base.rsplit('/').next().unwrap_or_default();
    let usable = name.ends_with(".zip")
        && version_from_name(name).is_some()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.+".contains(&b));
    if !usable {
        return Err(not_a_bundle());
    }
    let dir = temp_dir()?;
    let zip = dir.path().join(name);
    progress.step(&format!("downloading {name}"));
    fetch(url, &zip, MAX_BUNDLE_BYTES, BUNDLE_TIMEOUT, progress)?;
    let signature_url = format!("{base}.sigstore.json{suffix}");
    let signature = scimcp_verify::bundle_path(&zip);
    match fetch(
        &signature_url,
        &signature,
        MAX_SIGNATURE_BYTES,
        SIGNATURE_TIMEOUT,
        progress,
    ) {
        Ok(()) => {}
        // No signature published: the signature check refuses the bundle (or records the
        // --allow-unsigned override). Any other failure is a failed download.
        Err(RemoteError::Download { message, .. }) if message == NOT_FOUND => {}
        Err(other) => return Err(other),
    }
    Ok(Downloaded {
        dir,
        zip,
        origin: url.to_owned(),
    })
}

fn temp_dir() -> Result<tempfile::TempDir, RemoteError> {
    tempfile::Builder::new()
        .prefix("scimcp-download-")
        .tempdir()
        .map_err(RemoteError::TempDir)
}

/// Stream `url` into `dest`. `dest` exists afterwards only if the whole body arrived. On a
/// terminal, the spinner shows the bytes received.
fn fetch(
    url: &str,
    dest: &Path,
    max: u64,
    timeout: Duration,
    progress: &dyn Progress,
) -> Result<(), RemoteError> {
    check_url(url)?;
    let failed = |message: String| RemoteError::Download {
        url: url.to_owned(),
        message,
    };
    let partial = dest.with_extension("part");
    let mut file = fs_err::File::create(&partial).map_err(|e| failed(e.to_string()))?;
    let mut download = self_update::Download::from_url(url);
    // GitHub's asset API answers with the file itself (a redirect to it) only when asked for
    // octet-stream; otherwise it describes the asset in JSON.
    download
        .request_header("Accept", "application/octet-stream")
        .max_download_size(max)
        .timeout(timeout);
    if let Some(bar) = progress.spinner() {
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        download.progress_callback(move |done, total| {
            let done = indicatif::HumanBytes(done);
            bar.set_message(match total {
                Some(total) => format!(
                    "downloading {name}: {done} of {}",
                    indicatif::HumanBytes(total)
                ),
                None => format!("downloading {name}: {done}"),
            });
        });
    }
    let result = download
        .download_to(&mut file)
        .map_err(|e| match e.http_status() {
            Some(404) => NOT_FOUND.to_owned(),
            _ => e.to_string(),
        })
        .and_then(|()| file.sync_all().map_err(|e| e.to_string()));
    drop(file);
    match result {
        Ok(()) => fs_err::rename(&partial, dest).map_err(|e| failed(e.to_string())),
        Err(message) => {
            let _ = fs_err::remove_file(&partial);
            Err(failed(message))
        }
    }
}
