//! The sandbox on the real kernel: a child of this test binary enters a [`Policy`] and
//! becomes (exec) this same binary in probe mode, which tries, one after the other, every
//! thing a hostile CLI would — write `/tmp` and the fake home, read a secret there and
//! another run's file, list the home, connect to a TCP listener the test opened and bind
//! one, signal the test, read the test's environment, reach an abstract socket the test
//! listens on — and, through `/bin/sh`, a write to `/tmp` from a grandchild. Each attempt
//! is then also checked from outside (nothing written, nothing accepted). The same child
//! without the policy does all of it, so the sandbox is what stops it.
//!
//! Only Linux enforces a file-system and network sandbox; without Landlock the tests say so
//! and skip.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use scimcp_process::sandbox::{self, Applied, Policy, Protection, Requirement, State};
use serde::{Deserialize, Serialize};

/// Which half of the child this process is: `enter` (apply the policy, then exec) or
/// `probe` (try everything).
const STAGE: &str = "SCIMCP_SANDBOX_TEST_STAGE";
/// The [`Spec`], as JSON.
const SPEC: &str = "SCIMCP_SANDBOX_TEST_SPEC";
/// This module's child entry, as libtest names it.
const ENTRY: &str = "sandbox::sandboxed_child";
/// `EACCES`: what Landlock answers for a denied path or port.
const EACCES: i32 = 13;
/// `EPERM`: what Landlock answers for a scoped signal or abstract socket.
const EPERM: i32 = 1;

/// What the child is told: the policy (none: unsandboxed) and what to try.
#[derive(Debug, Serialize, Deserialize)]
struct Spec {
    policy: Option<Policy>,
    requirement: Requirement,
    home: PathBuf,
    work: PathBuf,
    other_run: PathBuf,
    /// A file directly in `/tmp` (not in the test's temporary directory).
    tmp_target: PathBuf,
    /// The same, written by `/bin/sh`.
    shell_target: PathBuf,
    port: u16,
    abstract_name: String,
    test_pid: u32,
}

/// Not a test of its own: the entry of the child processes the tests start. Run normally, it
/// does nothing.
#[test]
fn sandboxed_child() {
    let Ok(stage) = std::env::var(STAGE) else {
        return;
    };
    let spec: Spec = serde_json::from_str(&std::env::var(SPEC).unwrap()).unwrap();
    match stage.as_str() {
        "enter" => {
            let mut probe = child_command(&spec, "probe");
            let error = match &spec.policy {
                Some(policy) => sandbox::exec(policy, spec.requirement, &mut probe, |applied| {
                    report("applied", "ok", &serde_json::to_string(applied).unwrap())
                }),
                None => {
                    let e = probe.exec();
                    panic!("cannot exec the probe: {e}")
                }
            };
            panic!("{error}")
        }
        "probe" => {
            attempt_everything(&spec);
            std::process::exit(0)
        }
        other => panic!("unknown stage {other}"),
    }
}

fn child_command(spec: &Spec, stage: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([ENTRY, "--exact", "--nocapture", "--test-threads=1"])
        .env(STAGE, stage)
        .env(SPEC, serde_json::to_string(spec).unwrap());
    command
}

/// One line of the probe's answer: `name|ok|detail` or `name|err:ERRNO|message`.
#[allow(clippy::print_stdout)]
fn report(name: &str, outcome: &str, detail: &str) {
    println!("{name}|{outcome}|{}", detail.replace('\n', " "));
}

fn outcome<T>(name: &str, result: std::io::Result<T>, detail: impl FnOnce(T) -> String) {
    match result {
        Ok(value) => report(name, "ok", &detail(value)),
        Err(e) => report(name, &format!("err:{}", errno(&e)), &e.to_string()),
    }
}

/// The OS error number, also beneath fs-err's wrapper (which keeps only the message).
fn errno(error: &std::io::Error) -> i32 {
    error
        .raw_os_error()
        .or_else(|| {
            let text = error.to_string();
            let (_, tail) = text.rsplit_once("(os error ")?;
            tail.strip_suffix(')')?.parse().ok()
        })
        .unwrap_or(-1)
}

fn attempt_everything(spec: &Spec) {
    outcome("write_tmp", fs_err::write(&spec.tmp_target, "x"), |_| {
        String::new()
    });
    outcome(
        "write_home",
        fs_err::write(spec.home.join("planted.txt"), "x"),
        |_| String::new(),
    );
    outcome(
        "read_secret",
        fs_err::read_to_string(spec.home.join(".ssh/id_ed25519")),
        |s| s,
    );
    outcome(
        "read_token",
        fs_err::read_to_string(spec.home.join(".config/scimcp/tokens.json")),
        |s| s,
    );
    outcome(
        "read_other_run",
        fs_err::read_to_string(spec.other_run.join("result.txt")),
        |s| s,
    );
    outcome("list_home", fs_err::read_dir(&spec.home), |entries| {
        entries.count().to_string()
    });
    outcome(
        "write_inside",
        fs_err::write(spec.work.join("out.txt"), "inside"),
        |_| String::new(),
    );
    outcome(
        "tcp_connect",
        TcpStream::connect(("127.0.0.1", spec.port)),
        |_| String::new(),
    );
    outcome("tcp_bind", TcpListener::bind("127.0.0.1:0"), |l| {
        l.local_addr().map(|a| a.to_string()).unwrap_or_default()
    });
    outcome(
        "signal_test",
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(spec.test_pid as i32), None)
            .map_err(std::io::Error::from),
        |_| String::new(),
    );
    outcome(
        "read_test_environ",
        fs_err::read(format!("/proc/{}/environ", spec.test_pid)),
        |b| b.len().to_string(),
    );
    outcome(
        "abstract_socket",
        SocketAddr::from_abstract_name(&spec.abstract_name)
            .and_then(|addr| UnixStream::connect_addr(&addr)),
        |_| String::new(),
    );
    outcome(
        "shell_write_tmp",
        Command::new("/bin/sh")
            .args([
                "-c",
                "echo x > \"$0\"",
                &spec.shell_target.to_string_lossy(),
            ])
            .output(),
        |out| {
            format!(
                "{}:{}",
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).trim()
            )
        },
    );
    outcome("write_dev_null", fs_err::write("/dev/null", "x"), |_| {
        String::new()
    });
    outcome(
        "exec_ungranted",
        Command::new(spec.other_run.join("tool")).status(),
        |status| status.to_string(),
    );
    outcome(
        "nproc_limit",
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NPROC)
            .map_err(std::io::Error::from),
        |(soft, hard)| format!("{soft},{hard}"),
    );
    outcome(
        "core_limit",
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_CORE)
            .map_err(std::io::Error::from),
        |(soft, hard)| format!("{soft},{hard}"),
    );
    outcome(
        "no_new_privs",
        nix::sys::prctl::get_no_new_privs().map_err(std::io::Error::from),
        |set| set.to_string(),
    );
}

/// The test's side: a fake home with secrets, the run's directory, another run, a TCP
/// listener and an abstract socket, all owned by this test process.
struct Fixture {
    _root: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    other_run: PathBuf,
    tmp_target: PathBuf,
    shell_target: PathBuf,
    listener: TcpListener,
    abstract_listener: UnixListener,
    abstract_name: String,
}

const SECRET: &str = "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key";
const TOKEN: &str = r#"{"token":"scimcp-secret-token"}"#;
const OTHER_RESULT: &str = "another run's result";

impl Fixture {
    fn new() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let work = root.path().join("runs/this");
        let other_run = root.path().join("runs/other");
        for dir in [
            &home.join(".ssh"),
            &home.join(".config/scimcp"),
            &work,
            &other_run,
        ] {
            fs_err::create_dir_all(dir).unwrap();
        }
        fs_err::write(home.join(".ssh/id_ed25519"), SECRET).unwrap();
        fs_err::write(home.join(".config/scimcp/tokens.json"), TOKEN).unwrap();
        fs_err::write(other_run.join("result.txt"), OTHER_RESULT).unwrap();
        // A program the policy does not grant: even starting it must fail.
        fs_err::copy("/bin/true", other_run.join("tool")).unwrap();
        let unique = format!(
            "scimcp-sandbox-test-{}-{}",
            std::process::id(),
            root.path().file_name().unwrap().to_string_lossy()
        );
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let abstract_name = unique.clone();
        let abstract_listener =
            UnixListener::bind_addr(&SocketAddr::from_abstract_name(&abstract_name).unwrap())
                .unwrap();
        abstract_listener.set_nonblocking(true).unwrap();
        Fixture {
            tmp_target: Path::new("/tmp").join(format!("{unique}.txt")),
            shell_target: Path::new("/tmp").join(format!("{unique}-sh.txt")),
            _root: root,
            home,
            work,
            other_run,
            listener,
            abstract_listener,
            abstract_name,
        }
    }

    /// The run's policy: the system, this test binary (the program), the run's directory.
    fn policy(&self) -> Policy {
        let program_dir = std::env::current_exe()
            .unwrap()
            .parent()
            .unwrap()
            .to_owned();
        Policy::new()
            .allow_read(program_dir)
            .allow_write(&self.work)
    }

    /// Start the child with `policy` (or none), wait, and read its lines.
    fn run(&self, policy: Option<Policy>, requirement: Requirement) -> Answers {
        let spec = Spec {
            policy,
            requirement,
            home: self.home.clone(),
            work: self.work.clone(),
            other_run: self.other_run.clone(),
            tmp_target: self.tmp_target.clone(),
            shell_target: self.shell_target.clone(),
            port: self.listener.local_addr().unwrap().port(),
            abstract_name: self.abstract_name.clone(),
            test_pid: std::process::id(),
        };
        let out = child_command(&spec, "enter")
            .env("HOME", &self.home)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "the child failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = stdout
            .lines()
            .filter_map(|line| {
                // libtest opens the child's first line with the test's name.
                let line = line
                    .strip_prefix(&format!("test {ENTRY} ... "))
                    .unwrap_or(line);
                let mut parts = line.splitn(3, '|');
                let name = parts.next()?.to_owned();
                let outcome = parts.next()?.to_owned();
                let detail = parts.next()?.to_owned();
                Some((name, (outcome, detail)))
            })
            .collect();
        Answers { lines, stdout }
    }

    /// How many connections the TCP listener and the abstract socket have accepted.
    fn accepted(&self) -> (usize, usize) {
        let mut tcp = 0;
        while self.listener.accept().is_ok() {
            tcp += 1;
        }
        let mut unix = 0;
        while self.abstract_listener.accept().is_ok() {
            unix += 1;
        }
        (tcp, unix)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs_err::remove_file(&self.tmp_target);
        let _ = fs_err::remove_file(&self.shell_target);
    }
}

struct Answers {
    lines: BTreeMap<String, (String, String)>,
    stdout: String,
}

impl Answers {
    fn get(&self, name: &str) -> (&str, &str) {
        let (outcome, detail) = self
            .lines
            .get(name)
            .unwrap_or_else(|| panic!("no answer for {name} in:\n{}", self.stdout));
        (outcome, detail)
    }

    fn assert_ok(&self, name: &str) -> &str {
        let (outcome, detail) = self.get(name);
        assert_eq!(outcome, "ok", "{name}: {detail}\n{}", self.stdout);
        detail
    }

    fn assert_denied(&self, name: &str, errno: i32) {
        let (outcome, detail) = self.get(name);
        assert_eq!(
            outcome,
            format!("err:{errno}"),
            "{name} should be denied: {detail}\n{}",
            self.stdout
        );
    }

    fn applied(&self) -> Applied {
        serde_json::from_str(self.assert_ok("applied")).unwrap()
    }
}

/// Landlock's ABI, or `None` (and why, printed) when this kernel has none.
fn landlock_or_skip() -> Option<u32> {
    let support = sandbox::probe();
    if support.landlock_abi.is_none() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "skipped: this kernel cannot sandbox: {:?}",
                support.state(Protection::FileSystem)
            );
        }
    }
    support.landlock_abi
}

#[test]
fn the_sandbox_denies_everything_outside_the_run_and_allows_the_run() {
    let Some(abi) = landlock_or_skip() else {
        return;
    };
    let fixture = Fixture::new();
    // Required where the kernel has the whole baseline (Linux 6.7+), so the test also shows
    // Required passes when it can.
    let requirement = if sandbox::probe().is_complete() {
        Requirement::Required
    } else {
        Requirement::BestEffort
    };
    let answers = fixture.run(Some(fixture.policy()), requirement);

    let applied = answers.applied();
    assert_eq!(applied.landlock_abi, Some(abi));
    assert_eq!(
        applied.state(Protection::FileSystem),
        Some(&State::Enforced),
        "{applied:?}"
    );
    assert_eq!(
        applied.state(Protection::NoNewPrivileges),
        Some(&State::Enforced)
    );
    assert_eq!(
        applied.state(Protection::ProcessLimits),
        Some(&State::Enforced)
    );

    // The file system: nothing outside the grants, from inside ...
    for name in [
        "write_tmp",
        "write_home",
        "read_secret",
        "read_token",
        "read_other_run",
        "list_home",
    ] {
        answers.assert_denied(name, EACCES);
    }
    let (_, secret_message) = answers.get("read_secret");
    assert!(
        secret_message.contains("Permission denied"),
        "{secret_message}"
    );
    assert!(!answers.stdout.contains(SECRET) && !answers.stdout.contains("scimcp-secret-token"));
    assert!(!answers.stdout.contains(OTHER_RESULT));
    // ... and from outside: nothing was written.
    assert!(!fixture.tmp_target.exists());
    assert!(!fixture.home.join("planted.txt").exists());
    // A grandchild started through /bin/sh is held by the same rules.
    let (_, shell) = answers.get("shell_write_tmp");
    assert!(
        !shell.starts_with("0:") && shell.contains("Permission denied"),
        "{shell}"
    );
    assert!(!fixture.shell_target.exists());
    // The run's own directory works.
    answers.assert_ok("write_inside");
    assert_eq!(
        fs_err::read_to_string(fixture.work.join("out.txt")).unwrap(),
        "inside"
    );

    // The network, from Landlock ABI 4 (Linux 6.7): no connection reached the listener.
    if abi >= 4 {
        answers.assert_denied("tcp_connect", EACCES);
        answers.assert_denied("tcp_bind", EACCES);
        assert_eq!(
            fixture.accepted().0,
            0,
            "the listener accepted a connection"
        );
    }
    // Signals and abstract sockets, from ABI 6 (Linux 6.12): the test process is out of reach.
    if abi >= 6 {
        answers.assert_denied("signal_test", EPERM);
        answers.assert_denied("abstract_socket", EPERM);
        assert_eq!(
            fixture.accepted().1,
            0,
            "the abstract socket accepted a connection"
        );
    }
    // Another process's environment is out of reach even though /proc is readable.
    answers.assert_denied("read_test_environ", EACCES);

    // A program outside the grants cannot even start; the null device takes writes.
    answers.assert_denied("exec_ungranted", EACCES);
    answers.assert_ok("write_dev_null");

    // The limits and no_new_privs hold in the program.
    assert_eq!(answers.assert_ok("core_limit"), "0,0");
    // At most the policy's 4096 (lower if the test already had less).
    let (soft, hard) = answers.assert_ok("nproc_limit").split_once(',').unwrap();
    let (soft, hard): (u64, u64) = (soft.parse().unwrap(), hard.parse().unwrap());
    assert!(hard <= 4096 && soft <= hard, "RLIMIT_NPROC {soft},{hard}");
    assert_eq!(answers.assert_ok("no_new_privs"), "true");
}

#[test]
fn without_the_sandbox_the_same_child_does_all_of_it() {
    if landlock_or_skip().is_none() {
        return;
    }
    let fixture = Fixture::new();
    let answers = fixture.run(None, Requirement::BestEffort);

    for name in [
        "write_tmp",
        "write_home",
        "write_inside",
        "tcp_connect",
        "tcp_bind",
    ] {
        answers.assert_ok(name);
    }
    assert_eq!(answers.assert_ok("read_secret"), SECRET);
    assert_eq!(answers.assert_ok("read_token"), TOKEN);
    assert_eq!(answers.assert_ok("read_other_run"), OTHER_RESULT);
    answers.assert_ok("list_home");
    answers.assert_ok("signal_test");
    answers.assert_ok("read_test_environ");
    answers.assert_ok("abstract_socket");
    assert!(answers.assert_ok("shell_write_tmp").starts_with("0:"));
    answers.assert_ok("exec_ungranted");
    assert!(fixture.tmp_target.exists() && fixture.shell_target.exists());
    assert!(fixture.home.join("planted.txt").exists());
    assert_eq!(fixture.accepted(), (1, 1));
    // As the test itself has it (a container may already set it for everything).
    let inherited = nix::sys::prctl::get_no_new_privs().unwrap();
    assert_eq!(answers.assert_ok("no_new_privs"), inherited.to_string());
}

#[test]
fn a_policy_that_allows_the_network_leaves_tcp_alone() {
    if landlock_or_skip().is_none() {
        return;
    }
    let fixture = Fixture::new();
    let absent = fixture.home.with_file_name("absent");
    let answers = fixture.run(
        Some(fixture.policy().allow_network(true).allow_read(&absent)),
        Requirement::BestEffort,
    );
    let applied = answers.applied();
    assert_eq!(applied.state(Protection::Tcp), Some(&State::NotRequested));
    // A granted path that does not exist grants nothing, and the report says so.
    assert!(applied.skipped_paths.contains(&absent), "{applied:?}");
    answers.assert_ok("tcp_connect");
    answers.assert_ok("tcp_bind");
    assert_eq!(fixture.accepted().0, 1);
    // The file system stays closed.
    answers.assert_denied("read_secret", EACCES);
    answers.assert_denied("write_tmp", EACCES);
}
