//! Where scimcp keeps its files: the platform data directory from `directories`, or
//! `SCIMCP_HOME` when set (tests, CI and portable installs point it anywhere).

use std::path::PathBuf;

/// The environment variable that overrides every scimcp directory.
pub const HOME_ENV: &str = "SCIMCP_HOME";

/// Error when no home directory can be determined for this user.
#[derive(Debug, thiserror::Error)]
#[error("cannot determine a data directory for scimcp: no home directory is known for this user")]
pub struct NoHome;

// Its hint (set `SCIMCP_HOME`) is given in `failure.rs`, which knows this type; this file
// imports nothing of the crate.

/// The root of scimcp's managed files (`versions/`, `runtimes/`, `runs/`, `state.json`).
///
/// `SCIMCP_HOME` wins when set and non-empty; otherwise the platform data directory
/// (`~/.local/share/scimcp` on Linux, `~/Library/Application Support/scimcp` on macOS,
/// `%APPDATA%\scimcp\data` on Windows).
pub fn data_root() -> Result<PathBuf, NoHome> {
    if let Some(home) = std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    directories::ProjectDirs::from("", "", "scimcp")
        .map(|d| d.data_dir().to_path_buf())
        .ok_or(NoHome)
}

/// The user's home directory, as the platform defines it (`None` when there is none).
pub fn home_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf())
}
