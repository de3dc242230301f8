//! Shared helpers for the end-to-end tests and the quickstart demo: locating the built
//! binaries and the development Python runtime, and exporting the built-in datasets.
//!
//! Nothing here is shipped; it must not grow logic the binaries themselves need.

pub mod harness;
pub mod http_client;
pub mod http_server;
pub mod raw_stdio;
pub mod slurm;

use std::path::{Path, PathBuf};

/// The workspace root (this crate lives in `tests/`).
pub fn workspace_root() -> PathBuf {
    scimcp_testkit::workspace_root()
}

/// The Python interpreter of the development runtime: `SCIMCP_TEST_PYTHON`, else
/// `.venv/bin/python` (or `.venv\Scripts\python.exe`) at the workspace root.
pub fn dev_python() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("SCIMCP_TEST_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    let root = workspace_root();
    let candidates = [
        root.join(".venv/bin/python"),
        root.join(".venv/Scripts/python.exe"),
    ];
    candidates.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        anyhow::anyhow!(
            "no development Python runtime: run `scripts/dev-env.sh` (it creates .venv with refsci and its pinned requirements) or set SCIMCP_TEST_PYTHON"
        )
    })
}

/// A binary built next to the running executable (`target/<profile>/<name>`), refused when
/// missing or older than the sources it is built from.
pub fn sibling_binary(name: &str) -> anyhow::Result<PathBuf> {
    scimcp_testkit::try_binary(name).map_err(anyhow::Error::msg)
}

/// Export refsci's built-in datasets into `dir` with the development runtime.
pub fn export_datasets(python: &Path, dir: &Path) -> anyhow::Result<()> {
    let status = std::process::Command::new(python)
        .args(["-m", "refsci", "datasets", "export"])
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .status()?;
    anyhow::ensure!(
        status.success(),
        "`python -m refsci datasets export` failed: {status}"
    );
    Ok(())
}

/// True while `pid` exists and is not a zombie (a killed process whose parent died may wait
/// as a zombie for a container's init that never reaps it).
#[cfg(unix)]
pub fn process_alive(pid: u32) -> bool {
    let out = std::process::Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .output()
        .expect("ps runs");
    let stat = String::from_utf8_lossy(&out.stdout).trim().to_string();
    !stat.is_empty() && !stat.starts_with('Z')
}
