//! [`Policy`]: what a sandboxed program may touch, as data, so that the server can decide it,
//! show it (the plan, `adapter check`) and hand it to the process that applies it (as JSON).
//!
//! It is a list of allowances, never of denials: Landlock (and Seatbelt's `(deny default)`)
//! deny everything not granted, so a path missing from both lists is out of reach. The lists
//! hold absolute paths; a granted path that does not exist is skipped (and reported), since
//! the system defaults name directories that only some distributions have.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a sandboxed program may read, write and connect to, and the process limits it runs
/// under. Build it with [`Policy::new`] (the system's read-only part, no network) and add the
/// run's own paths; serialize it to hand it to the process that calls
/// [`enter`](super::enter).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Paths the program may read, list and execute beneath (the runtime: shared libraries,
    /// the interpreter's prefix and packages, declared executables).
    pub read_only: Vec<PathBuf>,
    /// Paths the program may also write, create, rename and delete beneath (the run's working
    /// directory, the adapter's state directory).
    pub read_write: Vec<PathBuf>,
    /// Whether TCP connect and bind stay allowed: only when the workflow declares it needs
    /// the network.
    #[serde(default)]
    pub network: bool,
    /// Process limits applied before the program starts; the manifest cannot loosen them.
    #[serde(default)]
    pub limits: Limits,
}

/// Resource limits set (soft and hard) before the program starts. They only ever lower the
/// limits the process already had: a value above the current hard limit keeps that limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// `RLIMIT_NPROC`: how many processes and threads the *user* may have at once — Linux
    /// counts all of the user's tasks, not the run's — so this bounds a fork bomb rather than
    /// the run. 4096 is far above what a desktop session or a scientific run uses (hundreds)
    /// and far below what exhausts a machine. The kernel does not apply it to root.
    pub max_processes: u64,
    /// `RLIMIT_CORE`: 0, so a crashing program leaves no core file (a copy of its memory,
    /// inputs and environment included) in the run's directory or with the system's crash
    /// collector outside the sandbox.
    pub max_core_bytes: u64,
    /// `RLIMIT_FSIZE`: the largest file the program may write, or no limit (the default:
    /// outputs have no natural bound, and a full disk is reported by the run itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_bytes: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_processes: 4096,
            max_core_bytes: 0,
            max_file_bytes: None,
        }
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy::new()
    }
}

impl Policy {
    /// The system part every program needs ([`system_read_only`], and `/dev/null` writable),
    /// no network and the default [`Limits`]; add the run's paths with [`Policy::allow_read`]
    /// and [`Policy::allow_write`].
    pub fn new() -> Policy {
        Policy {
            read_only: system_read_only(),
            read_write: system_read_write(),
            network: false,
            limits: Limits::default(),
        }
    }

    /// A policy that grants nothing at all, not even the system's libraries: the base for a
    /// test or a caller that lists every path itself.
    pub fn empty() -> Policy {
        Policy {
            read_only: Vec::new(),
            read_write: Vec::new(),
            network: false,
            limits: Limits::default(),
        }
    }

    /// Also let the program read (and execute) beneath `path`.
    pub fn allow_read(mut self, path: impl Into<PathBuf>) -> Policy {
        push_unique(&mut self.read_only, path.into());
        self
    }

    /// [`Policy::allow_read`] for `path` and, when it resolves elsewhere (a symlink, such as
    /// a virtual environment's `bin/python`), for where it resolves to: Landlock checks the
    /// file a path leads to, so a program reached through a link needs its target granted.
    /// A path that does not resolve is granted as it is (and skipped when applied).
    pub fn allow_read_resolved(self, path: impl Into<PathBuf>) -> Policy {
        let path = path.into();
        let resolved = fs_err::canonicalize(&path).ok();
        let policy = self.allow_read(path.clone());
        match resolved {
            Some(target) if target != path => policy.allow_read(target),
            _ => policy,
        }
    }

    /// Also let the program read and write beneath `path`.
    pub fn allow_write(mut self, path: impl Into<PathBuf>) -> Policy {
        push_unique(&mut self.read_write, path.into());
        self
    }

    /// Also let the program use POSIX shared memory and semaphores (`/dev/shm` read-write
    /// on Linux): Python's `multiprocessing` locks and pools need it (without it,
    /// `multiprocessing.Pool` fails with EACCES, tried with this repository's `.venv`). Not
    /// in [`Policy::new`]: it is a directory every process of the user shares, so granting it
    /// lets the program read and leave files there, as `/tmp` would.
    pub fn allow_shared_memory(self) -> Policy {
        if cfg!(target_os = "linux") {
            self.allow_write("/dev/shm")
        } else {
            self
        }
    }

    /// Allow (or not) TCP connect and bind.
    pub fn allow_network(mut self, network: bool) -> Policy {
        self.network = network;
        self
    }

    /// Replace the process limits.
    pub fn limits(mut self, limits: Limits) -> Policy {
        self.limits = limits;
        self
    }

    /// The first granted path that is not absolute: the process that applies the policy may
    /// run in another directory, so a relative grant would mean something else there.
    pub(crate) fn first_relative_path(&self) -> Option<&Path> {
        self.read_only
            .iter()
            .chain(&self.read_write)
            .map(PathBuf::as_path)
            .find(|p| !p.is_absolute())
    }
}

fn push_unique(paths: &mut Vec<PathBuf>, path: PathBuf) {
    if !paths.contains(&path) {
        paths.push(path);
    }
}

/// How strictly [`enter`](super::enter) must apply a [`Policy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Requirement {
    /// Apply what this system can enforce and report the rest as not enforced (the
    /// default: a run on an older kernel still runs, and says how it was protected).
    #[default]
    BestEffort,
    /// Fail, naming the protection, when any baseline protection
    /// ([`Protection::is_baseline`](super::Protection::is_baseline)) cannot be enforced:
    /// `scimcp serve --sandbox required`.
    Required,
}

/// The system's read-only part on Linux: programs, shared libraries and the loader's cache,
/// the system configuration (`/etc` as a whole: Debian links package files into it, e.g.
/// `/usr/lib/python3.11/sitecustomize.py` → `/etc/python3.11/`, and Landlock checks a
/// symlink's target; what is secret there is readable by root only), the CPU, memory and
/// cgroup facts thread pools size themselves from, and the random and zero devices.
///
/// Of `/proc` only the system-wide facts and `/proc/self` — resolved when the rules are
/// built, so the program's own directory (an `exec` keeps the pid), not its children's —
/// are granted. With the whole of `/proc` granted, Landlock's ptrace rule keeps another
/// process's `environ` from an ordinary user (tried: EACCES), but not from root: a sandboxed
/// child running as root read its unsandboxed parent's environment, so a server run as root
/// (a container) would expose its own. The integration test checks the read is denied. The
/// cost: a child of the program cannot read its own `/proc/self`.
#[cfg(target_os = "linux")]
pub fn system_read_only() -> Vec<PathBuf> {
    [
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/etc",
        "/nix/store",
        "/proc/self",
        "/proc/cpuinfo",
        "/proc/meminfo",
        "/proc/stat",
        "/proc/loadavg",
        "/proc/uptime",
        "/proc/version",
        "/proc/filesystems",
        "/proc/sys/kernel",
        "/proc/sys/vm",
        "/sys/devices/system",
        "/sys/fs/cgroup",
        "/dev/urandom",
        "/dev/random",
        "/dev/zero",
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// The system's read-only part on macOS, for the Seatbelt profile: the OS and its
/// frameworks, the usual package prefixes, the configuration and time-zone data, the random
/// devices.
#[cfg(target_os = "macos")]
pub fn system_read_only() -> Vec<PathBuf> {
    [
        "/usr",
        "/bin",
        "/sbin",
        "/System",
        "/Library/Frameworks",
        "/opt/homebrew",
        "/private/etc",
        "/private/var/db/timezone",
        // `/bin/sh` is a trampoline that picks its shell through `/private/var/select/sh`.
        "/private/var/select",
        "/dev/urandom",
        "/dev/random",
        "/dev/zero",
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// Elsewhere (Windows) nothing is enforced yet, so the list only documents intent.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn system_read_only() -> Vec<PathBuf> {
    Vec::new()
}

/// What every program may write outside its run: the null device (`> /dev/null`).
pub fn system_read_write() -> Vec<PathBuf> {
    if cfg!(unix) {
        vec![PathBuf::from("/dev/null")]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_form_is_stable_and_defaults_fill_in() {
        let policy = Policy::empty()
            .allow_read("/usr")
            .allow_write("/runs/1")
            .allow_write("/runs/1");
        let json = serde_json::to_string(&policy).unwrap();
        assert_eq!(
            json,
            r#"{"read_only":["/usr"],"read_write":["/runs/1"],"network":false,"limits":{"max_processes":4096,"max_core_bytes":0}}"#
        );
        let back: Policy =
            serde_json::from_str(r#"{"read_only":["/usr"],"read_write":["/runs/1"]}"#).unwrap();
        assert_eq!(back, policy);
        assert!(
            serde_json::from_str::<Policy>(r#"{"read_only":[],"read_write":[],"net":true}"#)
                .is_err()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_program_reached_through_a_link_is_granted_with_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real-python");
        let link = dir.path().join("venv-python");
        fs_err::write(&real, "").unwrap();
        fs_err::os::unix::fs::symlink(&real, &link).unwrap();
        let policy = Policy::empty().allow_read_resolved(&link);
        let real = fs_err::canonicalize(&real).unwrap();
        assert_eq!(policy.read_only, vec![link, real]);
        let plain = Policy::empty().allow_read_resolved("/does/not/exist");
        assert_eq!(plain.read_only, vec![PathBuf::from("/does/not/exist")]);
    }

    #[test]
    fn a_relative_grant_is_found() {
        let policy = Policy::empty().allow_read("/usr").allow_write("run");
        assert_eq!(policy.first_relative_path(), Some(Path::new("run")));
        assert_eq!(Policy::new().first_relative_path(), None);
    }
}
