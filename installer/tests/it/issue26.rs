//! Issue 26, through the real `scimcp-setup` binary in a fake home: a project entry is
//! found, shown and removed without `--project`; every client that takes a per-call
//! deadline gets 600 s and tells the server; a secret in `--remote` or `--token-env`, in any
//! of the forms a sweep hid it in, is refused without being repeated and reaches no file.

use crate::common;

use std::path::{Path, PathBuf};

use common::{fake_bundle, ok, run_setup, unicode_tempdir};

struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    data: PathBuf,
    path: PathBuf,
    bundle: PathBuf,
    project: PathBuf,
}

/// A home where Claude Code (no `claude` on PATH: scimcp edits the files), Codex, Gemini
/// CLI, Qwen Code, Copilot CLI, Goose and Cursor are found.
fn home() -> Home {
    let dir = unicode_tempdir();
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    let path = root.join("empty bin");
    fs_err::create_dir_all(&path).unwrap();
    for d in [
        ".claude",
        ".cursor",
        ".codex",
        ".gemini",
        ".qwen",
        ".copilot",
        ".config/goose",
    ] {
        fs_err::create_dir_all(home.join(d)).unwrap();
    }
    let project = root.join("Mon projet");
    fs_err::create_dir_all(&project).unwrap();
    let bundle = fake_bundle(&root, "scimcp-0.1.0", None);
    Home {
        data: root.join("Données scimcp"),
        _dir: dir,
        root,
        home,
        path,
        bundle,
        project,
    }
}

impl Home {
    fn run(&self, args: &[&str]) -> std::process::Output {
        run_setup(&self.home, &self.data, &self.path, args)
    }
    fn install(&self, extra: &[&str]) -> std::process::Output {
        let bundle = self.bundle.display().to_string();
        let mut args = vec![
            "install",
            "--skip-runtime",
            "--allow-unsigned",
            "--from",
            &bundle,
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }
}

/// Every regular file under `dir` with its text (lossy), links not followed.
fn files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let meta = fs_err::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file() {
                let text = String::from_utf8_lossy(&fs_err::read(&p).unwrap()).into_owned();
                out.push((p, text));
            }
        }
    }
    out.sort();
    out
}

fn json(path: &Path) -> serde_json::Value {
    let text = fs_err::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

fn codex_doc(h: &Home) -> toml_edit::DocumentMut {
    let text = fs_err::read_to_string(h.home.join(".codex/config.toml")).unwrap();
    text.parse().unwrap()
}

#[test]
fn a_plain_uninstall_removes_a_project_entry_that_status_shows() {
    let h = home();
    let project = h.project.display().to_string();
    let out = ok(h.install(&["--project", &project, "--client", "claude-code-project"]));
    let mcp = h.project.join(".mcp.json");
    assert!(
        json(&mcp)["mcpServers"]["scimcp-refsci"].is_object(),
        "{}",
        fs_err::read_to_string(&mcp).unwrap()
    );
    // The installer says how Claude Code approves a project entry and what `-p` needs.
    let text = common::stdout(&out);
    assert!(
        text.contains(&format!("open Claude Code in {project}")),
        "{text}"
    );
    assert!(text.contains("Pending approval"), "{text}");
    assert!(
        text.contains("--allowedTools 'mcp__scimcp-refsci__*'"),
        "{text}"
    );

    // `status` without --project shows the entry where it was written, healthy.
    let out = ok(h.run(&["status", "--json"]));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entry = status["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "claude-code-project")
        .unwrap_or_else(|| panic!("no project entry in {status:#}"))
        .clone();
    assert_eq!(entry["path"], mcp.display().to_string(), "{entry:#}");
    assert_eq!(entry["registered"], true, "{entry:#}");
    assert_eq!(entry["healthy"], true, "{entry:#}");

    // A plain uninstall (no --project) removes it; nothing is left to do by hand.
    let out = ok(h.run(&["uninstall"]));
    let text = common::stdout(&out);
    assert!(!text.contains("configure by hand"), "{text}");
    assert!(
        !mcp.exists(),
        "scimcp created {} and it still holds: {}",
        mcp.display(),
        fs_err::read_to_string(&mcp).unwrap_or_default()
    );
    assert!(!h.data.join("state.json").exists(), "the receipt stayed");
}

#[test]
fn a_project_file_with_other_servers_gets_its_bytes_back_after_a_plain_uninstall() {
    let h = home();
    let mcp = h.project.join(".mcp.json");
    let theirs =
        "{\n  \"mcpServers\": {\n    \"theirs\": { \"command\": \"/usr/bin/x\" }\n  }\n}\n";
    fs_err::write(&mcp, theirs).unwrap();
    let project = h.project.display().to_string();
    ok(h.install(&["--project", &project, "--client", "claude-code-project"]));
    assert!(
        fs_err::read_to_string(&mcp)
            .unwrap()
            .contains("scimcp-refsci")
    );
    // A plain install elsewhere later does not lose track of it.
    ok(h.install(&[]));
    ok(h.run(&["uninstall"]));
    assert_eq!(fs_err::read_to_string(&mcp).unwrap(), theirs);
}

#[test]
fn clients_with_a_deadline_key_get_600_s_and_tell_the_server() {
    let h = home();
    let out = ok(h.install(&[]));
    let text = common::stdout(&out);
    let timed = |args: &serde_json::Value| {
        let args: Vec<&str> = args
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(args[..3], ["serve", "--adapter", "refsci"], "{args:?}");
        assert!(
            args.windows(2).any(|w| w == ["--client-timeout-s", "600"]),
            "{args:?}"
        );
    };
    let claude = &json(&h.home.join(".claude.json"))["mcpServers"]["scimcp-refsci"];
    assert_eq!(claude["timeout"], 600_000, "{claude:#}");
    timed(&claude["args"]);
    for dir in [".gemini", ".qwen"] {
        let e = &json(&h.home.join(dir).join("settings.json"))["mcpServers"]["scimcp-refsci"];
        assert_eq!(e["timeout"], 600_000, "{dir}: {e:#}");
        timed(&e["args"]);
    }
    let copilot = &json(&h.home.join(".copilot/mcp-config.json"))["mcpServers"]["scimcp-refsci"];
    assert_eq!(copilot["type"], "local", "{copilot:#}");
    assert_eq!(copilot["timeout"], 600_000, "{copilot:#}");
    assert_eq!(copilot["tools"], serde_json::json!(["*"]), "{copilot:#}");
    timed(&copilot["args"]);
    let codex = codex_doc(&h);
    assert_eq!(
        codex["mcp_servers"]["scimcp-refsci"]["tool_timeout_sec"].as_integer(),
        Some(600),
        "{codex}"
    );
    let goose = fs_err::read_to_string(h.home.join(".config/goose/config.yaml")).unwrap();
    assert!(goose.contains("timeout: 600"), "{goose}");
    assert!(goose.contains("--client-timeout-s"), "{goose}");
    // A client without such a key gets no flag: its deadline is not 600 s.
    let cursor = &json(&h.home.join(".cursor/mcp.json"))["mcpServers"]["scimcp-refsci"];
    assert!(
        !cursor["args"].to_string().contains("--client-timeout-s"),
        "{cursor:#}"
    );
    // The one-shot permissions each found client needs are printed.
    assert!(text.contains("--approval-mode yolo"), "{text}");
    assert!(text.contains("--allow-tool 'scimcp-refsci'"), "{text}");

    // Remote entries carry the deadline too (no flag: the server is not started by them).
    let out = ok(h.run(&["install", "--remote", "https://lab-server:8443/mcp"]));
    let name = "scimcp-remote-lab-server";
    let claude = &json(&h.home.join(".claude.json"))["mcpServers"][name];
    assert_eq!(claude["timeout"], 600_000, "{claude:#}");
    let gemini = &json(&h.home.join(".gemini/settings.json"))["mcpServers"][name];
    assert_eq!(gemini["timeout"], 600_000, "{gemini:#}");
    assert_eq!(gemini["httpUrl"], "https://lab-server:8443/mcp");
    let copilot = &json(&h.home.join(".copilot/mcp-config.json"))["mcpServers"][name];
    assert_eq!(copilot["type"], "http", "{copilot:#}");
    assert_eq!(
        copilot["headers"]["Authorization"],
        "Bearer ${SCIMCP_TOKEN}"
    );
    assert_eq!(copilot["timeout"], 600_000, "{copilot:#}");
    let codex = codex_doc(&h);
    assert_eq!(
        codex["mcp_servers"][name]["tool_timeout_sec"].as_integer(),
        Some(600),
        "{codex}"
    );
    drop(out);
}

/// Every form a secret was seen hiding in: exit 1, the secret in no output and no file.
#[test]
fn a_secret_in_the_address_or_as_the_variable_is_refused_and_written_nowhere() {
    let hex = "5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5";
    let b64 = "Zm9vYmFyQmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbA";
    let urls = [
        format!("https://lab.example/mcp/scimcp_{hex}"),
        format!("https://lab.example/mcp/{hex}"),
        format!("https://lab.example/{b64}/mcp"),
        format!("https://lab.example/mcp%3Ftoken%3D{hex}"),
        format!("https://lab.example/mcp;token={hex}"),
        format!("https://lab.example/mcp token={hex}"),
        format!("https://lab.example\\@{hex}/mcp"),
        format!("https:/\\/lab.example/mcp/{hex}"),
        format!("https://lab.example/mcp?token={hex}"),
        format!("https://me:{hex}@lab.example/mcp"),
    ];
    let h = home();
    // A local installation first: its files (and their backups) must stay secret-free too.
    ok(h.install(&[]));
    let mut cases: Vec<Vec<String>> = urls
        .iter()
        .map(|u| vec!["install".into(), "--remote".into(), u.clone()])
        .collect();
    for value in [hex.to_string(), format!("x{hex}"), format!("{b64}+/=")] {
        cases.push(vec![
            "install".into(),
            "--remote".into(),
            "https://lab.example/mcp".into(),
            "--token-env".into(),
            value,
        ]);
    }
    cases.push(vec![
        "uninstall".into(),
        "--remote".into(),
        format!("https://lab.example/mcp?token={hex}"),
    ]);
    for args in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = h.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        let shown = format!("{}{}", common::stdout(&out), common::stderr(&out));
        for secret in [hex, &hex[..20], b64, &b64[..20]] {
            assert!(!shown.contains(secret), "{args:?} repeated it:\n{shown}");
        }
    }
    for (path, text) in files(&h.root) {
        assert!(
            !text.contains(&hex[..20]) && !text.contains(&b64[..20]),
            "a secret reached {}",
            path.display()
        );
    }
    let state = fs_err::read_to_string(h.data.join("state.json")).unwrap();
    assert!(!state.contains("lab.example"), "{state}");
}

/// The receipt keeps one project per client: installing into a second project moves the
/// entry, so a plain uninstall still finds every entry scimcp wrote.
#[test]
fn installing_into_a_second_project_moves_the_entry_and_leaves_no_orphan() {
    let h = home();
    let first = h.project.display().to_string();
    let second_dir = h.root.join("second project");
    fs_err::create_dir_all(&second_dir).unwrap();
    let second = second_dir.display().to_string();
    ok(h.install(&["--project", &first, "--client", "claude-code-project"]));
    let out = ok(h.install(&["--project", &second, "--client", "claude-code-project"]));
    let text = common::stdout(&out);
    assert!(
        text.contains(&format!("from the project {first}")),
        "{text}"
    );
    assert!(
        !h.project.join(".mcp.json").exists(),
        "the first project kept its entry"
    );
    assert!(second_dir.join(".mcp.json").is_file());
    ok(h.run(&["uninstall"]));
    assert!(!second_dir.join(".mcp.json").exists());
    assert!(!h.project.join(".mcp.json").exists());
    assert!(!h.data.join("state.json").exists(), "the receipt stayed");
}

/// A receipt and client files an older scimcp wrote with a secret in the address: `repair`
/// does not write it again, `status` does not show it, and `uninstall --remote` removes the
/// entries and every backup that holds it.
#[test]
fn a_secret_an_older_scimcp_recorded_is_not_rewritten_shown_or_kept_in_backups() {
    let h = home();
    let plain = "https://lab.example/mcp";
    let secret = "5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5f1c0ffee5";
    let old = format!("https://lab.example/mcp/scimcp_{secret}");
    ok(h.run(&["install", "--remote", plain]));
    // What the older version left: the secret address in the receipt and in every file.
    for (path, text) in files(&h.root) {
        if text.contains(plain) {
            fs_err::write(&path, text.replace(plain, &old)).unwrap();
        }
    }
    ok(h.run(&["install", "--remote", plain, "--name", "other-lab"]));
    let leaks = |h: &Home| {
        files(&h.root)
            .into_iter()
            .filter(|(_, t)| t.contains(secret))
            .map(|(p, _)| p)
            .collect::<Vec<_>>()
    };
    assert!(!leaks(&h).is_empty(), "the setup did not plant the secret");

    let out = h.run(&["repair", "--remote", "scimcp-remote-lab-example"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    for args in [
        &["status"][..],
        &["status", "--json"],
        &["clients"],
        &["repair"],
    ] {
        let out = h.run(args);
        let shown = format!("{}{}", common::stdout(&out), common::stderr(&out));
        assert!(!shown.contains(secret), "{args:?} showed it:\n{shown}");
    }
    let out = ok(h.run(&["uninstall", "--remote", "scimcp-remote-lab-example"]));
    let shown = format!("{}{}", common::stdout(&out), common::stderr(&out));
    assert!(!shown.contains(secret), "{shown}");
    assert!(shown.contains("backup(s)"), "{shown}");
    assert_eq!(leaks(&h), Vec::<PathBuf>::new());
    // The other registration is untouched.
    let state = fs_err::read_to_string(h.data.join("state.json")).unwrap();
    assert!(state.contains("other-lab"), "{state}");
}
