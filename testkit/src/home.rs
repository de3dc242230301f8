//! Fake homes: a temporary directory whose path has spaces and non-ASCII letters, holding a
//! home and a data root, and commands that see only them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary directory whose path has spaces and non-ASCII letters (where real users'
/// homes often do, and where quoting mistakes show).
pub fn unicode_tempdir() -> tempfile::TempDir {
    let base = std::env::temp_dir().join("Jürgen Müller");
    fs_err::create_dir_all(&base).expect("the temporary directory's parent");
    tempfile::Builder::new()
        .prefix("Données ")
        .tempdir_in(base)
        .expect("a temporary directory")
}

/// A home (`home/`) and a data root (`Données scimcp/`) under one [`unicode_tempdir`],
/// removed when dropped.
pub struct FakeHome {
    dir: tempfile::TempDir,
    home: PathBuf,
    data_root: PathBuf,
}

impl FakeHome {
    pub fn new() -> FakeHome {
        let dir = unicode_tempdir();
        let home = dir.path().join("home");
        let data_root = dir.path().join("Données scimcp");
        fs_err::create_dir_all(&home).expect("the fake home");
        FakeHome {
            dir,
            home,
            data_root,
        }
    }

    /// The temporary directory holding both.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// `SCIMCP_HOME`: where the suite keeps its state, runtimes and runs.
    pub fn data_root(&self) -> &Path {
        &self.data_root
    }

    /// `program` with an empty environment except `HOME`, `SCIMCP_HOME`, `PATH` (as given:
    /// which client programs a test lets the installer find) and a UTF-8 locale, run from
    /// the home: nothing of the real user's setup can leak in or be touched.
    pub fn command(&self, program: &Path, path: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("SCIMCP_HOME", &self.data_root)
            .env("PATH", path)
            .env("LC_ALL", "C.UTF-8")
            .env("NO_COLOR", "1")
            .current_dir(&self.home);
        cmd
    }
}

impl Default for FakeHome {
    fn default() -> Self {
        FakeHome::new()
    }
}
