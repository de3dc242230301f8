//! `scimcp-process`: running a helper program to completion — an interpreter probe, an
//! import check, `pip install`, a dataset export, a `--version` — the one way every scimcp part
//! does it: in its own process group, with stdin closed or fed, both pipes drained and
//! bounded, a time limit that ends the whole process tree, and the step named in every error
//! ("the import check took longer than 120 s").
//!
//! It must not run the scientific analysis itself: a run is long-lived, streams its logs to
//! files and is cancelled by a client; the server's run executor owns that. Nothing here is
//! async: callers on an async runtime use `spawn_blocking`.

mod python;
mod run;
mod tree;

pub use python::{ISOLATION_REMOVED_VARS, python_command};
pub use run::{Captured, ProcessError, Step, run};
pub use tree::{Kill, TERMINATE_GRACE, group_alive, group_members, signal_tree};
