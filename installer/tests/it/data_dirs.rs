//! The registered server gets explicit data folders (`--data-dir`), never its start
//! directory: `<Documents>/scimcp` by default (the Documents folder of `xdg-user-dirs` here),
//! else `~/Documents/scimcp` when that folder exists, else `~/scimcp` (never under the hidden
//! data root); `install --data-dir` chooses others. They are created, recorded
//! in `state.json`, shown by `status`, checked by the doctor, and kept by uninstall.

#![cfg(unix)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fake_bundle, ok, setup_cmd, stdout, unicode_tempdir};

fn doctor(home: &Path, data: &Path, bin: &Path) -> serde_json::Value {
    let program = PathBuf::from(env!("CARGO_BIN_EXE_scimcp-setup")).with_file_name("scimcp-doctor");
    let out = Command::new(program)
        .args(["--check", "state.data_dirs", "--json"])
        .env_clear()
        .env("HOME", home)
        .env("SCIMCP_HOME", data)
        .env("PATH", bin)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["checks"][0].clone()
}

fn entry_args(path: &Path) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&fs_err::read(path).unwrap()).unwrap();
    v["mcpServers"]["scimcp-refsci"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_server_is_registered_with_explicit_data_folders() {
    let dir = unicode_tempdir();
    let root = dir.path();
    let home = root.join("home");
    let data = root.join("Données scimcp");
    let bin = root.join("empty bin");
    fs_err::create_dir_all(home.join(".config")).unwrap();
    fs_err::create_dir_all(&bin).unwrap();
    // A Linux desktop's Documents folder, as xdg-user-dirs records it.
    fs_err::write(
        home.join(".config/user-dirs.dirs"),
        "XDG_DOCUMENTS_DIR=\"$HOME/Mes documents\"\n",
    )
    .unwrap();
    let bundle = fake_bundle(root, "scimcp-0.1.0", None)
        .display()
        .to_string();
    let install = |extra: &[&str]| {
        let mut argv = vec![
            "install",
            "--skip-runtime",
            "--allow-unsigned",
            "--from",
            &bundle,
        ];
        argv.extend(extra);
        ok(setup_cmd(&home, &data, &bin, &argv).output().unwrap())
    };
    let generic = data.join("clients/mcp.json");

    // The default: <Documents>/scimcp, created, recorded, registered, shown, checked.
    install(&[]);
    let documents = home.join("Mes documents").join("scimcp");
    assert!(documents.is_dir());
    let args = entry_args(&generic);
    assert_eq!(
        args,
        [
            "serve",
            "--adapter",
            "refsci",
            "--data-dir",
            documents.to_str().unwrap()
        ]
    );
    let state: serde_json::Value =
        serde_json::from_slice(&fs_err::read(data.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["data_dirs"][0], documents.to_str().unwrap());
    let status = stdout(&ok(setup_cmd(&home, &data, &bin, &["status"])
        .output()
        .unwrap()));
    assert!(
        status.contains(&format!("data folder     {}\n", documents.display())),
        "{status}"
    );
    assert_eq!(doctor(&home, &data, &bin)["status"], "ok");

    // Chosen folders replace it; both are created.
    let lab = root.join("lab data");
    let shared = root.join("partagé");
    install(&[
        "--data-dir",
        lab.to_str().unwrap(),
        "--data-dir",
        shared.to_str().unwrap(),
    ]);
    assert!(lab.is_dir() && shared.is_dir());
    let args = entry_args(&generic);
    assert_eq!(
        &args[3..],
        [
            "--data-dir",
            lab.to_str().unwrap(),
            "--data-dir",
            shared.to_str().unwrap()
        ]
    );
    // A later install without --data-dir keeps them.
    install(&[]);
    assert_eq!(entry_args(&generic)[3..].len(), 4);

    // The doctor: a missing folder fails, fixable by repair; a file in its place is not.
    fs_err::remove_dir(&shared).unwrap();
    let check = doctor(&home, &data, &bin);
    assert_eq!(check["status"], "fail", "{check}");
    assert!(
        check["finding"]
            .as_str()
            .unwrap()
            .contains(&format!("{} does not exist", shared.display())),
        "{check}"
    );
    assert_eq!(check["remedy"], "scimcp-setup repair");
    assert_eq!(check["fixable"], true);
    ok(setup_cmd(&home, &data, &bin, &["repair", "--skip-runtime"])
        .output()
        .unwrap());
    assert!(shared.is_dir());
    fs_err::remove_dir(&shared).unwrap();
    fs_err::write(&shared, "not a folder").unwrap();
    let check = doctor(&home, &data, &bin);
    assert_eq!(
        (check["status"].as_str(), check["fixable"].as_bool()),
        (Some("fail"), Some(false)),
        "{check}"
    );
    let out = setup_cmd(&home, &data, &bin, &["repair", "--skip-runtime"])
        .output()
        .unwrap();
    common::refused(
        &out,
        &[&format!("{} exists but is not a folder", shared.display())],
    );
    fs_err::remove_file(&shared).unwrap();

    // Uninstall keeps the user's folders and what is in them, even with --purge.
    fs_err::write(lab.join("measurements.csv"), "a,b\n1,2\n").unwrap();
    let out = ok(
        setup_cmd(&home, &data, &bin, &["uninstall", "--purge", "--yes"])
            .output()
            .unwrap(),
    );
    assert!(
        stdout(&out).contains(&format!("keep your data folder {}", lab.display())),
        "{}",
        stdout(&out)
    );
    assert!(lab.join("measurements.csv").is_file() && documents.is_dir());
}

/// Without xdg-user-dirs or a ~/Documents, the data folder is ~/scimcp, which a file browser
/// shows (it was `~/.local/share/scimcp/data`); once recorded, a later default never moves it.
#[test]
fn without_a_documents_folder_the_data_folder_is_visible_and_then_kept() {
    let dir = unicode_tempdir();
    let root = dir.path();
    let home = root.join("home");
    let data = home.join(".local/share/scimcp");
    let bin = root.join("empty bin");
    fs_err::create_dir_all(&home).unwrap();
    fs_err::create_dir_all(&bin).unwrap();
    let bundle = fake_bundle(root, "scimcp-0.1.0", None)
        .display()
        .to_string();
    let install = || {
        let argv = [
            "install",
            "--client",
            "generic",
            "--skip-runtime",
            "--allow-unsigned",
            "--from",
            &bundle,
        ];
        ok(setup_cmd(&home, &data, &bin, &argv).output().unwrap())
    };
    let generic = data.join("clients/mcp.json");
    install();
    let visible = home.join("scimcp");
    assert!(visible.is_dir());
    assert!(!data.join("data").exists());
    assert_eq!(
        entry_args(&generic)[3..],
        ["--data-dir", visible.to_str().unwrap()]
    );

    // A Documents folder appears later: the recorded folder stays, nothing new is made.
    fs_err::create_dir(home.join("Documents")).unwrap();
    install();
    assert_eq!(
        entry_args(&generic)[3..],
        ["--data-dir", visible.to_str().unwrap()]
    );
    assert!(!home.join("Documents/scimcp").exists());
}
