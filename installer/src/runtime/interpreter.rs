//! Finding a Python interpreter within an adapter's range (`[runtime] python`).
//!
//! Where it looks, in order, taking the first interpreter within the range:
//! 1. `--python PATH`, when given (it must be within the range);
//! 2. `uv python find RANGE`, when uv is on `PATH` (uv's managed Pythons, then the system's);
//! 3. `PATH`: `python3`, then `python3.X` for every minor version the range allows (newest
//!    first), then `python`;
//! 4. pyenv's versions (`$PYENV_ROOT/versions/*`, `~/.pyenv/pyenv-win/versions/*` on Windows),
//!    newest first;
//! 5. on Windows, every interpreter the `py` launcher lists (`py -0p`); on macOS, the
//!    python.org framework builds and Homebrew's `python@3.X` kegs;
//! 6. `uv python install RANGE`, when uv is on `PATH`, then `uv python find` again.
//!
//! Every interpreter is asked for its version (under the step time limit); the one chosen,
//! where it was found and why are reported and recorded. When none fits, the error names the
//! range, what was tried, and the one command that gets a fitting Python on this computer.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use semver::{Version, VersionReq};

use crate::host::{Host, Platform};
use crate::progress::Progress;

/// A base interpreter to create the virtual environment from.
#[derive(Debug, Clone)]
pub struct Interpreter {
    /// `sys.executable` of the interpreter.
    pub path: PathBuf,
    pub version: Version,
}

/// The interpreter chosen for an adapter, where it was found and why.
#[derive(Debug, Clone)]
pub struct Choice {
    pub interpreter: Interpreter,
    /// `--python`, `uv python find`, `uv python install`, `PATH`, `pyenv`, `py launcher`,
    /// `python.org framework`, `Homebrew`.
    pub found_by: String,
    /// One line: what it is, the range it meets, what was passed over.
    pub reason: String,
}

impl Choice {
    /// The record kept in `state.json` (and in the runtime's marker).
    pub fn record(&self) -> scimcp_core::install_state::BaseInterpreter {
        scimcp_core::install_state::BaseInterpreter {
            path: self.interpreter.path.clone(),
            version: self.interpreter.version.to_string(),
            found_by: self.found_by.clone(),
            reason: self.reason.clone(),
        }
    }
}

/// No suitable interpreter.
#[derive(Debug, thiserror::Error)]
pub enum InterpreterError {
    #[error("the manifest's python requirement {0:?} is not a valid version requirement")]
    BadRequirement(String),
    #[error("{path} is Python {version}, but {adapter} needs Python {requirement}")]
    Unsuitable {
        path: PathBuf,
        version: Version,
        adapter: String,
        requirement: String,
    },
    #[error("{path} cannot be run as Python: {source}")]
    NotPython {
        path: PathBuf,
        #[source]
        source: QueryError,
    },
    #[error(
        "no Python {requirement} for {adapter} on this computer (tried: {tried}).\nGet one with \
         `{get}`, then run the same scimcp-setup command again; or pass --python PATH to a \
         Python {requirement} you have"
    )]
    NotFound {
        adapter: String,
        requirement: String,
        tried: String,
        /// The command that installs a fitting Python here.
        get: String,
    },
}

/// Why a program did not say which Python it is.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error(transparent)]
    Run(#[from] scimcp_process::ProcessError),
    #[error("it did not report a version")]
    NoVersion,
}

const QUERY: &str = "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable)";

/// Ask `program` (with `pre_args`, e.g. `-3.9` for `py`) for its version and executable.
fn query(program: &Path, pre_args: &[&str]) -> Result<Interpreter, QueryError> {
    // Not `scimcp_process::python_command`: this interpreter is unknown (it may be Python 2,
    // or a launcher such as `py` that takes `pre_args` first), and `-I` would make an old one
    // fail before it could say its version, so [`QUERY`] is written for any Python. The
    // variables that would point it at another prefix are removed all the same.
    let mut cmd = Command::new(program);
    cmd.args(pre_args).args(["-c", QUERY]);
    for name in scimcp_process::ISOLATION_REMOVED_VARS {
        cmd.env_remove(name);
    }
    let out = crate::steps::run("the interpreter query", cmd, crate::steps::QUERY, None)?;
    let text = &out.stdout;
    let mut lines = text.lines();
    let version = lines
        .next()
        .and_then(|v| Version::parse(v.trim()).ok())
        .ok_or(QueryError::NoVersion)?;
    let path = lines
        .next()
        .map(|p| PathBuf::from(p.trim()))
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| program.to_path_buf());
    Ok(Interpreter { path, version })
}

/// The minor versions of Python 3 that `req` allows at least one release of, newest first.
pub fn allowed_minors(req: &VersionReq) -> Vec<u64> {
    (0..=30u64)
        .rev()
        .filter(|minor| (0..=60u64).any(|patch| req.matches(&Version::new(3, *minor, patch))))
        .collect()
}

/// One search for an interpreter within a range.
struct Search<'a> {
    host: &'a Host,
    adapter: &'a str,
    requirement: &'a str,
    req: VersionReq,
    progress: &'a dyn Progress,
    /// What was tried and why it was passed over, for the reason and the error.
    tried: Vec<String>,
    /// Interpreters already asked (by the path they were found at, and by `sys.executable`).
    seen: BTreeSet<PathBuf>,
}

impl Search<'_> {
    /// Ask `program` (labelled `label` in messages); the interpreter when it is in range.
    /// Each program is asked once (links to one interpreter count as one).
    fn consider(&mut self, label: &str, program: &Path) -> Option<Interpreter> {
        let key = fs_err::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
        if !self.seen.insert(key) {
            return None;
        }
        self.progress
            .step(&format!("asking {} for its version", program.display()));
        match query(program, &[]) {
            Ok(found) if self.req.matches(&found.version) => Some(found),
            Ok(found) => {
                self.tried.push(format!("{label} is {}", found.version));
                None
            }
            Err(e) => {
                self.tried.push(format!(
                    "{label} does not run ({})",
                    e.to_string().lines().next().unwrap_or("")
                ));
                None
            }
        }
    }

    fn choice(&self, interpreter: Interpreter, found_by: &str, what: String) -> Choice {
        let passed = if self.tried.is_empty() {
            String::new()
        } else {
            format!("; passed over: {}", self.tried.join(", "))
        };
        Choice {
            reason: format!(
                "{what}: Python {}, within the {} range {}{passed}",
                interpreter.version, self.adapter, self.requirement
            ),
            interpreter,
            found_by: found_by.to_string(),
        }
    }

    /// A command for `uv`, in the host's environment (uv keeps its Pythons under the home).
    fn uv(&self, uv: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(uv);
        cmd.args(args)
            .env_clear()
            .envs(self.host.vars())
            .env_remove("VIRTUAL_ENV")
            .env_remove("UV_PYTHON");
        if self.host.home.is_dir() {
            // Not inside a project whose `.python-version` would override the request.
            cmd.current_dir(&self.host.home);
        }
        cmd
    }

    /// `uv python find RANGE`.
    fn uv_find(&mut self, uv: &Path, found_by: &str) -> Option<Choice> {
        self.progress
            .step(&format!("uv python find {}", self.requirement));
        let cmd = self.uv(uv, &["python", "find", self.requirement]);
        match crate::steps::run("`uv python find`", cmd, crate::steps::QUERY, None) {
            Ok(out) => {
                let path = PathBuf::from(out.stdout.lines().next().unwrap_or("").trim());
                if path.as_os_str().is_empty() {
                    return None;
                }
                let label = format!("{found_by} ({})", path.display());
                let found = self.consider(&label, &path)?;
                Some(self.choice(
                    found,
                    found_by,
                    format!("{found_by} chose {}", path.display()),
                ))
            }
            Err(_) => {
                self.tried.push(format!("{found_by}: none"));
                None
            }
        }
    }

    fn path(&mut self) -> Option<Choice> {
        let mut names = vec!["python3".to_string()];
        names.extend(
            allowed_minors(&self.req)
                .into_iter()
                .map(|minor| format!("python3.{minor}")),
        );
        names.push("python".into());
        for name in names {
            let Some(program) = self.host.which(&name) else {
                continue;
            };
            let label = format!("{name} ({})", program.display());
            if let Some(found) = self.consider(&label, &program) {
                let what = format!("`{name}` on PATH ({})", program.display());
                return Some(self.choice(found, "PATH", what));
            }
        }
        None
    }

    /// pyenv's root directory, when pyenv is (or was) used on this computer.
    fn pyenv_root(&self) -> Option<PathBuf> {
        let root = self
            .host
            .var_path("PYENV_ROOT")
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| self.host.home.join(".pyenv"));
        let root = match self.host.platform {
            Platform::Windows if root.join("pyenv-win").is_dir() => root.join("pyenv-win"),
            _ => root,
        };
        root.join("versions").is_dir().then_some(root)
    }

    fn pyenv(&mut self) -> Option<Choice> {
        let root = self.pyenv_root()?;
        let mut versions: Vec<(Version, PathBuf)> = fs_err::read_dir(root.join("versions"))
            .ok()?
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                Version::parse(&name).ok().map(|v| (v, e.path()))
            })
            .filter(|(v, _)| self.req.matches(v))
            .collect();
        versions.sort_by(|a, b| b.0.cmp(&a.0));
        for (version, dir) in versions {
            let program = match self.host.platform {
                Platform::Windows => dir.join("python.exe"),
                _ => dir.join("bin").join("python3"),
            };
            if !crate::host::is_executable(&program) {
                continue;
            }
            let label = format!("pyenv {version} ({})", program.display());
            if let Some(found) = self.consider(&label, &program) {
                let what = format!("pyenv's {version} ({})", root.display());
                return Some(self.choice(found, "pyenv", what));
            }
        }
        None
    }

    /// Windows: every interpreter `py -0p` lists, newest first.
    fn py_launcher(&mut self) -> Option<Choice> {
        if self.host.platform != Platform::Windows {
            return None;
        }
        let py = self.host.which("py")?;
        // The launcher itself lists interpreters; no Python code runs.
        let mut cmd = Command::new(&py);
        cmd.arg("-0p");
        let listed = crate::steps::run("`py -0p`", cmd, crate::steps::QUERY, None).ok()?;
        let mut found = py_list(&listed.stdout);
        found.retain(|(v, _)| self.req.matches(v));
        found.sort_by(|a, b| b.0.cmp(&a.0));
        for (version, path) in found {
            let label = format!("py launcher {version} ({})", path.display());
            if let Some(found) = self.consider(&label, &path) {
                let what = format!("the py launcher's {version} ({})", path.display());
                return Some(self.choice(found, "py launcher", what));
            }
        }
        None
    }

    /// macOS: python.org's framework builds and Homebrew's versioned kegs.
    fn macos(&mut self) -> Option<Choice> {
        if self.host.platform != Platform::Macos {
            return None;
        }
        for minor in allowed_minors(&self.req) {
            let candidates = [
                (
                    "python.org framework",
                    PathBuf::from(format!(
                        "/Library/Frameworks/Python.framework/Versions/3.{minor}/bin/python3.{minor}"
                    )),
                ),
                (
                    "Homebrew",
                    PathBuf::from(format!(
                        "/opt/homebrew/opt/python@3.{minor}/bin/python3.{minor}"
                    )),
                ),
                (
                    "Homebrew",
                    PathBuf::from(format!(
                        "/usr/local/opt/python@3.{minor}/bin/python3.{minor}"
                    )),
                ),
            ];
            for (found_by, program) in candidates {
                if !crate::host::is_executable(&program) {
                    continue;
                }
                let label = format!("{found_by} ({})", program.display());
                if let Some(found) = self.consider(&label, &program) {
                    let what = format!("{found_by} ({})", program.display());
                    return Some(self.choice(found, found_by, what));
                }
            }
        }
        None
    }

    /// `uv python install RANGE`, then `uv python find RANGE`.
    fn uv_install(&mut self, uv: &Path) -> Option<Choice> {
        self.progress.step(&format!(
            "installing Python {} for {} with uv (uv python install)",
            self.requirement, self.adapter
        ));
        let cmd = self.uv(uv, &["python", "install", self.requirement]);
        match crate::steps::run(
            "`uv python install`",
            cmd,
            crate::steps::PYTHON_INSTALL,
            Some(self.progress),
        ) {
            Ok(_) => self.uv_find(uv, "uv python install"),
            Err(e) => {
                self.tried.push(format!(
                    "uv python install {}: failed ({})",
                    self.requirement,
                    e.to_string().lines().last().unwrap_or("")
                ));
                None
            }
        }
    }

    /// The one command that gets a Python within the range on this computer.
    fn get_command(&self, uv: Option<&Path>) -> String {
        let version = allowed_minors(&self.req)
            .first()
            .map_or_else(|| self.requirement.to_string(), |m| format!("3.{m}"));
        if uv.is_some() {
            return format!("uv python install {version}");
        }
        if self.pyenv_root().is_some() || self.host.which("pyenv").is_some() {
            return format!("pyenv install {version}");
        }
        match self.host.platform {
            Platform::Windows => format!("winget install Python.Python.{version}"),
            Platform::Macos => format!("brew install python@{version}"),
            Platform::Linux => format!(
                "curl -LsSf https://astral.sh/uv/install.sh | sh && ~/.local/bin/uv python install {version}"
            ),
        }
    }
}

/// `(version, path)` of each interpreter `py -0p` prints: ` -V:3.12 *  C:\…\python.exe` (new
/// launchers) or ` -3.9-64        C:\…\python.exe` (older ones).
pub fn py_list(text: &str) -> Vec<(Version, PathBuf)> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let (tag, rest) = line.split_once(char::is_whitespace)?;
            let tag = tag.strip_prefix("-V:").or_else(|| tag.strip_prefix('-'))?;
            let tag = tag.split(['-', '/']).next()?;
            let mut parts = tag.split('.');
            let major: u64 = parts.next()?.parse().ok()?;
            let minor: u64 = parts.next()?.parse().ok()?;
            let path = rest
                .trim()
                .trim_start_matches('*')
                .trim_end_matches('*')
                .trim();
            (!path.is_empty()).then(|| (Version::new(major, minor, 0), PathBuf::from(path)))
        })
        .map(|(v, p)| {
            // The launcher lists minor versions; the range is checked again on the answer.
            (Version::new(v.major, v.minor, 999), p)
        })
        .collect()
}

/// The interpreter to build `adapter`'s runtime from: `explicit` when given (it must be
/// within `requirement`), else the first one the search finds (see the module docs).
pub fn find_interpreter(
    host: &Host,
    adapter: &str,
    requirement: &str,
    explicit: Option<&Path>,
    progress: &dyn Progress,
) -> Result<Choice, InterpreterError> {
    let req = VersionReq::parse(requirement)
        .map_err(|_| InterpreterError::BadRequirement(requirement.to_string()))?;
    if let Some(path) = explicit {
        let found = query(path, &[]).map_err(|source| InterpreterError::NotPython {
            path: path.to_path_buf(),
            source,
        })?;
        if !req.matches(&found.version) {
            return Err(InterpreterError::Unsuitable {
                path: path.to_path_buf(),
                version: found.version,
                adapter: adapter.to_string(),
                requirement: requirement.to_string(),
            });
        }
        return Ok(Choice {
            reason: format!(
                "given with --python: Python {}, within the {adapter} range {requirement}",
                found.version
            ),
            interpreter: found,
            found_by: "--python".into(),
        });
    }
    let mut search = Search {
        host,
        adapter,
        requirement,
        req,
        progress,
        tried: Vec::new(),
        seen: BTreeSet::new(),
    };
    let uv = host.which("uv");
    if let Some(uv) = uv.as_deref()
        && let Some(choice) = search.uv_find(uv, "uv python find")
    {
        return Ok(choice);
    }
    if let Some(choice) = search
        .path()
        .or_else(|| search.pyenv())
        .or_else(|| search.py_launcher())
        .or_else(|| search.macos())
    {
        return Ok(choice);
    }
    if let Some(uv) = uv.as_deref()
        && let Some(choice) = search.uv_install(uv)
    {
        return Ok(choice);
    }
    Err(InterpreterError::NotFound {
        adapter: adapter.to_string(),
        requirement: requirement.to_string(),
        tried: if search.tried.is_empty() {
            "no Python on PATH, in pyenv or from uv".into()
        } else {
            search.tried.join("; ")
        },
        get: search.get_command(uv.as_deref()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minors_within_a_range() {
        let r = |s: &str| VersionReq::parse(s).unwrap();
        assert_eq!(allowed_minors(&r(">=3.9, <3.10")), vec![9]);
        assert_eq!(allowed_minors(&r(">=3.10, <3.14")), vec![13, 12, 11, 10]);
        assert_eq!(allowed_minors(&r(">=3.9.2, <3.9.5")), vec![9]);
        assert!(allowed_minors(&r(">=4")).is_empty());
    }

    #[test]
    fn reads_both_py_launcher_formats() {
        let new = " -V:3.12 *        C:\\Python312\\python.exe\n -V:3.9          C:\\Users\\Jürgen Müller\\AppData\\Local\\Programs\\Python\\Python39\\python.exe\n";
        let got = py_list(new);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0.major, got[0].0.minor), (3, 12));
        assert_eq!(got[0].1, PathBuf::from("C:\\Python312\\python.exe"));
        assert_eq!(
            got[1].1,
            PathBuf::from(
                "C:\\Users\\Jürgen Müller\\AppData\\Local\\Programs\\Python\\Python39\\python.exe"
            )
        );
        let old = "Installed Pythons found by py Launcher for Windows\n -3.9-64        C:\\Python39\\python.exe *\n -2.7-32 C:\\Python27\\python.exe\n";
        let got = py_list(old);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!((got[0].0.major, got[0].0.minor), (3, 9));
        assert_eq!(got[0].1, PathBuf::from("C:\\Python39\\python.exe"));
    }
}
