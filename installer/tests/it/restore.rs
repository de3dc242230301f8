//! Uninstall gives every client file back exactly, through the real binary.
//!
//! The files are seeded *without* the object that holds servers (Zed's `context_servers`,
//! VS Code's `servers`, Codex's `mcp_servers`, Goose's `extensions`, …), so scimcp creates it.
//! Untouched since the install, each file comes back byte for byte. Changed by the user
//! elsewhere since, only scimcp's entry and the object scimcp created go: the result is the
//! seed with the user's change and nothing else.

#![cfg(unix)]
#![allow(clippy::print_stderr)]

use crate::common;

use std::path::PathBuf;

use common::{fake_bundle, ok, setup_cmd, unicode_tempdir};
use scimcp_installer::ClientContext;
use scimcp_installer::Format;
use scimcp_installer::{Host, Layout, Platform};

/// A seed text and the user's later change to it (`from` → `to`).
type Seed = (&'static str, (&'static str, &'static str));

/// A hand-written file without a servers object, and a change the user makes later.
fn seed(format: Format) -> Option<Seed> {
    match format {
        Format::Json => Some((
            "{\n  // written by hand\n  \"theme\": \"dark\",\n  \"fontSize\": 14\n}\n",
            ("\"dark\"", "\"light\""),
        )),
        Format::Toml => Some((
            "# written by hand\nmodel = \"o3\"  # keep\n\n[profiles.fast]\nmodel = \"o4-mini\"\n",
            ("\"o3\"", "\"o4\""),
        )),
        Format::Yaml => Some((
            "# written by hand\nGOOSE_PROVIDER: openai  # keep\nGOOSE_MODEL: gpt-4o\n",
            ("gpt-4o", "gpt-5"),
        )),
        Format::OwnedYaml => None,
    }
}

#[test]
fn uninstall_restores_every_client_file_exactly() {
    let dir = unicode_tempdir();
    let root = dir.path();
    let home = root.join("home");
    let data = root.join("Données scimcp");
    let project = root.join("Mon projet");
    let bin = root.join("empty bin");
    for d in [&home, &project, &bin] {
        fs_err::create_dir_all(d).unwrap();
    }
    let bundle = fake_bundle(root, "scimcp-0.1.0", None)
        .display()
        .to_string();
    let host = Host::fake(Platform::Linux, &home, &[]);
    let layout = Layout::new(&data, Platform::Linux);
    let cx = ClientContext {
        host: &host,
        layout: &layout,
        project: Some(&project),
    };
    let mut args: Vec<String> = vec!["--project".into(), project.display().to_string()];
    let mut files: Vec<(&'static str, PathBuf, Option<Seed>)> = Vec::new();
    for client in scimcp_installer::all_clients() {
        let Some(file) = client.file(cx, common::ENTRY) else {
            continue;
        };
        args.extend(["--client".to_string(), client.id().to_string()]);
        let seeded = if client.id() == "generic" {
            None
        } else {
            seed(file.format)
        };
        files.push((client.id(), file.path, seeded));
    }
    let install: Vec<String> = args
        .iter()
        .cloned()
        .chain(
            [
                "install",
                "--skip-runtime",
                "--allow-unsigned",
                "--from",
                &bundle,
            ]
            .map(String::from),
        )
        .collect();
    let uninstall: Vec<String> = args
        .iter()
        .cloned()
        .chain(["uninstall".to_string()])
        .collect();
    let run = |argv: &[String]| {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        ok(setup_cmd(&home, &data, &bin, &argv).output().unwrap())
    };
    let reset = || {
        for (_, path, seeded) in &files {
            let _ = fs_err::remove_file(path);
            if let Some((text, _)) = seeded {
                fs_err::create_dir_all(path.parent().unwrap()).unwrap();
                fs_err::write(path, text).unwrap();
            }
        }
    };

    // Untouched since the install: every byte comes back.
    reset();
    run(&install);
    for (id, path, _) in &files {
        assert!(
            fs_err::read_to_string(path).unwrap().contains("scimcp"),
            "{id} was not registered"
        );
    }
    run(&uninstall);
    for (id, path, seeded) in &files {
        assert_eq!(
            fs_err::read_to_string(path).ok().as_deref(),
            seeded.map(|(t, _)| t),
            "{id}: {} is not what it was before the install",
            path.display()
        );
    }

    // Changed by the user since: the change stays, scimcp's entry and object go, nothing else.
    reset();
    run(&install);
    for (_, path, seeded) in &files {
        if let Some((_, (from, to))) = seeded {
            let text = fs_err::read_to_string(path).unwrap();
            fs_err::write(path, text.replacen(from, to, 1)).unwrap();
        }
    }
    run(&uninstall);
    let mut compared = 0;
    for (id, path, seeded) in &files {
        let want = seeded.map(|(t, (from, to))| t.replacen(from, to, 1));
        assert_eq!(
            fs_err::read_to_string(path).ok(),
            want,
            "{id}: {} holds more (or less) than the user's change",
            path.display()
        );
        compared += 1;
    }
    eprintln!("{compared} client files × 2 (untouched, changed since): every one restored exactly");
}
