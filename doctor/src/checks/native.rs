//! `runtime.native`: the native prerequisites the adapter declares for this platform (e.g.
//! libomp on macOS for XGBoost) are present: a shared library in the usual places, or a
//! program on `PATH`.

use std::path::{Path, PathBuf};

use crate::check::CheckResult;
use crate::context::{Context, platform_name};

/// Where a native prerequisite is looked for.
#[derive(Debug, Clone, Default)]
pub struct NativeSearch {
    /// Directories holding shared libraries.
    pub lib_dirs: Vec<PathBuf>,
    /// `PATH` entries (for prerequisites that are programs).
    pub path_dirs: Vec<PathBuf>,
}

impl NativeSearch {
    /// The library directories of `platform` (plus the loader's environment variables)
    /// and the host's `PATH`.
    pub fn for_host(ctx: &Context, name: &str) -> NativeSearch {
        let mut lib_dirs: Vec<PathBuf> = Vec::new();
        for var in [
            "LD_LIBRARY_PATH",
            "DYLD_LIBRARY_PATH",
            "DYLD_FALLBACK_LIBRARY_PATH",
        ] {
            if let Some(v) = std::env::var_os(var) {
                lib_dirs.extend(std::env::split_paths(&v));
            }
        }
        let fixed: &[&str] = match ctx.layout.platform {
            scimcp_setup_model::host::Platform::Macos => &[
                "/opt/homebrew/lib",
                "/usr/local/lib",
                "/opt/local/lib",
                "/usr/lib",
            ],
            scimcp_setup_model::host::Platform::Linux => &[
                "/usr/local/lib",
                "/usr/lib",
                "/usr/lib64",
                "/lib",
                "/lib64",
                "/usr/lib/x86_64-linux-gnu",
                "/usr/lib/aarch64-linux-gnu",
                "/lib/x86_64-linux-gnu",
                "/lib/aarch64-linux-gnu",
            ],
            scimcp_setup_model::host::Platform::Windows => &["C:\\Windows\\System32"],
        };
        lib_dirs.extend(fixed.iter().map(PathBuf::from));
        // Homebrew keeps keg-only formulae (libomp is one) outside its lib directory.
        for prefix in ["/opt/homebrew/opt", "/usr/local/opt"] {
            lib_dirs.push(Path::new(prefix).join(name).join("lib"));
        }
        let path_dirs = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        NativeSearch {
            lib_dirs,
            path_dirs,
        }
    }
}

/// The file that provides `name`, if any: `lib<name>.so*`, `lib<name>.dylib`, `<name>.dll`
/// (or the name as given) in a library directory, or a program `name` on `PATH`.
pub fn locate_native(name: &str, search: &NativeSearch) -> Option<PathBuf> {
    let bare = name.strip_prefix("lib").unwrap_or(name);
    let stems = [format!("lib{bare}"), bare.to_string()];
    for dir in &search.lib_dirs {
        let Ok(entries) = fs_err::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let matches = stems.iter().any(|stem| {
                file == format!("{stem}.dylib")
                    || file == format!("{stem}.dll")
                    || file == format!("{stem}.so")
                    || file.starts_with(&format!("{stem}.so."))
            });
            if matches {
                return Some(entry.path());
            }
        }
    }
    search
        .path_dirs
        .iter()
        .flat_map(|d| [d.join(name), d.join(format!("{name}.exe"))])
        .find(|p| scimcp_setup_model::host::is_executable(p))
}

/// How to install `name` on `platform`.
fn install_hint(name: &str, platform: &str) -> String {
    match platform {
        "macos" => format!("brew install {name}"),
        "linux" => format!(
            "install {name} with your package manager (e.g. `sudo apt-get install {name}` or \
             `sudo dnf install {name}`)"
        ),
        _ => format!("install {name} and make sure it is on PATH"),
    }
}

pub fn check(ctx: &Context, id: &str, adapter: &str) -> CheckResult {
    let manifest = match ctx.manifest(adapter) {
        Ok(m) => m,
        Err(e) => return CheckResult::skipped(id, e.to_string()),
    };
    let platform = platform_name(ctx.layout.platform);
    let declared: Vec<&str> = manifest
        .runtime
        .native
        .iter()
        .filter(|n| n.platforms.is_empty() || n.platforms.iter().any(|p| p == platform))
        .map(|n| n.name.as_str())
        .collect();
    evaluate(id, platform, &declared, |name| {
        locate_native(name, &NativeSearch::for_host(ctx, name))
    })
}

/// The result for `declared` prerequisites, with `find` locating each.
pub(crate) fn evaluate(
    id: &str,
    platform: &str,
    declared: &[&str],
    find: impl Fn(&str) -> Option<PathBuf>,
) -> CheckResult {
    if declared.is_empty() {
        return CheckResult::ok(id, format!("none declared for {platform}"));
    }
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in declared {
        match find(name) {
            Some(path) => found.push(format!("{name} ({})", path.display())),
            None => missing.push(*name),
        }
    }
    if missing.is_empty() {
        return CheckResult::ok(id, format!("found {}", found.join(", ")));
    }
    CheckResult::fail(id, format!("missing on {platform}: {}", missing.join(", "))).remedy(
        missing
            .iter()
            .map(|n| install_hint(n, platform))
            .collect::<Vec<_>>()
            .join("; "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Status;

    #[test]
    fn none_declared_is_ok() {
        let r = evaluate("runtime.native", "linux", &[], |_| None);
        assert_eq!(r.status, Status::Ok);
        assert_eq!(r.finding, "none declared for linux");
    }

    #[test]
    fn finds_a_library_or_fails_with_the_install_command() {
        let dir = tempfile::tempdir().unwrap();
        let search = NativeSearch {
            lib_dirs: vec![dir.path().to_path_buf()],
            path_dirs: vec![],
        };
        let r = evaluate("runtime.native", "macos", &["libomp"], |n| {
            locate_native(n, &search)
        });
        assert_eq!(r.status, Status::Fail);
        assert_eq!(r.finding, "missing on macos: libomp");
        assert_eq!(r.remedy.as_deref(), Some("brew install libomp"));
        assert!(!r.fixable, "the installer cannot install system libraries");

        fs_err::write(dir.path().join("libomp.dylib"), b"").unwrap();
        let r = evaluate("runtime.native", "macos", &["libomp"], |n| {
            locate_native(n, &search)
        });
        assert_eq!(r.status, Status::Ok, "{r:?}");
        assert!(r.finding.starts_with("found libomp ("), "{}", r.finding);
        fs_err::write(dir.path().join("libgomp.so.1"), b"").unwrap();
        assert!(locate_native("gomp", &search).is_some());
    }
}
