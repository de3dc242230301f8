//! `rollback`: make the previous version active again, in one atomic switch of `current`,
//! with the runtime it was provisioned with. Client entries point at the stable path, so
//! none of them changes; the versions swap roles, so a second rollback undoes the first.

use semver::Version;

use super::install::version_intact;
use super::report::Report;
use super::session::{finish, lock};
use super::setup::Setup;
use crate::error::SetupError;
use crate::faults::checkpoint;

pub fn run(setup: &Setup) -> Result<Report, SetupError> {
    let mut report = Report::new("rollback", setup);
    let _lock = lock(setup, &mut report)?;
    let before = setup.load_state()?;
    let mut state = before.clone();
    if state.active.is_none() {
        return Err(SetupError::NotInstalled(setup.layout.root.clone()));
    }
    let previous = state.previous.clone().ok_or(SetupError::NoPrevious)?;
    let version =
        Version::parse(&previous).map_err(|_| SetupError::PreviousMissing(previous.clone()))?;
    if !version_intact(&setup.layout, &version) {
        return Err(SetupError::PreviousMissing(previous));
    }
    report.step(format!(
        "switch {} from {} back to {previous}",
        setup.layout.current().display(),
        state.active.as_deref().unwrap_or("?")
    ));
    if !setup.dry_run {
        checkpoint();
        crate::current::switch(&setup.layout, &version)
            .map_err(SetupError::io("switching", setup.layout.current()))?;
        checkpoint();
    }
    state.previous = state.active.take();
    state.active = Some(previous.clone());
    if let Some(rec) = state.versions.get(&previous) {
        for (adapter, runtime) in &rec.runtimes {
            if !runtime.interpreter.is_file() {
                report.step(format!(
                    "note: the {adapter} runtime of {previous} is missing; run `scimcp-setup repair`"
                ));
            }
            state.runtimes.insert(adapter.clone(), runtime.clone());
        }
        // An adapter installed after that version was left has no runtime of its own there.
        for adapter in state.adapters.keys() {
            if !rec.runtimes.contains_key(adapter) && state.runtimes.contains_key(adapter) {
                report.step(format!(
                    "note: {adapter} was never provisioned for {previous}; if its entries do not \
                     start, run `scimcp-setup repair --adapter {adapter}`"
                ));
            }
        }
    }
    finish(setup, &before, &state, &mut report)?;
    Ok(report)
}
