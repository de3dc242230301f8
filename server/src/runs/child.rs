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
    let mut cmd = tokio::process::Command::from(isolated_std_command(program, args, cwd, env));
    cmd.kill_on_drop(true);
    cmd
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

/// How hard to end a process tree, and ending it: the suite's one implementation.
pub use scimcp_process::{Kill as Signal, signal_tree};
