//! [`ChildCommand`] and [`Child`]: a long-lived child — a run's CLI, the run guard, a batch
//! job's CLI, parity's direct run — started in its own process group and ended, whole, the
//! suite's one way: SIGTERM to the group, up to a grace (the suite's is
//! [`TERMINATE_GRACE`](crate::TERMINATE_GRACE)) for it to exit, SIGKILL to the group.
//!
//! Unlike [`run`](crate::run), nothing here waits on its own or captures output: the caller
//! takes the pipes it asked for, waits (cancel-safe, so it can race a cancel or a deadline in
//! `tokio::select!`) and decides when to end it.
//!
//! The group is what makes an ending reach every process the child started: a cancel must
//! end the workers a CLI forked, and a grandchild left holding a pipe would keep its reader
//! waiting. Dropping a [`Child`] that was never waited for ends its group too (SIGKILL), so a
//! task that is aborted leaves nothing running.

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

use crate::tree::{Kill, signal_tree};

/// Which process group a child runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// A new group the child leads (Unix), a new process group (Windows).
    Own,
    /// The caller's group: ending the child ends the caller too.
    Callers,
}

/// How to start a long-lived child: the command (program, arguments, environment, working
/// directory — [`std::process::Command`]'s), its standard streams and its process group.
/// Streams default to closed stdin and inherited stdout and stderr.
///
/// There is no `pre_exec` hook: the workspace forbids `unsafe`, and code between `fork` and
/// `exec` of a multi-threaded parent must be async-signal-safe. What must happen in the child
/// before the program runs (the kernel sandbox, `scimcp_process::sandbox`) happens in a wrapper the
/// command execs first — `scimcp __sandbox --policy … -- PROGRAM ARGS…` — so the command
/// given to [`ChildCommand::new`] is where it goes: whoever builds the argv puts the wrapper
/// in front (the run guard, for a run's CLI).
pub struct ChildCommand {
    command: std::process::Command,
    group: Group,
    stdin_set: bool,
}

impl std::fmt::Debug for ChildCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildCommand")
            .field("command", &self.command)
            .field("group", &self.group)
            .finish_non_exhaustive()
    }
}

impl ChildCommand {
    /// `command`, to be started in a process group of its own.
    pub fn new(command: std::process::Command) -> ChildCommand {
        ChildCommand {
            command,
            group: Group::Own,
            stdin_set: false,
        }
    }

    /// Its stdin (default: closed, so a program that reads it sees the end at once instead
    /// of waiting on ours).
    pub fn stdin(mut self, cfg: impl Into<Stdio>) -> Self {
        self.command.stdin(cfg);
        self.stdin_set = true;
        self
    }

    /// Its stdout (default: ours).
    pub fn stdout(mut self, cfg: impl Into<Stdio>) -> Self {
        self.command.stdout(cfg);
        self
    }

    /// Its stderr (default: ours).
    pub fn stderr(mut self, cfg: impl Into<Stdio>) -> Self {
        self.command.stderr(cfg);
        self
    }

    /// All three streams piped: take them with [`Child::take_stdin`] and the like.
    pub fn piped(self) -> Self {
        self.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
    }

    /// Start it in the caller's process group instead of its own: for a process that
    /// already leads a group made for the child (the run guard), so that ending the child's
    /// group ends the caller with it. [`Child::terminate`] then signals the caller too.
    pub fn in_callers_group(mut self) -> Self {
        self.group = Group::Callers;
        self
    }

    /// The command line, for messages.
    pub fn describe(&self) -> String {
        crate::run::describe(&self.command)
    }

    /// Start it. The error is the operating system's (no such program, not executable, a
    /// failed [`ChildCommand::pre_exec`] hook); the caller names the program in its message.
    pub fn spawn(self) -> io::Result<Child> {
        let ChildCommand {
            mut command,
            group,
            stdin_set,
        } = self;
        if !stdin_set {
            command.stdin(Stdio::null());
        }
        #[cfg(unix)]
        if group == Group::Own {
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
        }
        #[cfg(windows)]
        {
            use std::os::windows::process::CommandExt;
            const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
            const CREATE_NO_WINDOW: u32 = 0x0800_0000;
            let own = if group == Group::Own {
                CREATE_NEW_PROCESS_GROUP
            } else {
                0
            };
            command.creation_flags(own | CREATE_NO_WINDOW);
        }
        let mut command = tokio::process::Command::from(command);
        // Only the child itself: its group is ended by Child's Drop, which knows whether the
        // group is the caller's.
        command.kill_on_drop(true);
        let inner = command.spawn()?;
        let pid = inner
            .id()
            .ok_or_else(|| io::Error::other("the started child has no process id"))?;
        let own_group = group == Group::Own;
        let group = match group {
            Group::Own => pid,
            #[cfg(unix)]
            Group::Callers => nix::unistd::getpgrp().as_raw().unsigned_abs(),
            #[cfg(not(unix))]
            Group::Callers => pid,
        };
        Ok(Child {
            inner,
            pid,
            group,
            own_group,
            status: None,
        })
    }
}

/// A started child (see the [module documentation](self)).
#[derive(Debug)]
pub struct Child {
    inner: tokio::process::Child,
    pid: u32,
    group: u32,
    own_group: bool,
    status: Option<ExitStatus>,
}

/// How [`Child::terminate`] ended the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited within the grace: it had already, or it did on SIGTERM.
    InGrace(ExitStatus),
    /// It was still running when the grace ran out and SIGKILL ended it (`None` when its
    /// status could not be read).
    Killed(Option<ExitStatus>),
}

impl Ended {
    /// Its exit status, when known.
    pub fn status(&self) -> Option<ExitStatus> {
        match self {
            Ended::InGrace(s) => Some(*s),
            Ended::Killed(s) => *s,
        }
    }
}

impl Child {
    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The process group its ending signals: the child's own pid, or the caller's group
    /// ([`ChildCommand::in_callers_group`]). On Windows, the root of the tree `taskkill`
    /// ends.
    pub fn group(&self) -> u32 {
        self.group
    }

    /// Its stdin pipe, if [`ChildCommand::stdin`] asked for one and it was not taken yet.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.inner.stdin.take()
    }

    /// Its stdout pipe, if asked for and not taken yet.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.inner.stdout.take()
    }

    /// Its stderr pipe, if asked for and not taken yet.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.inner.stderr.take()
    }

    /// Wait for the child to exit (once exited, its status again). Cancel-safe: dropping
    /// the future leaves the child running and waitable.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = self.inner.wait().await?;
        self.status = Some(status);
        Ok(status)
    }

    /// End the child's whole process group: SIGTERM, up to `grace` for the child to exit
    /// (the suite's grace is [`TERMINATE_GRACE`](crate::TERMINATE_GRACE)), then SIGKILL to
    /// the group — whatever the child left in it (workers, daemons) goes too — and the child
    /// reaped. On Windows there is no polite signal: the tree is ended at once.
    ///
    /// A child in the caller's group ([`ChildCommand::in_callers_group`]) takes the caller
    /// with it: the SIGKILL ends this process, and `terminate` does not return.
    pub async fn terminate(&mut self, grace: Duration) -> Ended {
        signal_tree(self.group, Kill::Terminate);
        let ended = match tokio::time::timeout(grace, self.wait()).await {
            Ok(Ok(status)) => Ended::InGrace(status),
            Ok(Err(_)) | Err(_) => {
                signal_tree(self.group, Kill::Kill);
                // The group's SIGKILL reached it unless it left the group.
                let _ = self.inner.start_kill();
                Ended::Killed(self.wait().await.ok())
            }
        };
        self.end_group();
        ended
    }

    /// SIGKILL to the child's group: what a child that exited on its own left running in
    /// it ends with it. Nothing for a child in the caller's group, which would end the
    /// caller.
    pub fn end_group(&self) {
        if self.own_group {
            signal_tree(self.group, Kill::Kill);
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // Never waited for to the end (an aborted task, an early return): its group must not
        // outlive it. A reaped child's pid may be reused, so only while it is not reaped;
        // the child itself is killed by kill_on_drop.
        if self.status.is_none() && self.own_group {
            signal_tree(self.group, Kill::Kill);
        }
    }
}

/// The signal that ended a process, from its exit status (Unix; `None` elsewhere, and for
/// a process that exited).
pub fn exit_signal(status: &ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        std::os::unix::process::ExitStatusExt::signal(status)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::process::Command;
    use std::time::Instant;

    use tokio::io::AsyncReadExt;

    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    fn marker(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("scimcp-child-test-{}-{name}", std::process::id()))
    }

    #[tokio::test]
    async fn it_leads_its_own_group_and_its_pipes_are_the_callers() {
        let mut child = ChildCommand::new(sh("echo out; echo err >&2; exit 4"))
            .piped()
            .spawn()
            .unwrap();
        assert_eq!(child.group(), child.pid());
        let (mut out, mut err) = (String::new(), String::new());
        child
            .take_stdout()
            .unwrap()
            .read_to_string(&mut out)
            .await
            .unwrap();
        child
            .take_stderr()
            .unwrap()
            .read_to_string(&mut err)
            .await
            .unwrap();
        assert_eq!((out.as_str(), err.as_str()), ("out\n", "err\n"));
        assert_eq!(child.wait().await.unwrap().code(), Some(4));
        // Waiting again gives the same status.
        assert_eq!(child.wait().await.unwrap().code(), Some(4));
    }

    #[tokio::test]
    async fn a_child_that_exits_on_sigterm_ends_within_the_grace() {
        let mut child = ChildCommand::new(sh("exec sleep 30")).spawn().unwrap();
        let ended = child.terminate(crate::TERMINATE_GRACE).await;
        assert!(matches!(ended, Ended::InGrace(_)), "{ended:?}");
        assert_eq!(exit_signal(&ended.status().unwrap()), Some(15));
    }

    #[tokio::test]
    async fn a_child_that_ignores_sigterm_is_killed_after_the_grace_with_its_group() {
        let worker = marker("worker");
        let _ = fs_err::remove_file(&worker);
        // The shell ignores SIGTERM and so does the worker it leaves in its group; the
        // worker writes the marker 1 s in, after the grace, only if it outlived the SIGKILL.
        let script = format!(
            "trap '' TERM; (trap '' TERM; sleep 1; touch {}) & echo ready; while :; do sleep 0.05; done",
            worker.display()
        );
        let mut child = ChildCommand::new(sh(&script))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = [0u8; 6];
        child
            .take_stdout()
            .unwrap()
            .read_exact(&mut ready)
            .await
            .unwrap();
        let t0 = Instant::now();
        let ended = child.terminate(Duration::from_millis(300)).await;
        assert!(
            t0.elapsed() >= Duration::from_millis(300),
            "{:?}",
            t0.elapsed()
        );
        assert!(matches!(ended, Ended::Killed(Some(_))), "{ended:?}");
        assert_eq!(exit_signal(&ended.status().unwrap()), Some(9));
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!worker.exists(), "the worker in the child's group died too");
    }

    #[tokio::test]
    async fn a_dropped_child_takes_its_group_with_it() {
        let worker = marker("dropped");
        let _ = fs_err::remove_file(&worker);
        let script = format!(
            "(sleep 1; touch {}) & echo ready; sleep 30",
            worker.display()
        );
        let mut child = ChildCommand::new(sh(&script))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = [0u8; 6];
        child
            .take_stdout()
            .unwrap()
            .read_exact(&mut ready)
            .await
            .unwrap();
        drop(child);
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!worker.exists(), "the worker outlived its dropped child");
    }
}
