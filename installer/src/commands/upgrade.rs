//! `upgrade --from MIRROR_DIR`: install the newest version a local mirror holds and make it
//! active, keeping the one it replaces for `rollback`.
//!
//! The chosen bundle is verified ([`crate::signature::check`]) before anything changes.
//!
//! Seam: without `--from`, upgrade would fetch the newest GitHub release (and verify it the
//! same way); downloading is not implemented yet, so [`fetch_release`] refuses plainly.

use std::path::{Path, PathBuf};

use semver::Version;

use super::install::{Checked, activate, clean_scratch, finish, lock};
use super::{Report, Setup, register_clients};
use crate::bundle::{Bundle, BundleKind, version_from_name};
use crate::cli::UpgradeArgs;
use crate::error::SetupError;
use crate::progress::Progress;
use crate::register::Intent;

/// The signed-release download path (not implemented yet: see the module docs).
pub fn fetch_release() -> Result<PathBuf, SetupError> {
    Err(SetupError::NoMirror)
}

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
            && scimcp_release::verify::bundle_path(&path).is_file()
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

pub fn run(
    setup: &Setup,
    args: &UpgradeArgs,
    progress: &dyn Progress,
) -> Result<Report, SetupError> {
    let mut report = Report::new("upgrade", setup);
    let mirror = match &args.from {
        Some(m) => m.clone(),
        None => fetch_release()?,
    };
    let _lock = lock(setup)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    let active = state
        .active
        .as_deref()
        .and_then(|v| Version::parse(v).ok())
        .ok_or_else(|| SetupError::NotInstalled(setup.layout.root.clone()))?;
    let bundles = scan_mirror(&mirror)?;
    if bundles.is_empty() {
        return Err(SetupError::EmptyMirror { mirror });
    }
    let target = match &args.version {
        Some(v) => bundles
            .into_iter()
            .find(|b| &b.version == v)
            .ok_or_else(|| SetupError::NoSuchVersion {
                mirror: mirror.clone(),
                version: v.to_string(),
            })?,
        None => bundles.into_iter().next_back().expect("not empty"),
    };
    if target.version == active {
        return Err(SetupError::UpToDate(active.to_string()));
    }
    if target.version < active && !args.allow_downgrade {
        return Err(SetupError::Downgrade {
            active: active.to_string(),
            target: target.version.to_string(),
        });
    }
    // Verify before the switch: a refused bundle leaves everything as it was.
    let (target, signature) = match &target.kind {
        BundleKind::Zip(path) | BundleKind::Dir(path) => {
            crate::signature::open_checked(path, &args.signature)?
        }
        BundleKind::Running { .. } => {
            let signature = crate::signature::check(&target, &args.signature)?;
            (target, signature)
        }
    };
    report.step(format!("upgrade {active} -> {}", target.version));
    // Only now, after verification, so that a refused bundle leaves the data root untouched.
    if !setup.dry_run {
        clean_scratch(&setup.layout);
    }
    activate(
        setup,
        &mut state,
        Checked {
            bundle: &target,
            signature: Some(signature),
        },
        args.python.as_deref(),
        args.skip_runtime,
        progress,
        &mut report,
    )?;
    if !setup.dry_run {
        prune(setup, &mut state, &mut report)?;
    }
    // Entries point at the stable `current` path, so this changes nothing unless a client
    // entry was damaged; it also registers clients installed since.
    let recorded: Vec<String> = state.clients.keys().cloned().collect();
    let clients = setup.select(&recorded)?;
    register_clients(setup, &mut state, &clients, Intent::Install, &mut report);
    finish(setup, &before, &state, &mut report)?;
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
            super::remove_tree(&rec.dir)?;
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
                super::remove_tree(&path)?;
            }
        }
    }
    Ok(())
}
