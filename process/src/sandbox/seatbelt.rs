//! [`seatbelt_profile`]: the macOS form of a [`Policy`], a Seatbelt (SBPL) profile for
//! `sandbox-exec -p PROFILE PROGRAM…`. Not applied yet (a later phase, tested on the release
//! workflow's macOS runner); written now so the policy stays expressible on both systems.
//!
//! The profile mirrors the Linux rules: deny by default, read (and execute) beneath the
//! read-only grants, read and write beneath the read-write ones, metadata anywhere (Landlock
//! does not restrict `stat` either), no network unless allowed, signals only inside the
//! sandbox.

use std::path::Path;

use super::policy::Policy;

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

fn push_subpaths(profile: &mut String, paths: &[std::path::PathBuf]) {
    for path in paths {
        profile.push_str("\n  (subpath ");
        profile.push_str(&quoted(path));
        profile.push(')');
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
}
