//! The environment a run's CLI process sees: a cleared environment, a few variables passed
//! through from the server's own, the suite's fixed reproducibility settings, and the
//! variables the adapter manifest fixes (`[runtime] env`, `[[workflow]] env`).
//!
//! The lists live here, not in the server, because the manifest loader must refuse a
//! manifest that tries to set a name the suite owns or one that would undo the isolation,
//! and the parity gate must be able to say which variables make numbers reproducible.

/// Variables copied from the server's environment into a run when they are set.
pub const ENV_PASSTHROUGH: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
];

/// Variables every run gets whatever the server's environment or the manifest says:
/// reproducible hashing, unbuffered UTF-8 output, no user site-packages, no bytecode
/// litter, headless plotting.
pub const FIXED_RUN_ENV: &[(&str, &str)] = &[
    ("PYTHONHASHSEED", "0"),
    ("PYTHONUNBUFFERED", "1"),
    ("PYTHONIOENCODING", "utf-8"),
    ("PYTHONNOUSERSITE", "1"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("MPLBACKEND", "Agg"),
];

/// Variables every run gets unless the manifest or the operator sets them: a terminal that
/// needs no escape codes, and a home, a temporary directory and every cache inside the run's
/// working directory, so a CLI's caches and settings neither leak out of the run nor depend
/// on the scientist's own (`{work_dir}` is the run's absolute working directory).
pub const DEFAULT_RUN_ENV: &[(&str, &str)] = &[
    ("TERM", "dumb"),
    ("HOME", "{work_dir}/home"),
    ("TMPDIR", "{work_dir}/tmp"),
    ("TEMP", "{work_dir}/tmp"),
    ("TMP", "{work_dir}/tmp"),
    ("XDG_CACHE_HOME", "{work_dir}/home/.cache"),
    ("XDG_CONFIG_HOME", "{work_dir}/home/.config"),
    ("XDG_DATA_HOME", "{work_dir}/home/.local/share"),
    ("XDG_STATE_HOME", "{work_dir}/home/.local/state"),
    ("MPLCONFIGDIR", "{work_dir}/home/.config/matplotlib"),
];

/// The directories inside the working directory that [`DEFAULT_RUN_ENV`] points at, created
/// before a run starts: a CLI that finds its cache or config directory missing warns (astropy)
/// or fails, and one that creates it itself may race a sibling process.
pub const DEFAULT_RUN_DIRS: &[&str] = &[
    "home",
    "tmp",
    "home/.cache",
    "home/.config",
    "home/.config/matplotlib",
    "home/.local/share",
    "home/.local/state",
];

/// The variables that set how many threads numerical libraries (OpenMP, OpenBLAS, MKL,
/// Apple Accelerate, numexpr) use. A reduction split over another number of threads sums
/// in another order and rounds differently, so evidence that must hold across machines
/// pins these to the same values on every path.
pub const NUMERIC_THREAD_VARS: &[&str] = &[
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
];

/// Names a manifest may not set: they would load foreign code into the CLI, replace its
/// interpreter's search path, or override what the suite fixes.
const REFUSED_NAMES: &[&str] = &[
    "PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "PYTHONUSERBASE",
    "PYTHONEXECUTABLE",
    "PYTHONSAFEPATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "NODE_OPTIONS",
    "PERL5OPT",
    "RUBYOPT",
    "JAVA_TOOL_OPTIONS",
];

/// Refused name prefixes (dynamic loader controls).
const REFUSED_PREFIXES: &[&str] = &["LD_", "DYLD_"];

/// Longest value a manifest may give a variable.
pub const MAX_ENV_VALUE_BYTES: usize = 4096;

/// Why a manifest may not set `name` to `value`, if it may not.
pub fn manifest_env_problem(name: &str, value: &str) -> Option<String> {
    let mut chars = name.chars();
    let well_formed = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 128;
    if !well_formed {
        return Some(format!(
            "'{name}' is not a portable environment variable name: use letters, digits and '_', not starting with a digit"
        ));
    }
    let upper = name.to_ascii_uppercase();
    if FIXED_RUN_ENV.iter().any(|(n, _)| *n == upper) {
        return Some(format!(
            "{name} is fixed by scimcp for every run (the suite's reproducibility settings); remove it"
        ));
    }
    if REFUSED_NAMES.contains(&upper.as_str())
        || REFUSED_PREFIXES.iter().any(|p| upper.starts_with(p))
    {
        return Some(format!(
            "{name} would change which code or interpreter the CLI runs, which a manifest may not do"
        ));
    }
    if value.contains('\0') {
        return Some(format!("the value of {name} contains a NUL byte"));
    }
    if value.len() > MAX_ENV_VALUE_BYTES {
        return Some(format!(
            "the value of {name} is {} bytes; at most {MAX_ENV_VALUE_BYTES} are allowed",
            value.len()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_directory_is_created_before_the_run() {
        for (name, value) in DEFAULT_RUN_ENV {
            if let Some(rel) = value.strip_prefix("{work_dir}/") {
                assert!(
                    DEFAULT_RUN_DIRS.contains(&rel),
                    "{name} points at {rel}, which DEFAULT_RUN_DIRS does not create"
                );
            }
        }
    }

    #[test]
    fn names_that_undo_isolation_or_override_the_suite_are_refused() {
        assert_eq!(manifest_env_problem("OMP_NUM_THREADS", "1"), None);
        assert_eq!(manifest_env_problem("TERM", "dumb"), None);
        for bad in [
            "LD_PRELOAD",
            "DYLD_INSERT_LIBRARIES",
            "PYTHONPATH",
            "pythonhome",
            "PATH",
            "PYTHONHASHSEED",
            "1ABC",
            "A-B",
            "",
        ] {
            assert!(manifest_env_problem(bad, "x").is_some(), "{bad}");
        }
        assert!(manifest_env_problem("A", "x\0y").is_some());
        assert!(manifest_env_problem("A", &"x".repeat(MAX_ENV_VALUE_BYTES + 1)).is_some());
    }
}
