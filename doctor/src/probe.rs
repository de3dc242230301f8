//! The runtime probe of one adapter (interpreter version, pinned distributions, package
//! identity), run on its recorded interpreter as the installer and the server run it.

use std::path::Path;
use std::time::Duration;

use scimcp_core::manifest::Manifest;
use scimcp_core::runtime_probe::{RUNTIME_PROBE_SCRIPT, RuntimeProbe, requirement_names};

use crate::unavailable::ProbeError;

/// The probe's time limit: it only reads metadata.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// Run the probe on `interpreter` for `manifest`'s runtime.
pub fn run_probe(interpreter: &Path, manifest: &Manifest) -> Result<RuntimeProbe, ProbeError> {
    let interpreter_path = || interpreter.to_path_buf();
    if !interpreter.is_file() {
        return Err(ProbeError::NoInterpreter {
            interpreter: interpreter_path(),
        });
    }
    let rt = &manifest.runtime;
    let mut cmd = scimcp_process::python_command(interpreter);
    cmd.args(["-c", RUNTIME_PROBE_SCRIPT])
        .arg(rt.package.clone().unwrap_or_default())
        .args(requirement_names(&rt.requirements));
    let out = scimcp_process::run(
        scimcp_process::Step::new("the runtime probe", cmd).timeout(PROBE_TIMEOUT),
    )
    .map_err(|source| ProbeError::Run {
        interpreter: interpreter_path(),
        source,
    })?;
    if out.timed_out {
        return Err(ProbeError::TimedOut {
            interpreter: interpreter_path(),
            seconds: PROBE_TIMEOUT.as_secs(),
        });
    }
    if !out.success() {
        return Err(ProbeError::Failed {
            interpreter: interpreter_path(),
            stderr_tail: out.stderr_tail(3),
        });
    }
    serde_json::from_str(out.stdout.trim()).map_err(ProbeError::Output)
}
