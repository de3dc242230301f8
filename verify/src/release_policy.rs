//! The release policy (`release.toml` at the repository root): the tag scheme, the targets a
//! release ships, and who must have signed every release file.
//!
//! The policy is the one place the pinned signer lives. `verify --tag vX.Y.Z` and the
//! installer's [`crate::verify_release_files`] render the expected identity from it, so
//! nobody types a workflow URI by hand. The repository's `release.toml` is embedded in the
//! binary ([`ReleasePolicy::embedded`]): an installed `scimcp-release` or installer verifies
//! without a checkout.
//!
//! Two kinds of signer: keyless (a GitHub Actions workflow identity, the normal release) and a
//! key pair (`public_key = "FILE.pub"`, for air-gapped maintainers and tests).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::{KeyError, Policy, TrustedKey};

/// The repository's `release.toml`, compiled in.
const EMBEDDED_POLICY: &str = include_str!("../../release.toml");
/// How the embedded policy is named in messages.
const EMBEDDED_NAME: &str = "release.toml (embedded)";

/// The placeholder the tag pattern must contain exactly once.
const VERSION_PLACEHOLDER: &str = "{version}";

/// GitHub's web origin: Fulcio renders GitHub workflow identities under it.
const GITHUB: &str = "https://github.com";

/// A release policy that cannot be used, or a tag it does not allow. Every message names the
/// policy file and, for a bad field, the field.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(transparent)]
    Read(#[from] std::io::Error),
    #[error("release policy {file}: {problem}")]
    Syntax { file: String, problem: String },
    #[error("release policy {file}: field `{field}` {problem}")]
    Field {
        file: String,
        field: &'static str,
        problem: FieldProblem,
    },
    #[error(
        "tag {tag:?} does not follow the tag scheme {pattern:?} of release policy {file}: \
         {problem}"
    )]
    Tag {
        tag: String,
        pattern: String,
        file: String,
        problem: TagProblem,
    },
}

/// What is wrong with one field of a release policy; the message follows the field's name
/// ("field `targets` is missing").
#[derive(Debug, thiserror::Error)]
pub enum FieldProblem {
    #[error("is missing")]
    Missing,
    #[error("is empty; list every target a release ships")]
    NoTargets,
    #[error("lists {0:?} twice")]
    ListedTwice(String),
    #[error("lists {0:?}, which is not a target triple such as x86_64-unknown-linux-gnu")]
    NotATarget(String),
    #[error(
        "is set together with keyless fields; a signer is either keyless (issuer, \
         repository, workflow) or a key pair (public_key)"
    )]
    KeyAndKeyless,
    #[error("must be an absolute path in a policy that is not read from a file")]
    RelativeKey,
    /// The key file cannot be read (the message names it).
    #[error("{0}")]
    ReadKey(std::io::Error),
    #[error("{}: {problem}", path.display())]
    Key { path: PathBuf, problem: KeyError },
    #[error("{0:?} is not an https:// OIDC issuer URL")]
    NotHttps(String),
    #[error("{0:?} is not a GitHub repository of the form owner/name")]
    NotARepository(String),
    #[error("{0:?} is not a workflow file path such as .github/workflows/release.yml")]
    NotAWorkflow(String),
    #[error(transparent)]
    TagPattern(#[from] TagPatternProblem),
}

/// Why a tag pattern is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TagPatternProblem {
    #[error("{0:?} has no {VERSION_PLACEHOLDER} placeholder")]
    NoPlaceholder(String),
    #[error("{0:?} has more than one {VERSION_PLACEHOLDER} placeholder")]
    TwoPlaceholders(String),
    #[error(
        "{pattern:?} contains {c:?}; besides {VERSION_PLACEHOLDER} a tag pattern may use only \
         ASCII letters, digits, '.', '_', '-' and '/'"
    )]
    Character { pattern: String, c: char },
    #[error("{0:?} is not a valid git tag name")]
    NotAGitTag(String),
}

/// Why a tag does not follow the tag scheme.
#[derive(Debug, thiserror::Error)]
pub enum TagProblem {
    #[error("it is not of the form {0}")]
    NotOfTheForm(String),
    #[error("{version:?} is not a semantic version ({problem})")]
    NotSemver {
        version: String,
        problem: semver::Error,
    },
}

/// The tag scheme: a pattern with one `{version}` placeholder, e.g. `v{version}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagPattern {
    prefix: String,
    suffix: String,
}

impl TagPattern {
    fn parse(pattern: &str) -> Result<Self, TagPatternProblem> {
        let Some((prefix, suffix)) = pattern.split_once(VERSION_PLACEHOLDER) else {
            return Err(TagPatternProblem::NoPlaceholder(pattern.to_owned()));
        };
        if suffix.contains(VERSION_PLACEHOLDER) {
            return Err(TagPatternProblem::TwoPlaceholders(pattern.to_owned()));
        }
        // Tags become part of a certificate identity (`@refs/tags/<tag>`): only characters
        // that git allows and that need no escaping in a URI.
        let literal = format!("{prefix}{suffix}");
        if let Some(c) = literal
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')))
        {
            return Err(TagPatternProblem::Character {
                pattern: pattern.to_owned(),
                c,
            });
        }
        if prefix.starts_with('/') || suffix.ends_with('/') || literal.contains("//") {
            return Err(TagPatternProblem::NotAGitTag(pattern.to_owned()));
        }
        Ok(TagPattern {
            prefix: prefix.to_owned(),
            suffix: suffix.to_owned(),
        })
    }

    /// The tag of a version.
    pub fn render(&self, version: &semver::Version) -> String {
        format!("{}{version}{}", self.prefix, self.suffix)
    }

    /// The version a tag names, if the tag follows the pattern.
    pub fn version(&self, tag: &str) -> Result<semver::Version, TagProblem> {
        let version = tag
            .strip_prefix(&self.prefix)
            .and_then(|rest| rest.strip_suffix(&self.suffix))
            .ok_or_else(|| TagProblem::NotOfTheForm(self.to_string()))?;
        semver::Version::parse(version).map_err(|problem| TagProblem::NotSemver {
            version: version.to_owned(),
            problem,
        })
    }
}

impl std::fmt::Display for TagPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{VERSION_PLACEHOLDER}{}", self.prefix, self.suffix)
    }
}

/// A keyless signer: a GitHub Actions workflow of one repository, at the release tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowSigner {
    /// The OIDC issuer recorded in the certificate.
    pub issuer: String,
    /// `owner/name` on GitHub.
    pub repository: String,
    /// The release workflow the tag starts (the certificate's Build Config URI).
    pub workflow: String,
    /// The workflow file whose job signs (the certificate's SAN): `workflow` itself, or a
    /// reusable workflow it calls.
    pub signing_workflow: String,
}

impl WorkflowSigner {
    fn uri(&self, workflow: &str, tag: &str) -> String {
        format!("{GITHUB}/{}/{workflow}@refs/tags/{tag}", self.repository)
    }

    /// The certificate identity (SAN) a release tagged `tag` must carry.
    pub fn identity(&self, tag: &str) -> String {
        self.uri(&self.signing_workflow, tag)
    }

    /// The Build Config URI (Fulcio extension 1.3.6.1.4.1.57264.1.18) a release tagged `tag`
    /// must carry: the top-level workflow run that led to the signature.
    pub fn build_config(&self, tag: &str) -> String {
        self.uri(&self.workflow, tag)
    }
}

/// A key-pair signer: the public key trusted for releases.
#[derive(Debug, Clone)]
pub struct KeyPolicy {
    /// Where the key was read from.
    pub path: PathBuf,
    pub key: TrustedKey,
}

/// Who must have signed.
#[derive(Debug, Clone)]
pub enum SignerPolicy {
    Keyless(WorkflowSigner),
    Key(KeyPolicy),
}

/// A loaded and validated release policy.
#[derive(Debug, Clone)]
pub struct ReleasePolicy {
    /// The file it came from, for messages.
    pub source: String,
    pub tag: TagPattern,
    pub targets: Vec<String>,
    pub signer: SignerPolicy,
}

/// The file as written; every field optional so that a missing one is reported by name.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyToml {
    tag: Option<String>,
    targets: Option<Vec<String>>,
    signer: Option<SignerToml>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignerToml {
    issuer: Option<String>,
    repository: Option<String>,
    workflow: Option<String>,
    signing_workflow: Option<String>,
    public_key: Option<PathBuf>,
}

impl ReleasePolicy {
    /// The repository's `release.toml` as compiled into this binary.
    pub fn embedded() -> Result<Self, PolicyError> {
        Self::from_toml(EMBEDDED_POLICY, EMBEDDED_NAME, None)
    }

    /// Read and validate a policy file. A key-pair policy's `public_key` is relative to the
    /// file's directory.
    pub fn load(path: &Path) -> Result<Self, PolicyError> {
        let text = fs_err::read_to_string(path)?;
        Self::from_toml(&text, &path.display().to_string(), path.parent())
    }

    /// Parse and validate policy text; `source` names it in messages, `base_dir` resolves a
    /// relative `public_key` (none: relative keys are refused).
    pub fn from_toml(
        text: &str,
        source: &str,
        base_dir: Option<&Path>,
    ) -> Result<Self, PolicyError> {
        let file = source.to_owned();
        let raw: PolicyToml = toml::from_str(text).map_err(|e| PolicyError::Syntax {
            file: file.clone(),
            problem: e.to_string(),
        })?;
        let field = |field: &'static str, problem: FieldProblem| PolicyError::Field {
            file: file.clone(),
            field,
            problem,
        };
        let missing = |name: &'static str| field(name, FieldProblem::Missing);

        let tag = raw.tag.ok_or_else(|| missing("tag"))?;
        let tag = TagPattern::parse(&tag).map_err(|p| field("tag", p.into()))?;

        let targets = raw.targets.ok_or_else(|| missing("targets"))?;
        if targets.is_empty() {
            return Err(field("targets", FieldProblem::NoTargets));
        }
        for (i, target) in targets.iter().enumerate() {
            check_target(target).map_err(|p| field("targets", p))?;
            if targets[..i].contains(target) {
                return Err(field("targets", FieldProblem::ListedTwice(target.clone())));
            }
        }

        let signer = raw.signer.ok_or_else(|| missing("signer"))?;
        let signer = match &signer.public_key {
            Some(_)
                if signer.issuer.is_some()
                    || signer.repository.is_some()
                    || signer.workflow.is_some()
                    || signer.signing_workflow.is_some() =>
            {
                return Err(field("signer.public_key", FieldProblem::KeyAndKeyless));
            }
            Some(key_path) => SignerPolicy::Key(key_signer(key_path, base_dir, &field)?),
            None => SignerPolicy::Keyless(workflow_signer(signer, &field)?),
        };

        Ok(ReleasePolicy {
            source: file,
            tag,
            targets,
            signer,
        })
    }

    /// The version a release tag names; refuses tags outside the tag scheme.
    pub fn version_of_tag(&self, tag: &str) -> Result<semver::Version, PolicyError> {
        self.tag.version(tag).map_err(|problem| PolicyError::Tag {
            tag: tag.to_owned(),
            pattern: self.tag.to_string(),
            file: self.source.clone(),
            problem,
        })
    }

    /// The certificate identity a keyless release tagged `tag` must carry (`None` for a
    /// key-pair policy). The tag must follow the tag scheme.
    pub fn identity_for_tag(&self, tag: &str) -> Result<Option<String>, PolicyError> {
        self.version_of_tag(tag)?;
        Ok(match &self.signer {
            SignerPolicy::Keyless(workflow) => Some(workflow.identity(tag)),
            SignerPolicy::Key(_) => None,
        })
    }

    /// The verifier policy for the release tagged `tag`. For keyless releases the caller must
    /// also check the Build Config URI ([`WorkflowSigner::build_config`]), which
    /// [`crate::verify_release_files`] does.
    pub fn verifier_policy(&self, tag: &str) -> Result<Policy, PolicyError> {
        self.version_of_tag(tag)?;
        Ok(match &self.signer {
            SignerPolicy::Keyless(workflow) => Policy::Identity {
                identity: workflow.identity(tag),
                issuer: workflow.issuer.clone(),
            },
            SignerPolicy::Key(key) => Policy::Key(key.key.clone()),
        })
    }
}

type FieldError<'a> = dyn Fn(&'static str, FieldProblem) -> PolicyError + 'a;

fn key_signer(
    key_path: &Path,
    base_dir: Option<&Path>,
    field: &FieldError<'_>,
) -> Result<KeyPolicy, PolicyError> {
    let path = match base_dir {
        _ if key_path.is_absolute() => key_path.to_path_buf(),
        Some(dir) => dir.join(key_path),
        None => {
            return Err(field("signer.public_key", FieldProblem::RelativeKey));
        }
    };
    let pem = fs_err::read_to_string(&path)
        .map_err(|e| field("signer.public_key", FieldProblem::ReadKey(e)))?;
    let key = TrustedKey::from_pem(&pem).map_err(|problem| {
        field(
            "signer.public_key",
            FieldProblem::Key {
                path: path.clone(),
                problem,
            },
        )
    })?;
    Ok(KeyPolicy { path, key })
}

fn workflow_signer(
    signer: SignerToml,
    field: &FieldError<'_>,
) -> Result<WorkflowSigner, PolicyError> {
    let missing = |name: &'static str| field(name, FieldProblem::Missing);
    let issuer = signer.issuer.ok_or_else(|| missing("signer.issuer"))?;
    if !issuer.starts_with("https://") {
        return Err(field("signer.issuer", FieldProblem::NotHttps(issuer)));
    }
    let repository = signer
        .repository
        .ok_or_else(|| missing("signer.repository"))?;
    check_repository(&repository).map_err(|p| field("signer.repository", p))?;
    let workflow = signer.workflow.ok_or_else(|| missing("signer.workflow"))?;
    check_workflow(&workflow).map_err(|p| field("signer.workflow", p))?;
    let signing_workflow = match signer.signing_workflow {
        Some(w) => {
            check_workflow(&w).map_err(|p| field("signer.signing_workflow", p))?;
            w
        }
        None => workflow.clone(),
    };
    Ok(WorkflowSigner {
        issuer,
        repository,
        workflow,
        signing_workflow,
    })
}

/// A Rust target triple: `arch-vendor-os[-env]` in lowercase ASCII.
fn check_target(target: &str) -> Result<(), FieldProblem> {
    let parts: Vec<&str> = target.split('-').collect();
    let well_formed = (3..=4).contains(&parts.len())
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.'))
        });
    if well_formed {
        Ok(())
    } else {
        Err(FieldProblem::NotATarget(target.to_owned()))
    }
}

fn check_repository(repository: &str) -> Result<(), FieldProblem> {
    let valid_part = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    match repository.split_once('/') {
        Some((owner, name)) if valid_part(owner) && valid_part(name) => Ok(()),
        _ => Err(FieldProblem::NotARepository(repository.to_owned())),
    }
}

fn check_workflow(workflow: &str) -> Result<(), FieldProblem> {
    let file = workflow
        .strip_prefix(".github/workflows/")
        .unwrap_or_default();
    let valid = !file.is_empty()
        && !file.contains('/')
        && (file.ends_with(".yml") || file.ends_with(".yaml"))
        && file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if valid {
        Ok(())
    } else {
        Err(FieldProblem::NotAWorkflow(workflow.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYLESS: &str = r#"
tag = "v{version}"
targets = ["x86_64-unknown-linux-gnu", "aarch64-apple-darwin"]
[signer]
issuer = "https://token.actions.githubusercontent.com"
repository = "scimcp/scimcp"
workflow = ".github/workflows/release.yml"
"#;

    fn error(text: &str) -> String {
        ReleasePolicy::from_toml(text, "policy.toml", None)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn the_embedded_policy_pins_the_release_workflow() {
        let policy = ReleasePolicy::embedded().unwrap();
        assert_eq!(policy.targets.len(), 5);
        let SignerPolicy::Keyless(signer) = &policy.signer else {
            panic!("the repository's policy is keyless");
        };
        assert_eq!(signer.issuer, "https://token.actions.githubusercontent.com");
        assert_eq!(
            signer.build_config("v1.2.3"),
            "https://github.com/scimcp/scimcp/.github/workflows/release.yml@refs/tags/v1.2.3"
        );
        assert_eq!(
            policy.identity_for_tag("v1.2.3").unwrap().unwrap(),
            "https://github.com/scimcp/scimcp/.github/workflows/bundle-sign.yml@refs/tags/v1.2.3"
        );
    }

    #[test]
    fn identity_defaults_to_the_release_workflow() {
        let policy = ReleasePolicy::from_toml(KEYLESS, "policy.toml", None).unwrap();
        assert_eq!(
            policy.identity_for_tag("v0.1.0-rc.1").unwrap().unwrap(),
            "https://github.com/scimcp/scimcp/.github/workflows/release.yml@refs/tags/v0.1.0-rc.1"
        );
    }

    #[test]
    fn tags_outside_the_scheme_are_refused() {
        let policy = ReleasePolicy::from_toml(KEYLESS, "policy.toml", None).unwrap();
        for tag in ["1.2.3", "v1.2", "v1.2.3.4", "release-1.2.3", "v1.2.3/x"] {
            let err = policy.identity_for_tag(tag).unwrap_err().to_string();
            assert!(
                err.contains("policy.toml") && err.contains("v{version}"),
                "{err}"
            );
        }
        assert_eq!(policy.tag.render(&semver::Version::new(1, 2, 3)), "v1.2.3");
    }

    #[test]
    fn missing_fields_are_named() {
        let err = error(&KEYLESS.replace(
            "issuer = \"https://token.actions.githubusercontent.com\"\n",
            "",
        ));
        assert!(
            err.contains("policy.toml") && err.contains("`signer.issuer` is missing"),
            "{err}"
        );
        let err = error(&KEYLESS.replace("tag = \"v{version}\"\n", ""));
        assert!(
            err.contains("policy.toml") && err.contains("`tag` is missing"),
            "{err}"
        );
        let err = error("tag = \"v{version}\"\ntargets = [\"x86_64-unknown-linux-gnu\"]\n");
        assert!(err.contains("`signer` is missing"), "{err}");
    }

    #[test]
    fn bad_values_are_named() {
        for (from, to, field) in [
            ("v{version}", "v{ver}", "`tag`"),
            ("v{version}", "v{version}-{version}", "`tag`"),
            ("v{version}", "v {version}", "`tag`"),
            ("\"aarch64-apple-darwin\"", "\"linux\"", "`targets`"),
            (
                "\"aarch64-apple-darwin\"",
                "\"x86_64-unknown-linux-gnu\"",
                "`targets`",
            ),
            ("scimcp/scimcp", "scimcp", "`signer.repository`"),
            (
                ".github/workflows/release.yml",
                "release.yml",
                "`signer.workflow`",
            ),
            ("https://token", "http://token", "`signer.issuer`"),
        ] {
            let err = error(&KEYLESS.replace(from, to));
            assert!(
                err.contains("policy.toml") && err.contains(field),
                "{to}: {err}"
            );
        }
        let err = error(&format!("{KEYLESS}public_key = \"k.pub\"\n"));
        assert!(err.contains("`signer.public_key`"), "{err}");
        let err = error(&format!("{KEYLESS}identity = \"x\"\n"));
        assert!(
            err.contains("policy.toml") && err.contains("identity"),
            "{err}"
        );
    }
}
