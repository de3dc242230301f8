//! One module per subcommand; each returns `anyhow::Result` and [`finish`] turns it into an
//! exit status ([`scimcp_core::exit`]) with the error, its causes and a hint on stderr.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use scimcp_core::exit;
use scimcp_core::failure::{Failure, Hint};

use crate::verify::TrustedRoot;

pub(crate) mod bundle;
pub(crate) mod keygen;
pub(crate) mod preflight;

pub(crate) use bundle::host_target;
pub(crate) mod sign;
pub(crate) mod verify;

/// Exit 0 on success; otherwise print the failure and exit 1 (a refused signature, a failed
/// preflight, a missing file, the network: STYLE.md's "user/env failure"), or 2 for an
/// argument clap could not check (an unknown preflight step; clap exits 2 for the others).
pub(crate) fn finish(result: anyhow::Result<()>) -> ExitCode {
    let Err(err) = result else {
        return exit::code(exit::SUCCESS);
    };
    report(&err);
    exit::code(status_of(&err))
}

/// The exit status of a failed command: [`exit::ERROR`] for an argument error
/// ([`crate::preflight::PreflightError`]), [`exit::FAILURE`] for everything else.
pub(crate) fn status_of(err: &anyhow::Error) -> u8 {
    let argument = err.chain().any(|e| {
        e.downcast_ref::<crate::preflight::PreflightError>()
            .is_some()
    });
    if argument { exit::ERROR } else { exit::FAILURE }
}

/// Print `err` with the hint of the first error in its chain that has one.
pub(crate) fn report(err: &anyhow::Error) {
    let mut failure = Failure::new(err.as_ref());
    let typed = err.chain().find_map(|e| {
        e.downcast_ref::<crate::preflight::PreflightError>()
            .and_then(Hint::hint)
            .map(String::from)
    });
    if let Some(hint) = typed {
        failure = failure.hint(hint);
    }
    failure.print(false);
}

/// The trusted root at `path`, or the embedded public-good root.
pub(crate) fn trusted_root(path: Option<&Path>) -> anyhow::Result<TrustedRoot> {
    match path {
        Some(path) => {
            let bytes = fs_err::read(path)?;
            TrustedRoot::from_json(&bytes)
                .with_context(|| format!("reading the trusted root {}", path.display()))
        }
        None => Ok(TrustedRoot::production()?),
    }
}
