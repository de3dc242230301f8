//! The harness every integration test of the workspace shares: where the built binaries are
//! (refusing stale ones), temporary homes whose paths have spaces and non-ASCII letters,
//! fingerprints of directory trees (to prove nothing was written), commands run with a hard
//! bound, time limits derived from the code's own grace periods, and the reading of a doctor
//! report a healthy installation should give.
//!
//! Only ever a dev-dependency: nothing shipped links it, and it must not grow logic the
//! binaries themselves need.

mod binaries;
mod bounded;
pub mod doctor;
mod home;
pub mod limits;
mod tree;

pub use binaries::{binary, try_binary, workspace_root};
pub use bounded::{run_bounded, stderr, stdout};
pub use home::{FakeHome, unicode_tempdir};
pub use tree::{Fingerprint, fingerprint};
