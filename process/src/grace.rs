//! The suite's one grace policy: how long a process tree gets between SIGTERM and SIGKILL
//! whenever scimcp ends it, whoever asked — a client's cancel, a run's or a helper step's
//! time limit, a stopping server, a run guard whose server died, Slurm ending a batch job,
//! parity stopping its direct run.
//!
//! One value, not one per caller: the CLI sees the same ending on every path, so what it
//! manages to flush in that time (a partial output, a log line) does not depend on whether
//! it ran locally, under Slurm or orphaned, and the tests derive one wait from it
//! (`scimcp-testkit`'s `limits`). Why 700 ms:
//!
//! - long enough for a CLI that handles SIGTERM to flush and close what it was writing (a
//!   Python interpreter runs its handlers and `atexit` in well under that), and for one that
//!   does not handle it to die of it at once;
//! - short enough that a cancel answers promptly: the client waits on it;
//! - nothing is gained by a longer wait where no client waits (a guard whose server died,
//!   Slurm's `scancel`): such a run never succeeds, and its result records the ending, not
//!   what the CLI wrote in its last seconds. It also stays well inside Slurm's `KillWait`
//!   (30 s by default), so the job ends the CLI before Slurm does.

use std::time::Duration;

/// How long a process tree gets between SIGTERM and SIGKILL when the suite ends it. See the
/// [module documentation](self) for why this value, and why one.
pub const TERMINATE_GRACE: Duration = Duration::from_millis(700);
