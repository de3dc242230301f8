//! `scimcp-process`: the one owner of every child process a scimcp part starts, and of how
//! each ends.
//!
//! - [`run`] runs a helper program to completion — an interpreter probe, an import check,
//!   `pip install`, a dataset export, a `--version` — in its own process group, with stdin
//!   closed or fed, both pipes drained and bounded, a time limit that ends the whole process
//!   tree, and the step named in every error ("the import check took longer than 120 s").
//!   It blocks: callers on an async runtime use `spawn_blocking`.
//! - [`ChildCommand`] starts a long-lived child (a run's CLI, the run guard, a batch job's
//!   CLI, parity's direct run) in its own process group, and [`Child`] waits for it (async,
//!   tokio) and ends its whole group with [`Child::terminate`].
//! - Both end a tree the same way, with the suite's one grace between SIGTERM and SIGKILL:
//!   [`TERMINATE_GRACE`], whose value and reasons are given in one place (`grace.rs`).
//!
//! It must not decide what a child is for: which program, which environment (the server's
//! isolated command), where its output goes (a run's logs are the executor's), when it is
//! cancelled, or what its ending means for a run — those belong to the callers. It spawns
//! no task and owns no runtime: the async parts run on the caller's tokio runtime.

mod child;
mod descendants;
mod grace;
mod python;
mod run;
pub mod sandbox;
mod tree;

pub use child::{Child, ChildCommand, Ended, exit_signal};
pub use descendants::{END_CHILDREN_ROUNDS, children_of, end_children};
pub use grace::TERMINATE_GRACE;
pub use python::{ISOLATION_REMOVED_VARS, python_command};
pub use run::{Captured, ProcessError, Step, run};
pub use tree::{Kill, group_alive, group_members, signal_tree};
