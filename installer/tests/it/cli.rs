//! The real `scimcp-setup` binary in a fake home: malformed files, dry runs, Claude Code's
//! own CLI, concurrent installs, and upgrade → rollback → upgrade with runs preserved.

use crate::common;

use std::path::{Path, PathBuf};

use common::{bytes, fake_bundle, ok, run_setup, unicode_tempdir};

struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    data: PathBuf,
    /// An empty `PATH` directory (no client CLIs, no Python).
    path: PathBuf,
    bundle: PathBuf,
}

fn home() -> Home {
    let dir = unicode_tempdir();
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    let path = root.join("empty bin");
    fs_err::create_dir_all(&path).unwrap();
    for d in [
        ".cursor",
        ".codex",
        ".config/zed",
        ".config/goose",
        ".gemini",
    ] {
        fs_err::create_dir_all(home.join(d)).unwrap();
    }
    let bundle = fake_bundle(&root, "scimcp-0.1.0", None);
    Home {
        data: root.join("Données scimcp"),
        _dir: dir,
        root,
        home,
        path,
        bundle,
    }
}

impl Home {
    fn run(&self, args: &[&str]) -> std::process::Output {
        run_setup(&self.home, &self.data, &self.path, args)
    }
    fn bundle_arg(&self) -> String {
        self.bundle.display().to_string()
    }
}

/// Every file under `dir` with its bytes (symlinks as their target).
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let meta = fs_err::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                out.push((
                    p.clone(),
                    fs_err::read_link(&p)
                        .unwrap()
                        .to_string_lossy()
                        .as_bytes()
                        .to_vec(),
                ));
            } else if meta.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), fs_err::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn malformed_files_are_left_untouched_with_file_line_and_column() {
    let h = home();
    let cursor = h.home.join(".cursor/mcp.json");
    let truncated = "{\n  \"mcpServers\": {\n    \"other\": { \"command\": \"x\" },\n";
    fs_err::write(&cursor, truncated).unwrap();
    let codex = h.home.join(".codex/config.toml");
    let invalid = "model = \"o3\"\n[mcp_servers.other\ncommand = \"x\"\n";
    fs_err::write(&codex, invalid).unwrap();
    let out = h.run(&[
        "install",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &h.bundle_arg(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains(&format!(
            "{} does not parse: line 2, column 17: Unterminated object",
            cursor.display()
        )),
        "{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains(&format!(
            "{} does not parse: line 2, column 19",
            codex.display()
        )),
        "{stdout}"
    );
    assert!(
        stderr.contains("2 client(s) could not be updated"),
        "{stderr}"
    );
    assert_eq!(fs_err::read_to_string(&cursor).unwrap(), truncated);
    assert_eq!(fs_err::read_to_string(&codex).unwrap(), invalid);
    // Every other client was still registered.
    let zed = fs_err::read_to_string(h.home.join(".config/zed/settings.json")).unwrap();
    assert!(zed.contains("\"scimcp-refsci\""), "{zed}");
    // JSON report names them too.
    let out = h.run(&[
        "install",
        "--skip-runtime",
        "--json",
        "--allow-unsigned",
        "--from",
        &h.bundle_arg(),
    ]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed: Vec<&str> = report["clients"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("error").is_some())
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["cursor", "codex"]);
}

#[test]
fn dry_run_prints_diffs_and_touches_nothing() {
    let h = home();
    fs_err::write(
        h.home.join(".gemini/settings.json"),
        "{\n  // mine\n  \"theme\": \"x\"\n}\n",
    )
    .unwrap();
    let before = tree(&h.root);
    let out = ok(h.run(&[
        "--dry-run",
        "install",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &h.bundle_arg(),
    ]));
    assert_eq!(tree(&h.root), before, "a dry run changed files");
    assert!(!h.data.exists(), "a dry run created the data directory");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let gemini = h.home.join(".gemini/settings.json").display().to_string();
    assert!(
        stdout.contains(&format!("--- {gemini}\n+++ {gemini}\n")),
        "{stdout}"
    );
    assert!(stdout.contains("+  \"mcpServers\": {"), "{stdout}");
    assert!(
        stdout.contains("--- /dev/null\n+++ "),
        "new files diff from /dev/null: {stdout}"
    );
    assert!(stdout.contains("would unpack"), "{stdout}");
    // Installed, a dry run of uninstall shows the removals and still touches nothing.
    ok(h.run(&[
        "install",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &h.bundle_arg(),
    ]));
    let before = tree(&h.root);
    let out = ok(h.run(&["uninstall", "--dry-run"]));
    assert_eq!(tree(&h.root), before);
    assert!(String::from_utf8_lossy(&out.stdout).contains("-    \"scimcp-refsci\": {"));
}

#[cfg(unix)]
#[test]
fn claude_code_goes_through_its_own_cli_when_on_path() {
    use std::os::unix::fs::PermissionsExt;
    let h = home();
    let log = h.root.join("claude.log");
    let state = h.home.join(".claude.json");
    // A stand-in `claude` that logs its arguments and keeps ~/.claude.json like the real one.
    let script = format!(
        "#!/bin/sh\nprintf '%s|' \"$@\" >> '{log}'\necho >> '{log}'\nif [ \"$2\" = add-json ]; then printf '{{\"numStartups\": 3, \"mcpServers\": {{\"%s\": %s}}}}' \"$5\" \"$6\" > '{state}'; fi\nif [ \"$2\" = remove ]; then printf '{{\"numStartups\": 3, \"mcpServers\": {{}}}}' > '{state}'; fi\n",
        log = log.display(),
        state = state.display()
    );
    let claude = h.path.join("claude");
    fs_err::write(&claude, script).unwrap();
    fs_err::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    ok(h.run(&[
        "install",
        "--skip-runtime",
        "--client",
        "claude-code",
        "--allow-unsigned",
        "--from",
        &h.bundle_arg(),
    ]));
    let calls = fs_err::read_to_string(&log).unwrap();
    let command = h.data.join("current/bin/scimcp").display().to_string();
    let data_dir = h.home.join("scimcp").display().to_string();
    let want = format!(
        "mcp|add-json|--scope|user|scimcp-refsci|{{\"args\":[\"serve\",\"--adapter\",\"refsci\",\"--data-dir\",{},\"--client-timeout-s\",\"600\"],\"command\":{},\"env\":{{}},\"timeout\":600000,\"type\":\"stdio\"}}|\n",
        serde_json::Value::String(data_dir),
        serde_json::Value::String(command)
    );
    assert_eq!(calls, want);
    // Registered already: the CLI is not called again.
    ok(h.run(&[
        "install",
        "--skip-runtime",
        "--client",
        "claude-code",
        "--allow-unsigned",
        "--from",
        &h.bundle_arg(),
    ]));
    assert_eq!(fs_err::read_to_string(&log).unwrap(), want);
    let out = ok(h.run(&["clients", "--json"]));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cc = list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "claude-code")
        .unwrap();
    assert_eq!(cc["method"], "cli");
    assert_eq!(cc["healthy"], true, "{cc}");
    ok(h.run(&["uninstall", "--client", "claude-code"]));
    let calls = fs_err::read_to_string(&log).unwrap();
    assert!(
        calls.ends_with("mcp|remove|--scope|user|scimcp-refsci|\n"),
        "{calls}"
    );
}

#[test]
fn eight_concurrent_installs_leave_every_entry_exactly_once() {
    let h = home();
    let zed = h.home.join(".config/zed/settings.json");
    fs_err::write(&zed, "{\n  // mine\n  \"context_servers\": {}\n}\n").unwrap();
    let bundle = h.bundle_arg();
    let children: Vec<_> = (0..8)
        .map(|_| {
            common::setup_cmd(
                &h.home,
                &h.data,
                &h.path,
                &[
                    "install",
                    "--skip-runtime",
                    "--allow-unsigned",
                    "--from",
                    &bundle,
                ],
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let files = [
        h.home.join(".cursor/mcp.json"),
        h.home.join(".codex/config.toml"),
        zed.clone(),
        h.home.join(".config/goose/config.yaml"),
        h.home.join(".gemini/settings.json"),
        h.data.join("clients/mcp.json"),
    ];
    for f in &files {
        let text = fs_err::read_to_string(f).unwrap();
        let hits = text.matches("\"scimcp-refsci\": {").count()
            + text.matches("\n  scimcp-refsci:\n").count()
            + text.matches("[mcp_servers.scimcp-refsci]").count();
        assert_eq!(hits, 1, "{}:\n{text}", f.display());
    }
    assert!(fs_err::read_to_string(&zed).unwrap().contains("// mine"));
    let state: serde_json::Value =
        serde_json::from_slice(&bytes(&h.data.join("state.json")).unwrap()).unwrap();
    assert_eq!(
        state["adapters"]["refsci"]["clients"]
            .as_object()
            .unwrap()
            .len(),
        6,
        "{state:#}"
    );
    assert_eq!(state["versions"].as_object().unwrap().len(), 1);
}

#[test]
fn upgrade_rollback_upgrade_keeps_runs_and_client_files() {
    let h = home();
    // Two versions built from the same binaries: one named by its directory, one by RELEASE.json.
    let scimcp = PathBuf::from(env!("CARGO_BIN_EXE_scimcp-setup")).with_file_name("scimcp");
    let mirror = h.root.join("mirror");
    fs_err::create_dir_all(&mirror).unwrap();
    let v2 = fake_bundle(&mirror, "scimcp-0.2.0-x86_64-unknown-linux-gnu", None);
    let v3 = fake_bundle(&mirror, "scimcp-next", Some("0.3.0"));
    if scimcp.is_file() {
        for v in [&v2, &v3] {
            fs_err::copy(&scimcp, v.join("bin/scimcp")).unwrap();
        }
    }
    ok(h.run(&[
        "install",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &h.bundle_arg(),
    ]));
    let clients_before: Vec<_> = [
        h.home.join(".cursor/mcp.json"),
        h.home.join(".codex/config.toml"),
    ]
    .iter()
    .map(|p| bytes(p).unwrap())
    .collect();
    let runs = h.data.join("runs");
    let mark = |n: &str| {
        let d = runs.join(n);
        fs_err::create_dir_all(&d).unwrap();
        fs_err::write(d.join("result.json"), n).unwrap();
    };
    let current = || fs_err::read_link(h.data.join("current")).unwrap();
    mark("before-upgrade");
    let mirror_arg = mirror.display().to_string();

    // --check names what an upgrade would install and how, and changes nothing.
    let out = ok(h.run(&["upgrade", "--check", "--from", &mirror_arg]));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("scimcp 0.3.0 is available")
            && said.contains("you have 0.1.0")
            && said.contains(&format!("scimcp-setup upgrade --from {mirror_arg}")),
        "{said}"
    );
    assert_eq!(current(), Path::new("versions/0.1.0"));

    let out = ok(h.run(&[
        "upgrade",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &mirror_arg,
    ]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("upgrade 0.1.0 -> 0.3.0"));
    assert_eq!(current(), Path::new("versions/0.3.0"));
    mark("after-upgrade");
    // Nothing newer: a success that changes nothing.
    let out = ok(h.run(&[
        "upgrade",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &mirror_arg,
    ]));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("already at 0.3.0"),
        "{out:?}"
    );
    assert_eq!(current(), Path::new("versions/0.3.0"));
    let out = h.run(&[
        "upgrade",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &mirror_arg,
        "--version",
        "0.2.0",
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--allow-downgrade"),
        "{out:?}"
    );

    ok(h.run(&["rollback"]));
    assert_eq!(current(), Path::new("versions/0.1.0"));
    assert!(h.data.join("current/bin/scimcp").is_file());
    mark("after-rollback");
    let status: serde_json::Value =
        serde_json::from_slice(&ok(h.run(&["status", "--json"])).stdout).unwrap();
    assert_eq!(status["active"], "0.1.0");
    assert_eq!(status["previous"], "0.3.0");

    ok(h.run(&[
        "upgrade",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &mirror_arg,
    ]));
    assert_eq!(current(), Path::new("versions/0.3.0"));
    ok(h.run(&[
        "upgrade",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &mirror_arg,
        "--version",
        "0.2.0",
        "--allow-downgrade",
    ]));
    assert_eq!(current(), Path::new("versions/0.2.0"));
    // Only the active and the previous version are kept.
    let mut kept: Vec<String> = fs_err::read_dir(h.data.join("versions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(kept, ["0.2.0", "0.3.0"]);
    mark("after-second-upgrade");

    let clients_after: Vec<_> = [
        h.home.join(".cursor/mcp.json"),
        h.home.join(".codex/config.toml"),
    ]
    .iter()
    .map(|p| bytes(p).unwrap())
    .collect();
    assert_eq!(
        clients_before, clients_after,
        "upgrades and rollback rewrote client files"
    );

    // Installing an older bundle over a newer version is refused: that is a downgrade.
    let out = h.run(&[
        "install",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &h.bundle_arg(),
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("an older version; nothing was changed"),
        "{out:?}"
    );
    assert_eq!(current(), Path::new("versions/0.2.0"));

    ok(h.run(&["uninstall"]));
    for n in [
        "before-upgrade",
        "after-upgrade",
        "after-rollback",
        "after-second-upgrade",
    ] {
        assert_eq!(
            fs_err::read_to_string(runs.join(n).join("result.json")).unwrap(),
            n
        );
    }
    assert!(!h.data.join("versions").exists() && !h.data.join("current").exists());
    // Purging needs a confirmation; without a terminal only --yes gives it.
    let out = h.run(&["uninstall", "--purge"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(runs.exists());
    ok(h.run(&["uninstall", "--purge", "--yes"]));
    assert!(!runs.exists());
}

/// Zip `dir` under the prefix `prefix/` (files stored, modes kept), plus extra raw entries.
fn zip_dir(dir: &Path, prefix: &str, out: &Path, extra: &[(&str, &str)]) {
    use std::io::Write;
    let file = fs_err::File::create(out).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs_err::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            #[cfg(unix)]
            let mode = {
                use std::os::unix::fs::PermissionsExt;
                fs_err::metadata(&p).unwrap().permissions().mode()
            };
            #[cfg(not(unix))]
            let mode = 0o644;
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored)
                .unix_permissions(mode);
            zip.start_file(format!("{prefix}{rel}"), options).unwrap();
            zip.write_all(&fs_err::read(&p).unwrap()).unwrap();
        }
    }
    for (name, text) in extra {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
}

#[test]
fn installs_from_a_zip_bundle_and_refuses_escaping_entries() {
    let h = home();
    let src = fake_bundle(&h.root, "unpacked", Some("1.4.0"));
    let good = h.root.join("scimcp-1.4.0-x86_64-unknown-linux-gnu.zip");
    zip_dir(&src, "scimcp-1.4.0/", &good, &[]);
    ok(h.run(&[
        "install",
        "--skip-runtime",
        "--client",
        "cursor",
        "--allow-unsigned",
        "--from",
        &good.display().to_string(),
    ]));
    let server = h.data.join("current/bin/scimcp");
    assert_eq!(
        fs_err::read_link(h.data.join("current")).unwrap(),
        Path::new("versions/1.4.0")
    );
    assert!(server.is_file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs_err::metadata(&server).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "bin/ keeps its executable bits");
    }
    assert!(h.data.join("versions/1.4.0/RELEASE.json").is_file());

    let plain = fake_bundle(&h.root, "unpacked-plain", None);
    let evil = h.root.join("scimcp-1.5.0.zip");
    zip_dir(&plain, "", &evil, &[("../../escaped.txt", "boo")]);
    let out = h.run(&[
        "install",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &evil.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("escapes the bundle"),
        "{out:?}"
    );
    assert!(!h.root.join("escaped.txt").exists() && !h.data.join("escaped.txt").exists());
    assert_eq!(
        fs_err::read_link(h.data.join("current")).unwrap(),
        Path::new("versions/1.4.0")
    );
}

#[test]
fn uninstall_leaves_an_entry_the_user_changed() {
    let h = home();
    ok(h.run(&[
        "install",
        "--skip-runtime",
        "--allow-unsigned",
        "--from",
        &h.bundle_arg(),
    ]));
    let cursor = h.home.join(".cursor/mcp.json");
    let mine = fs_err::read_to_string(&cursor)
        .unwrap()
        .replace("\"serve\"", "\"serve\", \"--data-dir\", \"/my/data\"");
    fs_err::write(&cursor, &mine).unwrap();
    let out = ok(h.run(&["uninstall"]));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("left alone"),
        "{out:?}"
    );
    assert_eq!(fs_err::read_to_string(&cursor).unwrap(), mine);
    assert!(
        !h.home.join(".codex/config.toml").exists(),
        "scimcp's own file is removed"
    );
}

/// A bundle path that does not exist: exit 1 (a failure its user can act on, STYLE.md),
/// `error:` with the path, and a `hint:` apart from the message; with `--json`, the same as
/// one object on stdout.
#[test]
fn a_missing_bundle_exits_1_with_a_hint() {
    let h = home();
    let missing = h.root.join("no such bundle.zip");
    let args = ["install", "--skip-runtime", "--allow-unsigned", "--from"];
    let mut text_args = args.to_vec();
    let missing_arg = missing.display().to_string();
    text_args.push(&missing_arg);
    let out = h.run(&text_args);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let root = h.root.display().to_string();
    let err = common::stderr(&out).replace(&root, "[ROOT]");
    insta::assert_snapshot!(err, @r"
    error: cannot read the bundle [ROOT]/no such bundle.zip: failed to query resolved metadata `[ROOT]/no such bundle.zip`: No such file or directory (os error 2)
      hint: --from takes a scimcp release bundle: a scimcp-<version>-<target>.zip, or the folder it unpacks to
    ");
    assert!(!h.data.join("state.json").exists());

    let mut json_args = text_args.clone();
    json_args.push("--json");
    let out = h.run(&json_args);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let failure: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!(
        failure["message"].as_str().unwrap().contains(&missing_arg),
        "{failure:#}"
    );
    assert!(failure["causes"].is_array(), "{failure:#}");
    assert!(
        failure["hint"].as_str().unwrap().contains("--from"),
        "{failure:#}"
    );
    assert!(common::stderr(&out).is_empty(), "{out:?}");
}
