//! `upgrade`: install the newest release and make it active, keeping the one it replaces for
//! `rollback`. Releases come from GitHub ([`crate::remote`]) or, with `--from`, from a local
//! mirror directory.
//!
//! The choice is made before the setup lock is taken (a slow download never blocks another
//! setup) and checked again under it. The chosen bundle is verified
//! ([`crate::checked_bundle::open_checked`]) before anything under the data root changes.

use std::path::{Path, PathBuf};

use semver::Version;

use super::install::{
    Checked, Runtimes, Target, activate, clean_scratch, create_data_folders, register_adapters,
};
use super::report::Report;
use super::session::{finish, lock};
use super::setup::Setup;
use crate::bundle::{Bundle, BundleKind, version_from_name};
use crate::cli::UpgradeArgs;
use crate::error::SetupError;
use crate::progress::Progress;
use crate::register::Intent;
use crate::remote::{self, GitHubSource, RemoteError};

/// Every bundle in `mirror` with its version.
pub fn scan_mirror(mirror: &Path) -> Result<Vec<Bundle>, SetupError> {
    let mut found = Vec::new();
    for entry in fs_err::read_dir(mirror).map_err(SetupError::io("reading", mirror))? {
        let entry = entry.map_err(SetupError::io("reading", mirror))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("scimcp-") {
            continue;
        }
        let path = entry.path();
        if path.is_file() && !name.ends_with(".zip") {
            continue;
        }
        if version_from_name(&name).is_none()
            && !path.join("RELEASE.json").is_file()
            && path.is_dir()
        {
            continue;
        }
        // A signed zip is not parsed before its signature is verified: its name gives the
        // version now, and `upgrade` checks that RELEASE.json agrees after verification.
        if let Some(version) = version_from_name(&name)
            && path.is_file()
            && scimcp_verify::bundle_path(&path).is_file()
        {
            let path = std::path::absolute(&path).map_err(SetupError::io("resolving", &path))?;
            found.push(Bundle {
                version,
                kind: BundleKind::Zip(path),
            });
            continue;
        }
        found.push(Bundle::open(&path)?);
    }
    found.sort_by(|a, b| a.version.cmp(&b.version));
    Ok(found)
}

/// The version to move to, and where its bytes are.
struct Candidate {
    bundle: Bundle,
    /// Where the bytes came from, when not a local path (a download), for the receipt.
    origin: Option<String>,
    /// Keeps a download alive until it is unpacked.
    _download: Option<tempfile::TempDir>,
}

pub fn run(
    setup: &Setup,
    args: &UpgradeArgs,
    progress: &dyn Progress,
) -> Result<Report, SetupError> {
    let mut report = Report::new("upgrade", setup);
    let active = active_version(setup, &setup.load_state()?)?;
    let candidate = match &args.from {
        Some(mirror) => {
            let candidate = from_mirror(mirror, args)?;
            if args.check {
                return check_only(report, &active, &candidate.bundle.version, args, || {
                    mirror.display().to_string()
                });
            }
            candidate
        }
        None => {
            let (repo, chosen) = find_on_github(setup, args, progress)?;
            if args.check {
                return check_only(report, &active, &chosen.version, args, || {
                    format!("the releases of {repo}")
                });
            }
            if !direction_allowed(&active, &chosen.version, args.allow_downgrade)? {
                return up_to_date(report, &active);
            }
            let downloaded =
                remote::download_bundle(&repo, &chosen, args.signature.allow_unsigned, progress)?;
            Candidate {
                bundle: Bundle {
                    version: chosen.version,
                    kind: BundleKind::Zip(downloaded.zip),
                },
                origin: Some(downloaded.origin),
                _download: Some(downloaded.dir),
            }
        }
    };
    let _lock = lock(setup, &mut report)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    // Again under the lock: another setup may have moved the active version meanwhile.
    let active = active_version(setup, &state)?;
    let target = &candidate.bundle;
    if !direction_allowed(&active, &target.version, args.allow_downgrade)? {
        return up_to_date(report, &active);
    }
    // Verify before the switch: a refused bundle leaves everything as it was.
    let (target, signature) = match &target.kind {
        BundleKind::Zip(path) | BundleKind::Dir(path) => {
            crate::checked_bundle::open_checked(path, &args.signature.clone().into())?
        }
        BundleKind::Running { .. } => {
            let signature = crate::signature::check(target, &args.signature.clone().into())?;
            (target.clone(), signature)
        }
    };
    report.step(format!("upgrade {active} -> {}", target.version));
    // Only now, after verification, so that a refused bundle leaves the data root untouched.
    if !setup.dry_run {
        clean_scratch(&setup.layout);
    }
    let missing = super::install::data_folders(setup, &mut state, &[])?;
    // Every installed adapter needs a runtime for the new version; --adapter adds others.
    let mut targets: Vec<Target> = state
        .adapters
        .keys()
        .cloned()
        .map(Target::Installed)
        .collect();
    for arg in &setup.adapters {
        let target = if !crate::adapters::is_path(arg) && state.adapters.contains_key(arg) {
            Target::Installed(arg.clone())
        } else {
            Target::Request(arg.clone())
        };
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    if targets.is_empty() {
        targets.push(Target::Request(crate::layout::DEFAULT_ADAPTER.to_string()));
    }
    let adapters = activate(
        setup,
        &mut state,
        Checked {
            bundle: &target,
            signature: Some(signature),
            origin: candidate.origin.clone(),
        },
        Runtimes {
            targets,
            python: args.python.as_deref(),
            skip_runtime: args.skip_runtime,
            packages: &args.packages.clone().into(),
            trust_import_stamp: false,
        },
        progress,
        &mut report,
    )?;
    create_data_folders(setup, &missing, &mut report)?;
    if !setup.dry_run {
        prune(setup, &mut state, &mut report)?;
    }
    // Entries point at the stable `current` path, so this changes nothing unless a client
    // entry was damaged (or an older scimcp named it `scimcp`); it also registers clients
    // installed since.
    register_adapters(
        setup,
        &mut state,
        &adapters,
        Intent::Install,
        true,
        &mut report,
    )?;
    finish(setup, &before, &state, &mut report)?;
    Ok(report)
}

fn active_version(
    setup: &Setup,
    state: &scimcp_core::install_state::InstallState,
) -> Result<Version, SetupError> {
    state
        .active
        .as_deref()
        .and_then(|v| Version::parse(v).ok())
        .ok_or_else(|| SetupError::NotInstalled(setup.layout.root.clone()))
}

/// `Ok(false)`: `target` is the active version already. An older one needs `allow_downgrade`.
fn direction_allowed(
    active: &Version,
    target: &Version,
    allow_downgrade: bool,
) -> Result<bool, SetupError> {
    if target == active {
        return Ok(false);
    }
    if target < active && !allow_downgrade {
        return Err(SetupError::Downgrade {
            active: active.to_string(),
            target: target.to_string(),
        });
    }
    Ok(true)
}

/// Nothing to do is a success: a scheduled `upgrade` must not fail for it.
fn up_to_date(mut report: Report, active: &Version) -> Result<Report, SetupError> {
    report.active = Some(active.to_string());
    report.notes.push(format!(
        "already at {active}, the newest version available; nothing was changed"
    ));
    Ok(report)
}

fn from_mirror(mirror: &Path, args: &UpgradeArgs) -> Result<Candidate, SetupError> {
    let bundles = scan_mirror(mirror)?;
    if bundles.is_empty() {
        return Err(SetupError::EmptyMirror {
            mirror: mirror.to_path_buf(),
        });
    }
    let bundle = match &args.version {
        Some(v) => bundles
            .into_iter()
            .find(|b| &b.version == v)
            .ok_or_else(|| SetupError::NoSuchVersion {
                mirror: mirror.to_path_buf(),
                version: v.to_string(),
            })?,
        None => bundles.into_iter().next_back().expect("not empty"),
    };
    Ok(Candidate {
        bundle,
        origin: None,
        _download: None,
    })
}

/// The release to move to on GitHub (nothing is downloaded here), with the repository.
fn find_on_github(
    setup: &Setup,
    args: &UpgradeArgs,
    progress: &dyn Progress,
) -> Result<(String, remote::RemoteBundle), SetupError> {
    let policy = crate::signature::release_policy(&args.signature.clone().into())?;
    let repo = match (&args.repo, &policy.signer) {
        (Some(repo), _) => repo.clone(),
        (None, scimcp_verify::release_policy::SignerPolicy::Keyless(signer)) => {
            signer.repository.clone()
        }
        (None, scimcp_verify::release_policy::SignerPolicy::Key(_)) => {
            return Err(RemoteError::NoRepository {
                policy: policy.source.clone(),
            }
            .into());
        }
    };
    let token = setup
        .host
        .var("GH_TOKEN")
        .or_else(|| setup.host.var("GITHUB_TOKEN"));
    let source = GitHubSource::new(&repo, args.github_api.as_deref(), token)?;
    let target = remote::github::host_target();
    progress.step(&format!("looking for releases of {repo}"));
    let bundles = source.bundles(target)?;
    let chosen = remote::github::choose(&source, bundles, args.version.as_ref(), target)?;
    Ok((source.repo, chosen))
}

/// `upgrade --check`: say what an upgrade would do, change nothing.
fn check_only(
    mut report: Report,
    active: &Version,
    target: &Version,
    args: &UpgradeArgs,
    place: impl FnOnce() -> String,
) -> Result<Report, SetupError> {
    if !direction_allowed(active, target, args.allow_downgrade)? {
        return up_to_date(report, active);
    }
    report.active = Some(active.to_string());
    report.available = Some(target.to_string());
    let mut command = "scimcp-setup upgrade".to_owned();
    if let Some(mirror) = &args.from {
        command.push_str(&format!(" --from {}", mirror.display()));
    }
    if args.version.is_some() || target < active {
        command.push_str(&format!(" --version {target}"));
    }
    if target < active {
        command.push_str(" --allow-downgrade");
    }
    report.notes.push(format!(
        "scimcp {target} is available in {} (you have {active}); run `{command}` to install \
         it. Nothing was downloaded or changed",
        place()
    ));
    Ok(report)
}

/// Keep only the active and the previous version, and the runtimes they use.
pub(crate) fn prune(
    setup: &Setup,
    state: &mut scimcp_core::install_state::InstallState,
    report: &mut Report,
) -> Result<(), SetupError> {
    let keep: Vec<String> = [state.active.clone(), state.previous.clone()]
        .into_iter()
        .flatten()
        .collect();
    let old: Vec<String> = state
        .versions
        .keys()
        .filter(|v| !keep.contains(v))
        .cloned()
        .collect();
    for v in old {
        if let Some(rec) = state.versions.remove(&v) {
            report.step(format!("remove the old version {v}"));
            super::tree::remove_tree(&rec.dir)?;
        }
    }
    let used: Vec<PathBuf> = state
        .versions
        .values()
        .flat_map(|v| v.runtimes.values().map(|r| r.dir.clone()))
        .chain(state.runtimes.values().map(|r| r.dir.clone()))
        .collect();
    if let Ok(entries) = fs_err::read_dir(setup.layout.runtimes_dir()) {
        for entry in entries.flatten() {
            let path = entry.path();
            if !used.contains(&path) {
                report.step(format!("remove the unused runtime {}", path.display()));
                super::tree::remove_tree(&path)?;
            }
        }
    }
    Ok(())
}
