//! The CLI's standard streams, the same for a local run and a Slurm batch job: stdout and
//! stderr copied into bounded logs, the plan's stdin answers fed and the pipe closed, and
//! the logs drained once the CLI ended (its ending is [`scimcp_process::Child::terminate`]'s).

use std::time::Duration;

use scimcp_process::Child;
use tokio::io::AsyncWriteExt;
use tokio::task::JoinHandle;

use super::logs::LogCapture;
use super::stream_copy::{CopyWriter, StreamCopies, tee};
use crate::plan::{Escape, RunPaths};

/// How long log readers may keep draining after the process is gone: not a grace for the
/// process (that is [`scimcp_process::TERMINATE_GRACE`]) but a bound on a pipe a grandchild
/// that left the group may hold open.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// A started CLI's output being copied into its logs.
pub(super) struct Streams {
    pumps: [JoinHandle<()>; 2],
    logs: (LogCapture, LogCapture),
}

impl Streams {
    /// Copy `child`'s stdout and stderr into `logs` (and, complete up to their bound, into
    /// the files `copies` names: see [`stream_copies`](super::stream_copy::stream_copies))
    /// and feed it the plan's `stdin` lines (placeholders substituted, one per line),
    /// closing the pipe after them. `child` must have been spawned with all three streams
    /// piped.
    pub(super) fn attach(
        child: &mut Child,
        logs: (LogCapture, LogCapture),
        stdin: &[String],
        paths: &RunPaths,
        copies: StreamCopies,
    ) -> Streams {
        let open = |p: &Option<std::path::PathBuf>| {
            p.as_deref()
                .and_then(|p| CopyWriter::open(p, copies.max_bytes))
        };
        let pumps = [
            tokio::spawn(tee(
                logs.0.clone(),
                open(&copies.stdout),
                child.take_stdout().expect("piped stdout"),
            )),
            tokio::spawn(tee(
                logs.1.clone(),
                open(&copies.stderr),
                child.take_stderr().expect("piped stderr"),
            )),
        ];
        if let Some(mut pipe) = child.take_stdin() {
            let answers: Vec<u8> = stdin
                .iter()
                .flat_map(|l| format!("{}\n", paths.substitute(l, Escape::None)).into_bytes())
                .collect();
            tokio::spawn(async move {
                // A CLI that exits without reading its answers closes the pipe: its business.
                let _ = pipe.write_all(&answers).await;
                let _ = pipe.shutdown().await;
            });
        }
        Streams { pumps, logs }
    }

    /// Let the pumps copy what a step that is not the run's last wrote, keeping the logs
    /// open for the next step (bounded like [`Streams::drain`]).
    pub(super) async fn drain_open(self) {
        for pump in self.pumps {
            let _ = tokio::time::timeout(DRAIN_GRACE, pump).await;
        }
    }

    /// Let the pumps copy what the CLI wrote before it ended (at most [`DRAIN_GRACE`] each:
    /// a grandchild holding a pipe open must not hold the run), then close both logs.
    pub(super) async fn drain(self) {
        for pump in self.pumps {
            let _ = tokio::time::timeout(DRAIN_GRACE, pump).await;
        }
        self.logs.0.finish();
        self.logs.1.finish();
    }
}
