//! Creating (or reusing) the virtual environment of one adapter.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use scimcp_core::install_state::{PackageRecord, PackageSources, RuntimeRecord};
use scimcp_core::manifest::Manifest;
use scimcp_core::runtime_probe::{RUNTIME_PROBE_SCRIPT, RuntimeProbe, requirement_names};
use scimcp_setup_model::runtime_files;

use super::interpreter::{Choice, Interpreter, InterpreterError, find_interpreter};
use crate::faults::checkpoint;
use crate::host::{Host, Platform};
use crate::layout::Layout;
use crate::progress::Progress;

/// The marker that makes a runtime directory complete.
const MARKER: &str = ".scimcp-runtime.json";

/// Why a runtime could not be provisioned.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    #[error(transparent)]
    Interpreter(#[from] InterpreterError),
    #[error(
        "the adapter's package source {path} is missing from the installed version; run `scimcp-setup repair`"
    )]
    NoSource { path: PathBuf },
    #[error("{action} failed at {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{error}\nNothing was changed in your clients or in the runtime in use. {hint}, then run \
         `scimcp-setup repair` (set {} to allow a slow step more seconds)",
        crate::steps::TIMEOUT_ENV
    )]
    Step {
        error: scimcp_process::ProcessError,
        hint: &'static str,
    },
    #[error("the new runtime at {dir} is not usable: {message}; run `scimcp-setup repair`")]
    Check { dir: PathBuf, message: String },
    #[error(transparent)]
    Unavailable(Box<Unavailable>),
}

/// A requirement with no distribution (no wheel, for a binary-only adapter) that fits this
/// Python and platform where pip looked.
#[derive(Debug, thiserror::Error)]
#[error(
    "{requirement} cannot be installed for {adapter}: there is no {kind} of it for CPython \
     {python} on {platform} {place} (`{said}`).\n{advice}\nNothing was installed: the runtime \
     in use and every client file are as they were."
)]
pub struct Unavailable {
    pub adapter: String,
    pub requirement: String,
    /// `wheel` (binary-only installs) or `distribution`.
    pub kind: &'static str,
    pub python: String,
    pub platform: String,
    /// Where pip looked: `on PyPI`, `in the wheelhouse DIR`, …
    pub place: String,
    /// The installer's own words.
    pub said: String,
    pub advice: String,
}

fn io_err<'p>(
    action: &'static str,
    path: &'p Path,
) -> impl FnOnce(std::io::Error) -> ProvisionError + 'p {
    move |source| ProvisionError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// SHA-256 over sorted `relpath\0sha256\n` of every file under `dir` (caches excluded).
fn tree_sha256(dir: &Path) -> std::io::Result<String> {
    let mut lines = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d)? {
            let path = entry?.path();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name == "__pycache__"
                || name.ends_with(".pyc")
                || name.ends_with(".egg-info")
                || name == "build"
            {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/");
                let (sha, _) = scimcp_core::hash::sha256_file(&path)?;
                lines.push(format!("{rel}\0{sha}\n"));
            }
        }
    }
    lines.sort();
    Ok(scimcp_core::hash::sha256_hex(lines.concat().as_bytes()))
}

/// The runtime key: a hash of the pins, the interpreter version and the package source.
pub fn runtime_key(
    requirements: &[String],
    python: &semver::Version,
    source_sha256: Option<&str>,
) -> String {
    let mut pins = requirements.to_vec();
    pins.sort();
    scimcp_core::hash::canonical_sha256(&serde_json::json!({
        "requirements": pins,
        "python": python.to_string(),
        "package_source_sha256": source_sha256,
    }))
}

fn venv_python(dir: &Path, platform: Platform) -> PathBuf {
    match platform {
        Platform::Windows => dir.join("Scripts").join("python.exe"),
        _ => dir.join("bin").join("python"),
    }
}

/// What to provision.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub manifest: &'a Manifest,
    /// The directory `runtime.package_source` is relative to (a version's root, or the
    /// directory of a copied manifest).
    pub package_base: &'a Path,
    /// `--python`: the interpreter to use (it must be within the adapter's range).
    pub python: Option<&'a Path>,
    /// Where packages come from (wheelhouses, another index, no index).
    pub packages: &'a PackageSources,
    /// Whether a reused runtime whose files are exactly as when its import check last passed
    /// (the import stamp) may skip that check: `install` only (see `runtime/stamp.rs`).
    pub trust_import_stamp: bool,
}

/// A runtime ready for use: reused as it was, or newly built. A new one is undone (removed,
/// and whatever was at its path before put back) when a later step of the same command
/// fails, so a failed command leaves every runtime as it found it.
#[derive(Debug)]
pub struct Provisioned {
    pub record: RuntimeRecord,
    /// The interpreter chosen this time (a reused runtime keeps the one it was built from).
    pub choice: Choice,
    /// Whether this call built the directory.
    pub built: bool,
    /// What was at the runtime's path before (a damaged or unfinished copy), moved aside.
    aside: Option<Aside>,
}

#[derive(Debug)]
struct Aside {
    /// Keeps the scratch directory holding `old` until commit or undo.
    scratch: tempfile::TempDir,
    old: PathBuf,
}

impl Provisioned {
    /// Keep the new runtime: drop whatever it replaced.
    pub fn commit(self) {
        if let Some(aside) = self.aside {
            let _ = fs_err::remove_dir_all(&aside.old);
            drop(aside.scratch);
        }
    }

    /// Remove a runtime this command built and put back what was there before.
    pub fn undo(self) {
        if !self.built {
            return;
        }
        let _ = fs_err::remove_dir_all(&self.record.dir);
        if let Some(aside) = self.aside {
            let _ = fs_err::rename(&aside.old, &self.record.dir);
            drop(aside.scratch);
        }
    }
}

/// Provision (or reuse) the runtime `request` describes. `Ok(None)` for adapters that need
/// no provisioning (`kind = "executable"`).
pub fn provision(
    host: &Host,
    layout: &Layout,
    request: Request<'_>,
    progress: &dyn Progress,
) -> Result<Option<Provisioned>, ProvisionError> {
    let Request {
        manifest,
        package_base,
        python: explicit_python,
        packages,
        trust_import_stamp,
    } = request;
    let rt = &manifest.runtime;
    if rt.kind != scimcp_core::RuntimeKind::Python {
        return Ok(None);
    }
    let requirement = rt.python.as_deref().unwrap_or(">=3");
    progress.step(&format!(
        "finding Python {requirement} for {}",
        manifest.name
    ));
    let choice = find_interpreter(host, &manifest.name, requirement, explicit_python, progress)?;
    let interpreter = choice.interpreter.clone();
    let source = match &rt.package_source {
        Some(rel) => {
            let path = package_base.join(rel);
            if !path.is_dir() {
                return Err(ProvisionError::NoSource { path });
            }
            Some(path)
        }
        None => None,
    };
    let source_sha = source
        .as_deref()
        .map(tree_sha256)
        .transpose()
        .map_err(io_err("hashing the package source", package_base))?;
    let key = runtime_key(
        &rt.requirements,
        &interpreter.version,
        source_sha.as_deref(),
    );
    let dir = layout
        .runtimes_dir()
        .join(format!("{}-{}", manifest.name, &key[..16]));
    if let Some(mut record) = reusable(&dir, &key) {
        // A complete directory may still have been damaged since (a package downgraded by
        // hand, an edited module, a deleted file): reuse it only when it still answers
        // exactly as recorded, so `repair` rebuilds what the doctor reports as broken.
        progress.step(&format!("checking the {} runtime", manifest.name));
        if still_sound(
            &dir,
            manifest,
            &interpreter,
            &key,
            &record,
            trust_import_stamp,
        ) {
            if record.base.is_none() {
                record.base = Some(choice.record());
            }
            return Ok(Some(Provisioned {
                record,
                choice,
                built: false,
                aside: None,
            }));
        }
    }
    fs_err::create_dir_all(layout.runtimes_dir())
        .map_err(io_err("creating", &layout.runtimes_dir()))?;
    // What is there (damaged, or unfinished by a killed run) is moved aside, not deleted:
    // if the rebuild fails it is put back, so a failed repair changes nothing.
    let aside = if fs_err::symlink_metadata(&dir).is_ok() {
        let scratch_root = layout.scratch_dir();
        fs_err::create_dir_all(&scratch_root).map_err(io_err("creating", &scratch_root))?;
        let scratch = tempfile::Builder::new()
            .prefix("runtime-")
            .tempdir_in(&scratch_root)
            .map_err(io_err("creating a scratch directory in", &scratch_root))?;
        let old = scratch.path().join("old");
        fs_err::rename(&dir, &old).map_err(io_err("moving aside", &dir))?;
        Some(Aside { scratch, old })
    } else {
        None
    };
    checkpoint();
    let uv = host.which("uv");
    let python = venv_python(&dir, host.platform);
    progress.step(&format!(
        "creating the {} runtime with Python {}",
        manifest.name, interpreter.version
    ));
    // From here on a failure removes the half-made directory and puts back what was there:
    // the runtime in use (another directory) and everything else stay as they were.
    let built = build(
        BuildArgs {
            dir: &dir,
            python: &python,
            uv: uv.as_deref(),
            choice: &choice,
            manifest,
            source: source.as_deref(),
            layout,
            key: &key,
            packages,
        },
        progress,
    );
    let provisioned = Provisioned {
        record: RuntimeRecord {
            interpreter: python.clone(),
            dir: dir.clone(),
            requirements_hash: key.clone(),
            requirements: Vec::new(),
            python_version: String::new(),
            provisioner: String::new(),
            versions: BTreeMap::new(),
            package: None,
            base: None,
        },
        choice: choice.clone(),
        built: true,
        aside,
    };
    match built {
        Ok(record) => Ok(Some(Provisioned {
            record,
            ..provisioned
        })),
        Err(e) => {
            provisioned.undo();
            Err(e)
        }
    }
}

/// What [`build`] needs.
struct BuildArgs<'a> {
    dir: &'a Path,
    python: &'a Path,
    uv: Option<&'a Path>,
    choice: &'a Choice,
    manifest: &'a Manifest,
    source: Option<&'a Path>,
    layout: &'a Layout,
    key: &'a str,
    packages: &'a PackageSources,
}

/// Create the environment, install the pins and the package, check it, write the marker.
fn build(args: BuildArgs<'_>, progress: &dyn Progress) -> Result<RuntimeRecord, ProvisionError> {
    let BuildArgs {
        dir,
        python,
        uv,
        choice,
        manifest,
        source,
        layout,
        key,
        packages,
    } = args;
    let interpreter = &choice.interpreter;
    let rt = &manifest.runtime;
    let venv = match uv {
        Some(uv) => {
            let mut c = Command::new(uv);
            c.args(["venv", "--quiet", "--python"])
                .arg(&interpreter.path)
                .arg(dir);
            c
        }
        None => {
            // Isolated, so a user's PYTHONPATH or user site cannot change the venv module.
            let mut c = scimcp_process::python_command(&interpreter.path);
            c.args(["-m", "venv"]).arg(dir);
            c
        }
    };
    run(
        "creating the virtual environment",
        venv,
        crate::steps::VENV,
        progress,
        "Check your disk space",
    )?;
    private_dir(dir)?;
    checkpoint();
    progress.step(&format!(
        "installing {} pinned packages (this can take a few minutes)",
        rt.requirements.len()
    ));
    if !rt.requirements.is_empty() {
        let mut cmd = pip(uv, python, packages);
        if rt.binary_only {
            cmd.args(["--only-binary", ":all:"]);
        }
        cmd.args(&rt.requirements);
        run(
            "pip install",
            cmd,
            crate::steps::PIP,
            progress,
            "Check your network connection and disk space",
        )
        .map_err(|e| unavailable(e, manifest, interpreter, packages))?;
    }
    if let Some(src) = source {
        progress.step(&format!(
            "installing {}",
            rt.package.as_deref().unwrap_or(&manifest.name)
        ));
        // Build from a scratch copy: pip's in-tree build would leave build/ and *.egg-info
        // inside the installed version.
        let scratch = tempfile::Builder::new()
            .prefix("pkg-")
            .tempdir_in({
                let s = layout.scratch_dir();
                fs_err::create_dir_all(&s).map_err(io_err("creating", &s))?;
                s
            })
            .map_err(io_err(
                "creating a scratch directory",
                &layout.scratch_dir(),
            ))?;
        let copy = scratch.path().join("src");
        crate::bundle::copy_tree(src, &copy).map_err(|e| ProvisionError::Io {
            action: "copying the package source",
            path: src.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })?;
        let mut cmd = pip(uv, python, packages);
        cmd.arg("--no-deps").arg(&copy);
        run(
            "pip install of the adapter's package",
            cmd,
            crate::steps::PIP,
            progress,
            "Check your disk space",
        )?;
    }
    checkpoint();
    progress.step("checking the runtime");
    let mut record = check(
        dir,
        python,
        manifest,
        interpreter,
        key,
        uv.is_some(),
        false,
        progress,
    )?;
    record.base = Some(choice.record());
    let mut bytes = serde_json::to_vec_pretty(&record).expect("JSON");
    bytes.push(b'\n');
    scimcp_core::fs::write_atomic(&dir.join(MARKER), &bytes, scimcp_core::fs::Privacy::Private)
        .map_err(|e| ProvisionError::Io {
            action: "recording",
            path: dir.join(MARKER),
            source: std::io::Error::other(e.to_string()),
        })?;
    Ok(record)
}

/// The recorded runtime in `dir`, if it is complete, for `key`, and its interpreter exists.
fn reusable(dir: &Path, key: &str) -> Option<RuntimeRecord> {
    let bytes =
        scimcp_core::fs::read_regular(&dir.join(MARKER), scimcp_core::fs::CONFIG_READ_LIMIT)
            .ok()??;
    let record: RuntimeRecord = serde_json::from_slice(&bytes).ok()?;
    (record.requirements_hash == key && record.interpreter.is_file()).then_some(record)
}

/// Whether the runtime in `dir` still has its pins, its package identity and its imports,
/// exactly as `record` says it was provisioned (the imports proven by the import stamp when
/// `trust_import_stamp`).
fn still_sound(
    dir: &Path,
    manifest: &Manifest,
    interpreter: &Interpreter,
    key: &str,
    record: &RuntimeRecord,
    trust_import_stamp: bool,
) -> bool {
    let used_uv = record.provisioner == "uv";
    match check(
        dir,
        &record.interpreter,
        manifest,
        interpreter,
        key,
        used_uv,
        trust_import_stamp,
        &crate::progress::Silent,
    ) {
        Ok(now) => {
            now.versions == record.versions
                && now.package == record.package
                && runtime_files::check_files(
                    dir,
                    &requirement_names(&manifest.runtime.requirements),
                )
                .problems
                .is_empty()
        }
        Err(_) => false,
    }
}

fn private_dir(dir: &Path) -> Result<(), ProvisionError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io_err("restricting", dir))?;
    }
    let _ = dir;
    Ok(())
}

/// `pip install` (or `uv pip install`) into `python`'s environment, from `packages`.
fn pip(uv: Option<&Path>, python: &Path, packages: &PackageSources) -> Command {
    let mut cmd = pip_base(uv, python);
    for dir in &packages.find_links {
        cmd.arg("--find-links").arg(dir);
    }
    if let Some(url) = &packages.index_url {
        cmd.args(["--index-url", url]);
    }
    if packages.no_index {
        cmd.arg("--no-index");
    }
    cmd
}

fn pip_base(uv: Option<&Path>, python: &Path) -> Command {
    match uv {
        Some(uv) => {
            let mut c = Command::new(uv);
            c.args(["pip", "install", "--quiet", "--python"])
                .arg(python);
            c
        }
        None => {
            let mut c = scimcp_process::python_command(python);
            c.args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
            ]);
            c
        }
    }
}

/// Run one provisioning step under its time limit; `hint` says what to check if it fails.
fn run(
    name: &str,
    mut cmd: Command,
    limit: std::time::Duration,
    progress: &dyn Progress,
    hint: &'static str,
) -> Result<(), ProvisionError> {
    for var in [
        "PYTHONHOME",
        "PYTHONPATH",
        "VIRTUAL_ENV",
        "PIP_REQUIRE_VIRTUALENV",
    ] {
        cmd.env_remove(var);
    }
    crate::steps::run(name, cmd, limit, Some(progress))
        .map(|_| ())
        .map_err(|error| ProvisionError::Step { error, hint })
}

/// Probe the new runtime: pins at their exact versions, the package identity, the imports
/// (skipped when `trust_import_stamp` and not one file changed since they last passed).
#[allow(clippy::too_many_arguments)]
fn check(
    dir: &Path,
    python: &Path,
    manifest: &Manifest,
    interpreter: &Interpreter,
    key: &str,
    used_uv: bool,
    trust_import_stamp: bool,
    progress: &dyn Progress,
) -> Result<RuntimeRecord, ProvisionError> {
    let rt = &manifest.runtime;
    let fail = |message: String| ProvisionError::Check {
        dir: dir.to_path_buf(),
        message,
    };
    let mut probe = scimcp_process::python_command(python);
    probe
        .args(["-c", RUNTIME_PROBE_SCRIPT])
        .arg(rt.package.clone().unwrap_or_default())
        .args(requirement_names(&rt.requirements));
    let out = crate::steps::run(
        "the runtime probe",
        probe,
        crate::steps::QUERY,
        Some(progress),
    )
    .map_err(|error| ProvisionError::Step {
        error,
        hint: "The new runtime does not answer",
    })?;
    let probe: RuntimeProbe = serde_json::from_str(out.stdout.trim())
        .map_err(|e| fail(format!("unexpected probe output: {e}")))?;
    for pin in scimcp_core::pins::applicable(&rt.requirements) {
        let got = probe.versions.get(&pin.name).cloned().flatten();
        if got.as_deref() != Some(pin.version.as_str()) {
            return Err(fail(format!(
                "{} is {got:?}, expected {}",
                pin.name, pin.version
            )));
        }
    }
    if !rt.import_check.is_empty() {
        // Taken before the check runs: a file changed during it makes the next one run too.
        let stamp = super::stamp::compute(
            dir,
            python,
            &rt.import_check,
            &[MARKER, super::stamp::STAMP],
        );
        let proven = trust_import_stamp
            && stamp.is_some()
            && super::stamp::recorded(dir).as_deref() == stamp.as_deref();
        if !proven {
            super::stamp::clear(dir);
            let imports = format!("import {}", rt.import_check.join(", "));
            let mut cmd = scimcp_process::python_command(python);
            cmd.args(["-c", &imports]);
            crate::steps::run(
                "the import check",
                cmd,
                crate::steps::IMPORT,
                Some(progress),
            )
            .map_err(|error| ProvisionError::Step {
                error,
                hint: "A scientific module of the new runtime does not import",
            })?;
            if let Some(stamp) = &stamp {
                super::stamp::record(dir, stamp);
            }
        }
    }
    let absolute = std::path::absolute(python).unwrap_or_else(|_| python.to_path_buf());
    Ok(RuntimeRecord {
        interpreter: absolute,
        dir: dir.to_path_buf(),
        requirements_hash: key.to_string(),
        requirements: rt.requirements.clone(),
        python_version: interpreter.version.to_string(),
        provisioner: if used_uv { "uv" } else { "venv+pip" }.into(),
        versions: probe.versions.into_iter().collect::<BTreeMap<_, _>>(),
        package: probe.package.map(|p| PackageRecord {
            name: p.name,
            version: p.version,
            files: p.files,
            sha256: p.sha256,
        }),
        base: None,
    })
}

/// The operating system and machine, as people name them (`linux x86_64`, `macos aarch64`).
pub fn platform_text() -> String {
    format!("{} {}", std::env::consts::OS, std::env::consts::ARCH)
}

/// A failed `pip install` of the pins as [`ProvisionError::Unavailable`] when pip (or uv)
/// says a requirement has no distribution (no wheel, for a binary-only adapter) that fits
/// this Python and platform; any other failure as it was.
fn unavailable(
    error: ProvisionError,
    manifest: &Manifest,
    interpreter: &Interpreter,
    packages: &PackageSources,
) -> ProvisionError {
    let ProvisionError::Step {
        error: scimcp_process::ProcessError::Failed { tail, .. },
        ..
    } = &error
    else {
        return error;
    };
    let Some((requirement, said)) = unavailable_requirement(tail, &manifest.runtime.requirements)
    else {
        return error;
    };
    let rt = &manifest.runtime;
    let python = interpreter.version.to_string();
    let platform = platform_text();
    let range = rt.python.as_deref().unwrap_or(">=3");
    let dirs = packages
        .find_links
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let index = packages
        .index_url
        .clone()
        .unwrap_or_else(|| "PyPI".to_string());
    let place = match (packages.no_index, dirs.is_empty()) {
        (true, _) => format!("in the wheelhouse {dirs}"),
        (false, true) => format!("on {index}"),
        (false, false) => format!("on {index} or in the wheelhouse {dirs}"),
    };
    let advice = if rt.binary_only {
        format!(
            "{adapter} installs from wheels only (binary_only: nothing is built from source). \
             Check that {requirement} publishes a wheel for Python {python} on {platform} (the \
             adapter asks for Python {range}); in an air-gapped lab, put such a wheel into a \
             folder and pass --find-links DIR",
            adapter = manifest.name
        )
    } else {
        format!(
            "Check that {requirement} exists for Python {python} (the adapter asks for Python \
             {range}), your network and index (--index-url URL), or give a wheelhouse with \
             --find-links DIR"
        )
    };
    ProvisionError::Unavailable(Box::new(Unavailable {
        adapter: manifest.name.clone(),
        requirement,
        kind: if rt.binary_only {
            "wheel"
        } else {
            "distribution"
        },
        python,
        platform,
        place,
        said,
        advice,
    }))
}

/// What pip and uv say when no distribution fits (lower case).
const UNAVAILABLE: &[&str] = &[
    "no matching distribution found for ",
    "could not find a version that satisfies the requirement ",
    "has no usable wheels",
    "has no wheels",
    "there is no version of ",
    "no wheels with a matching",
];

/// The requirement pip's (or uv's) output says cannot be installed, and the line saying it.
pub fn unavailable_requirement(output: &str, requirements: &[String]) -> Option<(String, String)> {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| {
            let lower = l.to_lowercase();
            UNAVAILABLE.iter().any(|m| lower.contains(m))
        })
        .collect();
    let said = lines.last()?.trim_start_matches("ERROR: ").to_string();
    let pins = scimcp_core::pins::applicable(requirements);
    for line in lines.iter().rev() {
        let text = runtime_files::normalize(&line.replace("==", " EQ "));
        for (pin, raw) in pins.iter().zip(requirements) {
            let wanted = runtime_files::normalize(&format!("{} EQ {}", pin.name, pin.version));
            if text.contains(&wanted) {
                let requirement = raw.split(';').next().unwrap_or(raw).trim().to_string();
                return Some((requirement, said));
            }
        }
    }
    // A dependency that is not pinned: the text after pip's words.
    let lower = said.to_lowercase();
    for marker in &UNAVAILABLE[..2] {
        if let Some(at) = lower.find(marker) {
            let rest = said[at + marker.len()..].trim();
            let requirement = rest.split(" (").next().unwrap_or(rest).trim().to_string();
            if !requirement.is_empty() {
                return Some((requirement, said.clone()));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_requirement_pip_or_uv_cannot_install() {
        let pins = vec![
            "six==1.16.0".to_string(),
            "Docopt==0.6.2".to_string(),
            "basemap==1.3.8; sys_platform != \"darwin\"".to_string(),
        ];
        let pip = "ERROR: Could not find a version that satisfies the requirement docopt==0.6.2 (from versions: none)\nERROR: No matching distribution found for docopt==0.6.2";
        assert_eq!(
            unavailable_requirement(pip, &pins),
            Some((
                "Docopt==0.6.2".to_string(),
                "No matching distribution found for docopt==0.6.2".to_string()
            ))
        );
        let uv = "  × No solution found when resolving dependencies:\n  ╰─▶ Because docopt==0.6.2 has no usable wheels and building from source is disabled, we can conclude that docopt==0.6.2 cannot be used.";
        assert_eq!(
            unavailable_requirement(uv, &pins).unwrap().0,
            "Docopt==0.6.2"
        );
        let transitive = "ERROR: No matching distribution found for numpy<2,>=1.20 (from demo)";
        assert_eq!(
            unavailable_requirement(transitive, &pins).unwrap().0,
            "numpy<2,>=1.20"
        );
        assert_eq!(unavailable_requirement("ERROR: disk full", &pins), None);
    }
}
