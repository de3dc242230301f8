//! Building the scientific CLI's isolated command: a cleared environment with only the
//! allowlisted variables and the plan's fixed ones, and its own working directory. There is
//! never a shell between us and the program.
//!
//! Starting it and ending it are `scimcp_process`'s: [`scimcp_process::ChildCommand`] puts it
//! in its own process group (so a cancel reaches every grandchild) and
//! [`scimcp_process::Child::terminate`] ends that group with the suite's one grace.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use scimcp_core::run_env::ENV_PASSTHROUGH;
use scimcp_process::ChildCommand;

/// A long-lived child for `program args…` in `cwd` with the variables `env` (the plan's),
/// isolated as described above. Standard streams are left for the caller to decide.
pub fn isolated_command(
    program: &Path,
    args: impl IntoIterator<Item = impl AsRef<OsStr>>,
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> ChildCommand {
    let mut cmd = isolated_std_command(program, &[], cwd, env);
    cmd.args(args);
    ChildCommand::new(cmd)
}

/// [`isolated_command`] for a blocking caller (the shared runner of helper steps). The
/// process group comes from whoever spawns it (the runner and the run executor both make one).
pub fn isolated_std_command(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).current_dir(cwd).env_clear();
    for name in ENV_PASSTHROUGH {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.envs(env);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        const CREATE_NO_WINDOW: u32 = 0x0800_0000;
        cmd.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
    }
    cmd
}

/// How hard to end a process tree, and ending it (recovery ends a recorded group it did not
/// start): the suite's one implementation.
pub use scimcp_process::{Kill as Signal, signal_tree};
