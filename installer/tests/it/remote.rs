//! `install --remote URL`: a remote scimcp server registered in every client of a fake home,
//! in each client's own shape for Streamable HTTP servers (golden files), the token only as a
//! reference (never the secret, which is set in the environment and must not reach any file),
//! idempotent, repaired, recorded, and removed again without touching anything else: seeded
//! files come back byte for byte, and a local adapter's entries stay byte-identical.

use crate::common;

use std::path::{Path, PathBuf};

use common::{fake_bundle, seed_all, unicode_tempdir};
use scimcp_core::install_state::InstallState;
use scimcp_installer::Client;
use scimcp_installer::RemoteServer;
use scimcp_installer::Silent;
use scimcp_installer::{InstallOptions, RemoteOptions, SignatureOptions, UninstallOptions};
use scimcp_installer::{Outcome, remote_status};
use scimcp_installer::{Platform, Setup};
use scimcp_installer::{install, repair, uninstall};

const URL: &str = "https://lab-server:8443/mcp";
const NAME: &str = "scimcp-remote-lab-server";
/// What `scimcp token add` prints: it sits in the environment and must never reach a file.
const SECRET: &str = "scimcp_5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ff";

struct Fake {
    _dir: tempfile::TempDir,
    root: PathBuf,
    setup: Setup,
}

fn fake(platform: Platform) -> Fake {
    let common::PlatformHome {
        dir,
        root,
        mut setup,
        ..
    } = common::platform_home(platform);
    setup.host.set_var("SCIMCP_TOKEN", SECRET);
    setup.host.set_var("LAB_TOKEN", SECRET);
    Fake {
        _dir: dir,
        root,
        setup,
    }
}

fn remote_args(url: &str, tweak: impl FnOnce(&mut RemoteOptions)) -> InstallOptions {
    let mut remote = RemoteOptions {
        remote: Some(url.to_string()),
        ..RemoteOptions::default()
    };
    tweak(&mut remote);
    InstallOptions {
        remote,
        ..InstallOptions::default()
    }
}

fn local_args(f: &Fake) -> InstallOptions {
    InstallOptions {
        from: Some(fake_bundle(&f.root, "scimcp-0.1.0", None)),
        skip_runtime: true,
        signature: SignatureOptions {
            allow_unsigned: true,
            ..SignatureOptions::default()
        },
        ..InstallOptions::default()
    }
}

/// Every client file the entry `name` lives in on this host.
fn files_of(f: &Fake, name: &str) -> Vec<(&'static dyn Client, PathBuf)> {
    let cx = f.setup.client_context();
    scimcp_installer::all_clients()
        .into_iter()
        .filter_map(|c| c.file(cx, name).map(|file| (c, file.path)))
        .collect()
}

/// Every client file, concatenated with stable names, temp paths replaced.
fn snapshot(f: &Fake, name: &str) -> String {
    let mut out = String::new();
    for (client, path) in files_of(f, name) {
        let rel = path.strip_prefix(&f.root).unwrap().display().to_string();
        let text = fs_err::read_to_string(&path).unwrap_or_else(|_| "(absent)\n".into());
        out.push_str(&format!("===== {} : [ROOT]/{rel}\n{text}", client.id()));
    }
    out.replace(&f.root.display().to_string(), "[ROOT]")
}

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let meta = fs_err::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                out.push((path.clone(), fs_err::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// No file anywhere under the fake root (home, data root, backups, project) holds the
/// token, in any form a file could hold it.
fn assert_no_secret(f: &Fake) {
    let files = tree(&f.root);
    assert!(!files.is_empty());
    for (path, bytes) in files {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(SECRET) && !text.contains(&SECRET[7..40]),
            "the token reached {}",
            path.display()
        );
    }
}

fn bytes_of(paths: &[PathBuf]) -> Vec<Option<Vec<u8>>> {
    paths.iter().map(|p| fs_err::read(p).ok()).collect()
}

#[test]
fn every_client_gets_its_own_remote_shape_and_no_file_gets_the_token() {
    let f = fake(Platform::Linux);
    let cx = f.setup.client_context();
    let seeded = seed_all(cx);
    let report = install(&f.setup, &remote_args(URL, |_| {}), &Silent).unwrap();
    assert_eq!(report.failures(), 0, "{report:#?}");
    insta::assert_snapshot!("linux_remote_registered", snapshot(&f, NAME));
    assert_no_secret(&f);

    // Clients that cannot read the token from the environment are left alone, with steps.
    let manual: Vec<&str> = report
        .clients
        .iter()
        .filter(|c| c.outcome == Some(Outcome::Manual))
        .map(|c| c.id)
        .collect();
    assert_eq!(
        manual,
        [
            "claude-desktop",
            "zed",
            "cline",
            "roo-code",
            "lm-studio",
            "kiro",
            "amazon-q",
            "jetbrains"
        ]
    );
    let desktop = report
        .clients
        .iter()
        .find(|c| c.id == "claude-desktop")
        .unwrap();
    let steps = desktop.manual_steps.as_deref().unwrap();
    assert!(steps.contains("Settings > Connectors"), "{steps}");
    let zed = report.clients.iter().find(|c| c.id == "zed").unwrap();
    let steps = zed.manual_steps.as_deref().unwrap();
    assert!(
        steps.contains("\"context_servers\"") && steps.contains("Bearer <your token>"),
        "{steps}"
    );
    for (id, path, text) in &seeded {
        if manual.contains(id) {
            assert_eq!(&fs_err::read_to_string(path).unwrap(), text, "{id} changed");
        }
    }
    // The scientist is told which variable to set, and that VS Code asks instead.
    let notes = report.notes.join("\n");
    assert!(notes.contains("SCIMCP_TOKEN"), "{notes}");
    assert!(
        notes.contains("VS Code does not read SCIMCP_TOKEN"),
        "{notes}"
    );
    assert!(notes.contains("scimcp-doctor --remote"), "{notes}");
    assert_eq!(report.remote.as_ref().unwrap().name, NAME);

    // Recorded: the remote and its clients; nothing local was installed.
    let state = InstallState::load(&f.setup.layout.root).unwrap().unwrap();
    let record = &state.remotes[NAME];
    assert_eq!(record.url, URL);
    assert_eq!(record.token_env.as_deref(), Some("SCIMCP_TOKEN"));
    let mut recorded: Vec<&str> = record.clients.keys().map(String::as_str).collect();
    recorded.sort_unstable();
    assert_eq!(
        recorded,
        [
            "claude-code",
            "claude-code-project",
            "codex",
            "continue",
            "copilot-cli",
            "cursor",
            "cursor-project",
            "gemini",
            "generic",
            "goose",
            "opencode",
            "qwen-code",
            "vscode",
            "vscode-workspace",
            "windsurf"
        ]
    );
    assert!(state.active.is_none() && state.adapters.is_empty() && state.runtimes.is_empty());
    assert!(!f.setup.layout.versions_dir().exists());
    assert!(!f.setup.layout.runtimes_dir().exists());
    let server = RemoteServer::from_record(NAME, record);
    for client in scimcp_installer::all_clients() {
        let s = remote_status(cx, &server, client);
        assert_eq!(
            s.registered && s.healthy,
            recorded.contains(&client.id()),
            "{s:?}"
        );
    }

    // Again: not one byte changes.
    let paths: Vec<PathBuf> = files_of(&f, NAME)
        .into_iter()
        .map(|(_, p)| p)
        .chain([InstallState::path(&f.setup.layout.root)])
        .collect();
    let registered = bytes_of(&paths);
    install(&f.setup, &remote_args(URL, |_| {}), &Silent).unwrap();
    assert_eq!(
        bytes_of(&paths),
        registered,
        "a second install changed bytes"
    );

    // A hand-edited entry and a lost VS Code prompt: status sees both, repair restores both.
    let vscode = cx.host.vscode_user_dir().join("mcp.json");
    let text = fs_err::read_to_string(&vscode).unwrap();
    let without_input = scimcp_installer::Format::Json
        .remove_item(&text, "inputs", &format!("{NAME}-token"))
        .unwrap();
    fs_err::write(&vscode, &without_input).unwrap();
    let s = remote_status(
        cx,
        &server,
        scimcp_installer::client_by_id("vscode").unwrap(),
    );
    assert!(s.registered && !s.healthy, "{s:?}");
    assert!(s.problem.unwrap().contains("token prompt"));
    let gemini = cx.host.home.join(".gemini/settings.json");
    let text = fs_err::read_to_string(&gemini).unwrap();
    fs_err::write(&gemini, text.replace("${SCIMCP_TOKEN}", "typed-by-hand")).unwrap();
    repair(&f.setup, &remote_args(NAME, |_| {}), &Silent).unwrap();
    let repaired = bytes_of(&paths);
    for ((p, a), b) in paths.iter().zip(&registered).zip(&repaired) {
        if !p.ends_with("state.json") {
            assert_eq!(a, b, "{} differs after repair", p.display());
        }
    }

    // Uninstall: every seeded file has its original bytes again, created files are gone,
    // and so is the receipt (nothing else was installed).
    let report = uninstall(
        &f.setup,
        &UninstallOptions {
            remote: Some(URL.into()),
            ..UninstallOptions::default()
        },
    )
    .unwrap();
    assert_eq!(report.failures(), 0, "{report:#?}");
    for (id, path, text) in &seeded {
        assert_eq!(
            &fs_err::read_to_string(path).unwrap(),
            text,
            "{id}: {} was not restored",
            path.display()
        );
    }
    for (client, path) in files_of(&f, NAME) {
        if !seeded.iter().any(|(_, p, _)| *p == path) {
            assert!(
                !path.exists(),
                "{}: {} left behind",
                client.id(),
                path.display()
            );
        }
    }
    assert!(!InstallState::path(&f.setup.layout.root).exists());
    assert_no_secret(&f);
}

#[test]
fn windows_and_macos_paths_hold_the_same_shapes() {
    for platform in [Platform::Windows, Platform::Macos] {
        let f = fake(platform);
        let report = install(
            &f.setup,
            &remote_args(URL, |r| r.token_env = Some("LAB_TOKEN".into())),
            &Silent,
        )
        .unwrap();
        assert_eq!(report.failures(), 0, "{report:#?}");
        let name = format!("{platform:?}").to_lowercase();
        insta::assert_snapshot!(format!("{name}_remote_registered"), snapshot(&f, NAME));
        assert_no_secret(&f);
        let notes = report.notes.join("\n");
        let how = match platform {
            Platform::Windows => "setx LAB_TOKEN <token>",
            _ => "launchctl setenv LAB_TOKEN <token>",
        };
        assert!(notes.contains(how), "{notes}");
    }
}

#[test]
fn a_server_without_token_reaches_the_clients_without_interpolation_too() {
    let f = fake(Platform::Linux);
    let report = install(
        &f.setup,
        &remote_args("http://127.0.0.1:8765/mcp", |r| r.no_token = true),
        &Silent,
    )
    .unwrap();
    assert_eq!(report.failures(), 0, "{report:#?}");
    let manual: Vec<&str> = report
        .clients
        .iter()
        .filter(|c| c.outcome == Some(Outcome::Manual))
        .map(|c| c.id)
        .collect();
    assert_eq!(manual, ["claude-desktop", "jetbrains"]);
    insta::assert_snapshot!(
        "linux_remote_without_token",
        snapshot(&f, "scimcp-remote-127-0-0-1")
    );
    let state = InstallState::load(&f.setup.layout.root).unwrap().unwrap();
    assert_eq!(
        state.remotes["scimcp-remote-127-0-0-1"].token_env, None,
        "{state:#?}"
    );
}

#[test]
fn removing_the_remote_leaves_a_local_adapter_s_entries_byte_identical() {
    let f = fake(Platform::Linux);
    let cx = f.setup.client_context();
    let seeded = seed_all(cx);
    install(&f.setup, &local_args(&f), &Silent).unwrap();
    let local_files: Vec<PathBuf> = files_of(&f, common::ENTRY)
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    let with_adapter = bytes_of(&local_files);

    let report = install(
        &f.setup,
        &remote_args("https://analysis.lab.example/mcp", |r| {
            r.name = Some("lab".into())
        }),
        &Silent,
    )
    .unwrap();
    assert_eq!(report.failures(), 0, "{report:#?}");
    assert_ne!(bytes_of(&local_files), with_adapter);
    // A plain `repair` repairs the remote's entries too.
    let codex = cx.host.home.join(".codex/config.toml");
    let registered = fs_err::read_to_string(&codex).unwrap();
    let slot = scimcp_installer::Slot {
        container: &["mcp_servers"],
        name: "lab",
    };
    let (without, _) = scimcp_installer::Format::Toml
        .remove(&registered, slot)
        .unwrap();
    fs_err::write(&codex, without).unwrap();
    let report = repair(&f.setup, &local_args(&f), &Silent).unwrap();
    assert_eq!(report.failures(), 0, "{report:#?}");
    assert_eq!(fs_err::read_to_string(&codex).unwrap(), registered);
    // Someone else edits two files after scimcp: those cannot simply be put back, so only
    // scimcp's remote entry (and VS Code's prompt for it) goes.
    let cursor = cx.host.home.join(".cursor/mcp.json");
    let vscode = cx.host.vscode_user_dir().join("mcp.json");
    for path in [&cursor, &vscode] {
        let text = fs_err::read_to_string(path).unwrap();
        fs_err::write(path, text.replace("\"Solarized\"", "\"Dracula\"")).unwrap();
    }
    // What the local adapter's files must be afterwards: as before the remote came, with
    // that one edit in the two files.
    let edited: Vec<Option<Vec<u8>>> = local_files
        .iter()
        .zip(&with_adapter)
        .map(|(p, b)| match b {
            Some(b) if *p == cursor || *p == vscode => Some(
                String::from_utf8(b.clone())
                    .unwrap()
                    .replace("\"Solarized\"", "\"Dracula\"")
                    .into_bytes(),
            ),
            other => other.clone(),
        })
        .collect();

    let report = uninstall(
        &f.setup,
        &UninstallOptions {
            remote: Some("lab".into()),
            ..UninstallOptions::default()
        },
    )
    .unwrap();
    assert_eq!(report.failures(), 0, "{report:#?}");
    assert_eq!(
        bytes_of(&local_files),
        edited,
        "removing the remote changed more than its own entry"
    );
    let state = InstallState::load(&f.setup.layout.root).unwrap().unwrap();
    assert!(state.remotes.is_empty() && state.adapters.contains_key("refsci"));
    assert!(f.setup.layout.stable_server_binary().is_file());

    // And the adapter's uninstall still takes everything back.
    uninstall(&f.setup, &UninstallOptions::default()).unwrap();
    for (id, path, text) in &seeded {
        let now = fs_err::read_to_string(path).unwrap();
        if *path == cursor || *path == vscode {
            assert_eq!(now, text.replace("\"Solarized\"", "\"Dracula\""), "{id}");
        } else {
            assert_eq!(&now, text, "{id}: {} was not restored", path.display());
        }
    }
}

#[test]
fn names_never_collide_with_adapters_and_a_plain_uninstall_takes_remotes_too() {
    let f = fake(Platform::Linux);
    // The entry of a shipped adapter is not a remote's to take.
    let err = install(
        &f.setup,
        &remote_args(URL, |r| r.name = Some("scimcp-refsci".into())),
        &Silent,
    )
    .unwrap_err();
    let said = scimcp_core::failure::Failure::with_hint_of(&err).to_text();
    assert!(
        said.starts_with("error: the entry name scimcp-refsci is"),
        "{said}"
    );
    assert!(
        said.contains("\n  hint: choose another with --name NAME")
            && said.contains("must never share a name"),
        "{said}"
    );
    // Nor can an adapter take a remote's name.
    install(
        &f.setup,
        &remote_args(URL, |r| r.name = Some("scimcp-demo".into())),
        &Silent,
    )
    .unwrap();
    let demo = common::adapter::write_adapter(&f.root.join("demo"), &Default::default());
    let setup = Setup {
        adapters: vec![demo.display().to_string()],
        ..f.setup.clone()
    };
    let err = install(&setup, &local_args(&f), &Silent).unwrap_err();
    assert!(
        err.to_string()
            .contains("the name of the remote server https://lab-server:8443/mcp"),
        "{err}"
    );
    assert!(!f.setup.layout.versions_dir().join("0.1.0").exists());
    // Another URL under a name in use is refused; the same URL again is fine.
    let err = install(
        &f.setup,
        &remote_args("https://other:8443/mcp", |r| {
            r.name = Some("scimcp-demo".into())
        }),
        &Silent,
    )
    .unwrap_err();
    assert!(err.to_string().contains("already registered"), "{err}");
    install(&f.setup, &remote_args(URL, |_| {}), &Silent).unwrap();
    let state = InstallState::load(&f.setup.layout.root).unwrap().unwrap();
    assert_eq!(
        state.remotes.keys().collect::<Vec<_>>(),
        ["scimcp-demo"],
        "the recorded URL keeps its name"
    );
    // A plain uninstall removes remote servers too.
    uninstall(&f.setup, &UninstallOptions::default()).unwrap();
    assert!(!InstallState::path(&f.setup.layout.root).exists());
    for (_, path) in files_of(&f, "scimcp-demo") {
        assert!(!path.exists(), "{} left behind", path.display());
    }
}

#[test]
fn a_dry_run_shows_the_diffs_and_writes_nothing() {
    let mut f = fake(Platform::Linux);
    f.setup.dry_run = true;
    let before = tree(&f.root);
    let report = install(&f.setup, &remote_args(URL, |_| {}), &Silent).unwrap();
    assert_eq!(tree(&f.root), before);
    let diffs: String = report.diffs.iter().map(|d| d.diff.as_str()).collect();
    assert!(
        diffs.contains("\"serverUrl\": \"https://lab-server:8443/mcp\""),
        "{diffs}"
    );
    assert!(
        diffs.contains("bearer_token_env_var = \"SCIMCP_TOKEN\""),
        "{diffs}"
    );
    assert!(!diffs.contains(SECRET));
}

/// The binary refuses what would leak a secret or send it in clear text, names what to do,
/// and writes nothing.
#[test]
fn the_binary_refuses_unsafe_addresses_and_local_flags_and_writes_nothing() {
    let dir = unicode_tempdir();
    let home = dir.path().join("home");
    let data = dir.path().join("data");
    fs_err::create_dir_all(&home).unwrap();
    let path = dir.path().join("bin");
    let run = |args: &[&str]| common::run_setup(&home, &data, &path, args);
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["install", "--remote", "http://lab-server:8765/mcp"],
            &["unencrypted", "https://"],
        ),
        (
            &[
                "install",
                "--remote",
                "https://alice:hunter2@lab-server/mcp",
            ],
            &["user name or password", "--token-env"],
        ),
        (
            &[
                "install",
                "--remote",
                "https://lab-server/mcp?token=hunter2",
            ],
            &["query string"],
        ),
        (
            &["install", "--remote", URL, "--token-env", SECRET],
            &["NAME of the environment variable"],
        ),
        (
            &["install", "--remote", URL, "--token-env", "MY-TOKEN"],
            &["not an environment variable name"],
        ),
        (
            &["install", "--remote", URL, "--python", "/usr/bin/python3"],
            &["--python is for a local installation"],
        ),
        (
            &[
                "install",
                "--remote",
                URL,
                "--name",
                "scimcp-geochemistrypi",
            ],
            &["ships with scimcp"],
        ),
        (
            &["uninstall", "--remote", "scimcp-remote-nowhere"],
            &["no remote server", "scimcp-setup status"],
        ),
    ];
    for (args, needles) in cases {
        let out = run(args);
        common::refused(&out, needles);
        let err = common::stderr(&out);
        assert!(!err.contains("hunter2") && !err.contains(SECRET), "{err}");
        assert!(!data.join("state.json").exists(), "{args:?} wrote state");
        assert!(
            !home.join(".cursor").exists() && !home.join(".codex").exists(),
            "{args:?}"
        );
    }
    // clap refuses --token-env without --remote.
    let out = run(&["install", "--token-env", "X"]);
    assert_ne!(out.status.code(), Some(0));
}

/// `status` shows the remote, its variable and its clients; `--json` too.
#[test]
fn status_lists_the_remote_and_whether_its_variable_is_set() {
    let dir = unicode_tempdir();
    let home = dir.path().join("home");
    let data = dir.path().join("data");
    fs_err::create_dir_all(home.join(".cursor")).unwrap();
    let path = dir.path().join("bin");
    common::ok(common::run_setup(
        &home,
        &data,
        &path,
        &["install", "--remote", URL, "--token-env", "LAB_TOKEN"],
    ));
    let out = common::ok(common::run_setup(&home, &data, &path, &["status"]));
    let text = common::stdout(&out);
    assert!(
        text.contains(&format!(
            "remote          {NAME}  {URL}  token from $LAB_TOKEN (NOT set in this environment)"
        )),
        "{text}"
    );
    assert!(text.contains("remote servers only"), "{text}");
    assert!(!text.contains("refsci"), "{text}");
    let out = common::ok(
        common::setup_cmd(&home, &data, &path, &["status", "--json"])
            .env("LAB_TOKEN", SECRET)
            .output()
            .unwrap(),
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["remotes"][0]["name"], NAME);
    assert_eq!(json["remotes"][0]["token_set"], true);
    let cursor = json["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "cursor")
        .unwrap();
    assert_eq!(cursor["remote"], URL);
    assert_eq!(cursor["healthy"], true, "{cursor:#}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
}
