//! The runtime probe: a short Python script that reports the interpreter, the pinned
//! distributions' versions and the identity hash of an adapter's package. The installer runs
//! it when it provisions a runtime and records the answer in `state.json`; the server's
//! `get_environment` reports the same identity, so the doctor can compare the two. Both
//! sides must hash the same way, which is why the script lives in this shared crate.
//!
//! Run it as `PYTHON -I -c RUNTIME_PROBE_SCRIPT PACKAGE REQUIREMENT_NAME…`; it prints one
//! JSON object (see [`RuntimeProbe`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The probe script (argv: package name, then requirement names).
pub const RUNTIME_PROBE_SCRIPT: &str = r#"
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
    entry = {"name": pkg, "version": None, "files": 0, "sha256": None, "path": None}
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
        entry["path"] = os.path.realpath(roots[0])
    info["package"] = entry
print(json.dumps(info))
"#;

/// What the probe prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeProbe {
    /// Interpreter version, e.g. `3.11.7`.
    pub python: String,
    pub executable: String,
    pub implementation: String,
    /// Installed version of each named distribution (`null` when missing).
    pub versions: BTreeMap<String, Option<String>>,
    /// The adapter package's identity, when a package name was given.
    pub package: Option<ProbedPackage>,
}

/// The installed adapter package as the probe saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbedPackage {
    pub name: String,
    pub version: Option<String>,
    pub files: u64,
    /// SHA-256 over sorted `relpath\0sha256\n` lines of the package's import directory
    /// (`__pycache__` and `.pyc` excluded).
    pub sha256: Option<String>,
    /// The package's import directory (where built-in data files shipped with it live).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// The distribution names of the exact pins that apply on this computer (`name==version`
/// → `name`; a pin whose platform marker excludes this computer is left out).
pub fn requirement_names(requirements: &[String]) -> Vec<String> {
    crate::pins::applicable(requirements)
        .into_iter()
        .map(|p| p.name)
        .collect()
}
