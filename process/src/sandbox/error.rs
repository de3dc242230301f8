//! [`SandboxError`]: why a sandbox could not be set up, naming the protection or the path,
//! with what to do next.

use std::path::PathBuf;

use super::report::Protection;

/// Setting up the sandbox failed; the program was not started.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// [`Requirement::Required`](super::Requirement::Required) and a baseline protection
    /// cannot be enforced here.
    #[error(
        "the sandbox cannot enforce {protection} here: {reason}\n\nhint: run on Linux 6.7 or \
         later with Landlock enabled (`landlock` in the kernel's `lsm=` list), or start the \
         server without `--sandbox required` to run with the protections this system has"
    )]
    Unenforceable {
        protection: Protection,
        reason: String,
    },
    /// The policy grants a relative path.
    #[error(
        "the sandbox policy grants the relative path {path}\n\nhint: grant absolute paths; the \
         sandboxed program may start in another directory"
    )]
    RelativePath { path: PathBuf },
    /// A granted path exists but could not be opened to build its rule.
    #[error(
        "cannot open {path} to grant it {access} in the sandbox: {source}\n\nhint: check that \
         the path is readable by this user, or remove it from the grants"
    )]
    OpenPath {
        path: PathBuf,
        access: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The kernel refused the Landlock rules.
    #[error(
        "the kernel refused the sandbox's Landlock rules ({step}): {message}\n\nhint: this is a \
         bug in scimcp's sandbox or an unusual kernel; report it with the output of `scimcp \
         doctor`"
    )]
    Landlock { step: &'static str, message: String },
    /// A process limit could not be set.
    #[error(
        "cannot set the sandbox's process limit {limit} to {value}: {source}\n\nhint: a \
         container or a seccomp filter may forbid setrlimit; run without `--sandbox required` \
         to start the program without this limit"
    )]
    Limit {
        limit: &'static str,
        value: u64,
        #[source]
        source: std::io::Error,
    },
    /// `PR_SET_NO_NEW_PRIVS` failed.
    #[error(
        "cannot forbid new privileges (PR_SET_NO_NEW_PRIVS) for the sandbox: {source}\n\nhint: \
         a seccomp filter may forbid prctl; run without `--sandbox required` to start the \
         program without this protection"
    )]
    NoNewPrivileges {
        #[source]
        source: std::io::Error,
    },
    /// The program could not be started after the sandbox was entered.
    #[error(
        "cannot start {program} in the sandbox: {source}\n\nhint: a program the policy does not \
         grant cannot even be started: grant its directory read-only"
    )]
    Exec {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SandboxError {
    /// The protection this error is about, if it is about one.
    pub fn protection(&self) -> Option<Protection> {
        match self {
            SandboxError::Unenforceable { protection, .. } => Some(*protection),
            SandboxError::Limit { .. } => Some(Protection::ProcessLimits),
            SandboxError::NoNewPrivileges { .. } => Some(Protection::NoNewPrivileges),
            SandboxError::Landlock { .. } | SandboxError::OpenPath { .. } => {
                Some(Protection::FileSystem)
            }
            SandboxError::RelativePath { .. } | SandboxError::Exec { .. } => None,
        }
    }
}
