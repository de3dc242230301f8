//! Every client, under Linux, macOS and Windows path conventions faked in a temporary home:
//! register, re-register (byte-identical), repair after hand edits, uninstall (the original
//! bytes come back). Files that already had comments and other servers keep them exactly;
//! the registered files are golden-tested with insta.

use crate::common;

use std::path::PathBuf;

use common::{client_files, fake_bundle, seed_all};
use scimcp_installer::Entry;
use scimcp_installer::Silent;
use scimcp_installer::client_status as status;
use scimcp_installer::{InstallOptions, SignatureOptions, UninstallOptions};
use scimcp_installer::{Platform, Setup};
use scimcp_installer::{install, repair, uninstall};

struct Fake {
    _dir: tempfile::TempDir,
    root: PathBuf,
    setup: Setup,
    bundle: PathBuf,
}

fn fake(platform: Platform) -> Fake {
    let common::PlatformHome {
        dir,
        root,
        home,
        mut setup,
    } = common::platform_home(platform);
    if platform != Platform::Linux {
        // macOS and Windows always name a Documents folder; this Linux has no xdg-user-dirs
        // and no ~/Documents, so its data folder is ~/scimcp, where a file browser shows it
        // (the Linux golden files name `[ROOT]/home/scimcp`; they named `<data root>/data`,
        // hidden under ~/.local/share, before the default moved).
        setup.host.documents = Some(home.join("Documents"));
    }
    if platform == Platform::Windows {
        // The Store build of Claude Desktop is installed: its MSIX location must win.
        let local = home.join("AppData").join("Local");
        fs_err::create_dir_all(local.join("Packages").join("Claude_pzs8sxrjxfjjc")).unwrap();
    }
    let bundle = fake_bundle(&root, "scimcp-0.1.0", None);
    Fake {
        _dir: dir,
        root,
        setup,
        bundle,
    }
}

fn install_args(f: &Fake) -> InstallOptions {
    InstallOptions {
        from: Some(f.bundle.clone()),
        python: None,
        skip_runtime: true,
        packages: Default::default(),
        data_dirs: Vec::new(),
        // The fake bundle is a directory, i.e. unsigned development material.
        signature: SignatureOptions {
            allow_unsigned: true,
            ..SignatureOptions::default()
        },
        remote: Default::default(),
    }
}

/// All client files, concatenated with stable names, temp paths replaced.
fn snapshot(f: &Fake) -> String {
    let cx = f.setup.client_context();
    let mut out = String::new();
    for (client, path) in client_files(cx) {
        let rel = path
            .strip_prefix(&f.root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = match fs_err::read_to_string(&path) {
            Ok(t) => t,
            Err(_) => "(absent)\n".into(),
        };
        out.push_str(&format!("===== {} : [ROOT]/{rel}\n{text}", client.id()));
    }
    out.replace(&f.root.to_string_lossy().into_owned(), "[ROOT]")
}

fn files(f: &Fake) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let cx = f.setup.client_context();
    let mut v: Vec<_> = client_files(cx)
        .into_iter()
        .map(|(_, p)| {
            let b = common::bytes(&p);
            (p, b)
        })
        .collect();
    let state = f.setup.layout.root.join("state.json");
    v.push((state.clone(), common::bytes(&state)));
    v
}

fn lifecycle(platform: Platform) {
    let f = fake(platform);
    let cx = f.setup.client_context();
    let seeded = seed_all(cx);
    assert!(seeded.len() >= 17, "{} seeded", seeded.len());
    // Continue's own config is never touched (scimcp writes a block file next to it).
    let continue_cfg = f.setup.host.home.join(".continue").join("config.yaml");
    fs_err::create_dir_all(continue_cfg.parent().unwrap()).unwrap();
    fs_err::write(&continue_cfg, "# mine\nmodels: []\n").unwrap();

    // Register.
    let report = install(&f.setup, &install_args(&f), &Silent).unwrap();
    assert!(
        report.clients.iter().all(|c| c.error.is_none()),
        "{report:#?}"
    );
    let name = format!("{platform:?}").to_lowercase();
    insta::assert_snapshot!(format!("{name}_registered"), snapshot(&f));
    let server = f
        .setup
        .adapter_server(&f.setup.load_state().unwrap(), "refsci");
    for client in scimcp_installer::all_clients() {
        let s = status(cx, "refsci", common::ENTRY, &server, client);
        if s.path.is_some() {
            assert!(s.registered && s.healthy, "{s:?}");
        }
    }
    let registered = files(&f);

    // Re-register: not one byte changes (client files and the receipt).
    install(&f.setup, &install_args(&f), &Silent).unwrap();
    assert_eq!(files(&f), registered, "a second install changed bytes");

    // Hand edits: one entry deleted, one changed, one file deleted.
    let (_, cursor, _) = seeded.iter().find(|(id, ..)| *id == "cursor").unwrap();
    let cursor_text = fs_err::read_to_string(cursor).unwrap();
    let slot = scimcp_installer::Slot {
        container: &["mcpServers"],
        name: common::ENTRY,
    };
    let (without, _) = scimcp_installer::Format::Json
        .remove(&cursor_text, slot)
        .unwrap();
    fs_err::write(cursor, without).unwrap();
    let codex = seeded
        .iter()
        .find(|(id, ..)| *id == "codex")
        .unwrap()
        .1
        .clone();
    let codex_text = fs_err::read_to_string(&codex).unwrap();
    let tampered = scimcp_installer::Format::Toml
        .set(
            &codex_text,
            scimcp_installer::Slot {
                container: &["mcp_servers"],
                name: common::ENTRY,
            },
            &Entry::map([("command", Entry::str("/somewhere/else"))]),
        )
        .unwrap();
    fs_err::write(&codex, tampered).unwrap();
    let generic = f.setup.layout.clients_dir().join("mcp.json");
    fs_err::remove_file(&generic).unwrap();
    assert!(
        !status(
            cx,
            "refsci",
            common::ENTRY,
            &server,
            scimcp_installer::client_by_id("cursor").unwrap()
        )
        .registered
    );
    let s = status(
        cx,
        "refsci",
        common::ENTRY,
        &server,
        scimcp_installer::client_by_id("codex").unwrap(),
    );
    assert!(s.registered && !s.healthy, "{s:?}");

    // Install refuses to overwrite the foreign-looking entry but fixes the rest…
    let report = install(&f.setup, &install_args(&f), &Silent).unwrap();
    let failed: Vec<_> = report
        .clients
        .iter()
        .filter(|c| c.error.is_some())
        .collect();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0].id, "codex");
    assert!(
        failed[0]
            .error
            .as_ref()
            .unwrap()
            .contains("Run `scimcp-setup repair`")
    );
    // …and repair makes everything exactly what it was.
    repair(&f.setup, &install_args(&f), &Silent).unwrap();
    let repaired = files(&f);
    for ((p, a), (_, b)) in registered.iter().zip(&repaired) {
        if !p.ends_with("state.json") {
            assert_eq!(a, b, "{} differs after repair", p.display());
        }
    }

    // A broken `current` is repaired too.
    let current = f.setup.layout.current();
    fs_err::remove_file(&current).unwrap();
    repair(&f.setup, &install_args(&f), &Silent).unwrap();
    assert!(f.setup.layout.stable_server_binary().is_file());

    // Uninstall: every seeded file has its original bytes again; created files are gone.
    let runs = f.setup.layout.runs_dir().join("run-1");
    fs_err::create_dir_all(&runs).unwrap();
    fs_err::write(runs.join("result.json"), "{}").unwrap();
    uninstall(&f.setup, &UninstallOptions::default()).unwrap();
    for (id, path, text) in &seeded {
        assert_eq!(
            fs_err::read_to_string(path).unwrap(),
            *text,
            "{id}: {} was not restored",
            path.display()
        );
    }
    for (client, path) in client_files(cx) {
        if !seeded.iter().any(|(_, p, _)| *p == path) {
            assert!(
                !path.exists(),
                "{}: {} left behind",
                client.id(),
                path.display()
            );
        }
    }
    assert_eq!(
        fs_err::read_to_string(&continue_cfg).unwrap(),
        "# mine\nmodels: []\n"
    );
    assert!(
        runs.join("result.json").is_file(),
        "uninstall deleted run data"
    );
    assert!(!f.setup.layout.versions_dir().exists());
    assert!(!f.setup.layout.root.join("state.json").exists());
}

#[test]
fn linux_conventions() {
    lifecycle(Platform::Linux);
}

#[test]
fn macos_conventions() {
    lifecycle(Platform::Macos);
}

#[test]
fn windows_conventions() {
    lifecycle(Platform::Windows);
}
