//! `install` and `repair`: put a version in place, make it current, provision its runtime,
//! register the server in the clients, and record it all in `state.json`.
//!
//! Runbook (every step is idempotent, so a killed run is finished by the next one):
//! 1. take the setup lock;
//! 2. unpack the bundle into `.tmp/<random>/` and rename it to `versions/<semver>/` (skipped
//!    when that version is already there and intact);
//! 3. switch `current` atomically (skipped when it already points there);
//! 4. provision or reuse `runtimes/<adapter>-<hash>/` (unless `--skip-runtime`);
//! 5. plan, back up, write and verify each client file;
//! 6. write `state.json` atomically if anything in it changed.

use std::path::Path;

use scimcp_core::install_state::{InstallState, SignatureRecord, VersionRecord};
use semver::Version;

use super::{Report, Setup, register_clients};
use crate::bundle::Bundle;
use crate::cli::InstallArgs;
use crate::error::SetupError;
use crate::faults::checkpoint;
use crate::layout::{DEFAULT_ADAPTER, Layout};
use crate::lock::SetupLock;
use crate::progress::Progress;
use crate::register::Intent;

/// Run `install` (or `repair` when `repair` is true).
pub fn run(
    setup: &Setup,
    args: &InstallArgs,
    repair: bool,
    progress: &dyn Progress,
) -> Result<Report, SetupError> {
    let mut report = Report::new(if repair { "repair" } else { "install" }, setup);
    let _lock = lock(setup, &mut report)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    // Checked before anything under the data root changes: a refused bundle leaves it as it
    // was. A repair that keeps the intact active version checks nothing new and keeps its
    // record.
    // A download lives in a temporary directory until the bundle is unpacked.
    let mut download = None;
    let (bundle, signature) = match args.from.as_deref() {
        Some(path) => {
            let path = match path.to_str().filter(|p| crate::remote::is_url(p)) {
                Some(url) => {
                    let fetched = crate::remote::download_bundle_url(url, progress)?;
                    let zip = fetched.zip.clone();
                    download = Some(fetched);
                    zip
                }
                None => path.to_path_buf(),
            };
            let (bundle, signature) = crate::signature::open_checked(&path, &args.signature)?;
            (bundle, Some(signature))
        }
        None => {
            let bundle = choose_bundle(setup, &state, repair)?;
            let signature = match bundle.kind {
                crate::bundle::BundleKind::Running { .. } => {
                    Some(crate::signature::check(&bundle, &args.signature)?)
                }
                _ => None,
            };
            (bundle, signature)
        }
    };
    if let Some(active) = state.active.as_deref().and_then(|v| Version::parse(v).ok())
        && bundle.version < active
        && !repair
    {
        return Err(SetupError::InstallOlder {
            active: active.to_string(),
            target: bundle.version.to_string(),
        });
    }
    if !setup.dry_run {
        clean_scratch(&setup.layout);
    }
    data_folders(setup, &mut state, &args.data_dirs, &mut report)?;
    activate(
        setup,
        &mut state,
        Checked {
            bundle: &bundle,
            signature,
            origin: download.as_ref().map(|d| d.origin.clone()),
        },
        args.python.as_deref(),
        args.skip_runtime,
        progress,
        &mut report,
    )?;
    let recorded: Vec<String> = if repair {
        state.clients.keys().cloned().collect()
    } else {
        Vec::new()
    };
    let clients = setup.select(&recorded)?;
    let intent = if repair {
        Intent::Repair
    } else {
        Intent::Install
    };
    register_clients(setup, &mut state, &clients, intent, &mut report);
    finish(setup, &before, &state, &mut report)?;
    if !setup.dry_run {
        report.notes.push(
            "Quit and reopen your AI clients so they start scimcp. `scimcp-setup status` shows \
             what is installed; `scimcp-setup uninstall` undoes it (your runs are kept)."
                .into(),
        );
    }
    Ok(report)
}

/// Take the setup lock, except in a dry run (which writes nothing, not even the lock file),
/// then sweep the temporary files a killed run left in the installer's own directories.
pub(crate) fn lock(setup: &Setup, report: &mut Report) -> Result<Option<SetupLock>, SetupError> {
    if setup.dry_run {
        return Ok(None);
    }
    let lock = SetupLock::acquire(&setup.layout.lock_path())?;
    let swept = crate::sweep::stale_temps(&setup.layout);
    if !swept.is_empty() {
        report.step(format!(
            "remove {} temporary file(s) an interrupted scimcp-setup left behind: {}",
            swept.len(),
            swept
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(Some(lock))
}

/// Write the receipt and fill in the report's version fields. Client failures stay in the
/// report: the caller prints it, then fails with [`SetupError::ClientsFailed`].
pub(crate) fn finish(
    setup: &Setup,
    before: &InstallState,
    state: &InstallState,
    report: &mut Report,
) -> Result<(), SetupError> {
    report.active = state.active.clone();
    report.previous = state.previous.clone();
    if !setup.dry_run {
        setup.save_state(before, state)?;
    }
    Ok(())
}

/// Which bundle to install without `--from`: the running binaries. A repair keeps the
/// active version when it is intact.
fn choose_bundle(setup: &Setup, state: &InstallState, repair: bool) -> Result<Bundle, SetupError> {
    let running = Bundle::running()?;
    if repair && let Some(active) = state.active.as_deref().and_then(|v| Version::parse(v).ok()) {
        if active != running.version && !version_intact(&setup.layout, &active) {
            return Err(SetupError::CannotRepairVersion {
                active: active.to_string(),
                running: running.version.to_string(),
            });
        }
        if active != running.version {
            // The active version is intact: repair it, not replace it with ours.
            return Ok(Bundle {
                version: active.clone(),
                kind: crate::bundle::BundleKind::Dir(setup.layout.version_dir(&active)),
            });
        }
    }
    Ok(running)
}

/// Whether `versions/<v>/` has its server binary and adapters.
pub(crate) fn version_intact(layout: &Layout, version: &Version) -> bool {
    let dir = layout.version_dir(version);
    dir.join("bin")
        .join(format!("scimcp{}", layout.platform.exe_suffix()))
        .is_file()
        && dir.join("adapters").is_dir()
}

/// A bundle with the outcome of its signature check (`None`: nothing new was checked, keep
/// what the receipt says).
pub(crate) struct Checked<'a> {
    pub bundle: &'a Bundle,
    pub signature: Option<SignatureRecord>,
    /// Where the bytes came from when that is not the bundle's local path (a download URL).
    pub origin: Option<String>,
}

/// Unpack `bundle` (if needed), make it current, provision its runtime and record it.
pub(crate) fn activate(
    setup: &Setup,
    state: &mut InstallState,
    source: Checked<'_>,
    python: Option<&Path>,
    skip_runtime: bool,
    progress: &dyn Progress,
    report: &mut Report,
) -> Result<(), SetupError> {
    let Checked {
        bundle,
        signature,
        origin,
    } = source;
    let origin = origin.unwrap_or_else(|| bundle.describe());
    let layout = &setup.layout;
    let version = &bundle.version;
    let dir = layout.version_dir(version);
    let key = version.to_string();
    let unpacking = !version_intact(layout, version);
    if unpacking {
        report.step(format!("unpack {origin} into {}", dir.display()));
        if !setup.dry_run {
            progress.step(&format!("unpacking scimcp {version}"));
            unpack(layout, bundle)?;
        }
    }
    if !setup.dry_run || state.versions.contains_key(&key) {
        let record = state
            .versions
            .entry(key.clone())
            .or_insert_with(|| VersionRecord {
                dir: dir.clone(),
                source: origin.clone(),
                installed_at: jiff::Timestamp::now().to_string(),
                runtimes: Default::default(),
                signature: None,
            });
        // The record describes the files on disk: an intact version that was not unpacked
        // again keeps its old record, so a later signed install of the same version does
        // not vouch for files it did not write.
        if unpacking && let Some(signature) = signature {
            record.source = origin.clone();
            record.signature = Some(signature);
        }
    }
    let healthy = crate::current::is_healthy(layout, version);
    if !healthy {
        report.step(format!(
            "make {version} the active version ({})",
            layout.current().display()
        ));
        if !setup.dry_run {
            checkpoint();
            crate::current::switch(layout, version)
                .map_err(SetupError::io("switching", layout.current()))?;
            checkpoint();
        }
    }
    if state.active.as_deref() != Some(key.as_str()) {
        if let Some(old) = state.active.take() {
            state.previous = Some(old);
        }
        state.active = Some(key.clone());
    }
    state.server = Some(setup.server(state));
    if skip_runtime {
        report.step("skip the scientific runtime (--skip-runtime)".to_string());
        return Ok(());
    }
    if setup.dry_run {
        report.step(format!(
            "provision (or reuse) the {DEFAULT_ADAPTER} runtime under {}",
            layout.runtimes_dir().display()
        ));
        return Ok(());
    }
    let manifest = load_manifest(&dir)?;
    let record = crate::runtime::provision(&setup.host, layout, &manifest, &dir, python, progress)?;
    progress.finish();
    if let Some(record) = record {
        if state.runtimes.get(DEFAULT_ADAPTER) != Some(&record) {
            report.step(format!(
                "use the {DEFAULT_ADAPTER} runtime {}",
                record.dir.display()
            ));
        }
        state
            .runtimes
            .insert(DEFAULT_ADAPTER.to_string(), record.clone());
        if let Some(v) = state.versions.get_mut(&key) {
            v.runtimes.insert(DEFAULT_ADAPTER.to_string(), record);
        }
    }
    Ok(())
}

/// Settle the data folders the server may read datasets from: `chosen` (`--data-dir`) when
/// given, else the recorded ones, else the default one; record them and create the missing
/// ones. They are the user's folders: nothing here ever deletes one.
pub(crate) fn data_folders(
    setup: &Setup,
    state: &mut InstallState,
    chosen: &[std::path::PathBuf],
    report: &mut Report,
) -> Result<(), SetupError> {
    if !chosen.is_empty() {
        state.data_dirs = chosen
            .iter()
            .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
            .collect();
    }
    let dirs = setup.data_dirs(state);
    state.data_dirs = dirs.clone();
    for dir in &dirs {
        match fs_err::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(SetupError::DataDirNotADirectory(dir.clone())),
            Err(_) => {
                report.step(format!("create your data folder {}", dir.display()));
                if !setup.dry_run {
                    fs_err::create_dir_all(dir).map_err(SetupError::io("creating", dir))?;
                }
            }
        }
    }
    Ok(())
}

/// The registered adapter's manifest as the version ships it.
fn load_manifest(version_dir: &Path) -> Result<scimcp_core::manifest::Manifest, SetupError> {
    let path = version_dir
        .join("adapters")
        .join(format!("{DEFAULT_ADAPTER}.toml"));
    let adapter = if path.is_file() {
        scimcp_core::manifest::load_file(&path)
    } else {
        scimcp_core::manifest::load_embedded(DEFAULT_ADAPTER).expect("refsci is embedded")
    }
    .map_err(|e| SetupError::Manifest {
        path: path.clone(),
        message: e.to_string(),
    })?;
    Ok(adapter.manifest)
}

/// Unpack into a scratch directory on the same file system, then rename into place.
fn unpack(layout: &Layout, bundle: &Bundle) -> Result<(), SetupError> {
    let scratch_root = layout.scratch_dir();
    fs_err::create_dir_all(&scratch_root).map_err(SetupError::io("creating", &scratch_root))?;
    let scratch = tempfile::Builder::new()
        .prefix("version-")
        .tempdir_in(&scratch_root)
        .map_err(SetupError::io(
            "creating a scratch directory in",
            &scratch_root,
        ))?;
    let staged = scratch.path().join("v");
    bundle.unpack(&staged, layout.platform.exe_suffix())?;
    checkpoint();
    let dest = layout.version_dir(&bundle.version);
    fs_err::create_dir_all(layout.versions_dir())
        .map_err(SetupError::io("creating", layout.versions_dir()))?;
    if dest.exists() {
        // A damaged copy of this version: move it aside, then drop it after the rename.
        let aside = scratch.path().join("old");
        fs_err::rename(&dest, &aside).map_err(SetupError::io("moving aside", &dest))?;
    }
    fs_err::rename(&staged, &dest).map_err(SetupError::io("renaming into", &dest))?;
    scimcp_core::fs::sync_dir(&layout.versions_dir())
        .map_err(SetupError::io("syncing", layout.versions_dir()))?;
    checkpoint();
    Ok(())
}

/// Delete scratch directories a killed run left behind (under the lock, nobody uses them).
pub(crate) fn clean_scratch(layout: &Layout) {
    let _ = fs_err::remove_dir_all(layout.scratch_dir());
}
