//! The scientific runtime: which program runs the CLI, and what is installed in it.
//!
//! Until the installer records a runtime, the server is told the interpreter with
//! `--python PATH` or `SCIMCP_PYTHON`. A missing or broken interpreter does not stop the
//! server: every tool that needs the runtime reports a blocker naming what is missing.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use scimcp_core::{Adapter, RuntimeKind};
use serde::{Deserialize, Serialize};
use tokio::sync::OnceCell;

use crate::envelope::{ErrorCode, ToolError};

/// How long the environment probe may take (importing nothing heavy, reading metadata).
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// Python that reports the interpreter, the pinned distributions' versions and a hash of the
/// adapter package's source files. argv: package name, then requirement names.
const PROBE_SCRIPT: &str = r#"
import hashlib, json, os, sys
import importlib.metadata as md
import importlib.util
pkg, names = sys.argv[1], sys.argv[2:]
versions = {}
for n in names:
    try:
        versions[n] = md.version(n)
    except md.PackageNotFoundError:
        versions[n] = None
info = {"python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable,
        "implementation": sys.implementation.name, "versions": versions, "package": None}
if pkg:
    entry = {"name": pkg, "version": None, "files": 0, "sha256": None}
    try:
        entry["version"] = md.version(pkg)
    except md.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec(pkg.replace("-", "_"))
    roots = list(spec.submodule_search_locations or []) if spec else []
    h = hashlib.sha256()
    for root in roots:
        for d, dirs, files in os.walk(root):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            for f in sorted(files):
                if f.endswith((".pyc", ".pyo")):
                    continue
                p = os.path.join(d, f)
                rel = os.path.relpath(p, root).replace(os.sep, "/")
                with open(p, "rb") as fh:
                    digest = hashlib.sha256(fh.read()).hexdigest()
                h.update(("%s\0%s\n" % (rel, digest)).encode())
                entry["files"] += 1
    if roots:
        entry["sha256"] = h.hexdigest()
    info["package"] = entry
print(json.dumps(info))
"#;

/// What the probe found in the runtime.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuntimeProbe {
    /// Interpreter version, e.g. `3.11.7`.
    pub python: String,
    pub executable: String,
    pub implementation: String,
    /// Installed version of each pinned distribution (`null` when missing).
    pub versions: std::collections::BTreeMap<String, Option<String>>,
    /// The adapter package's identity.
    pub package: Option<PackageIdentity>,
}

/// The installed adapter package: version and a hash over its source files.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PackageIdentity {
    pub name: String,
    pub version: Option<String>,
    pub files: u64,
    /// SHA-256 over every (relative path, file SHA-256) of the package, sorted.
    pub sha256: Option<String>,
}

/// The scientific runtime the server launches the CLI with.
#[derive(Debug)]
pub struct ScientificRuntime {
    kind: RuntimeKind,
    program: Result<PathBuf, String>,
    launch: Vec<String>,
    package: Option<String>,
    requirement_names: Vec<String>,
    probe: OnceCell<Result<RuntimeProbe, String>>,
}

impl ScientificRuntime {
    /// Decide which program runs `adapter`'s CLI.
    pub fn resolve(adapter: &Adapter, python: Option<PathBuf>) -> ScientificRuntime {
        let rt = &adapter.manifest.runtime;
        let program = match rt.kind {
            RuntimeKind::Python => match python {
                None => Err(format!(
                    "no Python interpreter is configured for the '{}' runtime: start the server with \
                     --python PATH or set SCIMCP_PYTHON to an interpreter that has `{}` and its \
                     pinned requirements installed (scripts/dev-env.sh creates one at .venv)",
                    adapter.manifest.name,
                    rt.package.as_deref().unwrap_or("the adapter package")
                )),
                Some(p) if !p.is_file() => Err(format!(
                    "the configured Python interpreter {} does not exist or is not a file: fix \
                     --python / SCIMCP_PYTHON",
                    p.display()
                )),
                Some(p) => Ok(std::path::absolute(&p).unwrap_or(p)),
            },
            RuntimeKind::Executable => Ok(PathBuf::from(rt.executable.clone().unwrap_or_default())),
        };
        ScientificRuntime {
            kind: rt.kind,
            program,
            launch: rt.launch.clone(),
            package: rt.package.clone(),
            requirement_names: rt
                .requirements
                .iter()
                .filter_map(|r| r.split("==").next().map(str::to_string))
                .collect(),
            probe: OnceCell::new(),
        }
    }

    /// Why the runtime cannot be used, if it cannot.
    pub fn problem(&self) -> Option<&str> {
        self.program.as_ref().err().map(String::as_str)
    }

    /// The program and the launch arguments before a workflow's argv.
    pub fn command_prefix(&self) -> Result<(&Path, &[String]), ToolError> {
        match &self.program {
            Ok(p) => Ok((p.as_path(), &self.launch)),
            Err(problem) => Err(ToolError::new(
                ErrorCode::RuntimeUnavailable,
                problem.clone(),
                "configure the scientific runtime, then restart the server",
            )),
        }
    }

    /// Probe the runtime once (interpreter, versions, package identity) and remember it.
    pub async fn probe(&self) -> Result<RuntimeProbe, ToolError> {
        let result = self.probe.get_or_init(|| self.run_probe()).await;
        result.clone().map_err(|problem| {
            ToolError::new(
                ErrorCode::RuntimeUnavailable,
                problem,
                "fix the scientific runtime (scripts/dev-env.sh rebuilds the development one), then restart the server",
            )
        })
    }

    async fn run_probe(&self) -> Result<RuntimeProbe, String> {
        let program = self.program.clone()?;
        if self.kind != RuntimeKind::Python {
            return Err("environment probing applies to python runtimes only".into());
        }
        let mut cmd = tokio::process::Command::new(&program);
        cmd.arg("-I")
            .arg("-c")
            .arg(PROBE_SCRIPT)
            .arg(self.package.clone().unwrap_or_default())
            .args(&self.requirement_names)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let output = tokio::time::timeout(PROBE_TIMEOUT, cmd.output())
            .await
            .map_err(|_| {
                format!(
                    "probing {} took longer than {PROBE_TIMEOUT:?}",
                    program.display()
                )
            })?
            .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: String = stderr
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            return Err(format!(
                "probing {} failed ({}): {tail}",
                program.display(),
                output.status
            ));
        }
        serde_json::from_slice(&output.stdout)
            .map_err(|e| format!("the runtime probe printed something unexpected: {e}"))
    }
}
