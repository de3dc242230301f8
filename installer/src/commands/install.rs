//! `install` and `repair`: put a version in place, provision each adapter's runtime, make
//! the version current, register each adapter's server in the clients, and record it all in
//! `state.json`.
//!
//! Runbook (every step is idempotent, so a killed run is finished by the next one):
//! 1. take the setup lock;
//! 2. unpack the bundle into `.tmp/<random>/` and rename it to `versions/<semver>/` (skipped
//!    when that version is already there and intact);
//! 3. resolve the adapters: the ones named with `--adapter` (a file adapter is copied into
//!    `.tmp/`), plus every installed one when the version changes; without `--adapter`,
//!    every installed one (refsci on a first install);
//! 4. provision or reuse `runtimes/<adapter>-<hash>/` for each (unless `--skip-runtime`);
//! 5. switch `current` atomically (skipped when it already points there), move the copies
//!    of file adapters into `adapters/<name>/`;
//! 6. create the data folders; plan, back up, write and verify each client file (one
//!    `scimcp-<adapter>` entry per adapter);
//! 7. write `state.json` atomically if anything in it changed.
//!
//! Nothing a scientist relies on changes before step 5: a failure in steps 2–4 removes what
//! this run unpacked or built (and puts back a damaged runtime it had moved aside), so the
//! runtime in use, `current`, every client file and `state.json` are as they were.

use std::path::{Path, PathBuf};

use scimcp_core::install_state::{
    AdapterRecord, InstallState, PackageSources, SignatureRecord, VersionRecord, entry_name,
};
use semver::Version;

use super::registration::register_clients;
use super::report::Report;
use super::session::{finish, lock};
use super::setup::Setup;
use crate::adapters::Resolved;
use crate::bundle::Bundle;
use crate::error::SetupError;
use crate::faults::checkpoint;
use crate::layout::{DEFAULT_ADAPTER, Layout};
use crate::options::{InstallOptions, PackageOptions};
use crate::progress::Progress;
use crate::register::Intent;
use crate::runtime::{ProvisionError, Provisioned};

/// `scimcp-setup install`: put a version in place, provision each adapter's runtime and
/// register each adapter's server (or, with [`crate::RemoteOptions::remote`], register a
/// remote server). Per-client failures are in the report ([`Report::failures`]).
pub fn install(
    setup: &Setup,
    options: &InstallOptions,
    progress: &dyn Progress,
) -> Result<Report, SetupError> {
    run(setup, options, false, progress)
}

/// `scimcp-setup repair`: re-apply everything idempotently — the active version (kept when
/// intact, so nothing new is unpacked or verified), each adapter's runtime, `current`, and
/// every entry in every client it is registered in plus those `setup` names; with
/// [`crate::RemoteOptions::remote`] only that registered remote server's entries. The
/// doctor's `--fix` calls this too, so both repair the same way.
pub fn repair(
    setup: &Setup,
    options: &InstallOptions,
    progress: &dyn Progress,
) -> Result<Report, SetupError> {
    run(setup, options, true, progress)
}

/// Run `install` (or `repair` when `repair` is true).
fn run(
    setup: &Setup,
    args: &InstallOptions,
    repair: bool,
    progress: &dyn Progress,
) -> Result<Report, SetupError> {
    if args.remote.remote.is_some() {
        return super::remote::install(setup, args, repair);
    }
    if repair && setup.adapters.is_empty() && args.from.is_none() {
        let state = setup.load_state()?;
        if state.active.is_none() && state.adapters.is_empty() && !state.remotes.is_empty() {
            // Only remote servers are registered here: nothing local to repair (or install).
            return super::remote::repair_only(setup);
        }
    }
    let mut report = Report::new(if repair { "repair" } else { "install" }, setup);
    // A `--from` bundle is checked before the lock is taken: the check reads only the bundle
    // (a download lives in a temporary directory until it is unpacked) and the release
    // policy, so a refused bundle leaves the data root exactly as it was, without even the
    // lock file or the folder the lock creates.
    let mut download = None;
    let from = match args.from.as_deref() {
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
            Some(crate::checked_bundle::open_checked(&path, &args.signature)?)
        }
        None => None,
    };
    let _lock = lock(setup, &mut report)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    // A repair that keeps the intact active version checks nothing new and keeps its record.
    let (bundle, signature) = match from {
        Some((bundle, signature)) => (bundle, Some(signature)),
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
    let missing = data_folders(setup, &mut state, &args.data_dirs)?;
    // A new version needs every installed adapter's runtime; new data folders change every
    // adapter's registered command.
    let everything = state.active.as_deref() != Some(bundle.version.to_string().as_str())
        || !version_intact(&setup.layout, &bundle.version)
        || state.data_dirs != before.data_dirs;
    let targets = targets(setup, &state, everything);
    let adapters = activate(
        setup,
        &mut state,
        Checked {
            bundle: &bundle,
            signature,
            origin: download.as_ref().map(|d| d.origin.clone()),
        },
        Runtimes {
            targets,
            python: args.python.as_deref(),
            skip_runtime: args.skip_runtime,
            packages: &args.packages,
            trust_import_stamp: !repair,
        },
        progress,
        &mut report,
    )?;
    create_data_folders(setup, &missing, &mut report)?;
    let intent = if repair {
        Intent::Repair
    } else {
        Intent::Install
    };
    register_adapters(setup, &mut state, &adapters, intent, repair, &mut report)?;
    if repair && setup.adapters.is_empty() {
        super::remote::repair_recorded(setup, &mut state, &mut report)?;
    }
    finish(setup, &before, &state, &mut report)?;
    if !setup.dry_run {
        let approvals = super::approvals::notes(&report);
        report.notes.extend(approvals);
        report.notes.push(format!(
            "Quit and reopen your AI clients so they start {}. `scimcp-setup status` shows \
             what is installed; `scimcp-setup uninstall` undoes it (your runs are kept).",
            adapters
                .iter()
                .map(|a| entry_name(a))
                .collect::<Vec<_>>()
                .join(" and ")
        ));
    }
    Ok(report)
}

/// An adapter a command is asked to provision and register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// `--adapter NAME|PATH` for an adapter that is not installed (or a path: copied again).
    Request(String),
    /// An installed adapter, from its record.
    Installed(String),
}

/// The adapters `install`/`repair` act on: the named ones (plus every installed one when
/// `everything`: a new version, new data folders), else every installed one, else refsci.
pub(crate) fn targets(setup: &Setup, state: &InstallState, everything: bool) -> Vec<Target> {
    let installed: Vec<String> = state.adapters.keys().cloned().collect();
    if setup.adapters.is_empty() {
        if installed.is_empty() {
            return vec![Target::Request(DEFAULT_ADAPTER.to_string())];
        }
        return installed.into_iter().map(Target::Installed).collect();
    }
    let mut out: Vec<Target> = setup
        .adapters
        .iter()
        .map(|arg| {
            if !crate::adapters::is_path(arg) && state.adapters.contains_key(arg) {
                Target::Installed(arg.clone())
            } else {
                Target::Request(arg.clone())
            }
        })
        .collect();
    if everything {
        for name in installed {
            if !out.contains(&Target::Installed(name.clone())) {
                out.push(Target::Installed(name));
            }
        }
    }
    out
}

/// Register each of `adapters` in the clients: the named clients, or every detected one
/// (plus, for `repair`, every client the adapter is registered in, and always the ones
/// whose entry an older scimcp wrote under another name, so it is renamed).
pub(crate) fn register_adapters(
    setup: &Setup,
    state: &mut InstallState,
    adapters: &[String],
    intent: Intent,
    all_recorded: bool,
    report: &mut Report,
) -> Result<(), SetupError> {
    for adapter in adapters {
        let desired = entry_name(adapter);
        let recorded: Vec<String> = state
            .adapters
            .get(adapter)
            .map(|a| {
                a.clients
                    .iter()
                    .filter(|(_, r)| all_recorded || r.name != desired)
                    .map(|(id, _)| id.clone())
                    .collect()
            })
            .unwrap_or_default();
        let clients = setup.select(&recorded)?;
        register_clients(setup, state, adapter, &clients, intent, report);
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

/// What [`activate`] provisions.
pub(crate) struct Runtimes<'a> {
    pub targets: Vec<Target>,
    /// `--python`.
    pub python: Option<&'a Path>,
    pub skip_runtime: bool,
    /// `--find-links`, `--index-url`, `--no-index` (replace the recorded ones when given).
    pub packages: &'a PackageOptions,
    /// A reused runtime may skip its import check when not one of its files changed since
    /// it last passed: `install` (a no-op re-run), never `repair` or `upgrade`, which are
    /// what a broken runtime is fixed with.
    pub trust_import_stamp: bool,
}

/// What a failed activation must take back: a version it unpacked, runtimes it built, the
/// directories it created.
#[derive(Default)]
struct Undo {
    version_dir: Option<PathBuf>,
    created_dirs: Vec<PathBuf>,
    provisioned: Vec<Provisioned>,
}

impl Undo {
    fn run(self) {
        for p in self.provisioned.into_iter().rev() {
            p.undo();
        }
        if let Some(dir) = self.version_dir {
            let _ = fs_err::remove_dir_all(dir);
        }
        for dir in self.created_dirs.iter().rev() {
            // Only when empty: it held nothing before this run.
            let _ = fs_err::remove_dir(dir);
        }
    }
}

/// Unpack `bundle` (if needed), provision each adapter's runtime, make the version current
/// and record it all. Returns the adapters, by name, to register. On failure before the
/// version is switched, everything this run unpacked or built is taken back.
pub(crate) fn activate(
    setup: &Setup,
    state: &mut InstallState,
    source: Checked<'_>,
    runtimes: Runtimes<'_>,
    progress: &dyn Progress,
    report: &mut Report,
) -> Result<Vec<String>, SetupError> {
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
    let mut undo = Undo::default();
    for created in [layout.versions_dir(), layout.runtimes_dir()] {
        if !created.exists() {
            undo.created_dirs.push(created);
        }
    }
    if unpacking {
        report.step(format!("unpack {origin} into {}", dir.display()));
        if !setup.dry_run {
            progress.step(&format!("unpacking scimcp {version}"));
            if !dir.exists() {
                undo.version_dir = Some(dir.clone());
            }
            if let Err(e) = unpack(layout, bundle) {
                undo.run();
                return Err(e);
            }
        }
    }
    let prepared = match prepare(setup, state, &dir, runtimes, progress, report, &mut undo) {
        Ok(p) => p,
        Err(e) => {
            undo.run();
            return Err(e);
        }
    };
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
            if let Err(e) = crate::current::switch(layout, version) {
                undo.run();
                return Err(SetupError::io("switching", layout.current())(e));
            }
            checkpoint();
        }
    }
    if state.active.as_deref() != Some(key.as_str()) {
        if let Some(old) = state.active.take() {
            state.previous = Some(old);
        }
        state.active = Some(key.clone());
    }
    // Past the switch: what was built is in use now.
    for p in std::mem::take(&mut undo.provisioned) {
        p.commit();
    }
    let mut names = Vec::new();
    for (mut adapter, runtime, packages) in prepared {
        if !setup.dry_run {
            adapter.commit()?;
        }
        let name = adapter.name.clone();
        let server = setup.server(state, &adapter.serve_arg);
        let record = state
            .adapters
            .entry(name.clone())
            .or_insert_with(|| AdapterRecord {
                source: adapter.source.clone(),
                server: None,
                clients: Default::default(),
                packages: PackageSources::default(),
            });
        record.source = adapter.source.clone();
        record.server = Some(server);
        record.packages = packages;
        if let Some(runtime) = runtime {
            if state.runtimes.get(&name) != Some(&runtime) {
                report.step(format!("use the {name} runtime {}", runtime.dir.display()));
            }
            state.runtimes.insert(name.clone(), runtime.clone());
            if let Some(v) = state.versions.get_mut(&key) {
                v.runtimes.insert(name.clone(), runtime);
            }
        }
        names.push(name);
    }
    Ok(names)
}

/// An adapter ready to be recorded: the manifest, its runtime (`None` when skipped or not
/// a Python adapter) and the package sources it was provisioned from.
type Prepared = (
    Resolved,
    Option<scimcp_core::install_state::RuntimeRecord>,
    PackageSources,
);

/// Resolve each target for the version at `version_dir` and provision its runtime (unless
/// skipped). Built runtimes go into `undo` until the caller commits them.
fn prepare(
    setup: &Setup,
    state: &InstallState,
    version_dir: &Path,
    runtimes: Runtimes<'_>,
    progress: &dyn Progress,
    report: &mut Report,
    undo: &mut Undo,
) -> Result<Vec<Prepared>, SetupError> {
    let layout = &setup.layout;
    let mut resolved: Vec<Resolved> = Vec::new();
    for target in &runtimes.targets {
        let adapter = match target {
            Target::Request(arg) if setup.dry_run && crate::adapters::is_path(arg) => {
                // A dry run copies nothing: read the manifest where it is.
                let path = std::path::absolute(arg).unwrap_or_else(|_| PathBuf::from(arg));
                let adapter =
                    scimcp_core::manifest::load_file(&path).map_err(|e| SetupError::Manifest {
                        path: path.clone(),
                        message: e.to_string(),
                    })?;
                report.step(format!(
                    "copy the adapter {} from {} into {}",
                    adapter.manifest.name,
                    path.display(),
                    layout.adapters_dir().join(&adapter.manifest.name).display()
                ));
                crate::adapters::unstaged(layout, &path, adapter.manifest)
            }
            Target::Request(arg) => crate::adapters::request(layout, version_dir, arg)?,
            Target::Installed(name) => match state.adapters.get(name) {
                Some(record) => crate::adapters::recorded(layout, version_dir, name, record)?,
                None => crate::adapters::shipped(version_dir, name)?,
            },
        };
        // A remote server registered under this adapter's entry name would share its
        // entry in every client.
        let entry = entry_name(&adapter.name);
        if let Some(remote) = state.remotes.get(&entry) {
            return Err(SetupError::AdapterNameTaken {
                adapter: adapter.name.clone(),
                entry,
                url: remote.url.clone(),
            });
        }
        if !resolved.iter().any(|r| r.name == adapter.name) {
            resolved.push(adapter);
        }
    }
    let mut out = Vec::new();
    let several = resolved.len() > 1;
    for adapter in resolved {
        let packages = if runtimes.packages.given() {
            PackageSources {
                find_links: runtimes
                    .packages
                    .find_links
                    .iter()
                    .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
                    .collect(),
                index_url: runtimes.packages.index_url.clone(),
                no_index: runtimes.packages.no_index,
            }
        } else {
            state
                .adapters
                .get(&adapter.name)
                .map(|a| a.packages.clone())
                .unwrap_or_default()
        };
        if runtimes.skip_runtime {
            report.step(format!(
                "skip the {} runtime (--skip-runtime)",
                adapter.name
            ));
            let kept = state.runtimes.get(&adapter.name).cloned();
            out.push((adapter, kept, packages));
            continue;
        }
        if setup.dry_run {
            report.step(format!(
                "provision (or reuse) the {} runtime under {}",
                adapter.name,
                layout.runtimes_dir().display()
            ));
            let kept = state.runtimes.get(&adapter.name).cloned();
            out.push((adapter, kept, packages));
            continue;
        }
        let request = |python| crate::runtime::Request {
            manifest: &adapter.manifest,
            package_base: &adapter.package_base,
            python,
            packages: &packages,
            trust_import_stamp: runtimes.trust_import_stamp,
        };
        let mut result =
            crate::runtime::provision(&setup.host, layout, request(runtimes.python), progress);
        // `--python` given for several adapters applies to those whose range it meets; the
        // others find their own.
        if several
            && let Err(ProvisionError::Interpreter(
                e @ crate::runtime::InterpreterError::Unsuitable { .. },
            )) = &result
        {
            report
                .notes
                .push(format!("{e}: looking for another one for {}", adapter.name));
            result = crate::runtime::provision(&setup.host, layout, request(None), progress);
        }
        progress.finish();
        let provisioned = result?;
        let record = match provisioned {
            Some(p) => {
                let c = &p.choice;
                report.step(format!(
                    "{} Python {} at {} for {} ({})",
                    if p.built { "use" } else { "keep" },
                    c.interpreter.version,
                    c.interpreter.path.display(),
                    adapter.name,
                    c.reason
                ));
                let record = p.record.clone();
                undo.provisioned.push(p);
                Some(record)
            }
            None => None,
        };
        report.notes.extend(crate::runtime::missing_programs(
            &adapter.manifest,
            record.as_ref().map(|r| r.interpreter.as_path()),
        ));
        out.push((adapter, record, packages));
    }
    Ok(out)
}

/// Settle the data folders the server may read datasets from: `chosen` (`--data-dir`) when
/// given, else the recorded ones, else the default one; record them. Returns the ones that
/// do not exist yet (created by [`create_data_folders`] once the runtimes are in place).
/// They are the user's folders: nothing here ever deletes one.
pub(crate) fn data_folders(
    setup: &Setup,
    state: &mut InstallState,
    chosen: &[PathBuf],
) -> Result<Vec<PathBuf>, SetupError> {
    if !chosen.is_empty() {
        state.data_dirs = chosen
            .iter()
            .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
            .collect();
    }
    let dirs = setup.data_dirs(state);
    state.data_dirs = dirs.clone();
    let mut missing = Vec::new();
    for dir in dirs {
        match fs_err::metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(SetupError::DataDirNotADirectory(dir)),
            Err(_) => missing.push(dir),
        }
    }
    Ok(missing)
}

/// Create the data folders [`data_folders`] found missing.
pub(crate) fn create_data_folders(
    setup: &Setup,
    missing: &[PathBuf],
    report: &mut Report,
) -> Result<(), SetupError> {
    for dir in missing {
        report.step(format!("create your data folder {}", dir.display()));
        if !setup.dry_run {
            fs_err::create_dir_all(dir).map_err(SetupError::io("creating", dir))?;
        }
    }
    Ok(())
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
