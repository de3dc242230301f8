//! Starting the scientific CLI as an isolated child, and ending its whole process tree.
//!
//! The child gets its own process group (so a cancel reaches every grandchild), a cleared
//! environment with only the allowlisted variables and the plan's fixed ones, and its own
//! working directory. There is never a shell between us and the program.

use std::collections::BTreeMap;
use std::path::Path;

use scimcp_core::run_env::ENV_PASSTHROUGH;

/// A command for `program args…` in `cwd` with the variables `env` (the plan's), isolated
/// as described above. Standard streams are left for the caller to decide.
pub fn isolated_command(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).current_dir(cwd).env_clear();
    for name in ENV_PASSTHROUGH {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.envs(env);
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(windows)]
    {
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        const CREATE_NO_WINDOW: u32 = 0x0800_0000;
        cmd.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
    }
    cmd
}

/// How hard to end a process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ask politely (SIGTERM on Unix).
    Terminate,
    /// No negotiation (SIGKILL on Unix).
    Kill,
}

/// Signal every process in the group led by `pid` (the child we started). Ignores a group
/// that is already gone.
#[cfg(unix)]
pub fn signal_tree(pid: u32, signal: Signal) {
    use nix::sys::signal::{Signal as NixSignal, killpg};
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else { return };
    let sig = match signal {
        Signal::Terminate => NixSignal::SIGTERM,
        Signal::Kill => NixSignal::SIGKILL,
    };
    let _ = killpg(Pid::from_raw(raw), sig);
}

/// Windows has no process groups to signal; `taskkill /T` ends the tree rooted at `pid`.
#[cfg(windows)]
pub fn signal_tree(pid: u32, _signal: Signal) {
    let _ = std::process::Command::new("taskkill")
        .args(["/T", "/F", "/PID", &pid.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}
