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

/// A check that ran and said no (a signature refused, a file unsigned): exit
/// [`exit::NEGATIVE`], not [`exit::COULD_NOT_RUN`]. Message and causes are the inner error's.
#[derive(Debug)]
pub(crate) struct Rejected(pub anyhow::Error);

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Rejected {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Exit 0 on success; otherwise print the failure and exit 1 for a [`Rejected`] verdict, 2
/// when the command could not do its job (argument errors exit 2 through clap).
pub(crate) fn finish(result: anyhow::Result<()>) -> ExitCode {
    let Err(err) = result else {
        return exit::code(exit::SUCCESS);
    };
    report(&err);
    match err.downcast_ref::<Rejected>() {
        Some(_) => exit::code(exit::NEGATIVE),
        None => exit::code(exit::COULD_NOT_RUN),
    }
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
