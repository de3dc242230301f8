//! `scimcp __sandbox --policy JSON [--requirement …] --report FILE -- PROGRAM ARGS…`: the
//! exec wrapper the run guard starts each CLI through. It enters the sandbox
//! (`scimcp_process::sandbox::exec`), writes what applied to the report file, then becomes
//! the CLI; on failure it says why on stderr and exits 125 (127 when the CLI is missing),
//! like the guard.

use std::io::Write as _;
use std::process::ExitCode;

use scimcp_process::sandbox::{self, Policy, Requirement};

use crate::cli::{RequirementArg, SandboxArgs};

pub(crate) fn run(args: SandboxArgs) -> ExitCode {
    let policy: Policy = match serde_json::from_str(&args.policy) {
        Ok(p) => p,
        Err(e) => {
            return fail(&format!(
                "the --policy is not a sandbox policy: {e}; it is written by the server, \
                 so start runs through `scimcp serve`"
            ));
        }
    };
    let requirement = match args.requirement {
        RequirementArg::Required => Requirement::Required,
        RequirementArg::BestEffort => Requirement::BestEffort,
    };
    // Opened before entering: the sandbox may not grant the report's directory. The
    // descriptor is close-on-exec, so the CLI never holds it.
    let mut report = match fs_err::File::create(&args.report) {
        Ok(f) => f,
        Err(e) => return fail(&format!("cannot write the sandbox report: {e}")),
    };
    run_inside(&policy, requirement, &args.command, &mut report)
}

#[cfg(unix)]
fn run_inside(
    policy: &Policy,
    requirement: Requirement,
    command: &[std::ffi::OsString],
    report: &mut fs_err::File,
) -> ExitCode {
    let mut cmd = std::process::Command::new(&command[0]);
    cmd.args(&command[1..]);
    let error = sandbox::exec(policy, requirement, &mut cmd, |applied| {
        let _ = report.write_all(&serde_json::to_vec(applied).unwrap_or_default());
    });
    if let sandbox::SandboxError::Exec { source, .. } = &error
        && source.kind() == std::io::ErrorKind::NotFound
    {
        // As the guard says it, so a missing CLI reads the same inside the sandbox.
        let _ = writeln!(
            std::io::stderr(),
            "scimcp: cannot start {}: {source}",
            command[0].to_string_lossy()
        );
        return ExitCode::from(scimcp_core::exit::COMMAND_NOT_FOUND);
    }
    fail(&error.to_string())
}

#[cfg(not(unix))]
fn run_inside(
    _policy: &Policy,
    _requirement: Requirement,
    _command: &[std::ffi::OsString],
    _report: &mut fs_err::File,
) -> ExitCode {
    fail("the sandbox's exec wrapper needs a Unix system; start the server with --sandbox off")
}

fn fail(message: &str) -> ExitCode {
    // One line: the run's message quotes the first line that starts like this.
    let one_line = message.replace("\n\n", "; ").replace('\n', " ");
    let _ = writeln!(std::io::stderr(), "scimcp: sandbox: {one_line}");
    ExitCode::from(scimcp_core::exit::WRAPPER_FAILED)
}
