//! Which directories datasets may come from, and which places inside them never.
//!
//! Roots are the directories the operator named (`--data-dir`, the installer's data folder),
//! the adapter's built-in datasets, and — only when it is an ordinary project directory — the
//! directory the server was started in. A client may start the server in `/` or in the home
//! directory; treating those as data roots would hand every file of the computer to the
//! model, so they, their ancestors and the system trees never become roots implicitly.
//!
//! Whatever the roots, a path through a secret-bearing place (`.ssh`, `.gnupg`, keychains,
//! cloud credentials, `/proc`, `/sys`, `/dev`) is refused.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// Directory and file names that hold credentials: refused as any component of a dataset
/// path, compared without case.
const SECRET_NAMES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".gpg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".vault-token",
    "keychains",
    "keyrings",
    "gcloud",
    "credentials",
    "id_rsa",
    "id_ecdsa",
    "id_ed25519",
    "id_dsa",
];

/// Trees of the operating system, never an implicit root (nor is anything inside them).
#[cfg(unix)]
const SYSTEM_TREES: &[&str] = &[
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/var/spool",
    "/System",
    "/Library",
    "/Applications",
    "/private/etc",
    "/private/var/db",
];
#[cfg(windows)]
const SYSTEM_TREES: &[&str] = &[
    r"C:\Windows",
    r"C:\Program Files",
    r"C:\Program Files (x86)",
    r"C:\ProgramData",
];

/// Trees refused as part of any dataset path: the kernel's views of processes and devices.
#[cfg(unix)]
const NEVER_READ: &[&str] = &["/proc", "/sys", "/dev"];
#[cfg(windows)]
const NEVER_READ: &[&str] = &[];

/// Why `start` is not used as a data root implicitly, if it is not. `home` is the user's
/// home directory (canonical), when known.
pub fn implicit_root_problem(start: &Path, home: Option<&Path>) -> Option<String> {
    if start.parent().is_none() {
        return Some(format!("{} is the file system's root", start.display()));
    }
    if let Some(home) = home {
        if start == home {
            return Some(format!("{} is the home directory", start.display()));
        }
        if home.starts_with(start) {
            return Some(format!(
                "{} holds the home directory {}",
                start.display(),
                home.display()
            ));
        }
    }
    if let Some(tree) = SYSTEM_TREES
        .iter()
        .find(|t| start.starts_with(t) || eq_ignore_case(start, Path::new(t)))
    {
        return Some(format!(
            "{} is inside the system directory {tree}",
            start.display()
        ));
    }
    if let Some(secret) = secret_component(start) {
        return Some(format!(
            "{} is inside {secret}, which holds secrets",
            start.display()
        ));
    }
    None
}

fn eq_ignore_case(a: &Path, b: &Path) -> bool {
    a.as_os_str().eq_ignore_ascii_case(b.as_os_str())
}

/// The first component of `path` that names a secret-bearing place, or the kernel tree it
/// lies in.
pub fn secret_component(path: &Path) -> Option<String> {
    if let Some(tree) = NEVER_READ.iter().find(|t| path.starts_with(t)) {
        return Some((*tree).to_string());
    }
    let names: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        let lower = name.to_string_lossy().to_ascii_lowercase();
        let pair = names
            .get(i + 1)
            .map(|next| format!("{lower}/{}", next.to_string_lossy().to_ascii_lowercase()));
        let hit = SECRET_NAMES.iter().find(|s| {
            **s == lower
                || pair.as_deref() == Some(**s)
                || (s.starts_with("id_") && lower.starts_with(**s))
        });
        if let Some(s) = hit {
            return Some((*s).to_string());
        }
    }
    None
}

/// The user's home directory, canonical, when it exists.
pub fn home() -> Option<PathBuf> {
    scimcp_core::dirs::home_dir().and_then(|h| fs_err::canonicalize(h).ok())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn roots_the_start_directory_only_when_it_is_an_ordinary_project() {
        let home = Path::new("/home/ada");
        for bad in [
            "/",
            "/home",
            "/home/ada",
            "/etc",
            "/usr/share/data",
            "/proc/1",
            "/home/ada/.ssh/x",
        ] {
            assert!(
                implicit_root_problem(Path::new(bad), Some(home)).is_some(),
                "{bad}"
            );
        }
        for good in [
            "/home/ada/project",
            "/tmp/scimcp test",
            "/data/lab",
            "/home/ada/Documents/scimcp",
        ] {
            assert_eq!(
                implicit_root_problem(Path::new(good), Some(home)),
                None,
                "{good}"
            );
        }
    }

    #[test]
    fn secrets_are_found_anywhere_in_a_path() {
        for bad in [
            "/home/ada/.ssh/id_ed25519",
            "/data/.GnuPG/x.csv",
            "/home/ada/Library/Keychains/login.keychain-db",
            "/proc/self/environ",
            "/dev/zero",
            "/home/ada/.aws/credentials",
            "/data/id_rsa.pub",
        ] {
            assert!(secret_component(Path::new(bad)).is_some(), "{bad}");
        }
        for good in [
            "/data/ssh_survey.csv",
            "/data/keys.csv",
            "/home/ada/proc/x.csv",
        ] {
            assert_eq!(secret_component(Path::new(good)), None, "{good}");
        }
    }
}
