//! Shared helpers for the installer's integration tests: fake bundles, seeded client files
//! with comments and other servers, and running the real `scimcp-setup` binary in a fake
//! home.

#![allow(dead_code)]

pub mod adapter;
pub mod fake_github;
pub mod signed;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use scimcp_installer::Format;
use scimcp_installer::{Client, ClientContext};
use scimcp_installer::{Host, Layout, Platform, Setup};

/// The entry the default adapter (refsci) has in every client.
pub const ENTRY: &str = "scimcp-refsci";

/// The repository root (the parent of `installer/`).
pub fn repo_root() -> PathBuf {
    scimcp_testkit::workspace_root()
}

pub use scimcp_testkit::{run_bounded, stderr, stdout, unicode_tempdir};

/// A small bundle directory `parent/name` whose `bin/scimcp` is a shell script; with
/// `release` it carries a RELEASE.json naming that version.
pub fn fake_bundle(parent: &Path, name: &str, release: Option<&str>) -> PathBuf {
    let dir = parent.join(name);
    let bin = dir.join("bin");
    fs_err::create_dir_all(&bin).unwrap();
    for exe in ["scimcp", "scimcp.exe", "scimcp-setup"] {
        let path = bin.join(exe);
        fs_err::write(&path, format!("#!/bin/sh\necho \"fake {name}\"\n")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    // Every shipped adapter, with the files its manifest refers to (as a bundle has them).
    scimcp_installer::testing::copy_tree(&repo_root().join("adapters"), &dir.join("adapters"))
        .unwrap();
    fs_err::create_dir_all(dir.join("refsci")).unwrap();
    fs_err::write(dir.join("refsci/README.md"), "refsci\n").unwrap();
    if let Some(v) = release {
        fs_err::write(
            dir.join("RELEASE.json"),
            format!("{{\"version\": \"{v}\", \"files\": []}}\n"),
        )
        .unwrap();
    }
    dir
}

/// Text for a client file that already holds another server, a comment and other settings.
pub fn seed_text(format: Format, container: &[&str]) -> Option<String> {
    match format {
        Format::Json => {
            let key = container.first().copied().unwrap_or("mcpServers");
            Some(format!(
                "{{\n  // Settings the user wrote by hand: scimcp must keep them.\n  \"theme\": \"Solarized\",\n  \"{key}\": {{\n    \"other-server\": {{ \"command\": \"/usr/bin/other\", \"args\": [\"--flag\"] }} // theirs\n  }},\n  \"telemetry\": false\n}}\n"
            ))
        }
        Format::Toml => Some(
            "# Codex configuration (hand-written)\nmodel = \"o3\"  # keep me\n\n[mcp_servers.other-server]\ncommand = \"/usr/bin/other\"\nargs = [\"--flag\"]\n\n[profiles.fast]\nmodel = \"o4-mini\"\n"
                .to_string(),
        ),
        Format::Yaml => Some(
            "# Goose configuration (hand-written)\nGOOSE_PROVIDER: openai  # keep me\nextensions:\n  developer:\n    enabled: true\n    type: builtin\n    name: developer\n\n  # another user extension\n  other-server:\n    enabled: false\n    type: stdio\n    cmd: /usr/bin/other\n    args:\n    - --flag\n# tail\nGOOSE_MODEL: gpt-4o\n"
                .to_string(),
        ),
        Format::OwnedYaml => None,
    }
}

/// Seed every client file that has a path on this host; returns `(client id, path, text)`.
pub fn seed_all(cx: ClientContext<'_>) -> Vec<(&'static str, PathBuf, String)> {
    let mut seeded = Vec::new();
    for client in scimcp_installer::all_clients() {
        if client.id() == "generic" {
            continue;
        }
        let Some(file) = client.file(cx, ENTRY) else {
            continue;
        };
        let Some(text) = seed_text(file.format, file.container) else {
            continue;
        };
        fs_err::create_dir_all(file.path.parent().unwrap()).unwrap();
        fs_err::write(&file.path, &text).unwrap();
        seeded.push((client.id(), file.path, text));
    }
    seeded
}

/// Every client file scimcp may write on this host: `(client, path)`.
pub fn client_files(cx: ClientContext<'_>) -> Vec<(&'static dyn Client, PathBuf)> {
    scimcp_installer::all_clients()
        .into_iter()
        .filter_map(|c| c.file(cx, ENTRY).map(|f| (c, f.path)))
        .collect()
}

/// `scimcp-setup ARGS` with only `HOME`, `SCIMCP_HOME` and `PATH` (plus `extra`) set.
pub fn setup_cmd(home: &Path, data_root: &Path, path: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_scimcp-setup"));
    cmd.args(args)
        .env_clear()
        .env("HOME", home)
        .env("SCIMCP_HOME", data_root)
        .env("PATH", path)
        .env("LC_ALL", "C.UTF-8");
    cmd
}

/// Run it and return the output.
pub fn run_setup(home: &Path, data_root: &Path, path: &Path, args: &[&str]) -> Output {
    setup_cmd(home, data_root, path, args)
        .output()
        .expect("scimcp-setup runs")
}

/// Panic with both streams unless it succeeded.
pub fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "scimcp-setup failed ({})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Assert that the command failed (exit 1) and that its error says each of `needles`.
pub fn refused(out: &Output, needles: &[&str]) {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(out);
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in:\n{err}");
    }
}

/// Bytes of a file, or `None` when it is absent.
pub fn bytes(path: &Path) -> Option<Vec<u8>> {
    fs_err::read(path).ok()
}

/// Every entry under `dir` (recursively, links not followed, FIFOs and devices never opened)
/// with its kind, mode and content; comparing two shows whether anything under `dir` was
/// written. `.setup.lock` is left out.
pub fn fingerprint(dir: &Path) -> scimcp_testkit::Fingerprint {
    scimcp_testkit::fingerprint(dir, &[".setup.lock"])
}

/// A home faked under a [`unicode_tempdir`] with one platform's path conventions (Windows'
/// `APPDATA` and `LOCALAPPDATA`, Linux's `XDG_CONFIG_HOME` in a folder with a space, macOS's
/// defaults), every client selected, and a project folder: the installer's library driven
/// exactly as on that OS, without touching this machine's real files.
pub struct PlatformHome {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    /// `root/home`.
    pub home: PathBuf,
    pub setup: Setup,
}

pub fn platform_home(platform: Platform) -> PlatformHome {
    let dir = unicode_tempdir();
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    let appdata = home.join("AppData").join("Roaming");
    let local = home.join("AppData").join("Local");
    let xdg = home.join("xdg config");
    let vars: Vec<(&str, &Path)> = match platform {
        Platform::Windows => vec![("APPDATA", &appdata), ("LOCALAPPDATA", &local)],
        Platform::Linux => vec![("XDG_CONFIG_HOME", &xdg)],
        Platform::Macos => vec![],
    };
    let host = Host::fake(platform, &home, &vars);
    let project = root.join("Mon projet");
    fs_err::create_dir_all(&project).unwrap();
    let setup = Setup {
        layout: Layout::new(&root.join("Données scimcp"), platform),
        host,
        clients: scimcp_installer::all_clients()
            .iter()
            .map(|c| c.id().to_string())
            .collect(),
        project: Some(project),
        dry_run: false,
        json: false,
        yes: true,
        adapters: Vec::new(),
    };
    PlatformHome {
        dir,
        root,
        home,
        setup,
    }
}
