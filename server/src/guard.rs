//! The run guard: a small process between the server and a run's CLI, so that no CLI (nor
//! any process it started) outlives its server.
//!
//! A server killed with SIGKILL cannot end its runs; the kernel only reparents them. So the
//! server starts each run as `scimcp __guard --parent-pid PID --status-file FILE -- PROGRAM
//! ARGS…`, in the run's process group. The guard starts the CLI in the same group and waits.
//! When its parent dies — Linux tells it at once (`PR_SET_PDEATHSIG`), elsewhere it notices
//! within a quarter of a second because its parent pid changes — it ends the whole group the
//! way a cancel does: SIGTERM, the suite's grace ([`scimcp_process::TERMINATE_GRACE`]),
//! SIGKILL (itself included). On Linux it is also a subreaper, so a worker whose parent died
//! stays its child: once the CLI has ended (any ending), the guard ends every child it has
//! left — the orphans, also those that left the run's group with `setsid()` — SIGTERM, the
//! grace, SIGKILL, round after round ([`scimcp_process::end_children`]), and reaps them
//! before it reports. Elsewhere on Unix there is no subreaper: an orphan that left the group
//! goes to launchd or PID 1 and survives the run (docs/RELIABILITY.md says so).
//!
//! Otherwise it is invisible: stdin, stdout, stderr, the working directory and the
//! environment pass to the CLI untouched; a SIGTERM the server sends the group (a cancel)
//! reaches the CLI directly, and the guard just waits for it; when the CLI ends, the guard
//! writes how (exit code or signal) to the status file and exits, and the server records
//! that instead of the guard's own status. Like `env` and `timeout`, it exits with the CLI's
//! status (128 + the signal when a signal ended it), or with 125 when it failed itself and
//! 127 when the CLI could not be started ([`scimcp_core::exit`]), never the suite's 1 and 2.
//!
//! Unix only. On Windows the server starts the CLI directly (a job object would be the
//! equivalent; docs/RELIABILITY.md says it is not done).

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The hidden subcommand's name.
pub const SUBCOMMAND: &str = "__guard";

/// How the CLI ended, as the guard saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CliStatus {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

/// Arguments of `scimcp __guard`.
#[derive(Debug, clap::Args)]
pub(crate) struct GuardArgs {
    /// The server's pid: when this process is no longer the parent, the server is gone.
    #[arg(long)]
    parent_pid: u32,
    /// Where to write how the CLI ended.
    #[arg(long)]
    status_file: PathBuf,
    /// The CLI and its arguments.
    #[arg(last = true, required = true)]
    command: Vec<OsString>,
}

/// The argv that runs `program args` under the guard.
pub fn wrap(
    program: &std::path::Path,
    args: &[String],
    status_file: &std::path::Path,
) -> Option<(PathBuf, Vec<OsString>)> {
    // A unit test's own executable is the test harness, not scimcp: its CLIs run unguarded.
    if !cfg!(unix) || cfg!(test) {
        return None;
    }
    let guard = std::env::current_exe().ok()?;
    let mut argv: Vec<OsString> = vec![
        SUBCOMMAND.into(),
        "--parent-pid".into(),
        std::process::id().to_string().into(),
        "--status-file".into(),
        status_file.as_os_str().to_owned(),
        "--".into(),
        program.as_os_str().to_owned(),
    ];
    argv.extend(args.iter().map(OsString::from));
    Some((guard, argv))
}

/// Read (and remove) the status the guard left, if it left one.
pub fn take_status(status_file: &std::path::Path) -> Option<CliStatus> {
    let bytes = fs_err::read(status_file).ok()?;
    let _ = fs_err::remove_file(status_file);
    serde_json::from_slice(&bytes).ok()
}

#[cfg(unix)]
pub(crate) fn run(args: GuardArgs) -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(_) => return std::process::ExitCode::from(scimcp_core::exit::WRAPPER_FAILED),
    };
    runtime.block_on(guard(args))
}

#[cfg(not(unix))]
pub(crate) fn run(_args: GuardArgs) -> std::process::ExitCode {
    std::process::ExitCode::from(scimcp_core::exit::WRAPPER_FAILED)
}

#[cfg(unix)]
async fn guard(args: GuardArgs) -> std::process::ExitCode {
    use tokio::signal::unix::{SignalKind, signal};

    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::Signal;
        // Told at once when the server dies; reparented workers stay ours.
        let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGUSR1);
        let _ = nix::sys::prctl::set_child_subreaper(true);
    }
    let orphaned = || nix::unistd::getppid().as_raw() as u32 != args.parent_pid;
    if orphaned() {
        // The server died before we could be told: start nothing.
        return std::process::ExitCode::from(scimcp_core::exit::WRAPPER_FAILED);
    }
    let (Ok(mut terms), Ok(mut parent_died)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::user_defined1()),
    ) else {
        return std::process::ExitCode::from(scimcp_core::exit::WRAPPER_FAILED);
    };
    let mut child = match cli_command(&args.command).spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!(
                    "scimcp: cannot start {}: {e}\n",
                    args.command[0].to_string_lossy()
                )
                .as_bytes(),
            );
            return std::process::ExitCode::from(scimcp_core::exit::COMMAND_NOT_FOUND);
        }
    };
    let mut poll = tokio::time::interval(std::time::Duration::from_millis(250));
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            // A cancel: the whole group got it, the CLI included; wait for it to end.
            _ = terms.recv() => {}
            _ = parent_died.recv() => end_group_and_die(&mut child).await,
            _ = poll.tick() => {
                if orphaned() {
                    end_group_and_die(&mut child).await;
                }
            }
        }
    };
    // Whatever the CLI left behind ends before the run is reported over: on Linux the
    // orphans reparented to this subreaper, also those that left the run's group
    // (`setsid()`), which the group's signal never reaches (#29).
    scimcp_process::end_children(scimcp_process::TERMINATE_GRACE, &[]);
    let Ok(status) = status else {
        return std::process::ExitCode::from(scimcp_core::exit::WRAPPER_FAILED);
    };
    use std::os::unix::process::ExitStatusExt;
    let cli = CliStatus {
        exit_code: status.code(),
        signal: status.signal(),
    };
    // The server reads (and removes) this file as soon as the guard exits, so it must appear
    // whole (temporary file, then rename) but need not survive a power cut: no fsync, which
    // costs a run two disk flushes (about 8 ms here; bench/run.sh measures it).
    let tmp = args.status_file.with_extension("tmp");
    let _ = fs_err::write(&tmp, serde_json::to_vec(&cli).unwrap_or_default())
        .and_then(|()| fs_err::rename(&tmp, &args.status_file));
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        (None, None) => i32::from(scimcp_core::exit::WRAPPER_FAILED),
    };
    std::process::ExitCode::from(code.clamp(0, 255) as u8)
}

/// The CLI's command: the argv the guard was given, in the guard's own process group (the
/// run's, which the server signals), with stdin, stdout, stderr, the working directory and
/// the environment passed through untouched. The one place the CLI's start is decided here:
/// a wrapper that must run before the CLI (the sandbox's exec wrapper) goes in front of the
/// argv here.
#[cfg(unix)]
fn cli_command(command: &[OsString]) -> scimcp_process::ChildCommand {
    let mut cmd = std::process::Command::new(&command[0]);
    cmd.args(&command[1..]);
    scimcp_process::ChildCommand::new(cmd)
        .in_callers_group()
        .stdin(std::process::Stdio::inherit())
}

/// The server is gone: end the CLI's whole group (this guard included) the way a cancel
/// does — SIGTERM, the suite's grace, SIGKILL.
#[cfg(unix)]
async fn end_group_and_die(child: &mut scimcp_process::Child) -> ! {
    // The orphans that left the group first (the CLI itself is still the runtime's to
    // reap): the group's SIGKILL below ends this guard too, and nothing after it.
    scimcp_process::end_children(scimcp_process::TERMINATE_GRACE, &[child.pid()]);
    // The CLI is in this guard's group, so its ending is the guard's too.
    child.terminate(scimcp_process::TERMINATE_GRACE).await;
    // SIGKILL of our own group ends this process too; should it not, leave anyway.
    std::process::exit(137)
}
