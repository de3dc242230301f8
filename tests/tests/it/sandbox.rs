//! The sandbox through the real `scimcp serve` (#29): a test adapter runs the hostile CLI
//! (`scimcp-hostile-cli`, testkit) as a workflow. In one run it tries to read the fake
//! home's SSH key, a client config holding a token, scimcp's own token file and another
//! run's result; to write into the home and `/tmp`; to connect to a TCP port this test
//! listens on and to bind one; and to leave a double-forked daemon behind.
//!
//! With the default mode every attempt is denied, and each is checked from outside: no
//! secret's bytes in any file of the run, nothing written in the home or `/tmp`, no
//! connection accepted, no process of the run left; the run reads failed, naming the first
//! denial. With `--sandbox off` the same CLI does all of it, so the sandbox is what stops
//! it. `--sandbox required` runs it on a kernel with the whole baseline, and a workflow that
//! declares `[workflow.sandbox] network = true` may connect.
//!
//! Only Linux has a Landlock sandbox; where the kernel has none the tests say so and skip.
#![cfg(target_os = "linux")]

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use scimcp_client::McpSession;
use scimcp_testkit::FakeHome;
use serde_json::{Value, json};

const SSH_KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nscimcp-test-ssh-key-secret\n";
const CLIENT_CONFIG: &str =
    r#"{"mcpServers": {"lab": {"env": {"LAB_TOKEN": "scimcp-test-client-token"}}}}"#;
/// What the hostile CLI's benign workflow writes (testkit/src/bin/hostile_cli.rs).
const BENIGN_RESULT: &str = "another run's private result";

const PARAMS: &str = r#"{"type": "object", "additionalProperties": false,
  "properties": {"other_run_file": {"type": "string"}}}"#;

/// One server on the hostile adapter, in a fake home holding secrets, with a TCP listener.
struct Setup {
    fake: FakeHome,
    /// Paths the CLI tries to read, and their bytes (none may appear in a run's files).
    secrets: Vec<(PathBuf, Vec<u8>)>,
    /// A file directly in `/tmp` the CLI tries to create.
    tmp_target: PathBuf,
    listener: TcpListener,
    table: PathBuf,
    session: McpSession,
}

impl Setup {
    async fn start(extra_args: &[&str], env: &[(&str, &str)]) -> Setup {
        let fake = FakeHome::new();
        let home = fake.home().to_path_buf();
        let data_root = fake.data_root().to_path_buf();
        fs_err::create_dir_all(&data_root).unwrap();
        let scimcp = scimcp_e2e::sibling_binary("scimcp").unwrap();

        let ssh_key = home.join(".ssh/id_ed25519");
        let client_config = home.join(".config/Claude/claude_desktop_config.json");
        for (path, text) in [(&ssh_key, SSH_KEY), (&client_config, CLIENT_CONFIG)] {
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
        }
        // scimcp's own token file, made the real way.
        let added = fake
            .command(&scimcp, Path::new("/usr/bin:/bin"))
            .args(["token", "add", "alice"])
            .output()
            .unwrap();
        assert!(added.status.success(), "token add: {added:?}");
        let tokens = data_root.join("tokens.toml");
        let secrets = [ssh_key, client_config, tokens]
            .into_iter()
            .map(|p| {
                let bytes = fs_err::read(&p).unwrap();
                (p, bytes)
            })
            .collect();

        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let tmp_target =
            Path::new("/tmp").join(format!("scimcp-hostile-{}-{port}.txt", std::process::id()));

        let adapter_dir = fake.root().join("adapter");
        fs_err::create_dir_all(&adapter_dir).unwrap();
        fs_err::write(adapter_dir.join("params.json"), PARAMS).unwrap();
        let manifest = manifest(&home, &data_root, &tmp_target, port);
        fs_err::write(adapter_dir.join("hostile.toml"), manifest).unwrap();
        let cwd = fake.root().join("project");
        fs_err::create_dir_all(&cwd).unwrap();
        let table = cwd.join("table.csv");
        fs_err::write(&table, "sample,value\na,1\n").unwrap();

        let mut args = vec![
            "serve".to_string(),
            "--adapter".into(),
            adapter_dir.join("hostile.toml").display().to_string(),
        ];
        args.extend(extra_args.iter().map(|a| a.to_string()));
        let mut envs = vec![
            ("HOME".to_string(), home.display().to_string()),
            ("SCIMCP_HOME".to_string(), data_root.display().to_string()),
            ("SCIMCP_LOG".to_string(), "warn".to_string()),
        ];
        envs.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let session = McpSession::spawn(&scimcp, &args, &envs, &cwd)
            .await
            .unwrap();
        Setup {
            fake,
            secrets,
            tmp_target,
            listener,
            table,
            session,
        }
    }

    /// This kernel's Landlock ABI (the hostile CLI's `--probe`: the sandbox module's own
    /// probe, not the server under test), or `None`, said, to skip.
    fn landlock_or_skip(&self) -> Option<u32> {
        let exe = scimcp_e2e::sibling_binary("scimcp-hostile-cli").unwrap();
        let out = std::process::Command::new(exe)
            .arg("--probe")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let abi = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("landlock_abi "))
            .and_then(|a| a.parse().ok());
        if abi.is_none() {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("skipped: this kernel cannot sandbox: {text}");
            }
        }
        abi
    }

    /// A run of `workflow` to its end: the validation and the result.
    async fn run(&self, workflow: &str, other_run_file: Option<&Path>) -> (Value, Value) {
        let mut request =
            json!({"workflow": workflow, "dataset": self.table.display().to_string()});
        if let Some(file) = other_run_file {
            request["parameters"] = json!({"other_run_file": file.display().to_string()});
        }
        scimcp_e2e::harness::run_on(&self.session, request, std::time::Duration::from_secs(120))
            .await
    }

    /// The benign workflow's result file: another run's directory for the hostile one.
    async fn other_run(&self) -> PathBuf {
        let (_, result) = self.run("benign", None).await;
        assert_eq!(result["state"], "succeeded", "{result:#}");
        let file = run_dir(&result).join("work/output/result.txt");
        assert_eq!(fs_err::read_to_string(&file).unwrap(), BENIGN_RESULT);
        file
    }

    /// How many connections reached the listener (each waits in its backlog).
    fn accepted(&self) -> usize {
        self.listener.set_nonblocking(true).unwrap();
        std::iter::from_fn(|| self.listener.accept().ok()).count()
    }

    fn home_fingerprint(&self) -> scimcp_testkit::Fingerprint {
        scimcp_testkit::fingerprint(self.fake.home(), &[])
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = fs_err::remove_file(&self.tmp_target);
    }
}

/// The hostile adapter: a benign workflow (the other run), the hostile one, and the hostile
/// one with the network declared. Every path it attacks is fixed in its argv.
fn manifest(home: &Path, data_root: &Path, tmp_target: &Path, port: u16) -> String {
    let exe = scimcp_e2e::sibling_binary("scimcp-hostile-cli").unwrap();
    let s = |p: &Path| toml::Value::String(p.display().to_string()).to_string();
    let argv = format!(
        r#"argv = ["--read", {ssh}, "--read", {client}, "--read", {tokens}, "--write", {planted}, "--write", {tmp}, "--connect", "{port}", "--bind", "--daemon", "{{work_dir}}/daemon.pid", "--out", "{{output_dir}}"]
options = [{{ param = "other_run_file", flag = "--read" }}]"#,
        ssh = s(&home.join(".ssh/id_ed25519")),
        client = s(&home.join(".config/Claude/claude_desktop_config.json")),
        tokens = s(&data_root.join("tokens.toml")),
        planted = s(&home.join("planted.txt")),
        tmp = s(tmp_target),
    );
    format!(
        r#"schema_version = 1
name = "hostile"
version = "0.1.0"
summary = "A CLI that tries everything a sandbox must stop."

[runtime]
kind = "executable"
executable = {exe}

[[workflow]]
id = "benign"
summary = "Writes a private result: the other run the hostile one reads."
parameters = "params.json"
argv = ["--benign", "{{output_dir}}/result.txt"]

[[workflow.artifact]]
id = "result"
path = "result.txt"
media_type = "text/plain"

[[workflow]]
id = "hostile"
summary = "Reads secrets, writes outside, uses the network, leaves a daemon."
parameters = "params.json"
{argv}

[[workflow.artifact]]
id = "report"
path = "report.txt"
media_type = "text/plain"

[[workflow]]
id = "escaping_daemon"
summary = "Leaves a daemon in a process group of its own, out of the run's."
parameters = "params.json"
argv = ["--daemon-own-group", "{{work_dir}}/daemon.pid", "--out", "{{output_dir}}"]

[[workflow.artifact]]
id = "report"
path = "report.txt"
media_type = "text/plain"

[[workflow]]
id = "hostile_online"
summary = "The same, with the network declared."
parameters = "params.json"
{argv}

[workflow.sandbox]
network = true

[[workflow.artifact]]
id = "report"
path = "report.txt"
media_type = "text/plain"
"#,
        exe = s(&exe),
    )
}

/// Whether the plan grants the network (its `sandbox`, the workflow's declared grants,
/// absent when it declares none), checked against what the validation's `environment.sandbox`
/// says a run here will get: the mode, the network's protections not requested, and each
/// protection's state.
fn planned_network(validation: &Value) -> bool {
    let declared = validation["plan"]["sandbox"]["network"] == true;
    let env = &validation["environment"]["sandbox"];
    assert_eq!(env["network"], declared, "{validation:#}");
    assert_eq!(env["mode"], "best_effort", "{validation:#}");
    assert_eq!(env["complete"], true, "{validation:#}");
    let tcp = if declared {
        "not_requested"
    } else {
        "enforced"
    };
    assert_eq!(state_of(env, "tcp"), tcp, "{validation:#}");
    assert_eq!(state_of(env, "file_system"), "enforced", "{validation:#}");
    declared
}

fn run_dir(result: &Value) -> PathBuf {
    PathBuf::from(
        result["run_dir"]
            .as_str()
            .expect("the result names its run_dir"),
    )
}

/// Every file under `dir`, as bytes.
fn every_file(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = fs_err::read(&path) {
                out.push((path, bytes));
            }
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The CLI's own account (its stdout log), one line per attempt.
fn account(result: &Value) -> String {
    fs_err::read_to_string(run_dir(result).join("stdout.log")).unwrap()
}

/// The line of `what` on `target` (a path or `127.0.0.1:PORT`).
fn line<'a>(account: &'a str, what: &str, target: &str) -> &'a str {
    account
        .lines()
        .find(|l| {
            let mut words = l.splitn(3, ' ');
            words.next().is_some() && words.next() == Some(what) && l.contains(target)
        })
        .unwrap_or_else(|| panic!("no `{what} {target}` line in:\n{account}"))
}

/// The daemon the CLI left (its pid file in the run's working directory), if it started.
fn daemon_pid(result: &Value) -> Option<u32> {
    let text = fs_err::read_to_string(run_dir(result).join("work/daemon.pid")).ok()?;
    text.trim().parse().ok()
}

/// No process of the run is left: the daemon, if it started, ended with the run.
fn assert_no_daemon(result: &Value) {
    if let Some(pid) = daemon_pid(result) {
        assert!(
            !scimcp_e2e::process_alive(pid),
            "the run's daemon {pid} outlived it"
        );
    }
}

/// Which protections the run result (`result.json`) and the run manifest say applied; the
/// tool's answer (`get_run_result`) shows the client the same record.
fn sandbox_states(result: &Value) -> (Value, Value) {
    let read = |name: &str| -> Value {
        serde_json::from_slice(&fs_err::read(run_dir(result).join(name)).unwrap()).unwrap()
    };
    let in_result = read("result.json")["sandbox"].clone();
    assert!(in_result.is_object(), "no sandbox in result.json");
    assert_eq!(result["sandbox"], in_result, "get_run_result: {result:#}");
    (in_result, read("manifest.json")["sandbox"].clone())
}

fn state_of(sandbox: &Value, protection: &str) -> String {
    sandbox["protections"]
        .as_array()
        .unwrap_or_else(|| panic!("no protections in {sandbox:#}"))
        .iter()
        .find(|p| p["protection"] == protection)
        .and_then(|p| p["state"].as_str())
        .unwrap_or_else(|| panic!("no {protection} in {sandbox:#}"))
        .to_string()
}

/// Everything a sandboxed hostile run must show, from outside and in its result.
fn assert_all_denied(
    s: &Setup,
    other: &Path,
    result: &Value,
    home_before: &scimcp_testkit::Fingerprint,
) {
    assert_eq!(result["state"], "failed", "{result:#}");
    // The first denial is named: the SSH key, read.
    let message = result["message"].as_str().unwrap();
    let ssh = &s.secrets[0].0;
    assert!(message.contains("sandbox"), "{message}");
    assert!(message.contains(&ssh.display().to_string()), "{message}");
    // The CLI's own account: each attempt denied with EACCES.
    let account = account(result);
    for (path, _) in &s.secrets {
        assert!(line(&account, "read", &path.display().to_string()).starts_with("denied "));
    }
    assert!(line(&account, "read", &other.display().to_string()).starts_with("denied "));
    for target in [
        s.fake.home().join("planted.txt").display().to_string(),
        s.tmp_target.display().to_string(),
    ] {
        assert!(
            line(&account, "write", &target).ends_with(" 13"),
            "{account}"
        );
    }
    let port = s.listener.local_addr().unwrap().port();
    assert!(line(&account, "connect", &format!("127.0.0.1:{port}")).ends_with(" 13"));
    assert!(
        line(&account, "bind", "127.0.0.1:").ends_with(" 13"),
        "{account}"
    );
    // From outside: no secret's bytes anywhere in the run (logs, artifacts, manifest) ...
    let mut secrets: Vec<Vec<u8>> = s.secrets.iter().map(|(_, b)| b.clone()).collect();
    secrets.push(BENIGN_RESULT.as_bytes().to_vec());
    for (file, bytes) in every_file(&run_dir(result)) {
        for secret in &secrets {
            assert!(
                !contains(&bytes, secret.trim_ascii()),
                "{} holds a secret",
                file.display()
            );
        }
    }
    // ... nothing written in the home or /tmp, no connection accepted, no process left.
    assert_eq!(&s.home_fingerprint(), home_before, "the home changed");
    assert!(
        !s.tmp_target.exists(),
        "{} was written",
        s.tmp_target.display()
    );
    assert_eq!(s.accepted(), 0, "the listener accepted a connection");
    assert_no_daemon(result);
    // The result and the run manifest say what applied.
    let (in_result, in_manifest) = sandbox_states(result);
    assert_eq!(in_result, in_manifest);
    assert_eq!(
        state_of(&in_result, "file_system"),
        "enforced",
        "{in_result:#}"
    );
    assert_eq!(state_of(&in_result, "tcp"), "enforced", "{in_result:#}");
}

#[tokio::test]
async fn the_default_sandbox_denies_every_hostile_attempt() {
    let s = Setup::start(&[], &[]).await;
    if s.landlock_or_skip().is_none() {
        return;
    }
    let other = s.other_run().await;
    let home_before = s.home_fingerprint();
    let (validation, result) = s.run("hostile", Some(&other)).await;
    // The plan says what will be requested: no network.
    assert!(!planned_network(&validation), "{validation:#}");
    assert_all_denied(&s, &other, &result, &home_before);
}

#[tokio::test]
async fn required_mode_runs_it_on_this_kernel_and_denies_the_same() {
    let s = Setup::start(&["--sandbox", "required"], &[]).await;
    if s.landlock_or_skip().is_none() {
        return;
    }
    let other = s.other_run().await;
    let home_before = s.home_fingerprint();
    let (_, result) = s.run("hostile", Some(&other)).await;
    assert_ne!(result["reason"], "sandbox_unavailable", "{result:#}");
    assert_all_denied(&s, &other, &result, &home_before);
}

#[tokio::test]
async fn with_the_sandbox_off_the_same_cli_does_all_of_it() {
    let s = Setup::start(&["--sandbox", "off"], &[]).await;
    let other = s.other_run().await;
    let (_, result) = s.run("hostile", Some(&other)).await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let account = account(&result);
    // Every secret was read: its bytes are in the run's log.
    for (path, bytes) in &s.secrets {
        assert!(line(&account, "read", &path.display().to_string()).starts_with("done "));
        let text = String::from_utf8_lossy(bytes);
        assert!(
            account.contains(text.trim().lines().last().unwrap()),
            "{account}"
        );
    }
    assert!(account.contains(BENIGN_RESULT), "{account}");
    // It wrote the home and /tmp, and reached the listener.
    assert!(s.fake.home().join("planted.txt").is_file());
    assert!(s.tmp_target.is_file());
    assert_eq!(s.accepted(), 1);
    assert!(line(&account, "bind", "127.0.0.1:").starts_with("done "));
    // The daemon started; the run's group ended it (the guard's rule, not the sandbox's).
    assert!(daemon_pid(&result).is_some(), "{account}");
    assert_no_daemon(&result);
    // Recorded as off: nothing requested.
    let (in_result, in_manifest) = sandbox_states(&result);
    assert_eq!(in_result, in_manifest);
    for p in in_result["protections"].as_array().unwrap() {
        assert_eq!(p["state"], "not_requested", "{in_result:#}");
    }
}

#[tokio::test]
async fn a_workflow_that_declares_the_network_may_connect_and_nothing_else() {
    let s = Setup::start(&[], &[]).await;
    if s.landlock_or_skip().is_none() {
        return;
    }
    let home_before = s.home_fingerprint();
    let (validation, result) = s.run("hostile_online", None).await;
    assert!(planned_network(&validation), "{validation:#}");
    assert_eq!(result["state"], "failed", "{result:#}");
    let account = account(&result);
    let port = s.listener.local_addr().unwrap().port();
    assert!(line(&account, "connect", &format!("127.0.0.1:{port}")).starts_with("done "));
    assert!(line(&account, "bind", "127.0.0.1:").starts_with("done "));
    assert_eq!(s.accepted(), 1);
    // The file system stays closed.
    assert!(line(&account, "read", &s.secrets[0].0.display().to_string()).starts_with("denied "));
    assert_eq!(s.home_fingerprint(), home_before);
    assert!(!s.tmp_target.exists());
    let (in_result, _) = sandbox_states(&result);
    assert_eq!(
        state_of(&in_result, "tcp"),
        "not_requested",
        "{in_result:#}"
    );
}

/// A daemon that left the run's process group (its own group, as after `setsid()`) is out of
/// reach of the group's signal; the run guard, a subreaper, inherits it when its parent
/// exits and ends it once the CLI has ended. Checked from outside, with the sandbox on and
/// off (the guard's rule, not the sandbox's): its pid is gone soon after the run is terminal.
#[tokio::test]
async fn a_daemon_that_left_the_run_group_ends_with_the_run() {
    let modes: [(&str, &[&str]); 2] = [("default", &[]), ("off", &["--sandbox", "off"])];
    for (mode, args) in modes {
        let s = Setup::start(args, &[]).await;
        let (_, result) = s.run("escaping_daemon", None).await;
        assert_eq!(result["state"], "succeeded", "sandbox {mode}: {result:#}");
        let account = account(&result);
        assert!(
            line(&account, "daemon_own_group", "").starts_with("done "),
            "sandbox {mode}: {account}"
        );
        let pid = daemon_pid(&result).expect("the daemon wrote its pid");
        // Ended before the guard reports; the bound only covers `ps` seeing it reaped.
        let deadline = std::time::Instant::now() + scimcp_testkit::limits::process_tree_gone();
        while scimcp_e2e::process_alive(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(
            !scimcp_e2e::process_alive(pid),
            "sandbox {mode}: the daemon {pid}, out of the run's group, outlived the run"
        );
    }
}
