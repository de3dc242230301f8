//! Shared helpers for the installer's integration tests: fake bundles, seeded client files
//! with comments and other servers, and running the real `scimcp-setup` binary in a fake
//! home.

#![allow(dead_code)]

pub mod adapter;
pub mod fake_github;
pub mod signed;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use scimcp_installer::clients::{self, Client, ClientContext};
use scimcp_installer::edit::Format;

/// The entry the default adapter (refsci) has in every client.
pub const ENTRY: &str = "scimcp-refsci";

/// The repository root (the parent of `installer/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A temporary directory whose path has spaces and non-ASCII letters.
pub fn unicode_tempdir() -> tempfile::TempDir {
    let base = std::env::temp_dir().join("Jürgen Müller");
    fs_err::create_dir_all(&base).unwrap();
    tempfile::Builder::new()
        .prefix("Données ")
        .tempdir_in(base)
        .unwrap()
}

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
    scimcp_installer::bundle::copy_tree(&repo_root().join("adapters"), &dir.join("adapters"))
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
    for client in clients::all() {
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
    clients::all()
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

/// What the command wrote on stderr.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What the command wrote on stdout.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
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
/// with its kind and content: regular files by size and SHA-256, links by target. Comparing
/// two of them shows whether anything under `dir` was written. `.setup.lock` is left out.
pub fn fingerprint(dir: &Path) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    if let Ok(meta) = fs_err::symlink_metadata(dir) {
        out.insert(".".to_string(), describe(dir, &meta));
    }
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name() == ".setup.lock" {
                continue;
            }
            let meta = fs_err::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
            }
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            out.insert(rel, describe(&path, &meta));
        }
    }
    out
}

fn describe(path: &Path, meta: &std::fs::Metadata) -> String {
    let kind = scimcp_core::fs::kind_of(meta.file_type());
    if meta.file_type().is_symlink() {
        return format!("link -> {}", fs_err::read_link(path).unwrap().display());
    }
    if meta.is_file() {
        let (sha, _) = scimcp_core::hash::sha256_file(path).unwrap();
        return format!("file {} {sha}", meta.len());
    }
    if meta.is_dir() {
        return "directory".to_string();
    }
    kind.to_string()
}

/// Run `cmd` and wait at most `limit` for it; panic (after killing it) when it hangs.
pub fn run_bounded(cmd: &mut Command, limit: std::time::Duration) -> (Output, std::time::Duration) {
    use std::process::Stdio;
    let start = std::time::Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{cmd:?} did not end within {limit:?}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let took = start.elapsed();
    (child.wait_with_output().unwrap(), took)
}
