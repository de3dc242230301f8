//! A remote server registered with `scimcp-setup install --remote URL` and checked by
//! `scimcp-doctor`: a real `scimcp serve --transport http` on this computer that requires
//! tokens (`--require-token`, as behind a reverse proxy; with TLS in the second test), tokens
//! made with `scimcp token add`, and the built `scimcp-setup` and `scimcp-doctor` in a fake
//! home. The doctor's `server.handshake` completes initialize, tools/list and
//! get_capabilities over Streamable HTTP with the token from the registration's environment
//! variable, and names each failure with its remedy: 401 for a wrong or revoked token, the
//! variable unset, nothing listening, an untrusted certificate, a certificate for another
//! name. The token never reaches a file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use scimcp_e2e::http_server::{HttpServer, TestRoot};
use serde_json::Value;

/// A made-up token that no server knows.
const WRONG: &str = "scimcp_0000000000000000000000000000000000000000000000000000000000000000";

/// A scientist's computer: a fake home and its own scimcp data directory.
struct Laptop {
    _dir: tempfile::TempDir,
    home: PathBuf,
    data: PathBuf,
}

impl Laptop {
    fn new() -> Laptop {
        let dir = tempfile::Builder::new()
            .prefix("scimcp laptop ")
            .tempdir()
            .unwrap();
        let home = dir.path().join("Jürgen");
        let data = dir.path().join("Données scimcp");
        // Cursor and Codex are installed here.
        fs_err::create_dir_all(home.join(".cursor")).unwrap();
        fs_err::create_dir_all(home.join(".codex")).unwrap();
        Laptop {
            _dir: dir,
            home,
            data,
        }
    }

    /// A built binary with only this laptop's environment and `env` added.
    fn run(&self, binary: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(scimcp_e2e::sibling_binary(binary).unwrap());
        command
            .args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("SCIMCP_HOME", &self.data)
            .env("PATH", self.home.join("no-bin"))
            .env("LC_ALL", "C.UTF-8");
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().unwrap()
    }

    /// `scimcp-doctor ARGS --json`: the exit code and the report.
    fn doctor(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.run("scimcp-doctor", &all, env);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "no JSON report ({e}):\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        validate(&report);
        (out.status.code().unwrap(), report)
    }

    /// Every file this laptop holds, with its text.
    fn files(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        for dir in [&self.home, &self.data] {
            let mut stack = vec![dir.clone()];
            while let Some(d) = stack.pop() {
                let Ok(entries) = fs_err::read_dir(&d) else {
                    continue;
                };
                for e in entries.flatten() {
                    let path = e.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if let Ok(bytes) = fs_err::read(&path) {
                        out.push((path, String::from_utf8_lossy(&bytes).into_owned()));
                    }
                }
            }
        }
        out
    }

    fn assert_no_secret(&self, secret: &str) {
        for (path, text) in self.files() {
            assert!(
                !text.contains(&secret["scimcp_".len()..]),
                "the token reached {}",
                path.display()
            );
        }
    }
}

/// The published schema accepts the report.
fn validate(report: &Value) {
    let schema: Value = serde_json::from_slice(
        &fs_err::read(scimcp_e2e::workspace_root().join("docs/doctor-report.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{report:#}");
}

/// The check `id` (about the remote `remote`) of a report.
fn check<'a>(report: &'a Value, id: &str, remote: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id && c["remote"] == remote)
        .unwrap_or_else(|| panic!("no {id} about {remote} in {report:#}"))
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

#[test]
fn the_doctor_completes_the_handshake_with_the_right_token_and_names_401_with_a_wrong_one() {
    let root = TestRoot::new().unwrap();
    let alice = root.add_token("alice").unwrap();
    let server =
        HttpServer::start(&root, &["--listen", "127.0.0.1:0", "--require-token"], &[]).unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let laptop = Laptop::new();

    // The right token: ok, and only the remote server is checked.
    let (code, report) = laptop.doctor(&["--remote", &url], &[("SCIMCP_TOKEN", &alice)]);
    let handshake = check(&report, "server.handshake", &url);
    assert_eq!(handshake["status"], "ok", "{report:#}\n{}", server.log());
    assert_eq!(code, 0, "{report:#}");
    let finding = text(&handshake["finding"]);
    assert!(
        finding.starts_with("scimcp ")
            && finding.contains("initialize, tools/list (")
            && finding.contains("tools) and get_capabilities")
            && finding.contains("token from $SCIMCP_TOKEN"),
        "{finding}"
    );
    assert_eq!(report["checks"].as_array().unwrap().len(), 1, "{report:#}");
    assert_eq!(report["remotes"][0], url.as_str());
    assert_eq!(report["adapters"].as_array().unwrap().len(), 0);

    // A token the server does not know: 401, and what to do about it.
    let (code, report) = laptop.doctor(&["--remote", &url], &[("SCIMCP_TOKEN", WRONG)]);
    assert_eq!(code, 2, "{report:#}");
    let handshake = check(&report, "server.handshake", &url);
    assert_eq!(handshake["status"], "fail");
    assert!(
        text(&handshake["finding"]).contains("refused the token in $SCIMCP_TOKEN (401"),
        "{handshake:#}"
    );
    assert!(
        text(&handshake["remedy"]).contains("scimcp token add"),
        "{handshake:#}"
    );

    // Another variable, named with --token-env; then the token revoked on the server.
    let (code, _) = laptop.doctor(
        &["--remote", &url, "--token-env", "LAB_TOKEN"],
        &[("LAB_TOKEN", &alice), ("SCIMCP_TOKEN", WRONG)],
    );
    assert_eq!(code, 0);
    root.revoke_token("alice").unwrap();
    let (code, report) = laptop.doctor(&["--remote", &url], &[("SCIMCP_TOKEN", &alice)]);
    assert_eq!(code, 2);
    assert!(
        text(&check(&report, "server.handshake", &url)["finding"]).contains("401"),
        "{report:#}"
    );

    // No variable at all: said before anything is sent.
    let (code, report) = laptop.doctor(&["--remote", &url], &[]);
    assert_eq!(code, 2);
    let handshake = check(&report, "server.handshake", &url);
    assert!(
        text(&handshake["finding"]).contains("SCIMCP_TOKEN is not set"),
        "{handshake:#}"
    );

    // Nothing listening there any more.
    drop(server);
    let (code, report) = laptop.doctor(&["--remote", &url], &[("SCIMCP_TOKEN", &alice)]);
    assert_eq!(code, 2);
    let handshake = check(&report, "server.handshake", &url);
    assert!(
        text(&handshake["finding"]).contains("nothing accepts connections at 127.0.0.1:"),
        "{handshake:#}"
    );
    assert!(text(&handshake["remedy"]).contains("scimcp serve --transport http"));

    // An address that would send the token in clear text is refused as the installer does.
    let out = laptop.run(
        "scimcp-doctor",
        &["--remote", "http://lab-server:8765/mcp"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unencrypted"),
        "{out:?}"
    );
    laptop.assert_no_secret(&alice);
}

#[test]
fn a_registered_remote_over_tls_is_checked_repaired_and_removed() {
    let root = TestRoot::new().unwrap();
    let alice = root.add_token("alice").unwrap();
    let (cert, key, _) = root.tls_files().unwrap();
    let ca = scimcp_e2e::workspace_root().join("tests/fixtures/tls/ca.pem");
    let server = HttpServer::start(
        &root,
        &[
            "--listen",
            "127.0.0.1:0",
            "--require-token",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(server.scheme, "https", "{}", server.log());
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    let laptop = Laptop::new();
    let cursor = laptop.home.join(".cursor/mcp.json");
    fs_err::write(
        &cursor,
        "{\n  \"mcpServers\": {\n    \"mine\": { \"url\": \"https://example.org/mcp\" }\n  }\n}\n",
    )
    .unwrap();

    // Registered with the token in LAB_TOKEN: the files name the variable, never the token.
    let out = laptop.run(
        "scimcp-setup",
        &["install", "--remote", &url, "--token-env", "LAB_TOKEN"],
        &[("LAB_TOKEN", &alice)],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout.contains("Set the environment variable LAB_TOKEN to your token"),
        "{stdout}"
    );
    let name = "scimcp-remote-127-0-0-1";
    let text_of = |p: &Path| fs_err::read_to_string(p).unwrap();
    assert!(text_of(&cursor).contains("Bearer ${env:LAB_TOKEN}"));
    let codex = laptop.home.join(".codex/config.toml");
    assert!(text_of(&codex).contains("bearer_token_env_var = \"LAB_TOKEN\""));
    laptop.assert_no_secret(&alice);

    // The doctor finds the registration in state.json. Without the lab's CA the
    // certificate is untrusted, and the remedy says how to trust it.
    let env = [("LAB_TOKEN", alice.as_str())];
    let (code, report) = laptop.doctor(&[], &env);
    assert_eq!(code, 2, "{report:#}");
    let handshake = check(&report, "server.handshake", name);
    assert!(
        text(&handshake["finding"]).contains("not signed by an authority this computer trusts"),
        "{handshake:#}"
    );
    assert!(text(&handshake["remedy"]).contains("--ca-cert"));
    for id in ["client.cursor", "client.codex", "client.generic"] {
        assert_eq!(check(&report, id, name)["status"], "ok", "{report:#}");
    }
    let layout = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "install.layout")
        .unwrap();
    assert_eq!(layout["status"], "skipped", "{layout:#}");
    assert!(
        report
            .get("adapters")
            .unwrap()
            .as_array()
            .unwrap()
            .is_empty()
    );

    // With the CA: everything is ok.
    let ca_arg = ca.to_str().unwrap();
    let (code, report) = laptop.doctor(&["--ca-cert", ca_arg], &env);
    assert_eq!(
        check(&report, "server.handshake", name)["status"],
        "ok",
        "{report:#}"
    );
    assert!(code <= 1, "{report:#}");
    // A name the certificate does not carry.
    let other = format!("https://localhost:{}/mcp", server.port);
    let (_, report) = laptop.doctor(
        &[
            "--remote",
            &other,
            "--token-env",
            "LAB_TOKEN",
            "--ca-cert",
            ca_arg,
        ],
        &env,
    );
    let handshake = check(&report, "server.handshake", &other);
    assert!(
        text(&handshake["finding"]).contains("not valid for the name localhost"),
        "{handshake:#}"
    );

    // The entry deleted by hand: the doctor says so, --fix puts it back.
    let edited = text_of(&cursor).replace(name, "renamed-by-hand");
    fs_err::write(&cursor, edited).unwrap();
    let (_, report) = laptop.doctor(&["--ca-cert", ca_arg, "--fix"], &env);
    let fixed = &report["fix"];
    assert_eq!(fixed["repaired"], true, "{report:#}");
    assert!(
        text(&fixed["command"]).contains(&format!("scimcp-setup repair --remote {name}")),
        "{fixed:#}"
    );
    assert_eq!(check(&report, "client.cursor", name)["status"], "ok");
    assert!(text_of(&cursor).contains(name));

    // Uninstall --remote: the user's own entries stay, scimcp's go, the receipt goes.
    let out = laptop.run("scimcp-setup", &["uninstall", "--remote", name], &[]);
    assert!(out.status.success(), "{out:?}");
    let left = text_of(&cursor);
    assert!(left.contains("\"mine\"") && !left.contains(name), "{left}");
    assert!(left.contains("renamed-by-hand"), "{left}");
    assert!(
        !codex.exists(),
        "scimcp created it and nothing else is in it"
    );
    assert!(!laptop.data.join("state.json").exists());
    laptop.assert_no_secret(&alice);
}
