//! The one way scimcp starts a scientific runtime's interpreter for a helper step.

use std::path::Path;
use std::process::Command;

/// Variables removed from a runtime interpreter's environment: each would make it import
/// from somewhere other than the runtime (another prefix, extra paths, another virtualenv).
pub const ISOLATION_REMOVED_VARS: &[&str] = &[
    "PYTHONHOME",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "VIRTUAL_ENV",
    "__PYVENV_LAUNCHER__",
];

/// `interpreter -I -B …`: isolated mode (no user site, no `PYTHON*` variables, no current
/// directory on `sys.path`) and no `.pyc` files written into the runtime, with the variables
/// that would point it elsewhere removed.
pub fn python_command(interpreter: &Path) -> Command {
    let mut cmd = Command::new(interpreter);
    cmd.args(["-I", "-B"]);
    for name in ISOLATION_REMOVED_VARS {
        cmd.env_remove(name);
    }
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    cmd
}
