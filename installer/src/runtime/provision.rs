//! Creating (or reusing) the virtual environment of one adapter.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use scimcp_core::install_state::{PackageRecord, RuntimeRecord};
use scimcp_core::manifest::Manifest;
use scimcp_core::runtime_probe::{RUNTIME_PROBE_SCRIPT, RuntimeProbe, requirement_names};

use super::interpreter::{Interpreter, InterpreterError, find_interpreter};
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

/// Provision (or reuse) the runtime of `manifest` for the version unpacked at `version_dir`.
/// `Ok(None)` for adapters that need no provisioning (`kind = "executable"`).
pub fn provision(
    host: &Host,
    layout: &Layout,
    manifest: &Manifest,
    version_dir: &Path,
    explicit_python: Option<&Path>,
    progress: &dyn Progress,
) -> Result<Option<RuntimeRecord>, ProvisionError> {
    let rt = &manifest.runtime;
    if rt.kind != scimcp_core::RuntimeKind::Python {
        return Ok(None);
    }
    progress.step(&format!(
        "finding Python {} for {}",
        rt.python.as_deref().unwrap_or("3"),
        manifest.name
    ));
    let interpreter =
        find_interpreter(host, rt.python.as_deref().unwrap_or(">=3"), explicit_python)?;
    let source = match &rt.package_source {
        Some(rel) => {
            let path = version_dir.join(rel);
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
        .map_err(io_err("hashing the package source", version_dir))?;
    let key = runtime_key(
        &rt.requirements,
        &interpreter.version,
        source_sha.as_deref(),
    );
    let dir = layout
        .runtimes_dir()
        .join(format!("{}-{}", manifest.name, &key[..16]));
    if let Some(record) = reusable(&dir, &key) {
        // A complete directory may still have been damaged since (a package downgraded by
        // hand, an edited module): reuse it only when it still answers exactly as recorded,
        // so `repair` rebuilds what the doctor reports as broken.
        if still_sound(&dir, manifest, &interpreter, &key, &record) {
            return Ok(Some(record));
        }
    }
    if dir.exists() {
        fs_err::remove_dir_all(&dir).map_err(io_err("removing an incomplete runtime", &dir))?;
    }
    fs_err::create_dir_all(layout.runtimes_dir())
        .map_err(io_err("creating", &layout.runtimes_dir()))?;
    checkpoint();
    let uv = host.which("uv");
    let python = venv_python(&dir, host.platform);
    progress.step(&format!(
        "creating the {} runtime with Python {}",
        manifest.name, interpreter.version
    ));
    // From here on a failure removes the half-made directory: the runtime in use (another
    // directory) and everything else stay as they were.
    let built = build(
        BuildArgs {
            dir: &dir,
            python: &python,
            uv: uv.as_deref(),
            interpreter: &interpreter,
            manifest,
            source: source.as_deref(),
            layout,
            key: &key,
        },
        progress,
    );
    if built.is_err() {
        let _ = fs_err::remove_dir_all(&dir);
    }
    built.map(Some)
}

/// What [`build`] needs.
struct BuildArgs<'a> {
    dir: &'a Path,
    python: &'a Path,
    uv: Option<&'a Path>,
    interpreter: &'a Interpreter,
    manifest: &'a Manifest,
    source: Option<&'a Path>,
    layout: &'a Layout,
    key: &'a str,
}

/// Create the environment, install the pins and the package, check it, write the marker.
fn build(args: BuildArgs<'_>, progress: &dyn Progress) -> Result<RuntimeRecord, ProvisionError> {
    let BuildArgs {
        dir,
        python,
        uv,
        interpreter,
        manifest,
        source,
        layout,
        key,
    } = args;
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
            let mut c = Command::new(&interpreter.path);
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
        let mut cmd = pip(uv, python);
        cmd.args(&rt.requirements);
        run(
            "pip install",
            cmd,
            crate::steps::PIP,
            progress,
            "Check your network connection and disk space",
        )?;
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
        let mut cmd = pip(uv, python);
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
    let record = check(
        dir,
        python,
        manifest,
        interpreter,
        key,
        uv.is_some(),
        progress,
    )?;
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
/// exactly as `record` says it was provisioned.
fn still_sound(
    dir: &Path,
    manifest: &Manifest,
    interpreter: &Interpreter,
    key: &str,
    record: &RuntimeRecord,
) -> bool {
    let used_uv = record.provisioner == "uv";
    match check(
        dir,
        &record.interpreter,
        manifest,
        interpreter,
        key,
        used_uv,
        &crate::progress::Silent,
    ) {
        Ok(now) => now.versions == record.versions && now.package == record.package,
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

fn pip(uv: Option<&Path>, python: &Path) -> Command {
    match uv {
        Some(uv) => {
            let mut c = Command::new(uv);
            c.args(["pip", "install", "--quiet", "--python"])
                .arg(python);
            c
        }
        None => {
            let mut c = Command::new(python);
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

/// Probe the new runtime: pins at their exact versions, the package identity, the imports.
fn check(
    dir: &Path,
    python: &Path,
    manifest: &Manifest,
    interpreter: &Interpreter,
    key: &str,
    used_uv: bool,
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
    })
}
