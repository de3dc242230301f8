//! The machine the installer configures: its platform, home directory and environment.
//!
//! Every client path is computed from a [`Host`] rather than from the process, so tests can
//! fake each operating system's conventions (a Windows `%APPDATA%`, a macOS
//! `~/Library/Application Support`) inside a temporary directory on any machine.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The operating-system conventions in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Linux,
    Macos,
    Windows,
}

impl Platform {
    /// The platform this binary was built for (other Unixes follow Linux's conventions).
    pub fn current() -> Platform {
        if cfg!(windows) {
            Platform::Windows
        } else if cfg!(target_os = "macos") {
            Platform::Macos
        } else {
            Platform::Linux
        }
    }

    /// `.exe` on Windows, nothing elsewhere.
    pub fn exe_suffix(self) -> &'static str {
        match self {
            Platform::Windows => ".exe",
            _ => "",
        }
    }
}

/// The platform, home and environment every path is derived from.
#[derive(Debug, Clone)]
pub struct Host {
    pub platform: Platform,
    pub home: PathBuf,
    /// The user's Documents folder, when the platform names one (macOS and Windows always;
    /// Linux when `xdg-user-dirs` sets `XDG_DOCUMENTS_DIR`).
    pub documents: Option<PathBuf>,
    vars: BTreeMap<String, OsString>,
}

/// No home directory could be found for this user.
#[derive(Debug, thiserror::Error)]
#[error("cannot determine your home directory")]
pub struct NoHomeDir;

impl scimcp_core::failure::Hint for NoHomeDir {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some("set HOME (USERPROFILE on Windows) to your home folder".into())
    }
}

impl Host {
    /// The real machine: this platform, `HOME` (`USERPROFILE` on Windows) and the process
    /// environment.
    pub fn from_process() -> Result<Host, NoHomeDir> {
        let platform = Platform::current();
        let vars: BTreeMap<String, OsString> = std::env::vars_os()
            .filter_map(|(k, v)| k.into_string().ok().map(|k| (k, v)))
            .collect();
        let home_var = if platform == Platform::Windows {
            "USERPROFILE"
        } else {
            "HOME"
        };
        let home = vars
            .get(home_var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(std::env::home_dir)
            .ok_or(NoHomeDir)?;
        let documents = directories::UserDirs::new()
            .and_then(|u| u.document_dir().map(Path::to_path_buf))
            .filter(|d| d.is_absolute());
        Ok(Host {
            platform,
            home,
            documents,
            vars,
        })
    }

    /// A made-up machine (tests): `platform`'s conventions under `home`, with only `vars`
    /// and no Documents folder (see [`Host::documents`]).
    pub fn fake(platform: Platform, home: &Path, vars: &[(&str, &Path)]) -> Host {
        Host {
            platform,
            home: home.to_path_buf(),
            documents: None,
            vars: vars
                .iter()
                .map(|(k, v)| ((*k).to_string(), v.as_os_str().to_os_string()))
                .collect(),
        }
    }

    /// Set or replace one environment variable (tests, and `PATH` for fake client CLIs).
    pub fn set_var(&mut self, name: &str, value: impl Into<OsString>) {
        self.vars.insert(name.to_string(), value.into());
    }

    /// A non-empty environment variable as a path.
    pub fn var_path(&self, name: &str) -> Option<PathBuf> {
        self.vars
            .get(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    }

    /// A non-empty environment variable as text (`None` when unset, empty or not Unicode).
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars
            .get(name)
            .filter(|v| !v.is_empty())
            .and_then(|v| v.to_str())
            .map(str::to_owned)
    }

    /// `%APPDATA%` (Windows roaming application data).
    pub fn appdata(&self) -> PathBuf {
        self.var_path("APPDATA")
            .unwrap_or_else(|| self.home.join("AppData").join("Roaming"))
    }

    /// `%LOCALAPPDATA%` (Windows local application data).
    pub fn local_appdata(&self) -> PathBuf {
        self.var_path("LOCALAPPDATA")
            .unwrap_or_else(|| self.home.join("AppData").join("Local"))
    }

    /// `$XDG_CONFIG_HOME`, else `~/.config`: what Linux apps use, and what several
    /// cross-platform CLIs (Zed, Goose, OpenCode) use on macOS too.
    pub fn xdg_config(&self) -> PathBuf {
        self.var_path("XDG_CONFIG_HOME")
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| self.home.join(".config"))
    }

    /// The platform's per-user application configuration directory: `~/.config` (XDG) on
    /// Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
    pub fn app_config(&self) -> PathBuf {
        match self.platform {
            Platform::Linux => self.xdg_config(),
            Platform::Macos => self.home.join("Library").join("Application Support"),
            Platform::Windows => self.appdata(),
        }
    }

    /// VS Code's `User` directory (where `mcp.json` and extension storage live).
    pub fn vscode_user_dir(&self) -> PathBuf {
        self.app_config().join("Code").join("User")
    }

    /// The first executable called `name` on this host's `PATH`.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        let path = self.vars.get("PATH")?;
        let suffixes: &[&str] = match self.platform {
            Platform::Windows => &[".exe", ".cmd", ".bat", ""],
            _ => &[""],
        };
        std::env::split_paths(path)
            .filter(|dir| dir.is_absolute())
            .flat_map(|dir| suffixes.iter().map(move |s| dir.join(format!("{name}{s}"))))
            .find(|candidate| is_executable(candidate))
    }

    /// Every environment variable, for child processes that must see the same world.
    pub fn vars(&self) -> impl Iterator<Item = (&String, &OsString)> {
        self.vars.iter()
    }
}

/// Whether `path` is a file this user may execute.
pub fn is_executable(path: &Path) -> bool {
    let Ok(meta) = fs_err::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}
