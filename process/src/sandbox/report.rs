//! What the sandbox can enforce here ([`Support`], from [`probe`](super::probe)) and what it
//! did enforce for one program ([`Applied`], from [`enter`](super::enter)): each
//! [`Protection`] with its [`State`] and, when it is not enforced, why. These go into the
//! plan's environment, the run's result and manifest, `get_environment` and the doctor, so a
//! run on an older kernel or another OS says plainly what did not protect it.
//!
//! The states come from one pure function, [`planned`], of the platform (OS, Landlock ABI)
//! and the policy, so each degradation is unit-tested without the kernel that has it.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One protection the sandbox can give a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protection {
    /// Reading, writing, executing, renaming, truncating outside the granted paths is denied
    /// (Landlock ABI 1; truncation from ABI 3).
    FileSystem,
    /// `ioctl` on device files outside the granted paths is denied (Landlock ABI 5).
    DeviceIoctl,
    /// Connecting to a UNIX socket by path (a session bus, a daemon's socket) outside the
    /// granted paths is denied (Landlock ABI 9).
    UnixSocketConnect,
    /// TCP connect and bind are denied unless the policy allows the network (Landlock ABI 4).
    Tcp,
    /// UDP bind, connect and send are denied unless the policy allows the network (Landlock
    /// ABI 10).
    Udp,
    /// Signals to processes outside the sandbox are denied: the program cannot kill or stop
    /// the server or the user's other programs (Landlock ABI 6).
    Signals,
    /// Connecting to abstract UNIX sockets created outside the sandbox is denied (Landlock
    /// ABI 6).
    AbstractUnixSockets,
    /// The program and its children cannot gain privileges (setuid, file capabilities):
    /// `PR_SET_NO_NEW_PRIVS`, Linux.
    NoNewPrivileges,
    /// The [`Limits`](super::Limits) are set (processes, core files, file size): `setrlimit`,
    /// Unix.
    ProcessLimits,
}

impl Protection {
    /// Every protection, in the order reports list them.
    pub const ALL: [Protection; 9] = [
        Protection::FileSystem,
        Protection::DeviceIoctl,
        Protection::UnixSocketConnect,
        Protection::Tcp,
        Protection::Udp,
        Protection::Signals,
        Protection::AbstractUnixSockets,
        Protection::NoNewPrivileges,
        Protection::ProcessLimits,
    ];

    /// The protections [`Requirement::Required`](super::Requirement::Required) insists on:
    /// the file system (with truncation), TCP, no new privileges and the process limits —
    /// what issue 29 asks of every run, and what Linux 6.7 (Landlock ABI 4) gives. The rest
    /// are hardening that newer kernels add; they are reported but do not refuse a run.
    pub fn is_baseline(self) -> bool {
        matches!(
            self,
            Protection::FileSystem
                | Protection::Tcp
                | Protection::NoNewPrivileges
                | Protection::ProcessLimits
        )
    }

    /// The snake-case name reports and messages use.
    pub fn name(self) -> &'static str {
        match self {
            Protection::FileSystem => "file_system",
            Protection::DeviceIoctl => "device_ioctl",
            Protection::UnixSocketConnect => "unix_socket_connect",
            Protection::Tcp => "tcp",
            Protection::Udp => "udp",
            Protection::Signals => "signals",
            Protection::AbstractUnixSockets => "abstract_unix_sockets",
            Protection::NoNewPrivileges => "no_new_privileges",
            Protection::ProcessLimits => "process_limits",
        }
    }

    /// The Landlock ABI that enforces it fully, and the first Linux release with that ABI;
    /// `None` for the protections that are not Landlock's.
    pub(crate) fn landlock_abi(self) -> Option<(u32, &'static str)> {
        match self {
            Protection::FileSystem => Some((3, "6.2")),
            Protection::Tcp => Some((4, "6.7")),
            Protection::DeviceIoctl => Some((5, "6.10")),
            Protection::Signals | Protection::AbstractUnixSockets => Some((6, "6.12")),
            Protection::UnixSocketConnect => Some((9, "7.1")),
            Protection::Udp => Some((10, "7.2")),
            Protection::NoNewPrivileges | Protection::ProcessLimits => None,
        }
    }

    /// Whether the network switch of the policy turns it off.
    fn is_network(self) -> bool {
        matches!(self, Protection::Tcp | Protection::Udp)
    }
}

impl fmt::Display for Protection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a protection is (or, in a [`Support`], would be) enforced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum State {
    Enforced,
    /// Enforced with a named gap.
    Partial {
        reason: String,
    },
    NotEnforced {
        reason: String,
    },
    /// The policy does not ask for it (the network, for a workflow that declared it).
    NotRequested,
}

impl State {
    /// The reason it is not (fully) enforced, if it is not.
    pub fn reason(&self) -> Option<&str> {
        match self {
            State::Partial { reason } | State::NotEnforced { reason } => Some(reason),
            State::Enforced | State::NotRequested => None,
        }
    }

    /// Enforced, or not asked for: nothing is missing.
    pub fn is_satisfied(&self) -> bool {
        matches!(self, State::Enforced | State::NotRequested)
    }
}

/// One protection and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectionState {
    pub protection: Protection,
    #[serde(flatten)]
    pub state: State,
}

/// What this system can enforce: [`probe`](super::probe)'s answer, for `get_environment`,
/// `get_capabilities` and the doctor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Support {
    /// `linux`, `macos`, `windows`, … (Rust's `std::env::consts::OS`).
    pub os: String,
    /// The kernel's Landlock ABI version, when Landlock is available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u32>,
    /// Each protection as [`enter`](super::enter) would apply it for a policy without
    /// network.
    pub protections: Vec<ProtectionState>,
}

impl Support {
    /// Every baseline protection can be enforced: `--sandbox required` can run here.
    pub fn is_complete(&self) -> bool {
        baseline_satisfied(&self.protections)
    }

    /// The state of one protection.
    pub fn state(&self, protection: Protection) -> Option<&State> {
        state_of(&self.protections, protection)
    }
}

/// What [`enter`](super::enter) applied to the current process: for the run's result and
/// manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u32>,
    pub protections: Vec<ProtectionState>,
    /// Granted paths that did not exist, so granted nothing (a system directory this
    /// distribution lacks, say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_paths: Vec<PathBuf>,
}

impl Applied {
    /// Every baseline protection is enforced (or not asked for).
    pub fn is_complete(&self) -> bool {
        baseline_satisfied(&self.protections)
    }

    /// The state of one protection.
    pub fn state(&self, protection: Protection) -> Option<&State> {
        state_of(&self.protections, protection)
    }

    /// The protections that are not (fully) enforced, with why.
    pub fn gaps(&self) -> impl Iterator<Item = &ProtectionState> {
        self.protections.iter().filter(|p| !p.state.is_satisfied())
    }

    pub(crate) fn set(&mut self, protection: Protection, state: State) {
        if let Some(p) = self
            .protections
            .iter_mut()
            .find(|p| p.protection == protection)
        {
            p.state = state;
        }
    }
}

fn baseline_satisfied(protections: &[ProtectionState]) -> bool {
    protections
        .iter()
        .filter(|p| p.protection.is_baseline())
        .all(|p| p.state.is_satisfied())
}

fn state_of(protections: &[ProtectionState], protection: Protection) -> Option<&State> {
    protections
        .iter()
        .find(|p| p.protection == protection)
        .map(|p| &p.state)
}

/// Why this system has no Landlock: the reason every protection that needs it reports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
// Elsewhere only `NotLinux` is built (and the others in tests faking Linux).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) enum NoLandlock {
    /// The kernel's version query failed (the `landlock` crate's message).
    #[error("cannot query Landlock: {0}")]
    Query(String),
    #[error(
        "Landlock is built into this kernel but not enabled at boot (`landlock` is missing \
         from its `lsm=` list)"
    )]
    NotEnabled,
    #[error(
        "this kernel has no Landlock (it needs Linux 5.13 or later built with \
         CONFIG_SECURITY_LANDLOCK)"
    )]
    NotImplemented,
    // Linux asks its kernel instead; its tests fake other systems with it.
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    #[error("Landlock is a Linux feature")]
    NotLinux,
}

/// The facts about this system the states depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Platform {
    pub os: &'static str,
    /// `Ok(abi)` when Landlock is available, or why it is not.
    pub landlock: Result<u32, NoLandlock>,
    /// macOS: `sandbox-exec` is there to apply the Seatbelt profile (always false elsewhere).
    pub seatbelt: bool,
}

/// Each protection's state on `platform` for a policy that does (or not) allow the network.
pub(crate) fn planned(platform: &Platform, network: bool) -> Vec<ProtectionState> {
    Protection::ALL
        .into_iter()
        .map(|protection| ProtectionState {
            protection,
            state: planned_one(platform, network, protection),
        })
        .collect()
}

fn planned_one(platform: &Platform, network: bool, protection: Protection) -> State {
    if network && protection.is_network() {
        return State::NotRequested;
    }
    let os = platform.os;
    match protection.landlock_abi() {
        Some((needed, linux)) => {
            if os == "macos" && platform.seatbelt {
                // Seatbelt's `(deny default)` covers each of them at once: files, every
                // socket (TCP, UDP, UNIX by path; macOS has no abstract sockets), signals
                // outside the sandbox and ioctl (`file-ioctl` is granted nowhere).
                return State::Enforced;
            }
            if os != "linux" {
                return State::NotEnforced {
                    reason: not_linux(os),
                };
            }
            match &platform.landlock {
                Err(why) => State::NotEnforced {
                    reason: why.to_string(),
                },
                Ok(abi) if *abi >= needed => State::Enforced,
                // The file system is protected from ABI 1, only truncation waits for ABI 3.
                Ok(abi) if protection == Protection::FileSystem => State::Partial {
                    reason: format!(
                        "truncate(2) of files outside the granted paths is not denied: it \
                         needs Landlock ABI {needed} (Linux {linux}), this kernel has ABI {abi}"
                    ),
                },
                Ok(abi) => State::NotEnforced {
                    reason: format!(
                        "needs Landlock ABI {needed} (Linux {linux}), this kernel has ABI {abi}"
                    ),
                },
            }
        }
        None if protection == Protection::NoNewPrivileges => {
            if os == "linux" {
                State::Enforced
            } else {
                State::NotEnforced {
                    reason: format!(
                        "no_new_privs is a Linux feature; {os} has no equivalent here (on \
                         macOS a setuid program still starts inside the Seatbelt profile)"
                    ),
                }
            }
        }
        None => {
            if os == "macos" {
                State::Partial {
                    reason: "the number of processes (RLIMIT_NPROC) is not limited on macOS"
                        .to_owned(),
                }
            } else if cfg!(unix) && os != "windows" {
                State::Enforced
            } else {
                State::NotEnforced {
                    reason: format!("resource limits (setrlimit) are not available on {os}"),
                }
            }
        }
    }
}

fn not_linux(os: &str) -> String {
    match os {
        "macos" => format!(
            "macOS: {} is missing, so the Seatbelt profile cannot be applied",
            super::seatbelt::SANDBOX_EXEC
        ),
        "windows" => {
            "Windows: no kernel sandbox is applied (an AppContainer or a restricted token is \
             not implemented); the CLI runs with every right of the server's user"
                .to_owned()
        }
        other => format!("{other}: no kernel sandbox is implemented for this OS"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux(abi: u32) -> Platform {
        Platform {
            os: "linux",
            landlock: Ok(abi),
            seatbelt: false,
        }
    }

    fn state(states: &[ProtectionState], protection: Protection) -> &State {
        state_of(states, protection).unwrap()
    }

    #[test]
    fn abi_7_enforces_the_baseline_and_names_what_it_lacks() {
        let states = planned(&linux(7), false);
        assert!(baseline_satisfied(&states));
        for p in [
            Protection::FileSystem,
            Protection::Tcp,
            Protection::DeviceIoctl,
            Protection::Signals,
            Protection::AbstractUnixSockets,
        ] {
            assert_eq!(state(&states, p), &State::Enforced, "{p}");
        }
        assert_eq!(
            state(&states, Protection::Udp).reason(),
            Some("needs Landlock ABI 10 (Linux 7.2), this kernel has ABI 7")
        );
        assert!(
            state(&states, Protection::UnixSocketConnect)
                .reason()
                .unwrap()
                .contains("ABI 9")
        );
    }

    #[test]
    fn older_kernels_degrade_by_name() {
        let abi2 = planned(&linux(2), false);
        assert!(
            matches!(state(&abi2, Protection::FileSystem), State::Partial { reason } if reason.contains("truncate"))
        );
        assert!(!baseline_satisfied(&abi2));
        let abi3 = planned(&linux(3), false);
        assert_eq!(state(&abi3, Protection::FileSystem), &State::Enforced);
        assert!(
            state(&abi3, Protection::Tcp)
                .reason()
                .unwrap()
                .contains("Linux 6.7")
        );
        assert!(baseline_satisfied(&planned(&linux(4), false)));
    }

    #[test]
    fn without_landlock_only_the_process_protections_remain() {
        let off = Platform {
            os: "linux",
            landlock: Err(NoLandlock::NotEnabled),
            seatbelt: false,
        };
        let states = planned(&off, false);
        assert_eq!(
            state(&states, Protection::FileSystem).reason(),
            Some(NoLandlock::NotEnabled.to_string().as_str())
        );
        assert_eq!(
            state(&states, Protection::NoNewPrivileges),
            &State::Enforced
        );
        assert_eq!(state(&states, Protection::ProcessLimits), &State::Enforced);
    }

    #[test]
    fn a_declared_network_is_not_requested_even_where_it_cannot_be_enforced() {
        let states = planned(&linux(3), true);
        assert_eq!(state(&states, Protection::Tcp), &State::NotRequested);
        assert_eq!(state(&states, Protection::Udp), &State::NotRequested);
        assert!(baseline_satisfied(&states));
    }

    #[test]
    fn other_systems_say_what_is_not_enforced() {
        let mac = Platform {
            os: "macos",
            landlock: Err(NoLandlock::NotLinux),
            seatbelt: false,
        };
        let states = planned(&mac, false);
        assert!(
            state(&states, Protection::FileSystem)
                .reason()
                .unwrap()
                .contains("Seatbelt")
        );
        assert!(
            state(&states, Protection::NoNewPrivileges)
                .reason()
                .unwrap()
                .contains("macos")
        );
        assert!(
            state(&states, Protection::ProcessLimits)
                .reason()
                .unwrap()
                .contains("RLIMIT_NPROC")
        );
        let win = Platform {
            os: "windows",
            landlock: Err(NoLandlock::NotLinux),
            seatbelt: false,
        };
        let states = planned(&win, false);
        assert!(states.iter().all(|p| !p.state.is_satisfied()));
        assert!(
            state(&states, Protection::FileSystem)
                .reason()
                .unwrap()
                .contains("every right of the server's user")
        );
    }

    #[test]
    fn seatbelt_enforces_files_network_and_signals_but_not_the_process_baseline() {
        let mac = Platform {
            os: "macos",
            landlock: Err(NoLandlock::NotLinux),
            seatbelt: true,
        };
        let states = planned(&mac, false);
        for p in [
            Protection::FileSystem,
            Protection::Tcp,
            Protection::Udp,
            Protection::UnixSocketConnect,
            Protection::Signals,
            Protection::DeviceIoctl,
        ] {
            assert_eq!(state(&states, p), &State::Enforced, "{p}");
        }
        // No no_new_privs, no RLIMIT_NPROC: `--sandbox required` still refuses on macOS.
        assert!(!baseline_satisfied(&states));
        let networked = planned(&mac, true);
        assert_eq!(state(&networked, Protection::Tcp), &State::NotRequested);
    }

    #[test]
    fn states_serialize_flat() {
        let p = ProtectionState {
            protection: Protection::Udp,
            state: State::NotEnforced {
                reason: "why".to_owned(),
            },
        };
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"protection":"udp","state":"not_enforced","reason":"why"}"#
        );
        let back: ProtectionState =
            serde_json::from_str(r#"{"protection":"file_system","state":"enforced"}"#).unwrap();
        assert_eq!(back.state, State::Enforced);
    }
}
