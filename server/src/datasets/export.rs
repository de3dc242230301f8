//! The adapter's built-in datasets, exported once by its own command into a directory of
//! their own (`<datasets root>/<adapter>-<hash prefix>`), and why an export can fail.

use std::path::{Path, PathBuf};
use std::time::Duration;

use scimcp_core::manifest::{DatasetsSpec, Template};

use crate::runtime::ScientificRuntime;

/// How long materializing the built-in datasets may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(300);

/// Why the built-in datasets could not be exported: said after "cannot prepare the built-in
/// datasets: ", with the hint to check the runtime.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The runtime cannot run commands (its problem, as `get_environment` says it).
    #[error("{0}")]
    Runtime(String),
    #[error("datasets directory has no parent")]
    NoParent,
    /// A scratch or private directory could not be made, or the export moved into place.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// An argument of the manifest's export command does not parse (core's template
    /// error, as it says it).
    #[error("{0}")]
    Template(String),
    /// The export command failed, timed out or could not start.
    #[error("{0}")]
    Command(#[from] scimcp_process::ProcessError),
    #[error("{0}")]
    Panicked(#[from] tokio::task::JoinError),
}

/// Run the adapter's export command into a scratch directory, then rename it into place,
/// so a half-written export is never used and two servers racing both end up consistent.
pub(super) async fn materialize(
    spec: &DatasetsSpec,
    dir: &Path,
    runtime: &ScientificRuntime,
) -> Result<PathBuf, ExportError> {
    if dir.is_dir() {
        return Ok(dir.to_path_buf());
    }
    let (program, launch) = runtime
        .command_prefix()
        .map_err(|e| ExportError::Runtime(e.message))?;
    let parent = dir.parent().ok_or(ExportError::NoParent)?;
    scimcp_core::fs::create_private_dir(parent)?;
    let scratch = parent.join(format!(".export-{}", uuid::Uuid::new_v4().simple()));
    scimcp_core::fs::create_private_dir(&scratch)?;
    let scratch_text = scratch.to_string_lossy().into_owned();
    let mut args: Vec<String> = launch.to_vec();
    for arg in &spec.export {
        let t = Template::parse(arg).map_err(|e| ExportError::Template(e.to_string()))?;
        let Ok(arg) = t.render(|_| Ok::<_, std::convert::Infallible>(scratch_text.clone()));
        args.push(arg);
    }
    // The export runs like a run: its home and temporary files in a directory of its own
    // (removed before the datasets are published).
    let private = parent.join(format!(".export-home-{}", uuid::Uuid::new_v4().simple()));
    for dir in scimcp_core::run_env::DEFAULT_RUN_DIRS {
        scimcp_core::fs::create_private_dir(&private.join(dir))?;
    }
    let paths = crate::plan::RunPaths {
        work_dir: private.clone(),
        state_dir: private.clone(),
    };
    let env: std::collections::BTreeMap<String, String> = runtime
        .env()
        .iter()
        .map(|(k, v)| (k.clone(), paths.substitute(v, crate::plan::Escape::None)))
        .collect();
    let cmd = crate::runs::child::isolated_std_command(program, &args, &scratch, &env);
    let step =
        scimcp_process::Step::new("the built-in dataset export", cmd).timeout(EXPORT_TIMEOUT);
    let outcome = tokio::task::spawn_blocking(move || scimcp_process::run(step))
        .await
        .map_err(ExportError::from)
        .and_then(|r| {
            r.and_then(scimcp_process::Captured::check)
                .map_err(ExportError::from)
        });
    let _ = fs_err::remove_dir_all(&private);
    if let Err(e) = outcome {
        let _ = fs_err::remove_dir_all(&scratch);
        return Err(e);
    }
    let cleanup = |scratch: &Path| {
        let _ = fs_err::remove_dir_all(scratch);
    };
    match fs_err::rename(&scratch, dir) {
        Ok(()) => Ok(dir.to_path_buf()),
        Err(_) if dir.is_dir() => {
            cleanup(&scratch);
            Ok(dir.to_path_buf())
        }
        Err(e) => {
            cleanup(&scratch);
            Err(e.into())
        }
    }
}
