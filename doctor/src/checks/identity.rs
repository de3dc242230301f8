//! `runtime.identity`: the adapter's package in the runtime is byte for byte what setup
//! installed. The probe (the same one `get_environment` runs) gives one aggregate hash over
//! the package's files; when it differs from the recorded one, the changed files are named
//! by hashing each installed file against the package source the installed version ships
//! (`versions/<v>/<package_source>/`, the exact tree setup installed from). Without that
//! source, files modified after the runtime was provisioned are named instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use scimcp_core::RuntimeKind;
use scimcp_core::install_state::RuntimeRecord;

use crate::check::CheckResult;
use crate::context::{Context, sorted_entries};

/// The marker the installer writes last into a provisioned runtime.
const RUNTIME_MARKER: &str = ".scimcp-runtime.json";

pub fn check(ctx: &Context, id: &str, adapter: &str) -> CheckResult {
    let manifest = match ctx.manifest(adapter) {
        Ok(m) => m,
        Err(e) => return CheckResult::skipped(id, e.to_string()),
    };
    let Some(package) = manifest.runtime.package.clone() else {
        return CheckResult::ok(id, "the adapter declares no package: nothing to compare");
    };
    if manifest.runtime.kind != RuntimeKind::Python {
        return CheckResult::ok(id, "the adapter runs an executable: no package to compare");
    }
    let runtime = match ctx.runtime(id, adapter) {
        Ok(r) => r,
        Err(result) => return *result,
    };
    let Some(recorded) = runtime.package.as_ref().and_then(|p| p.sha256.clone()) else {
        // A distribution that is one module (`six.py`) has no import directory to hash; its
        // file is checked against its RECORD with the other pins (runtime.packages).
        if let Some(found) = ctx
            .probe(adapter, runtime)
            .ok()
            .and_then(|p| p.package.as_ref())
            .filter(|p| p.version.is_some() && p.sha256.is_none())
        {
            return CheckResult::ok(
                id,
                format!(
                    "{package} {} is a single module, checked with the other pinned files \
                     (runtime.packages)",
                    found.version.clone().unwrap_or_default()
                ),
            );
        }
        return CheckResult::warn(
            id,
            format!("setup recorded no identity for {package}: nothing to compare against"),
        )
        .remedy("scimcp-setup repair")
        .fixable();
    };
    let probe = match ctx.probe(adapter, runtime) {
        Ok(p) => p,
        Err(_) => {
            return CheckResult::skipped(
                id,
                "the interpreter does not run (see runtime.interpreter)",
            );
        }
    };
    let now = probe.package.as_ref().and_then(|p| p.sha256.clone());
    let fix = |r: CheckResult| r.remedy("scimcp-setup repair").fixable();
    let Some(now) = now else {
        return fix(CheckResult::fail(
            id,
            format!("{package} is not installed in the runtime any more"),
        ));
    };
    let files = probe.package.as_ref().map_or(0, |p| p.files);
    if now == recorded {
        return CheckResult::ok(
            id,
            format!(
                "{package} {}: {files} files, sha256 {} as recorded at setup",
                probe
                    .package
                    .as_ref()
                    .and_then(|p| p.version.clone())
                    .unwrap_or_default(),
                &now[..12.min(now.len())]
            ),
        );
    }
    let changed = changed_files(
        ctx,
        adapter,
        runtime,
        &package,
        manifest.runtime.package_source.as_deref(),
    );
    let finding = if changed.is_empty() {
        format!(
            "{package} changed since setup (sha256 {} → {}; {} files recorded, {files} now)",
            short_hash(&recorded),
            short_hash(&now),
            runtime.package.as_ref().map_or(0, |p| p.files)
        )
    } else {
        format!("{package} changed since setup: {}", changed.join(", "))
    };
    fix(CheckResult::fail(id, finding))
}

fn short_hash(h: &str) -> &str {
    &h[..12.min(h.len())]
}

/// The changed files of the installed package, as `relpath (modified|added|removed)`.
fn changed_files(
    ctx: &Context,
    adapter: &str,
    runtime: &RuntimeRecord,
    package: &str,
    package_source: Option<&str>,
) -> Vec<String> {
    let import_name = package.replace('-', "_");
    let Some(installed) = installed_package_dir(&runtime.dir, &import_name) else {
        return Vec::new();
    };
    let now = file_hashes(&installed);
    let source = package_source.and_then(|rel| {
        let base = ctx.package_base(adapter).join(rel);
        [base.join("src").join(&import_name), base.join(&import_name)]
            .into_iter()
            .find(|d| d.is_dir())
    });
    if let Some(source) = source {
        let was = file_hashes(&source);
        let mut out = Vec::new();
        for (rel, sha) in &now {
            match was.get(rel) {
                Some(old) if old == sha => {}
                Some(_) => out.push(format!("{rel} (modified)")),
                None => out.push(format!("{rel} (added)")),
            }
        }
        // A source file may legitimately not be installed (package data not declared), so
        // only a recorded count larger than today's makes a missing file a removal.
        let recorded = runtime.package.as_ref().map_or(0, |p| p.files);
        if (now.len() as u64) < recorded {
            for rel in was.keys().filter(|r| !now.contains_key(*r)) {
                out.push(format!("{rel} (removed)"));
            }
        }
        return out;
    }
    // No source to compare with (the package came from an index): what pip recorded, then
    // what was written after the runtime was recorded.
    let recorded = recorded_problems(&runtime.dir, package);
    if !recorded.is_empty() {
        return recorded;
    }
    let Some(recorded_at) = mtime(&runtime.dir.join(RUNTIME_MARKER)) else {
        return Vec::new();
    };
    now.keys()
        .filter(|rel| mtime(&installed.join(rel)).is_some_and(|t| t > recorded_at))
        .map(|rel| format!("{rel} (modified after setup)"))
        .collect()
}

/// The package's files that are missing or resized against its own RECORD.
fn recorded_problems(runtime_dir: &Path, package: &str) -> Vec<String> {
    scimcp_setup_model::runtime_files::check_files(runtime_dir, &[package.to_string()])
        .problems
        .into_iter()
        .map(|p| {
            let what = if p.what == "missing" {
                "removed".to_string()
            } else {
                format!("modified: {}", p.what)
            };
            format!("{} ({what})", p.path)
        })
        .collect()
}

fn mtime(path: &Path) -> Option<SystemTime> {
    fs_err::metadata(path).ok()?.modified().ok()
}

/// `<runtime>/lib/python3.X/site-packages/<name>` (Unix) or `<runtime>/Lib/site-packages/<name>`.
fn installed_package_dir(runtime_dir: &Path, import_name: &str) -> Option<PathBuf> {
    let windows = runtime_dir
        .join("Lib")
        .join("site-packages")
        .join(import_name);
    if windows.is_dir() {
        return Some(windows);
    }
    sorted_entries(&runtime_dir.join("lib"))
        .into_iter()
        .map(|d| d.join("site-packages").join(import_name))
        .find(|d| d.is_dir())
}

/// `relpath → sha256` of every file under `dir`, with the probe's exclusions (`__pycache__`,
/// compiled bytecode).
fn file_hashes(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for path in sorted_entries(&d) {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if path.is_dir() {
                if name != "__pycache__" {
                    stack.push(path);
                }
                continue;
            }
            if name.ends_with(".pyc") || name.ends_with(".pyo") {
                continue;
            }
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            let sha = scimcp_core::hash::sha256_file(&path)
                .map(|(s, _)| s)
                .unwrap_or_default();
            out.insert(rel, sha);
        }
    }
    out
}
