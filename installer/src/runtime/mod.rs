//! The scientific runtime of a `kind = "python"` adapter: a private virtual environment
//! under `runtimes/<adapter>-<hash>/` with the manifest's exact pins and the bundled package.
//!
//! The hash covers the pins, the interpreter version and the bundled package source, so a
//! directory is reused exactly when it would be rebuilt identically (repeat installs are
//! fast and change nothing), and a different bundle gets a runtime of its own (rollback
//! finds the old one intact). A directory counts only once its marker
//! `.scimcp-runtime.json` exists, which is written last: a killed provisioning leaves a
//! directory without a marker, which the next run deletes and rebuilds.

pub use scimcp_setup_model::runtime_files as files;
mod interpreter;
mod programs;
mod provision;
mod stamp;

pub use interpreter::InterpreterError;
pub use programs::missing_programs;
pub use provision::{ProvisionError, Provisioned, Request, provision};
