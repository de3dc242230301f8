//! Adapters as a first-class choice, through the real `scimcp-setup` binary in a fake home
//! under `Jürgen Müller/Données …`, with a stand-in Python (nothing is downloaded): two
//! adapters side by side in every client, each with its own entry, runtime and record; one
//! uninstalled without touching a byte of the other's entries; an older install's `scimcp`
//! entries renamed without leaving a stale one; package sources recorded and reused; a
//! binary-only adapter installed from wheels only; a requirement pip cannot find named.

#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};

use common::adapter::{Demo, executable, fake_python, write_adapter};
use common::{bytes, fake_bundle, fingerprint, ok, seed_all, setup_cmd, unicode_tempdir};
use scimcp_core::install_state::{AdapterSource, InstallState, ServerCommand};
use scimcp_installer::clients::ClientContext;
use scimcp_installer::{Host, Layout, Platform};
use serde_json::Value;

/// A fake home with client files seeded, a stand-in `python3` (3.11.7) and `python3.9`
/// (3.9.18) on PATH, a bundle (refsci with one tiny pin) and a `demo` file adapter (CPython
/// 3.9 only, binary-only).
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    data: PathBuf,
    path: PathBuf,
    log: PathBuf,
    bundle: String,
    demo: PathBuf,
}

fn world() -> World {
    let dir = unicode_tempdir();
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    let data = root.join("Données scimcp");
    let tools = root.join("outils de Jürgen");
    executable(&tools.join("python3"), &fake_python("3.11.7"));
    executable(&tools.join("python3.9"), &fake_python("3.9.18"));
    let path = PathBuf::from(format!("{}:/usr/bin:/bin", tools.display()));
    let bundle = fake_bundle(&root, "scimcp-0.1.0", Some("0.1.0"));
    let manifest = bundle.join("adapters/refsci.toml");
    let text = fs_err::read_to_string(&manifest).unwrap();
    let start = text.find("requirements = [").unwrap();
    let end = start + text[start..].find(']').unwrap() + 1;
    fs_err::write(
        &manifest,
        format!(
            "{}requirements = [\"demo==1.0\"]{}",
            &text[..start],
            &text[end..]
        ),
    )
    .unwrap();
    fs_err::create_dir_all(bundle.join("refsci/src/refsci")).unwrap();
    fs_err::write(bundle.join("refsci/src/refsci/__init__.py"), "").unwrap();
    let demo = write_adapter(&root.join("mon adaptateur"), &Demo::default());
    let log = root.join("pip.log");
    fs_err::write(&log, "").unwrap();
    World {
        bundle: bundle.display().to_string(),
        _dir: dir,
        root,
        home,
        data,
        path,
        log,
        demo,
    }
}

impl World {
    fn cmd(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = setup_cmd(&self.home, &self.data, &self.path, args);
        cmd.env("FAKE_LOG", &self.log);
        cmd
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        ok(self.cmd(args).output().unwrap())
    }

    fn state(&self) -> InstallState {
        InstallState::load(&self.data).unwrap().unwrap()
    }

    fn cx_host(&self) -> Host {
        Host::fake(Platform::Linux, &self.home, &[])
    }

    fn demo_arg(&self) -> String {
        self.demo.display().to_string()
    }

    fn pip_calls(&self) -> Vec<String> {
        fs_err::read_to_string(&self.log)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    }
}

/// Every client file with the entries named `names` in it, as JSON (absent: `Null`).
fn entries(w: &World, names: &[&str]) -> Vec<(String, String, Value)> {
    let host = w.cx_host();
    let layout = Layout::new(&w.data, Platform::Linux);
    let cx = ClientContext {
        host: &host,
        layout: &layout,
        project: None,
    };
    let mut out = Vec::new();
    for client in scimcp_installer::clients::all() {
        for name in names {
            let Some(file) = client.file(cx, name) else {
                continue;
            };
            let value = scimcp_installer::register::read_text(&file.path)
                .unwrap()
                .and_then(|t| file.format.read(&t, file.slot(name)).unwrap())
                .unwrap_or(Value::Null);
            out.push((client.id().to_string(), (*name).to_string(), value));
        }
    }
    out
}

#[test]
fn two_adapters_live_side_by_side_and_one_uninstalls_without_touching_the_other() {
    let w = world();
    let host = w.cx_host();
    let layout = Layout::new(&w.data, Platform::Linux);
    let seeded = seed_all(ClientContext {
        host: &host,
        layout: &layout,
        project: None,
    });
    assert!(seeded.len() >= 10, "{seeded:?}");
    w.run(&["install", "--allow-unsigned", "--from", &w.bundle]);
    let refsci_only: Vec<(PathBuf, Option<Vec<u8>>)> = seeded
        .iter()
        .map(|(_, p, _)| (p.clone(), bytes(p)))
        .chain([(
            w.data.join("clients/mcp.json"),
            bytes(&w.data.join("clients/mcp.json")),
        )])
        .collect();

    // The file adapter: found Python 3.9 on PATH, its own runtime, its own entry everywhere.
    let out = w.run(&["install", "--adapter", &w.demo_arg()]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.contains("Python 3.9.18") && said.contains("`python3.9` on PATH"),
        "{said}"
    );
    assert!(said.contains("passed over: python3"), "{said}");
    let state = w.state();
    let demo = &state.adapters["demo"];
    let copy = w.data.join("adapters/demo/demo.toml");
    assert_eq!(
        demo.source,
        AdapterSource::File {
            original: w.demo.clone(),
            manifest: copy.clone()
        }
    );
    assert!(copy.is_file() && w.data.join("adapters/demo/schemas/echo.json").is_file());
    assert_eq!(
        demo.server.as_ref().unwrap().args[..3],
        [
            "serve".to_string(),
            "--adapter".into(),
            copy.display().to_string()
        ]
    );
    let runtime = &state.runtimes["demo"];
    assert!(runtime.dir.starts_with(w.data.join("runtimes")));
    assert!(
        runtime
            .dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("demo-")
    );
    let base = runtime.base.as_ref().unwrap();
    assert_eq!(
        (base.found_by.as_str(), base.version.as_str()),
        ("PATH", "3.9.18")
    );
    assert_ne!(state.runtimes["refsci"].dir, runtime.dir);
    // Binary-only: pip was told never to build from source.
    let calls = w.pip_calls();
    assert!(
        calls
            .iter()
            .any(|c| c.contains("--only-binary :all: demo-pkg==1.0")),
        "{calls:?}"
    );
    // Both entries in every client file refsci is in, each with its own name and command.
    let both = entries(&w, &["scimcp-refsci", "scimcp-demo"]);
    let with = |name: &str| -> Vec<String> {
        both.iter()
            .filter(|(_, n, v)| n == name && !v.is_null())
            .map(|(c, ..)| c.clone())
            .collect()
    };
    assert_eq!(with("scimcp-refsci"), with("scimcp-demo"));
    assert!(with("scimcp-demo").len() >= 10, "{both:?}");
    for (client, name, value) in &both {
        let args = value["args"].as_array().or(value["command"].as_array());
        if let Some(args) = args {
            let text = serde_json::to_string(args).unwrap();
            assert_eq!(
                text.contains("demo.toml"),
                name == "scimcp-demo",
                "{client} {name}: {text}"
            );
        }
    }
    assert_eq!(demo.clients.len(), state.adapters["refsci"].clients.len());
    assert!(demo.clients.values().all(|c| c.name == "scimcp-demo"));
    // status and clients show both.
    let status: Value = serde_json::from_slice(&w.run(&["status", "--json"]).stdout).unwrap();
    let names: Vec<&str> = status["adapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["demo", "refsci"]);
    let listed: Value =
        serde_json::from_slice(&w.run(&["clients", "--json", "--adapter", "demo"]).stdout).unwrap();
    assert!(
        listed["clients"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["entry"] == "scimcp-demo"),
        "{listed:#}"
    );

    // Installing again changes nothing.
    let files_before: Vec<Option<Vec<u8>>> = refsci_only.iter().map(|(p, _)| bytes(p)).collect();
    let receipt = bytes(&w.data.join("state.json"));
    w.run(&["install", "--adapter", &w.demo_arg()]);
    assert_eq!(
        refsci_only
            .iter()
            .map(|(p, _)| bytes(p))
            .collect::<Vec<_>>(),
        files_before
    );
    assert_eq!(bytes(&w.data.join("state.json")), receipt);

    // Uninstall the file adapter: every client file is exactly as before it was installed.
    let out = w.run(&["uninstall", "--adapter", "demo"]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    for (path, before) in &refsci_only {
        assert_eq!(
            &bytes(path),
            before,
            "{} is not as it was before demo was installed\n{said}",
            path.display()
        );
    }
    let state = w.state();
    assert!(!state.adapters.contains_key("demo") && !state.runtimes.contains_key("demo"));
    assert!(state.adapters.contains_key("refsci"));
    assert!(!w.data.join("adapters/demo").exists());
    assert!(
        fs_err::read_dir(w.data.join("runtimes"))
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().starts_with("demo-")),
        "{said}"
    );
    assert!(state.runtimes["refsci"].interpreter.is_file());
    // Unknown adapters are refused by name.
    let out = w.cmd(&["uninstall", "--adapter", "demo"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the adapter demo is not installed"));
    let out = w.cmd(&["install", "--adapter", "nosuch"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("there is no adapter named \"nosuch\""),
        "{out:?}"
    );
}

#[test]
fn entries_an_older_scimcp_named_scimcp_are_renamed_without_leaving_a_stale_one() {
    let w = world();
    let host = w.cx_host();
    let layout = Layout::new(&w.data, Platform::Linux);
    let cx = ClientContext {
        host: &host,
        layout: &layout,
        project: None,
    };
    seed_all(cx);
    w.run(&[
        "install",
        "--client",
        "cursor",
        "--client",
        "zed",
        "--client",
        "codex",
        "--client",
        "continue",
        "--allow-unsigned",
        "--from",
        &w.bundle,
    ]);
    // Turn the installation into what an older scimcp-setup left: every entry called
    // `scimcp`, the clients and the command at the top level of state.json.
    let mut state: Value =
        serde_json::from_slice(&bytes(&w.data.join("state.json")).unwrap()).unwrap();
    let refsci = state["adapters"]["refsci"].take();
    let mut clients = refsci["clients"].clone();
    for (id, record) in clients.as_object_mut().unwrap() {
        record.as_object_mut().unwrap().remove("name");
        let client = scimcp_installer::clients::by_id(id).unwrap();
        let new = client.file(cx, "scimcp-refsci").unwrap();
        let old = client.file(cx, "scimcp").unwrap();
        let text = fs_err::read_to_string(&new.path).unwrap();
        let server: ServerCommand = serde_json::from_value(refsci["server"].clone()).unwrap();
        let entry = new.format.read(&text, new.slot("scimcp-refsci")).unwrap();
        assert_eq!(
            entry,
            Some(client.entry("scimcp-refsci", &server).to_json())
        );
        let (without, empty) = new.format.remove(&text, new.slot("scimcp-refsci")).unwrap();
        if empty {
            fs_err::remove_file(&new.path).unwrap();
        }
        let base = if empty { String::new() } else { without };
        let legacy = client.entry("scimcp", &server);
        fs_err::write(
            &old.path,
            old.format.set(&base, old.slot("scimcp"), &legacy).unwrap(),
        )
        .unwrap();
        record["entry"] = legacy.to_json();
    }
    let obj = state.as_object_mut().unwrap();
    obj.remove("adapters");
    obj.insert("clients".into(), clients);
    obj.insert("server".into(), refsci["server"].clone());
    fs_err::write(
        w.data.join("state.json"),
        serde_json::to_vec_pretty(&state).unwrap(),
    )
    .unwrap();
    assert!(w.home.join(".continue/mcpServers/scimcp.yaml").is_file());
    let legacy = entries(&w, &["scimcp"]);
    assert_eq!(legacy.iter().filter(|(_, _, v)| !v.is_null()).count(), 5);
    // The doctor's view before: the entries are found under the old name, with a warning.
    // (scimcp-setup status reads them the same way.)
    let status: Value = serde_json::from_slice(&w.run(&["status", "--json"]).stdout).unwrap();
    assert!(
        status["clients"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "cursor" && c["entry"] == "scimcp" && c["registered"] == true),
        "{status:#}"
    );

    // A plain install (the next version, or the same one) renames every entry.
    let out = w.run(&["install", "--allow-unsigned", "--from", &w.bundle]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("rename the entry `scimcp`"), "{said}");
    let now = entries(&w, &["scimcp", "scimcp-refsci"]);
    for (client, name, value) in &now {
        if name == "scimcp" {
            assert!(value.is_null(), "{client} still has a stale `scimcp` entry");
        }
    }
    for id in ["cursor", "zed", "codex", "continue", "generic"] {
        assert!(
            now.iter()
                .any(|(c, n, v)| c == id && n == "scimcp-refsci" && !v.is_null()),
            "{id}: {now:?}"
        );
    }
    assert!(!w.home.join(".continue/mcpServers/scimcp.yaml").exists());
    // The user's own settings survived the rename.
    let zed = fs_err::read_to_string(w.home.join(".config/zed/settings.json")).unwrap();
    assert!(
        zed.contains("other-server") && zed.contains("Solarized"),
        "{zed}"
    );
    let text = fs_err::read_to_string(w.data.join("state.json")).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    assert!(
        json.get("clients").is_none() && json.get("server").is_none(),
        "{text}"
    );
    assert!(
        w.state().adapters["refsci"]
            .clients
            .values()
            .all(|c| c.name == "scimcp-refsci")
    );
}

#[test]
fn package_sources_are_recorded_and_reused_by_repair() {
    let w = world();
    let wheels = w.root.join("roue de secours");
    fs_err::create_dir_all(&wheels).unwrap();
    w.run(&[
        "install",
        "--client",
        "generic",
        "--adapter",
        &w.demo_arg(),
        "--find-links",
        &wheels.display().to_string(),
        "--no-index",
    ]);
    let state = w.state();
    let sources = &state.adapters["demo"].packages;
    assert_eq!(sources.find_links, vec![wheels.clone()]);
    assert!(sources.no_index);
    let first = w.pip_calls();
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(
        first[0].contains(&format!("--find-links {} --no-index", wheels.display())),
        "{first:?}"
    );
    // A runtime that lost its completion marker is rebuilt by repair from the same wheelhouse.
    fs_err::remove_file(state.runtimes["demo"].dir.join(".scimcp-runtime.json")).unwrap();
    w.run(&["repair"]);
    let calls = w.pip_calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1], first[0]);
    let status = String::from_utf8_lossy(&w.run(&["status"]).stdout).into_owned();
    assert!(
        status.contains(&format!("wheelhouse    {}", wheels.display())),
        "{status}"
    );
}

#[test]
fn a_requirement_pip_cannot_find_is_named_with_what_to_do_and_nothing_changes() {
    let w = world();
    w.run(&[
        "install",
        "--client",
        "generic",
        "--allow-unsigned",
        "--from",
        &w.bundle,
    ]);
    let before = (fingerprint(&w.home), tree(&w.data));
    let mut cmd = w.cmd(&["install", "--adapter", &w.demo_arg()]);
    cmd.env(
        "FAKE_PIP_FAIL",
        "ERROR: Could not find a version that satisfies the requirement demo-pkg==1.0 (from versions: none)\nERROR: No matching distribution found for demo-pkg==1.0",
    );
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    for needle in [
        "demo-pkg==1.0 cannot be installed for demo",
        "there is no wheel of it for CPython 3.9.18",
        "on PyPI",
        "installs from wheels only",
        "--find-links DIR",
        "Nothing was installed",
    ] {
        assert!(err.contains(needle), "{needle:?} not in:\n{err}");
    }
    assert_eq!((fingerprint(&w.home), tree(&w.data)), before);
}

#[test]
fn a_python_outside_the_range_is_refused_and_the_search_says_what_it_tried() {
    let w = world();
    // Only Python 3.11 on PATH, no pyenv, no uv: the error names the range, what was
    // tried, and the one command that gets a fitting Python here.
    let tools = w.root.join("seulement 3.11");
    executable(&tools.join("python3"), &fake_python("3.11.7"));
    let path = format!("{}:/usr/bin:/bin", tools.display());
    let out = setup_cmd(
        &w.home,
        &w.data,
        Path::new(&path),
        &["install", "--adapter", &w.demo_arg()],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no Python >=3.9, <3.10 for demo on this computer"),
        "{err}"
    );
    assert!(err.contains("is 3.11.7"), "{err}");
    assert!(
        err.contains(
            "curl -LsSf https://astral.sh/uv/install.sh | sh && ~/.local/bin/uv python install 3.9"
        ),
        "{err}"
    );
    assert!(!w.data.join("state.json").exists());
}

/// Everything under `dir` except the setup lock and the scratch directory.
fn tree(dir: &Path) -> std::collections::BTreeMap<String, String> {
    fingerprint(dir)
        .into_iter()
        .filter(|(k, _)| !k.starts_with(".tmp"))
        .collect()
}
