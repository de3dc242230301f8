//! Finding a Python interpreter that meets an adapter's requirement.

use std::path::{Path, PathBuf};
use std::process::Command;

use semver::{Version, VersionReq};

use crate::host::{Host, Platform};

/// A base interpreter to create the virtual environment from.
#[derive(Debug, Clone)]
pub struct Interpreter {
    /// `sys.executable` of the interpreter.
    pub path: PathBuf,
    pub version: Version,
}

/// No suitable interpreter.
#[derive(Debug, thiserror::Error)]
pub enum InterpreterError {
    #[error("the manifest's python requirement {0:?} is not a valid version requirement")]
    BadRequirement(String),
    #[error("{path} is Python {version}, but the adapter needs Python {requirement}")]
    Unsuitable {
        path: PathBuf,
        version: Version,
        requirement: String,
    },
    #[error("{path} cannot be run as Python: {detail}")]
    NotPython { path: PathBuf, detail: String },
    #[error(
        "no Python {requirement} found (tried {tried}); install one (python.org, your package \
         manager, or `uv python install`) and run again, or pass --python PATH"
    )]
    NotFound { requirement: String, tried: String },
}

const QUERY: &str = "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable)";

fn query(program: &Path, pre_args: &[&str]) -> Result<Interpreter, String> {
    let mut cmd = Command::new(program);
    cmd.args(pre_args)
        .args(["-c", QUERY])
        .env_remove("PYTHONHOME")
        .env_remove("PYTHONPATH");
    let out = crate::steps::run("the interpreter query", cmd, crate::steps::QUERY, None)
        .map_err(|e| e.to_string())?;
    let text = &out.stdout;
    let mut lines = text.lines();
    let version = lines
        .next()
        .and_then(|v| Version::parse(v.trim()).ok())
        .ok_or("it did not report a version")?;
    let path = lines
        .next()
        .map(|p| PathBuf::from(p.trim()))
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| program.to_path_buf());
    Ok(Interpreter { path, version })
}

/// The interpreter to use: `explicit` when given (it must satisfy `requirement`), else the
/// first of `python3`, `python3.13` … `python3.10`, `python` (and `py -3` on Windows) on
/// `PATH` that does.
pub fn find_interpreter(
    host: &Host,
    requirement: &str,
    explicit: Option<&Path>,
) -> Result<Interpreter, InterpreterError> {
    let req = VersionReq::parse(requirement)
        .map_err(|_| InterpreterError::BadRequirement(requirement.to_string()))?;
    if let Some(path) = explicit {
        let found = query(path, &[]).map_err(|detail| InterpreterError::NotPython {
            path: path.to_path_buf(),
            detail,
        })?;
        if !req.matches(&found.version) {
            return Err(InterpreterError::Unsuitable {
                path: path.to_path_buf(),
                version: found.version,
                requirement: requirement.to_string(),
            });
        }
        return Ok(found);
    }
    let mut names = vec!["python3".to_string()];
    names.extend((10..=13).rev().map(|minor| format!("python3.{minor}")));
    names.push("python".into());
    let mut tried = Vec::new();
    for name in &names {
        let Some(program) = host.which(name) else {
            continue;
        };
        tried.push(program.display().to_string());
        if let Ok(found) = query(&program, &[])
            && req.matches(&found.version)
        {
            return Ok(found);
        }
    }
    if host.platform == Platform::Windows
        && let Some(py) = host.which("py")
    {
        tried.push("py -3".into());
        if let Ok(found) = query(&py, &["-3"])
            && req.matches(&found.version)
        {
            return Ok(found);
        }
    }
    Err(InterpreterError::NotFound {
        requirement: requirement.to_string(),
        tried: if tried.is_empty() {
            "nothing on PATH".into()
        } else {
            tried.join(", ")
        },
    })
}
