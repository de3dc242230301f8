//! Claude Code's own command-line tool: `claude mcp add-json` / `claude mcp remove`, which
//! registration goes through when `claude` is on PATH (claude_code.rs says why). It has a file
//! of its own, below the client modules, because the [`super::Client`] trait names it: the
//! trait's module then imports no client's module.

use std::path::PathBuf;
use std::process::Command;

use crate::host::Host;

/// The `claude` program and the environment to run it in.
#[derive(Debug, Clone)]
pub struct ClaudeCli {
    pub program: PathBuf,
    envs: Vec<(String, std::ffi::OsString)>,
}

/// The `claude` CLI failed.
#[derive(Debug, thiserror::Error)]
#[error("`{program} {args}` did not register scimcp: {detail}")]
pub struct CliError {
    pub program: String,
    pub args: String,
    pub detail: String,
}

impl ClaudeCli {
    /// `program`, run in `host`'s environment (and only that: the rest is cleared).
    pub(super) fn new(program: PathBuf, host: &Host) -> ClaudeCli {
        ClaudeCli {
            program,
            envs: host.vars().map(|(k, v)| (k.clone(), v.clone())).collect(),
        }
    }

    fn run(&self, args: &[&str]) -> Result<(), CliError> {
        let mut cmd = Command::new(&self.program);
        cmd.args(args)
            .env_clear()
            .envs(self.envs.iter().map(|(k, v)| (k, v)));
        let step = format!("`claude {}`", args[..2.min(args.len())].join(" "));
        let limit = crate::steps::limit(crate::steps::CLIENT_CLI);
        scimcp_process::run(scimcp_process::Step::new(&step, cmd).timeout(limit))
            .and_then(|c| c.check())
            .map(|_| ())
            .map_err(|e| CliError {
                program: self.program.display().to_string(),
                args: args.join(" "),
                detail: e.to_string(),
            })
    }

    /// `claude mcp add-json --scope user NAME JSON`.
    pub fn add(&self, name: &str, entry: &serde_json::Value) -> Result<(), CliError> {
        let json = entry.to_string();
        self.run(&["mcp", "add-json", "--scope", "user", name, &json])
    }

    /// `claude mcp remove --scope user NAME`.
    pub fn remove(&self, name: &str) -> Result<(), CliError> {
        self.run(&["mcp", "remove", "--scope", "user", name])
    }
}
