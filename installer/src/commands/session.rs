//! How every command that changes the installation begins and ends: it takes the setup
//! lock (sweeping what a killed run left behind) and it writes the receipt. Install, repair,
//! upgrade, rollback, uninstall and the remote-server commands share these two steps, so they
//! live below all of them.

use scimcp_core::install_state::InstallState;

use super::report::Report;
use super::setup::Setup;
use crate::error::SetupError;
use crate::lock::SetupLock;

/// Take the setup lock, except in a dry run (which writes nothing, not even the lock file),
/// then sweep the temporary files a killed run left in the installer's own directories.
pub(crate) fn lock(setup: &Setup, report: &mut Report) -> Result<Option<SetupLock>, SetupError> {
    if setup.dry_run {
        return Ok(None);
    }
    let lock = SetupLock::acquire(&setup.layout.lock_path())?;
    let swept = crate::sweep::stale_temps(&setup.layout);
    if !swept.is_empty() {
        report.step(format!(
            "remove {} temporary file(s) an interrupted scimcp-setup left behind: {}",
            swept.len(),
            swept
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(Some(lock))
}

/// Write the receipt and fill in the report's version fields. Client failures stay in the
/// report: the caller prints it, then fails with [`SetupError::ClientsFailed`].
pub(crate) fn finish(
    setup: &Setup,
    before: &InstallState,
    state: &InstallState,
    report: &mut Report,
) -> Result<(), SetupError> {
    report.active = state.active.clone();
    report.previous = state.previous.clone();
    if !setup.dry_run {
        setup.save_state(before, state)?;
    }
    Ok(())
}
