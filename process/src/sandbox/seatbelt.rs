//! The macOS form of a [`Policy`]: [`seatbelt_profile`], a Seatbelt (SBPL) profile, and
//! [`seatbelt_command`], the program started through `sandbox-exec -p PROFILE PROGRAM…`,
//! which [`exec`](super::exec) runs on macOS. Tested on the release workflow's macOS runner
//! (process/tests/it/sandbox_seatbelt.rs); on Linux only the text is tested.
//!
//! The profile mirrors the Linux rules: deny by default, read (and execute) beneath the
//! read-only grants, read and write beneath the read-write ones, metadata anywhere (Landlock
//! does not restrict `stat` either), no network unless allowed, signals only inside the
//! sandbox. Seatbelt matches the path a file resolves to (`/var/folders/…` is
//! `/private/var/folders/…`), so each existing grant is also written resolved.
//!
//! `sandbox-exec` is marked deprecated by Apple but ships with every macOS and is what the
//! coding agents' sandboxes (Claude Code's sandbox runtime, Codex) use there too.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::policy::Policy;

/// Where macOS keeps `sandbox-exec`.
pub(crate) const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// `command` started inside `policy`'s Seatbelt profile: `sandbox-exec -p PROFILE PROGRAM
/// ARGS…`, with the same working directory and environment changes. Only changes made with
/// `env`/`env_remove` carry over (std does not expose `env_clear`), which is all the exec
/// wrapper sets.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub fn seatbelt_command(policy: &Policy, command: &Command) -> Command {
    let mut wrapped = Command::new(SANDBOX_EXEC);
    wrapped
        .arg("-p")
        .arg(seatbelt_profile(policy))
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// The Seatbelt profile that grants what `policy` grants.
pub fn seatbelt_profile(policy: &Policy) -> String {
    let mut profile = String::from(
        "(version 1)\n\
         (deny default)\n\
         ; The program may start others; they inherit this profile.\n\
         (allow process-fork)\n\
         (allow process-exec)\n\
         (allow signal (target same-sandbox))\n\
         ; What libSystem and the dynamic loader read about the machine.\n\
         (allow sysctl-read)\n\
         (allow file-read-metadata)\n",
    );
    if !policy.read_only.is_empty() {
        profile.push_str("(allow file-read*");
        push_subpaths(&mut profile, &policy.read_only);
        profile.push_str(")\n");
    }
    if !policy.read_write.is_empty() {
        profile.push_str("(allow file-read* file-write*");
        push_subpaths(&mut profile, &policy.read_write);
        profile.push_str(")\n");
    }
    if policy.network {
        profile.push_str("(allow network*)\n");
    }
    profile
}

fn push_subpaths(profile: &mut String, paths: &[PathBuf]) {
    let mut written: Vec<PathBuf> = Vec::new();
    for path in paths {
        let resolved = fs_err::canonicalize(path).ok();
        for path in std::iter::once(path.clone()).chain(resolved) {
            if written.contains(&path) {
                continue;
            }
            profile.push_str("\n  (subpath ");
            profile.push_str(&quoted(&path));
            profile.push(')');
            written.push(path);
        }
    }
}

/// An SBPL string literal: backslashes and double quotes escaped.
fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_grants_exactly_the_policy() {
        let policy = Policy::empty()
            .allow_read("/usr")
            .allow_read("/opt/py \"3\"")
            .allow_write("/runs/1");
        assert_eq!(
            seatbelt_profile(&policy),
            "(version 1)\n\
             (deny default)\n\
             ; The program may start others; they inherit this profile.\n\
             (allow process-fork)\n\
             (allow process-exec)\n\
             (allow signal (target same-sandbox))\n\
             ; What libSystem and the dynamic loader read about the machine.\n\
             (allow sysctl-read)\n\
             (allow file-read-metadata)\n\
             (allow file-read*\n  (subpath \"/usr\")\n  (subpath \"/opt/py \\\"3\\\"\"))\n\
             (allow file-read* file-write*\n  (subpath \"/runs/1\"))\n"
        );
        let networked = seatbelt_profile(&policy.allow_network(true));
        assert!(networked.ends_with("(allow network*)\n"), "{networked}");
    }

    #[cfg(unix)]
    #[test]
    fn a_granted_link_is_also_granted_where_it_resolves() {
        let dir = tempfile::tempdir().unwrap();
        let real = fs_err::canonicalize(dir.path()).unwrap().join("real");
        fs_err::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        fs_err::os::unix::fs::symlink(&real, &link).unwrap();
        let profile = seatbelt_profile(&Policy::empty().allow_write(&link));
        assert!(
            profile.contains(&format!("(subpath {})", quoted(&link))),
            "{profile}"
        );
        assert!(
            profile.contains(&format!("(subpath {})", quoted(&real))),
            "{profile}"
        );
    }

    #[test]
    fn the_command_runs_the_program_through_sandbox_exec() {
        let policy = Policy::empty().allow_write("/runs/1");
        let mut program = Command::new("/opt/tool/bin/tool");
        program
            .args(["--in", "a b"])
            .env("A", "1")
            .env_remove("SECRET")
            .current_dir("/runs/1");
        let wrapped = seatbelt_command(&policy, &program);
        assert_eq!(wrapped.get_program(), SANDBOX_EXEC);
        let args: Vec<_> = wrapped.get_args().map(|a| a.to_string_lossy()).collect();
        assert_eq!(args.len(), 5, "{args:?}");
        assert_eq!(args[0], "-p");
        assert_eq!(args[1], seatbelt_profile(&policy));
        assert_eq!(args[2..], ["/opt/tool/bin/tool", "--in", "a b"]);
        let envs: Vec<_> = wrapped.get_envs().collect();
        assert!(
            envs.contains(&("A".as_ref(), Some("1".as_ref()))),
            "{envs:?}"
        );
        assert!(envs.contains(&("SECRET".as_ref(), None)), "{envs:?}");
        assert_eq!(wrapped.get_current_dir(), Some(Path::new("/runs/1")));
    }
}
