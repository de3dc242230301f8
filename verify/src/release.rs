//! Verifying a whole release against the release policy: every file must have its Sigstore
//! bundle beside it, and every bundle must verify against the signer the policy pins for the
//! tag. This is what the installer runs before it unpacks anything.

use std::path::{Path, PathBuf};

use x509_cert::Certificate;
use x509_cert::der::Decode;
use x509_cert::der::asn1::Utf8StringRef;
use x509_cert::der::oid::ObjectIdentifier;

use super::bundle::{Bundle, Material};
use super::{ArtifactInput, TrustRootError, TrustedRoot, Verified, VerifyError, verify_bundle};
use crate::release_policy::{PolicyError, ReleasePolicy, SignerPolicy};

/// Fulcio's Build Config URI extension: the top-level workflow run behind the signature (for a
/// reusable workflow, its caller). A DER UTF8String.
const BUILD_CONFIG_URI: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.18");

/// `<file>.sigstore.json`, the bundle name Sigstore clients look for.
pub fn bundle_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".sigstore.json");
    PathBuf::from(name)
}

/// Why a release was refused.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseVerifyError {
    #[error("nothing to verify: no release files were given")]
    NoFiles,
    /// The tag is outside the policy's tag scheme, or the policy is unusable.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("trusted root {path}")]
    TrustedRoot {
        path: PathBuf,
        #[source]
        source: TrustRootError,
    },
    #[error("the embedded trusted root")]
    EmbeddedTrustedRoot(#[source] TrustRootError),
    #[error(
        "{file} has no Sigstore bundle beside it (expected {bundle}); every release file must \
         be signed, so the release is refused"
    )]
    MissingBundle { file: PathBuf, bundle: PathBuf },
    #[error(transparent)]
    Read(#[from] std::io::Error),
    /// The bundle did not verify; the source names the failed check.
    #[error("{file} refused by its bundle {bundle}")]
    Refused {
        file: PathBuf,
        bundle: PathBuf,
        #[source]
        source: VerifyError,
    },
    #[error(
        "{file} refused by its bundle {bundle}: build config: the signing job was started by \
         {found}, not by the release workflow {expected:?} (release policy {policy})",
        found = found.as_deref().map_or("an unnamed workflow".to_owned(), |f| format!("{f:?}"))
    )]
    BuildConfig {
        file: PathBuf,
        bundle: PathBuf,
        expected: String,
        found: Option<String>,
        policy: String,
    },
}

/// One verified release file.
#[derive(Debug, Clone)]
pub struct VerifiedFile {
    pub file: PathBuf,
    pub bundle: PathBuf,
    pub verified: Verified,
}

/// Verify release files before anything is unpacked: each of `files` must have
/// `<file>.sigstore.json` beside it, and each bundle must verify offline against the signer
/// `policy` pins for `tag` (keyless: the exact workflow identity at `refs/tags/<tag>`, the
/// issuer and the Build Config URI; key pair: the policy's public key). `trusted_root` replaces
/// the embedded public-good root. Stops at the first refusal.
pub fn verify_release_files(
    files: &[PathBuf],
    policy: &ReleasePolicy,
    tag: &str,
    trusted_root: Option<&Path>,
) -> Result<Vec<VerifiedFile>, ReleaseVerifyError> {
    if files.is_empty() {
        return Err(ReleaseVerifyError::NoFiles);
    }
    let verifier_policy = policy.verifier_policy(tag)?;
    let root = match trusted_root {
        Some(path) => TrustedRoot::from_json(&fs_err::read(path)?).map_err(|source| {
            ReleaseVerifyError::TrustedRoot {
                path: path.to_owned(),
                source,
            }
        })?,
        None => TrustedRoot::production().map_err(ReleaseVerifyError::EmbeddedTrustedRoot)?,
    };
    // Every bundle must exist before any is checked: a release with an unsigned file is
    // refused whole, whatever order the files come in.
    for file in files {
        let bundle = bundle_path(file);
        if !bundle.is_file() {
            return Err(ReleaseVerifyError::MissingBundle {
                file: file.clone(),
                bundle,
            });
        }
    }
    let mut verified_files = Vec::with_capacity(files.len());
    for file in files {
        let bundle = bundle_path(file);
        let artifact = fs_err::read(file)?;
        let bundle_json = fs_err::read(&bundle)?;
        let refused = |source| ReleaseVerifyError::Refused {
            file: file.clone(),
            bundle: bundle.clone(),
            source,
        };
        let verified = verify_bundle(
            ArtifactInput::Bytes(&artifact),
            &bundle_json,
            &verifier_policy,
            &root,
        )
        .map_err(refused)?;
        if let SignerPolicy::Keyless(signer) = &policy.signer {
            let found = build_config_uri(&bundle_json).map_err(refused)?;
            let expected = signer.build_config(tag);
            if found.as_deref() != Some(expected.as_str()) {
                return Err(ReleaseVerifyError::BuildConfig {
                    file: file.clone(),
                    bundle,
                    expected,
                    found,
                    policy: policy.source.clone(),
                });
            }
        }
        verified_files.push(VerifiedFile {
            file: file.clone(),
            bundle,
            verified,
        });
    }
    Ok(verified_files)
}

/// The Build Config URI of a (verified) keyless bundle's certificate. The bundle is parsed a
/// second time (a few kilobytes) so that [`verify_bundle`] and its result stay policy-neutral.
fn build_config_uri(bundle_json: &[u8]) -> Result<Option<String>, VerifyError> {
    let bundle = Bundle::parse(bundle_json)?;
    let Material::Certificate { cert, .. } = &bundle.material else {
        return Ok(None);
    };
    Ok(certificate_build_config(cert))
}

fn certificate_build_config(cert: &Certificate) -> Option<String> {
    let ext = cert
        .tbs_certificate()
        .extensions()?
        .iter()
        .find(|e| e.extn_id == BUILD_CONFIG_URI)?;
    Utf8StringRef::from_der(ext.extn_value.as_bytes())
        .ok()
        .map(|s| s.as_str().to_owned())
}
