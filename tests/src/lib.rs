//! Shared helpers for the end-to-end tests and the quickstart demo: locating the built
//! binaries and the development Python runtime, and exporting the built-in datasets.
//!
//! Nothing here is shipped; it must not grow logic the binaries themselves need.

pub mod harness;
pub mod http_client;
pub mod http_server;
pub mod slurm;

use std::path::{Path, PathBuf};

/// The workspace root (this crate lives in `tests/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
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

/// A binary built next to the running executable (`target/<profile>/<name>`).
pub fn sibling_binary(name: &str) -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    // Test executables live in target/<profile>/deps.
    if dir.ends_with("deps") {
        dir.pop();
    }
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    anyhow::ensure!(
        path.is_file(),
        "{} is not built: run `cargo build --workspace --bins` first",
        path.display()
    );
    // `cargo test` does not rebuild another package's binaries, so a stale one would be
    // tested silently: refuse a binary older than any source it is built from.
    let built = fs_err::metadata(&path)?.modified()?;
    let root = workspace_root();
    // Only the sources the binary is built from: cargo does not relink `scimcp` when, say,
    // parity/src changes, so comparing it with every crate would call a fresh binary stale.
    let sources: &[&str] = match name {
        "scimcp" => &["core/src", "slurm/src", "server/src", "adapters"],
        "scimcp-fixture-cli" => &["tests/src/bin/scimcp-fixture-cli.rs"],
        "scimcp-setup" => &["core/src", "installer/src", "release/src", "adapters"],
        "scimcp-doctor" => &[
            "core/src",
            "process/src",
            "slurm/src",
            "verify/src",
            "installer/src",
            "parity/src",
            "doctor/src",
            "adapters",
        ],
        _ => &[
            "core/src",
            "slurm/src",
            "server/src",
            "installer/src",
            "doctor/src",
            "release/src",
            "parity/src",
            "adapters",
        ],
    };
    for dir in sources {
        if let Some(newer) = newest_file(&root.join(dir)).filter(|(t, _)| *t > built) {
            anyhow::bail!(
                "{} is older than {}: run `cargo build --workspace --bins` (scripts/test.sh does) before the tests",
                path.display(),
                newer.1.display()
            );
        }
    }
    Ok(path)
}

fn newest_file(dir: &Path) -> Option<(std::time::SystemTime, PathBuf)> {
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in fs_err::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let candidate = if path.is_dir() {
            newest_file(&path)
        } else {
            entry.metadata().ok()?.modified().ok().map(|t| (t, path))
        };
        if let Some(c) = candidate
            && newest.as_ref().is_none_or(|n| c.0 > n.0)
        {
            newest = Some(c);
        }
    }
    newest
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
