//! The run sandbox (issue 29): a scientific CLI may read its runtime and write its run, and
//! nothing else — not the user's home, other runs, scimcp's own state and tokens, the
//! network (unless its workflow declares it), nor processes outside its own.
//!
//! A [`Policy`] says what is granted; [`enter`] restricts the *current* process to it;
//! [`exec`] enters and then replaces the process with the program, which (and every process
//! it starts) stays restricted. [`probe`] says what this system can enforce ([`Support`]);
//! `enter` says what it did ([`Applied`]), naming each protection that did not apply and
//! why, and with [`Requirement::Required`] refuses, naming it, when a baseline protection
//! cannot apply.
//!
//! On Linux the kernel does the enforcing: Landlock (file system, TCP — UDP from ABI 10 —,
//! signal and abstract-socket scopes), `PR_SET_NO_NEW_PRIVS` and `setrlimit`. On macOS
//! [`enter`] sets the limits and [`exec`] starts the program through `/usr/bin/sandbox-exec`
//! with the policy's Seatbelt profile ([`seatbelt_profile`], [`seatbelt_command`]): files,
//! network, signals; macOS has no no_new_privs and no `RLIMIT_NPROC`, so `Required` refuses
//! there. On Windows nothing is enforced, and every report says so.
//!
//! # Why an exec wrapper, not a `pre_exec` hook
//!
//! The sandbox is entered by a small process that then `exec`s the program — the run guard
//! starts `scimcp __sandbox --policy JSON -- PROGRAM ARGS…` (phase 2), which calls [`exec`]
//! — rather than in a `pre_exec` hook between `fork` and `exec` of the guard's child:
//! - this workspace forbids `unsafe`, and `pre_exec` is unsafe for a reason: after `fork` in
//!   a multi-threaded parent (the guard runs tokio) only async-signal-safe calls are sound,
//!   and building a ruleset allocates and opens every granted path;
//! - Landlock and no_new_privs restrict the calling *thread*; a fresh process that restricts
//!   itself on the thread that then calls `exec` leaves no unrestricted thread behind;
//! - the guard itself stays unrestricted, so it can still write its status file and end the
//!   process group (signals from outside into the sandbox are allowed);
//! - Codex's Linux sandbox does the same (a helper, reached through its own binary, that
//!   applies Landlock and seccomp, then `execvp`s the command).
//!
//! The price is one more `exec` per run.
//!
//! # What it does not cover
//!
//! - File metadata (`stat`, `readlink`): Landlock does not restrict it; names and sizes of
//!   files outside stay visible, their contents do not.
//! - Descriptors opened before [`enter`] (stdin, stdout, stderr, and whatever the caller
//!   leaves open without close-on-exec) keep working.
//! - UDP before Landlock ABI 10 and pathname UNIX sockets before ABI 9 (Linux 7.1): on older
//!   kernels a program can reach a session bus on `/run/user/UID/bus`; the reports name both.
//! - `/dev/shm` is not granted: POSIX semaphores and shared memory (Python's
//!   `multiprocessing` locks) need it, and a workflow that does must be granted it
//!   ([`Policy::allow_shared_memory`]).
//! - Root: the kernel exempts root from `RLIMIT_NPROC`, and root may raise its own limits.

mod error;
#[cfg(unix)]
mod limits;
#[cfg(target_os = "linux")]
mod linux;
mod policy;
mod report;
mod seatbelt;

pub use error::SandboxError;
pub use policy::{Limits, Policy, Requirement, system_read_only, system_read_write};
pub use report::{Applied, Protection, ProtectionState, State, Support};
pub use seatbelt::{seatbelt_command, seatbelt_profile};

use report::{Platform, planned};

/// What this system can enforce, for a policy without network. Changes nothing.
pub fn probe() -> Support {
    probe_for(false)
}

/// What this system can enforce for a policy that does (or not) allow the network: the
/// network's protections are then not requested. Changes nothing.
pub fn probe_for(network: bool) -> Support {
    let platform = platform();
    Support {
        os: platform.os.to_owned(),
        landlock_abi: platform.landlock.as_ref().ok().copied(),
        protections: planned(&platform, network),
    }
}

/// Restrict the current process to `policy`, for good: limits, no new privileges, then the
/// Landlock ruleset. Call it right before `exec` (see [`exec`]), on the thread that will call
/// `exec`, in a process that does nothing else afterwards.
///
/// With [`Requirement::Required`], fails before changing anything when a baseline protection
/// cannot be enforced here, and fails (the process must then not start the program) when one
/// does not apply. With [`Requirement::BestEffort`], a protection that does not apply is
/// reported in [`Applied`] instead; a granted path that exists but cannot be opened fails in
/// both modes, as it means the policy is wrong.
pub fn enter(policy: &Policy, requirement: Requirement) -> Result<Applied, SandboxError> {
    if let Some(path) = policy.first_relative_path() {
        return Err(SandboxError::RelativePath {
            path: path.to_owned(),
        });
    }
    let platform = platform();
    let mut applied = Applied {
        landlock_abi: platform.landlock.as_ref().ok().copied(),
        protections: planned(&platform, policy.network),
        skipped_paths: Vec::new(),
    };
    if requirement == Requirement::Required {
        require_baseline(&applied)?;
    }
    apply(policy, requirement, &mut applied)?;
    if requirement == Requirement::Required {
        require_baseline(&applied)?;
    }
    Ok(applied)
}

/// [`enter`], then replace the current process with `command` (its environment, working
/// directory and descriptors as set on it). `on_applied` sees the report first: write it to
/// a descriptor opened before (the sandbox may deny opening one now). Returns only on
/// failure.
#[cfg(unix)]
pub fn exec(
    policy: &Policy,
    requirement: Requirement,
    command: &mut std::process::Command,
    on_applied: impl FnOnce(&Applied),
) -> SandboxError {
    let applied = match enter(policy, requirement) {
        Ok(applied) => applied,
        Err(e) => return e,
    };
    on_applied(&applied);
    // macOS: the file-system and network half is Seatbelt's, applied by `sandbox-exec`
    // (the profile cannot be entered from safe Rust: `sandbox_init` is a C call), which then
    // execs the program; `enter` set the limits, which `sandbox-exec` passes on.
    #[cfg(target_os = "macos")]
    let mut wrapped = if applied
        .state(Protection::FileSystem)
        .is_some_and(State::is_satisfied)
    {
        Some(seatbelt_command(policy, command))
    } else {
        None
    };
    #[cfg(target_os = "macos")]
    let command = wrapped.as_mut().unwrap_or(command);
    let source = std::os::unix::process::CommandExt::exec(command);
    SandboxError::Exec {
        program: command.get_program().into(),
        source,
    }
}

fn require_baseline(applied: &Applied) -> Result<(), SandboxError> {
    match applied
        .protections
        .iter()
        .find(|p| p.protection.is_baseline() && !p.state.is_satisfied())
    {
        Some(gap) => Err(SandboxError::Unenforceable {
            protection: gap.protection,
            reason: gap.state.reason().unwrap_or("not enforced").to_owned(),
        }),
        None => Ok(()),
    }
}

/// Record a protection that did not apply, or fail with it when it is required.
#[cfg_attr(not(unix), allow(dead_code))]
fn degrade(
    applied: &mut Applied,
    requirement: Requirement,
    protection: Protection,
    error: SandboxError,
) -> Result<(), SandboxError> {
    if requirement == Requirement::Required && protection.is_baseline() {
        return Err(error);
    }
    applied.set(
        protection,
        State::NotEnforced {
            reason: first_line(&error),
        },
    );
    Ok(())
}

/// An error's message without its hint, for a report's `reason`.
#[cfg_attr(not(unix), allow(dead_code))]
fn first_line(error: &SandboxError) -> String {
    let text = error.to_string();
    text.split("\n\n").next().unwrap_or_default().to_owned()
}

#[cfg(target_os = "linux")]
fn platform() -> Platform {
    Platform {
        os: std::env::consts::OS,
        landlock: linux::landlock_status(),
        seatbelt: false,
    }
}

#[cfg(not(target_os = "linux"))]
fn platform() -> Platform {
    Platform {
        os: std::env::consts::OS,
        landlock: Err(report::NoLandlock::NotLinux),
        seatbelt: cfg!(target_os = "macos")
            && std::path::Path::new(seatbelt::SANDBOX_EXEC).is_file(),
    }
}

#[cfg(target_os = "linux")]
fn apply(
    policy: &Policy,
    requirement: Requirement,
    applied: &mut Applied,
) -> Result<(), SandboxError> {
    if let Err(e) = limits::apply(&policy.limits) {
        degrade(applied, requirement, Protection::ProcessLimits, e)?;
    }
    if let Err(e) = limits::forbid_new_privileges() {
        degrade(applied, requirement, Protection::NoNewPrivileges, e)?;
    }
    if applied.landlock_abi.is_none() {
        return Ok(());
    }
    let landlocked = |p: &ProtectionState| p.protection.landlock_abi().is_some();
    let refused = match linux::restrict(policy, &mut applied.skipped_paths) {
        Ok(landlock::RulesetStatus::NotEnforced) => Some(SandboxError::Landlock {
            step: "restrict the process",
            message: "the kernel enforced none of the ruleset".to_owned(),
        }),
        Ok(_) => None,
        Err(e @ SandboxError::OpenPath { .. }) => return Err(e),
        Err(e) => Some(e),
    };
    if let Some(error) = refused {
        if requirement == Requirement::Required {
            return Err(error);
        }
        let reason = first_line(&error);
        for p in applied.protections.iter_mut().filter(|p| landlocked(p)) {
            if p.state != State::NotRequested {
                p.state = State::NotEnforced {
                    reason: reason.clone(),
                };
            }
        }
    }
    Ok(())
}

#[cfg(all(unix, not(target_os = "linux")))]
fn apply(
    policy: &Policy,
    requirement: Requirement,
    applied: &mut Applied,
) -> Result<(), SandboxError> {
    if let Err(e) = limits::apply(&policy.limits) {
        degrade(applied, requirement, Protection::ProcessLimits, e)?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn apply(
    _policy: &Policy,
    _requirement: Requirement,
    _applied: &mut Applied,
) -> Result<(), SandboxError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_grant_is_refused_before_anything_changes() {
        let policy = Policy::empty().allow_write("runs/1");
        let error = enter(&policy, Requirement::BestEffort).unwrap_err();
        assert!(matches!(error, SandboxError::RelativePath { .. }));
        assert!(error.to_string().contains("runs/1"), "{error}");
    }

    #[test]
    fn probe_reports_every_protection() {
        let support = probe();
        assert_eq!(support.os, std::env::consts::OS);
        assert_eq!(support.protections.len(), Protection::ALL.len());
        if cfg!(target_os = "linux") {
            assert_eq!(
                support.state(Protection::NoNewPrivileges),
                Some(&State::Enforced)
            );
        }
    }

    #[test]
    fn required_names_the_first_missing_baseline_protection() {
        let applied = Applied {
            landlock_abi: Some(3),
            protections: planned(
                &Platform {
                    os: "linux",
                    landlock: Ok(3),
                    seatbelt: false,
                },
                false,
            ),
            skipped_paths: Vec::new(),
        };
        let error = require_baseline(&applied).unwrap_err();
        assert_eq!(error.protection(), Some(Protection::Tcp));
        let text = error.to_string();
        assert!(text.contains("cannot enforce tcp here"), "{text}");
        assert!(text.contains("Landlock ABI 4 (Linux 6.7)"), "{text}");
        assert!(text.contains("hint:"), "{text}");
    }
}
