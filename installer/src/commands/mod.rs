//! One module per subcommand, over the shared [`Setup`] context (setup.rs) and [`Report`]
//! (report.rs), the client registration they share (registration.rs) and the
//! lock-and-receipt steps (session.rs). This file only declares them and re-exports what the
//! rest of the crate names, so no subcommand imports the file that declares it.

pub mod approvals;
pub mod clients;
pub mod install;
pub mod remote;
pub mod rollback;
mod session;
pub mod status;
pub mod uninstall;
pub mod upgrade;

mod registration;
mod report;
mod setup;
mod tree;

pub use report::Report;
pub use setup::{Setup, adapter_name};
pub use tree::remove_tree;
