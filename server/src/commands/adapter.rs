//! `scimcp adapter check|list`.

use std::io::Write;
use std::process::ExitCode;

use scimcp_core::manifest;

/// Validate a manifest and print either its summary and hash or every error found.
pub(crate) fn check(name_or_path: &str, json: bool) -> ExitCode {
    let result = crate::adapter_source::resolve(name_or_path.into());
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    match result {
        Ok(adapter) => {
            if json {
                let report = serde_json::json!({
                    "schema_version": 1,
                    "valid": true,
                    "name": adapter.manifest.name,
                    "version": adapter.manifest.version,
                    "sha256": adapter.sha256(),
                    "origin": adapter.origin,
                    "workflows": adapter.workflow_ids(),
                    "sandbox": adapter
                        .manifest
                        .workflows
                        .iter()
                        .map(|w| (
                            w.id.clone(),
                            crate::sandbox_policy::declared(w).unwrap_or_default()
                        ))
                        .collect::<std::collections::BTreeMap<_, _>>(),
                    "errors": [],
                    "warnings": adapter.warnings,
                });
                let _ = writeln!(stdout, "{report:#}");
            } else {
                for w in &adapter.warnings {
                    let _ = writeln!(stderr, "warning: {w}");
                }
                let _ = writeln!(
                    stdout,
                    "ok: {} {} ({} workflows: {})\nsha256: {}",
                    adapter.manifest.name,
                    adapter.manifest.version,
                    adapter.manifest.workflows.len(),
                    adapter.workflow_ids().join(", "),
                    adapter.sha256()
                );
                // What each workflow's CLI is granted beyond its runtime and run (the
                // defaults every run has are not repeated).
                for w in &adapter.manifest.workflows {
                    if let Some(grants) = crate::sandbox_policy::declared(w) {
                        let _ = writeln!(
                            stdout,
                            "sandbox {}: network {}, shared memory {}, read-only [{}], \
                             read-write [{}]",
                            w.id,
                            grants.network,
                            grants.shared_memory,
                            grants.read_only.join(", "),
                            grants.read_write.join(", ")
                        );
                    }
                }
            }
            ExitCode::SUCCESS
        }
        Err(errors) => {
            if json {
                let report = serde_json::json!({
                    "schema_version": 1,
                    "valid": false,
                    "errors": errors.0,
                });
                let _ = writeln!(stdout, "{report:#}");
            } else {
                let _ = writeln!(stderr, "{errors}");
                let _ = writeln!(
                    stderr,
                    "error: {} problem(s) in {name_or_path}",
                    errors.0.len()
                );
            }
            ExitCode::from(1)
        }
    }
}

/// Print the embedded adapters, one per line.
pub(crate) fn list() -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    for name in manifest::embedded_names() {
        match manifest::load_embedded(name) {
            Some(Ok(a)) => {
                let _ = writeln!(
                    stdout,
                    "{}\t{}\t{}",
                    a.manifest.name, a.manifest.version, a.manifest.summary
                );
            }
            _ => {
                let _ = writeln!(stdout, "{name}\t(invalid)");
            }
        }
    }
    ExitCode::SUCCESS
}
