//! `runtime.programs`: every program the adapter declares (an executable runtime's own and
//! each `[programs.<id>]`) is found the way the server finds it (the python runtime's scripts
//! directory, then `PATH`), hashed, and answers its version probe with a version matching
//! the declared pattern. Planned only for adapters that declare programs, so a python-only
//! installation's report is unchanged. A missing program fails with the packages that
//! provide it (`provided_by`); scimcp never installs system packages, so it is not fixable.

use std::path::{Path, PathBuf};

use scimcp_core::RuntimeKind;
use scimcp_core::manifest::{Manifest, RUNTIME_PROGRAM};
use scimcp_core::program_identity::{VERSION_OUTPUT_BYTES, VERSION_TIMEOUT, identify};

use crate::check::CheckResult;
use crate::context::Context;

/// True when `manifest` declares programs this check looks at.
pub fn applies(manifest: &Manifest) -> bool {
    manifest.runtime.kind == RuntimeKind::Executable || !manifest.programs.is_empty()
}

/// Every declared program id, the runtime's first.
fn declared(manifest: &Manifest) -> Vec<&str> {
    let mut ids = Vec::new();
    if manifest.runtime.kind == RuntimeKind::Executable {
        ids.push(RUNTIME_PROGRAM);
    }
    ids.extend(manifest.programs.keys().map(String::as_str));
    ids
}

pub fn check(ctx: &Context, id: &str, adapter: &str) -> CheckResult {
    let manifest = match ctx.manifest(adapter) {
        Ok(m) => m,
        Err(e) => return CheckResult::skipped(id, e.to_string()),
    };
    let python: Option<PathBuf> = match manifest.runtime.kind {
        RuntimeKind::Python => ctx
            .record(adapter)
            .and_then(|_| ctx.runtime(id, adapter).ok())
            .map(|r| r.interpreter.clone()),
        RuntimeKind::Executable => None,
    };
    evaluate(id, manifest, python.as_deref(), std::env::var_os("PATH"))
}

/// The result for every declared program of `manifest`, looked up on `path_var`.
pub(crate) fn evaluate(
    id: &str,
    manifest: &Manifest,
    python: Option<&Path>,
    path_var: Option<std::ffi::OsString>,
) -> CheckResult {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for program in declared(manifest) {
        match identify(manifest, program, python, path_var.clone(), &version_probe) {
            Ok(identity) => found.push(format!(
                "{program}: {}{} (sha256 {})",
                identity.executable,
                identity
                    .version
                    .as_deref()
                    .map(|v| format!(" {v}"))
                    .unwrap_or_default(),
                &identity.sha256[..12]
            )),
            Err(p) => problems.push(p),
        }
    }
    if problems.is_empty() {
        if found.is_empty() {
            return CheckResult::ok(id, "no programs declared");
        }
        return CheckResult::ok(id, found.join("; "));
    }
    CheckResult::fail(
        id,
        problems
            .iter()
            .map(|p| p.problem.clone())
            .collect::<Vec<_>>()
            .join("; "),
    )
    .remedy(
        problems
            .iter()
            .map(|p| p.remedy.clone())
            .collect::<Vec<_>>()
            .join("; "),
    )
}

/// Why a version probe gave no output to match.
#[derive(Debug, thiserror::Error)]
enum VersionProbeError {
    #[error(transparent)]
    Run(#[from] scimcp_process::ProcessError),
    #[error("it took longer than {seconds} s")]
    TimedOut { seconds: u64 },
}

/// The version probe through the shared runner: own process group, stdin closed, output and
/// time bounded; the exit status is not judged (the pattern is).
fn version_probe(program: &Path, args: &[String]) -> Result<(String, String), VersionProbeError> {
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).current_dir(std::env::temp_dir());
    let step = scimcp_process::Step::new("the version probe", cmd)
        .timeout(VERSION_TIMEOUT)
        .max_output(VERSION_OUTPUT_BYTES);
    let out = scimcp_process::run(step)?;
    if out.timed_out {
        return Err(VersionProbeError::TimedOut {
            seconds: VERSION_TIMEOUT.as_secs(),
        });
    }
    Ok((out.stdout, out.stderr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Status;

    fn manifest(dir: &Path, text: &str) -> Manifest {
        fs_err::write(
            dir.join("p.json"),
            r#"{"type": "object", "additionalProperties": false, "properties": {}}"#,
        )
        .unwrap();
        fs_err::write(dir.join("a.toml"), text).unwrap();
        scimcp_core::manifest::load_file(&dir.join("a.toml"))
            .unwrap()
            .manifest
    }

    const TEXT: &str = r#"schema_version = 1
name = "t"
version = "0.1.0"
summary = "t"
[runtime]
kind = "executable"
executable = "sha256sum"
version = { args = ["--version"], pattern = '(?P<version>\d+\.\d+)' }
[programs.gone]
executable = "scimcp-doctor-test-missing"
provided_by = { debian = "gone-tool", homebrew = "gone" }
[[workflow]]
id = "w"
summary = "w"
parameters = "p.json"
argv = ["x"]
"#;

    #[cfg(unix)]
    #[test]
    fn a_missing_program_fails_with_the_packages_that_provide_it() {
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(dir.path(), TEXT);
        let r = evaluate("runtime.programs", &m, None, std::env::var_os("PATH"));
        assert_eq!(r.status, Status::Fail, "{r:?}");
        assert!(
            r.finding.contains("`scimcp-doctor-test-missing` is not on"),
            "{}",
            r.finding
        );
        let remedy = r.remedy.as_deref().unwrap();
        assert!(remedy.contains("sudo apt install gone-tool"), "{remedy}");
        assert!(remedy.contains("brew install gone"), "{remedy}");
        assert!(!r.fixable);
    }

    #[cfg(unix)]
    #[test]
    fn a_version_that_does_not_match_the_pattern_fails() {
        let dir = tempfile::tempdir().unwrap();
        let text = TEXT
            .replace("(?P<version>\\d+\\.\\d+)", "no such banner (?P<version>x)")
            .replace("[programs.gone]\nexecutable = \"scimcp-doctor-test-missing\"\nprovided_by = { debian = \"gone-tool\", homebrew = \"gone\" }\n", "");
        let m = manifest(dir.path(), &text);
        let r = evaluate("runtime.programs", &m, None, std::env::var_os("PATH"));
        assert_eq!(r.status, Status::Fail, "{r:?}");
        assert!(
            r.finding.contains("printed no version matching"),
            "{}",
            r.finding
        );
        let ok = manifest(
            dir.path(),
            &text.replace("no such banner (?P<version>x)", "(?P<version>\\d+\\.\\d+)"),
        );
        let r = evaluate("runtime.programs", &ok, None, std::env::var_os("PATH"));
        assert_eq!(r.status, Status::Ok, "{r:?}");
        assert!(r.finding.starts_with("runtime: /"), "{}", r.finding);
        assert!(r.finding.contains("sha256"), "{}", r.finding);
    }
}
