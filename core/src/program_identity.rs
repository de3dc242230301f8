//! Which binary a declared program is: found on PATH (or the python runtime's scripts
//! directory first), hashed, and asked its version. The server does it at start, the doctor
//! when it checks; both must find and identify a program the same way, which is why it lives
//! in this shared crate. Running the version probe is the caller's (through
//! `scimcp-process`, which core does not depend on).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::manifest::{Manifest, ProgramFacts, missing_program_remedy};

/// Most bytes of a version probe's output searched for the version.
pub const VERSION_OUTPUT_BYTES: usize = 64 * 1024;
/// How long a version probe may run.
pub const VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// What `get_environment`, a plan and a run manifest record per program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramIdentity {
    /// `runtime` or a `[programs.<id>]` id.
    pub id: String,
    /// The resolved absolute path that runs.
    pub executable: String,
    /// SHA-256 of the executable's bytes (after following links).
    pub sha256: String,
    /// What the version probe found (absent without a probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// Why a program cannot be identified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramProblem {
    pub id: String,
    /// What is wrong, e.g. "program 'vina' (vina) is not on PATH".
    pub problem: String,
    /// What to do: the `provided_by` packages with their commands.
    pub remedy: String,
}

impl std::fmt::Display for ProgramProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.problem, self.remedy)
    }
}

/// The directory a python interpreter's console scripts live in (a venv's `bin/`, or
/// `Scripts\` on Windows): where `pip install` put e.g. astropy's `fitsheader`.
pub fn scripts_dir(python: &Path) -> Option<PathBuf> {
    python.parent().map(Path::to_path_buf)
}

/// `name` in `dirs`, then on `path` (a PATH value): the first executable file. A name with
/// a separator is taken as a path and only checked.
pub fn find_executable(name: &str, dirs: &[PathBuf], path: Option<OsString>) -> Option<PathBuf> {
    let as_path = Path::new(name);
    if as_path.is_absolute() || name.contains('/') || name.contains('\\') {
        return is_executable(as_path).then(|| as_path.to_path_buf());
    }
    let searched = dirs
        .iter()
        .cloned()
        .chain(path.iter().flat_map(std::env::split_paths));
    for dir in searched {
        if dir.as_os_str().is_empty() {
            // An empty PATH entry means the current directory: never trusted for a server.
            continue;
        }
        for candidate in candidates(&dir, name) {
            if is_executable(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

#[cfg(windows)]
fn candidates(dir: &Path, name: &str) -> Vec<PathBuf> {
    let exts = std::env::var("PATHEXT").unwrap_or_else(|_| ".EXE;.CMD;.BAT;.COM".into());
    let mut out = vec![dir.join(name)];
    out.extend(
        exts.split(';')
            .filter(|e| !e.is_empty())
            .map(|e| dir.join(format!("{name}{e}"))),
    );
    out
}

#[cfg(not(windows))]
fn candidates(dir: &Path, name: &str) -> Vec<PathBuf> {
    vec![dir.join(name)]
}

fn is_executable(p: &Path) -> bool {
    let Ok(meta) = fs_err::metadata(p) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    true
}

/// The version in a probe's output: the first match of `pattern`'s `version` group in
/// stdout, else in stderr (many programs print their banner there).
pub fn parse_version(pattern: &str, stdout: &str, stderr: &str) -> Option<String> {
    let re = regex::Regex::new(pattern).ok()?;
    [stdout, stderr].iter().find_map(|text| {
        re.captures(text)
            .and_then(|c| c.name("version"))
            .map(|m| m.as_str().trim().to_string())
            .filter(|v| !v.is_empty())
    })
}

/// How a caller runs a version probe: program, arguments → (stdout, stderr), bounded by
/// [`VERSION_TIMEOUT`] and [`VERSION_OUTPUT_BYTES`]. Its error is the caller's own type
/// (core does not run processes); its message ends "does not run (its version probe
/// failed: …)" in the [`ProgramProblem`].
pub type ProbeRunner<'a, E> = dyn Fn(&Path, &[String]) -> Result<(String, String), E> + 'a;

/// Find, hash and ask the version of program `id` of `manifest`. `python` is the python
/// runtime's interpreter, when there is one (its scripts directory is searched first).
pub fn identify<E: std::fmt::Display>(
    manifest: &Manifest,
    id: &str,
    python: Option<&Path>,
    path_var: Option<OsString>,
    run: &ProbeRunner<'_, E>,
) -> Result<ProgramIdentity, ProgramProblem> {
    let Some(facts) = manifest.program_facts(id) else {
        return Err(ProgramProblem {
            id: id.into(),
            problem: format!("program '{id}' is not declared"),
            remedy: "declare it as [programs.<id>] in the manifest".into(),
        });
    };
    identify_facts(id, facts, python, path_var, run)
}

fn identify_facts<E: std::fmt::Display>(
    id: &str,
    facts: ProgramFacts<'_>,
    python: Option<&Path>,
    path_var: Option<OsString>,
    run: &ProbeRunner<'_, E>,
) -> Result<ProgramIdentity, ProgramProblem> {
    let problem = |problem: String| ProgramProblem {
        id: id.into(),
        problem,
        remedy: missing_program_remedy(facts.executable, facts.provided_by),
    };
    let dirs: Vec<PathBuf> = python.and_then(scripts_dir).into_iter().collect();
    let found = find_executable(facts.executable, &dirs, path_var).ok_or_else(|| {
        problem(if Path::new(facts.executable).is_absolute() {
            format!(
                "program '{id}': {} does not exist or is not an executable file",
                facts.executable
            )
        } else {
            format!(
                "program '{id}': `{}` is not on PATH{}",
                facts.executable,
                if dirs.is_empty() {
                    ""
                } else {
                    " nor in the python runtime's scripts directory"
                }
            )
        })
    })?;
    let resolved = std::path::absolute(&found).unwrap_or(found);
    let (sha256, _) = crate::hash::sha256_file(&resolved).map_err(|e| {
        problem(format!(
            "program '{id}': cannot read {}: {e}",
            resolved.display()
        ))
    })?;
    let version = match facts.version {
        None => None,
        Some(probe) => {
            let (stdout, stderr) = run(&resolved, &probe.args).map_err(|e| {
                problem(format!(
                    "program '{id}': {} does not run (its version probe failed: {e})",
                    resolved.display()
                ))
            })?;
            Some(parse_version(&probe.pattern, &stdout, &stderr).ok_or_else(|| {
                let seen: String = format!("{stdout}{stderr}").chars().take(200).collect();
                ProgramProblem {
                    id: id.into(),
                    problem: format!(
                        "program '{id}': {} {} printed no version matching {:?} (it printed {:?})",
                        resolved.display(),
                        probe.args.join(" "),
                        probe.pattern,
                        seen.trim()
                    ),
                    remedy: format!(
                        "check that `{}` is the intended program; {}",
                        facts.executable,
                        missing_program_remedy(facts.executable, facts.provided_by)
                    ),
                }
            })?)
        }
    };
    Ok(ProgramIdentity {
        id: id.into(),
        executable: resolved.to_string_lossy().into_owned(),
        sha256,
        version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_is_read_from_stdout_then_stderr() {
        let p = r"v(?P<version>\d+\.\d+\.\d+)";
        assert_eq!(
            parse_version(p, "AutoDock Vina v1.2.3\n", ""),
            Some("1.2.3".into())
        );
        assert_eq!(parse_version(p, "banner\n", "v7.505 (2022)"), None);
        assert_eq!(
            parse_version(p, "", "tool v7.505.1"),
            Some("7.505.1".into())
        );
    }

    #[cfg(unix)]
    #[test]
    fn programs_are_found_in_extra_dirs_first_and_never_in_empty_path_entries() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("tool");
        fs_err::write(&exe, "#!/bin/true\n").unwrap();
        let plain = dir.path().join("plain");
        fs_err::write(&plain, "data").unwrap();
        fs_err::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let found = find_executable("tool", &[dir.path().to_path_buf()], None).unwrap();
        assert_eq!(found, exe);
        assert!(find_executable("plain", &[dir.path().to_path_buf()], None).is_none());
        assert!(find_executable("tool", &[], Some(OsString::from(":"))).is_none());
        let path = std::env::join_paths([dir.path()]).unwrap();
        assert_eq!(find_executable("tool", &[], Some(path)), Some(exe.clone()));
        assert_eq!(find_executable(exe.to_str().unwrap(), &[], None), Some(exe));
    }
}
