//! Hostile client files and receipts, through the real `scimcp-setup` and `scimcp-doctor`
//! binaries: what used to hang (a FIFO), eat all memory (a link to `/dev/zero`, a huge file)
//! or be silently replaced (a dotfiles link, a read-only file, another user's file) is either
//! refused promptly with the file named and nothing written, or handled the way the user
//! expects. Each test prints its counts; docs/RELIABILITY.md quotes them.

#![cfg(unix)]
#![allow(clippy::print_stderr)]

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{fake_bundle, fingerprint, ok, run_bounded, run_setup, setup_cmd, unicode_tempdir};

/// A command must end well within this, whatever the file is.
const LIMIT: Duration = Duration::from_secs(20);

/// One fake home with scimcp installed for Cursor and the generic file.
struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    data: PathBuf,
    bin: PathBuf,
    bundle: String,
}

impl Home {
    fn new() -> Home {
        let dir = unicode_tempdir();
        let root = dir.path().to_path_buf();
        let home = root.join("home");
        let data = root.join("Données scimcp");
        let bin = root.join("empty bin");
        fs_err::create_dir_all(home.join(".cursor")).unwrap();
        fs_err::create_dir_all(&bin).unwrap();
        let bundle = fake_bundle(&root, "scimcp-0.1.0", None)
            .display()
            .to_string();
        let h = Home {
            _dir: dir,
            root,
            home,
            data,
            bin,
            bundle,
        };
        fs_err::write(h.cursor(), "{\n  \"theme\": \"dark\"\n}\n").unwrap();
        ok(h.setup(&h.install_args()).output().unwrap());
        h
    }

    fn cursor(&self) -> PathBuf {
        self.home.join(".cursor").join("mcp.json")
    }

    fn install_args(&self) -> Vec<String> {
        [
            "install",
            "--client",
            "cursor",
            "--skip-runtime",
            "--allow-unsigned",
            "--from",
            &self.bundle,
        ]
        .map(String::from)
        .to_vec()
    }

    fn repair_args(&self) -> Vec<String> {
        let mut args = self.install_args();
        args[0] = "repair".into();
        args
    }

    fn setup(&self, args: &[String]) -> Command {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        setup_cmd(&self.home, &self.data, &self.bin, &args)
    }

    fn doctor(&self) -> Command {
        let program =
            PathBuf::from(env!("CARGO_BIN_EXE_scimcp-setup")).with_file_name("scimcp-doctor");
        assert!(
            program.is_file(),
            "build the workspace binaries first (cargo build --workspace --bins)"
        );
        let mut cmd = Command::new(program);
        cmd.arg("--fast")
            .env_clear()
            .env("HOME", &self.home)
            .env("SCIMCP_HOME", &self.data)
            .env("PATH", &self.bin)
            .env("NO_COLOR", "1")
            .env("LC_ALL", "C.UTF-8");
        cmd
    }
}

/// The hostile things a path can be.
#[derive(Debug, Clone, Copy)]
enum Hostile {
    LinkToDevZero,
    Fifo,
    Huge,
    Directory,
    Socket,
}

const HOSTILE: [Hostile; 5] = [
    Hostile::LinkToDevZero,
    Hostile::Fifo,
    Hostile::Huge,
    Hostile::Directory,
    Hostile::Socket,
];

/// Put `what` at `path`; the returned listener keeps a socket alive.
fn make(path: &Path, what: Hostile) -> Option<std::os::unix::net::UnixListener> {
    match fs_err::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs_err::remove_dir_all(path).unwrap(),
        Ok(_) => fs_err::remove_file(path).unwrap(),
        Err(_) => {}
    }
    match what {
        Hostile::LinkToDevZero => fs_err::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        Hostile::Fifo => {
            let status = Command::new("mkfifo").arg(path).status().unwrap();
            assert!(status.success());
        }
        Hostile::Huge => {
            // Valid JSON, 20 MiB of it: only the size limit refuses it.
            let mut text = String::from("{\"mcpServers\": {}");
            text.push_str(&" ".repeat(20 << 20));
            text.push('}');
            fs_err::write(path, text).unwrap();
        }
        Hostile::Directory => fs_err::create_dir_all(path).unwrap(),
        Hostile::Socket => return Some(std::os::unix::net::UnixListener::bind(path).unwrap()),
    }
    None
}

#[test]
fn non_regular_and_oversized_files_are_refused_promptly_by_every_command() {
    let mut cases = 0;
    let mut slowest = Duration::ZERO;
    for role in ["client file", "state.json"] {
        for what in HOSTILE {
            for command in ["install", "status", "clients", "uninstall", "doctor"] {
                if role == "state.json" && command == "clients" {
                    // `clients` reads no receipt: nothing to refuse.
                    continue;
                }
                let h = Home::new();
                let path = match role {
                    "client file" => h.cursor(),
                    _ => h.data.join("state.json"),
                };
                let _socket = make(&path, what);
                let watched = path.parent().unwrap().to_path_buf();
                let before = fingerprint(&watched);
                let mut cmd = match command {
                    "install" => h.setup(&h.install_args()),
                    "doctor" => h.doctor(),
                    "uninstall" => {
                        h.setup(&["uninstall".into(), "--client".into(), "cursor".into()])
                    }
                    other => h.setup(&[other.to_string()]),
                };
                let (out, took) = run_bounded(&mut cmd, LIMIT);
                slowest = slowest.max(took);
                let said = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                let case = format!("{role} as {what:?}, `{command}`");
                assert!(
                    said.contains(&path.display().to_string()),
                    "{case}: the file is not named:\n{said}"
                );
                assert!(
                    said.contains("not a regular file") || said.contains("larger than 16 MiB"),
                    "{case}: no reason given:\n{said}"
                );
                if command != "clients" && command != "status" || role == "state.json" {
                    assert!(!out.status.success(), "{case}: accepted:\n{said}");
                }
                if role == "state.json" || command != "uninstall" {
                    assert_eq!(
                        fingerprint(&watched),
                        before,
                        "{case}: something was written"
                    );
                } else {
                    // Uninstall goes on with everything else; the hostile file stays as it is.
                    assert_eq!(
                        fingerprint(&path),
                        before
                            .iter()
                            .filter(|(k, _)| k.as_str() == "mcp.json" || k.starts_with("mcp.json/"))
                            .map(|(k, v)| {
                                let k = k.strip_prefix("mcp.json").unwrap();
                                let k = k.strip_prefix('/').unwrap_or(k);
                                (
                                    if k.is_empty() {
                                        ".".to_string()
                                    } else {
                                        k.to_string()
                                    },
                                    v.clone(),
                                )
                            })
                            .collect(),
                        "{case}: the hostile file changed"
                    );
                }
                cases += 1;
            }
        }
    }
    eprintln!("{cases} hostile cases refused, 0 accepted; the slowest answer took {slowest:?}");
    assert_eq!(cases, 45);
}

#[test]
fn a_client_file_swapped_for_a_fifo_or_dev_zero_mid_command_never_hangs() {
    let h = Home::new();
    let path = h.cursor();
    let regular = h.root.join("regular.json");
    fs_err::write(&regular, "{\"theme\": \"dark\"}\n").unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let budget = Duration::from_secs(4);
    let (attempts, swaps) = std::thread::scope(|s| {
        let swapper = s.spawn(|| {
            let mut swaps = 0u64;
            let staged = h.root.join("staged");
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let what = [Hostile::Fifo, Hostile::LinkToDevZero][swaps as usize % 2];
                make(&staged, what);
                fs_err::rename(&staged, &path).unwrap();
                fs_err::copy(&regular, &staged).unwrap();
                fs_err::rename(&staged, &path).unwrap();
                swaps += 2;
            }
            swaps
        });
        let start = Instant::now();
        let mut attempts = 0u64;
        while start.elapsed() < budget {
            let (out, _) = run_bounded(&mut h.setup(&["status".into()]), LIMIT);
            assert!(out.status.success(), "{out:?}");
            attempts += 1;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        (attempts, swapper.join().unwrap())
    });
    eprintln!(
        "{attempts} `status` runs while the file was swapped {swaps} times in {budget:?}: none hung"
    );
    assert!(attempts >= 3);
}

#[test]
fn a_symlinked_config_is_written_through_and_stays_a_link() {
    let h = Home::new();
    ok(h.setup(&["uninstall".into()]).output().unwrap());
    let dotfiles = h.root.join("dotfiles repo");
    fs_err::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("cursor-mcp.json");
    let original = "{\n  // my dotfile\n  \"theme\": \"dark\"\n}\n";
    fs_err::write(&real, original).unwrap();
    fs_err::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    fs_err::remove_file(h.cursor()).unwrap();
    fs_err::os::unix::fs::symlink(&real, h.cursor()).unwrap();

    ok(h.setup(&h.install_args()).output().unwrap());
    assert!(
        fs_err::symlink_metadata(h.cursor())
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let text = fs_err::read_to_string(&real).unwrap();
    assert!(
        text.contains("\"scimcp-refsci\"") && text.contains("// my dotfile"),
        "{text}"
    );
    assert_eq!(fs_err::metadata(&real).unwrap().mode() & 0o777, 0o640);
    let stray: Vec<_> = fs_err::read_dir(&dotfiles).unwrap().flatten().collect();
    assert_eq!(stray.len(), 1, "a temp file was left beside the target");
    let state: serde_json::Value =
        serde_json::from_slice(&fs_err::read(h.data.join("state.json")).unwrap()).unwrap();
    assert_eq!(
        state["adapters"]["refsci"]["clients"]["cursor"]["target"].as_str(),
        Some(fs_err::canonicalize(&real).unwrap().to_str().unwrap()),
        "the receipt records the file actually written"
    );
    ok(h.setup(&["uninstall".into()]).output().unwrap());
    assert!(
        fs_err::symlink_metadata(h.cursor())
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs_err::read_to_string(&real).unwrap(), original);
}

#[test]
fn a_read_only_config_is_refused_and_left_alone() {
    let h = Home::new();
    let path = h.cursor();
    ok(h.setup(&["uninstall".into()]).output().unwrap());
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = fingerprint(&h.home);
    for args in [h.install_args(), h.repair_args()] {
        let out = h.setup(&args).output().unwrap();
        let said = common::stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains(&format!(
                "{} is read-only; make it writable (chmod u+w '{}') or pass --client to skip it",
                path.display(),
                path.display()
            )),
            "{said}"
        );
        assert_eq!(fingerprint(&h.home), before);
    }
    // Once it is writable again, install goes through.
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    ok(h.setup(&h.install_args()).output().unwrap());
}

#[test]
fn another_users_config_keeps_its_owner_and_group() {
    let h = Home::new();
    if fs_err::metadata(&h.home).unwrap().uid() != 0 {
        eprintln!("not root: giving a file to another user is impossible here; skipped");
        return;
    }
    ok(h.setup(&["uninstall".into()]).output().unwrap());
    let path = h.cursor();
    // As with `sudo -E scimcp-setup`: root edits a file that belongs to user 1234.
    std::os::unix::fs::chown(&path, Some(1234), Some(2345)).unwrap();
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    ok(h.setup(&h.install_args()).output().unwrap());
    let meta = fs_err::metadata(&path).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), meta.mode() & 0o777),
        (1234, 2345, 0o600)
    );
    assert!(
        fs_err::read_to_string(&path)
            .unwrap()
            .contains("\"scimcp-refsci\"")
    );
    ok(h.setup(&["uninstall".into()]).output().unwrap());
    let meta = fs_err::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (1234, 2345));
}

#[test]
fn duplicate_keys_are_refused_with_file_line_and_column() {
    let h = Home::new();
    ok(h.setup(&["uninstall".into()]).output().unwrap());
    let cases = [
        (
            "{\n  \"mcpServers\": {},\n  \"theme\": \"dark\",\n  \"mcpServers\": {\"other\": {}}\n}\n",
            ":4:3: the key \"mcpServers\" appears a second time (first on line 2)",
        ),
        (
            "{\"mcpServers\": {\n  \"other\": {\"command\": \"a\"},\n  \"other\": {\"command\": \"b\"}\n}}\n",
            ":3:3: the key \"mcpServers.other\" appears a second time (first on line 2)",
        ),
    ];
    for (text, needle) in cases {
        fs_err::write(h.cursor(), text).unwrap();
        let before = fingerprint(&h.home);
        for args in [h.install_args(), h.repair_args()] {
            let out = h.setup(&args).output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{out:?}");
            let said = common::stdout(&out);
            assert!(
                said.contains(&format!("{}{needle}", h.cursor().display())),
                "{said}"
            );
            assert!(said.contains("Merge the two"), "{said}");
            assert_eq!(fingerprint(&h.home), before);
        }
        let out = h.doctor().output().unwrap();
        assert!(common::stdout(&out).contains(needle), "{out:?}");
    }
    eprintln!("2 files with repeated keys × 2 commands: 4 refused, 0 accepted");
}

#[test]
fn a_byte_order_mark_is_accepted_and_kept() {
    let h = Home::new();
    ok(h.setup(&["uninstall".into()]).output().unwrap());
    let codex = h.home.join(".codex").join("config.toml");
    let goose = h.home.join(".config").join("goose").join("config.yaml");
    let files = [
        (
            "cursor",
            h.cursor(),
            "\u{feff}{\n  \"theme\": \"dark\"\n}\n",
        ),
        ("codex", codex, "\u{feff}model = \"o3\"\n"),
        ("goose", goose, "\u{feff}GOOSE_MODEL: gpt-4o\n"),
    ];
    let mut args = h.install_args();
    args.truncate(1);
    args.extend(["--skip-runtime", "--allow-unsigned", "--from", &h.bundle].map(String::from));
    for (id, path, text) in &files {
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
        args.extend(["--client".to_string(), id.to_string()]);
    }
    ok(h.setup(&args).output().unwrap());
    for (id, path, _) in &files {
        let now = fs_err::read_to_string(path).unwrap();
        assert!(
            now.starts_with('\u{feff}') && now.contains("scimcp"),
            "{id}: {now:?}"
        );
        assert_eq!(now.matches('\u{feff}').count(), 1, "{id}");
    }
    let status = run_setup(&h.home, &h.data, &h.bin, &["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    for c in status["clients"].as_array().unwrap() {
        if files.iter().any(|(id, ..)| c["id"] == *id) {
            assert_eq!(c["healthy"], true, "{c}");
        }
    }
    ok(h.setup(&["uninstall".into()]).output().unwrap());
    for (id, path, text) in &files {
        assert_eq!(fs_err::read_to_string(path).unwrap(), *text, "{id}");
    }
    eprintln!("3 formats with a byte order mark: 3 accepted, mark kept, uninstall exact");
}
