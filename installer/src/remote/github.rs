//! Which releases exist: the GitHub releases of the scimcp repository, listed through
//! self_update's GitHub backend (it follows GitHub's pagination and classifies rate limits),
//! reduced to the releases that ship a bundle for this computer.
//!
//! A release offers `scimcp-<version>-<target>.zip` and, beside it,
//! `scimcp-<version>-<target>.zip.sigstore.json` (the files `bundle-sign.yml` publishes).
//! Pre-releases are never offered: a bundle's name cannot carry one (see [`crate::bundle`]).

use self_update::update::ReleaseAsset;
use semver::Version;

use super::error::RemoteError;
use super::url::check_url;

/// GitHub's REST API.
pub const DEFAULT_API: &str = "https://api.github.com";

/// Where to look for releases.
#[derive(Debug, Clone)]
pub struct GitHubSource {
    /// `owner/name`.
    pub repo: String,
    /// The REST API root: GitHub's, a GitHub Enterprise server's, or a local test server.
    pub api: String,
    /// Sent only to GitHub's own API (see [`GitHubSource::new`]).
    pub token: Option<String>,
}

/// One release's bundle for this computer.
#[derive(Debug, Clone)]
pub struct RemoteBundle {
    pub version: Version,
    pub zip: ReleaseAsset,
    /// `None`: the release has the bundle but not its signature.
    pub signature: Option<ReleaseAsset>,
}

/// The target triple this installer was built for, which names the bundles it installs.
pub fn host_target() -> &'static str {
    self_update::get_target()
}

/// `scimcp-<version>-<target>.zip`, the bundle a release ships for `target`.
pub fn bundle_asset_name(version: &Version, target: &str) -> String {
    format!("scimcp-{version}-{target}.zip")
}

impl GitHubSource {
    /// `repo` is `owner/name`; `api` defaults to GitHub's. A token (from `GH_TOKEN` or
    /// `GITHUB_TOKEN`) only raises GitHub's rate limit, so it is dropped for any other API
    /// root rather than handed to a server it was not issued for.
    pub fn new(
        repo: &str,
        api: Option<&str>,
        token: Option<String>,
    ) -> Result<GitHubSource, RemoteError> {
        let valid = repo.split('/').count() == 2
            && repo.split('/').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            });
        if !valid {
            return Err(RemoteError::BadRepository(repo.to_owned()));
        }
        let api = api.unwrap_or(DEFAULT_API).trim_end_matches('/').to_owned();
        check_url(&api)?;
        let token = token.filter(|_| api == DEFAULT_API);
        Ok(GitHubSource {
            repo: repo.to_owned(),
            api,
            token,
        })
    }

    /// Every non-pre-release release with a bundle for `target`, oldest first.
    pub fn bundles(&self, target: &str) -> Result<Vec<RemoteBundle>, RemoteError> {
        let (owner, name) = self.repo.split_once('/').expect("checked in new");
        let discovery = |message: String| RemoteError::Discovery {
            repo: self.repo.clone(),
            api: self.api.clone(),
            message,
        };
        let mut list = self_update::backends::github::ReleaseList::configure();
        list.repo_owner(owner)
            .repo_name(name)
            .api_base_url(self.api.clone());
        if let Some(token) = &self.token {
            list.auth_token(token.clone());
        }
        let releases = list
            .build()
            .and_then(|l| l.fetch())
            .map_err(|e| discovery(e.to_string()))?
            .into_vec();
        let mut found: Vec<RemoteBundle> = releases
            .iter()
            .filter_map(|release| {
                let version = Version::parse(release.version()).ok()?;
                if !version.pre.is_empty() {
                    return None;
                }
                let zip_name = bundle_asset_name(&version, target);
                let sig_name = format!("{zip_name}.sigstore.json");
                let zip = release.assets().iter().find(|a| a.name() == zip_name)?;
                let signature = release.assets().iter().find(|a| a.name() == sig_name);
                Some(RemoteBundle {
                    version,
                    zip: zip.clone(),
                    signature: signature.cloned(),
                })
            })
            .collect();
        found.sort_by(|a, b| a.version.cmp(&b.version));
        // Two releases can carry one version (e.g. tags `v1.0.0` and `1.0.0`): keep the first
        // listed, GitHub's newest.
        found.dedup_by(|later, earlier| later.version == earlier.version);
        if found.is_empty() {
            let seen: Vec<&str> = releases.iter().map(|r| r.version()).collect();
            return Err(RemoteError::NoRelease {
                repo: self.repo.clone(),
                asset: bundle_asset_name(&Version::new(0, 0, 0), target)
                    .replace("0.0.0", "<version>"),
                seen: if seen.is_empty() {
                    "none".to_owned()
                } else {
                    seen.join(", ")
                },
            });
        }
        Ok(found)
    }
}

/// The release to install: `wanted`, or the newest.
pub fn choose(
    source: &GitHubSource,
    mut bundles: Vec<RemoteBundle>,
    wanted: Option<&Version>,
    target: &str,
) -> Result<RemoteBundle, RemoteError> {
    let Some(wanted) = wanted else {
        return Ok(bundles
            .pop()
            .expect("bundles() never returns an empty list"));
    };
    let available: Vec<String> = bundles.iter().map(|b| b.version.to_string()).collect();
    bundles
        .into_iter()
        .find(|b| &b.version == wanted)
        .ok_or_else(|| RemoteError::NoSuchRelease {
            repo: source.repo.clone(),
            version: wanted.to_string(),
            asset: bundle_asset_name(wanted, target),
            available: available.join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_are_owner_slash_name() {
        assert!(GitHubSource::new("scimcp/scimcp", None, None).is_ok());
        for bad in ["scimcp", "a/b/c", "/x", "a b/c", "a/"] {
            assert!(
                matches!(
                    GitHubSource::new(bad, None, None),
                    Err(RemoteError::BadRepository(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn tokens_go_to_github_only() {
        let github = GitHubSource::new("o/r", None, Some("t".into())).unwrap();
        assert_eq!(github.token.as_deref(), Some("t"));
        let local =
            GitHubSource::new("o/r", Some("http://127.0.0.1:1/"), Some("t".into())).unwrap();
        assert_eq!(local.token, None);
        assert_eq!(local.api, "http://127.0.0.1:1");
        assert!(matches!(
            GitHubSource::new("o/r", Some("http://example.org"), None),
            Err(RemoteError::Insecure { .. })
        ));
    }
}
