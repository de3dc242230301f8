//! The process half of the sandbox, on Unix: resource limits ([`Limits`]) and, on Linux,
//! `PR_SET_NO_NEW_PRIVS`. The limits hold for the whole process, no_new_privs for the calling
//! thread; both pass to what it `exec`s and `fork`s, which is why they are set on the thread
//! that then `exec`s the program.

use nix::sys::resource::{Resource, getrlimit, rlim_t, setrlimit};

use super::error::SandboxError;
use super::policy::Limits;

/// Lower each limit to the policy's value, soft and hard, so the program cannot raise it
/// back (an unprivileged process cannot raise a hard limit). A limit already lower stays.
pub(crate) fn apply(limits: &Limits) -> Result<(), SandboxError> {
    lower(Resource::RLIMIT_CORE, "RLIMIT_CORE", limits.max_core_bytes)?;
    // nix offers RLIMIT_NPROC on these systems only (not on macOS); the report says so.
    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_os = "openbsd",
        target_os = "netbsd"
    ))]
    lower(Resource::RLIMIT_NPROC, "RLIMIT_NPROC", limits.max_processes)?;
    if let Some(bytes) = limits.max_file_bytes {
        lower(Resource::RLIMIT_FSIZE, "RLIMIT_FSIZE", bytes)?;
    }
    Ok(())
}

fn lower(resource: Resource, name: &'static str, value: u64) -> Result<(), SandboxError> {
    let error = |e: nix::Error| SandboxError::Limit {
        limit: name,
        value,
        source: e.into(),
    };
    let (soft, hard) = getrlimit(resource).map_err(error)?;
    let wanted = rlim_t::try_from(value).unwrap_or(rlim_t::MAX);
    let hard = hard.min(wanted);
    setrlimit(resource, soft.min(hard), hard).map_err(error)
}

/// Forbid the process and its descendants to gain privileges (setuid binaries, file
/// capabilities), and say whether the kernel reports it set.
#[cfg(target_os = "linux")]
pub(crate) fn forbid_new_privileges() -> Result<(), SandboxError> {
    let error = |e: nix::Error| SandboxError::NoNewPrivileges { source: e.into() };
    nix::sys::prctl::set_no_new_privs().map_err(error)?;
    match nix::sys::prctl::get_no_new_privs().map_err(error)? {
        true => Ok(()),
        false => Err(SandboxError::NoNewPrivileges {
            source: std::io::Error::other("the flag reads back unset"),
        }),
    }
}
