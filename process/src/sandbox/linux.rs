//! The Landlock half of the sandbox: the kernel's ABI (for [`probe`](super::probe)) and one
//! ruleset built from a [`Policy`] and applied to the calling thread, through the `landlock`
//! crate (safe wrappers over the three system calls; this workspace forbids `unsafe`).
//!
//! The ruleset asks for everything the crate knows ([`TARGET`]) in best-effort mode: the
//! crate drops the rights this kernel lacks instead of failing, and the report
//! ([`planned`](super::report)) says which ones, from the same ABI number. `Required` is
//! decided before this runs, on the baseline protections, not by the crate's
//! all-or-nothing `HardRequirement`, which would refuse a run for lacking UDP rules.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, LandlockStatus, PathBeneath, PathFd, RestrictSelf, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope,
};

use super::error::SandboxError;
use super::policy::Policy;
use super::report::NoLandlock;

/// The newest Landlock ABI this code asks rights of. Raising it is a reviewed change: a new
/// ABI's rights deny more, and its protection must be added to [`Protection`](super::Protection).
const TARGET: ABI = ABI::V10;

/// The kernel's Landlock ABI, or why there is none. Asks the kernel only (the version query
/// of `landlock_create_ruleset`); restricts nothing.
pub(crate) fn landlock_status() -> Result<u32, NoLandlock> {
    let status = RestrictSelf::default()
        .no_new_privs(false)
        .apply()
        .map_err(|e| NoLandlock::Query(e.to_string()))?;
    match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => Ok(effective_abi as u32),
        LandlockStatus::NotEnabled => Err(NoLandlock::NotEnabled),
        LandlockStatus::NotImplemented => Err(NoLandlock::NotImplemented),
    }
}

/// Restrict the calling thread (and every process it becomes or starts) to `policy`'s paths,
/// without TCP/UDP unless the policy allows the network, and scoped signals and abstract
/// sockets. Paths that do not exist are pushed to `skipped`. Returns what the kernel says it
/// enforced.
pub(crate) fn restrict(
    policy: &Policy,
    skipped: &mut Vec<PathBuf>,
) -> Result<RulesetStatus, SandboxError> {
    fn refused(step: &'static str) -> impl Fn(RulesetError) -> SandboxError {
        move |e| SandboxError::Landlock {
            step,
            message: e.to_string(),
        }
    }
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET))
        .map_err(refused("file-system rights"))?
        .scope(Scope::from_all(TARGET))
        .map_err(refused("scopes"))?;
    if !policy.network {
        // Handled with no rule granting a port: every TCP (and, from ABI 10, UDP) connect and
        // bind is denied.
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET))
            .map_err(refused("network rights"))?;
    }
    let mut created = ruleset.create().map_err(refused("create the ruleset"))?;
    let grants = [
        (&policy.read_only, AccessFs::from_read(TARGET), "read-only"),
        (&policy.read_write, AccessFs::from_all(TARGET), "read-write"),
    ];
    for (paths, access, label) in grants {
        for path in paths {
            let open_error = |source| SandboxError::OpenPath {
                path: path.clone(),
                access: label,
                source,
            };
            let is_dir = match fs_err::metadata(path) {
                Ok(meta) => meta.is_dir(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    skipped.push(path.clone());
                    continue;
                }
                Err(e) => return Err(open_error(e)),
            };
            // A rule on a file may only carry the rights that make sense for a file.
            let access = if is_dir {
                access
            } else {
                access & AccessFs::from_file(TARGET)
            };
            let fd = PathFd::new(path).map_err(|e| open_error(std::io::Error::other(e)))?;
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(refused("add a path rule"))?;
        }
    }
    let status = created
        .restrict_self()
        .map_err(refused("restrict the process"))?;
    Ok(status.ruleset)
}
