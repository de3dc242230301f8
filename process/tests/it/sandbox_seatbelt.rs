//! The Seatbelt half of the sandbox on a real macOS (the release workflow's macOS runner):
//! `/bin/sh` started through [`seatbelt_command`] with a policy that grants one working
//! directory writes there, and is denied writing the (fake) home and `/tmp`, reading a secret
//! in the home and connecting to a TCP listener the test opened. Each is also checked from
//! outside (nothing written, nothing accepted). The same script without the profile does all
//! of it, so the profile is what stops it. Elsewhere, the reports' macOS states are
//! unit-tested in `sandbox::report`.
#![cfg(target_os = "macos")]

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use scimcp_process::sandbox::{Policy, Protection, State, probe, seatbelt_command};

/// The hostile part: each attempt prints `name:ok` or `name:denied`.
const SCRIPT: &str = r#"
try() { name=$1; shift; if "$@" 2>/dev/null; then echo "$name:ok"; else echo "$name:denied"; fi; }
try write_work sh -c 'echo x > "$WORK/out.txt"'
try write_home sh -c 'echo x > "$FAKE_HOME/planted.txt"'
try write_tmp sh -c 'echo x > "$TMP_TARGET"'
try read_secret cat "$FAKE_HOME/.ssh/id_ed25519"
try connect /usr/bin/nc -z -G 2 127.0.0.1 "$PORT"
"#;

struct Fixture {
    _dir: tempfile::TempDir,
    home: std::path::PathBuf,
    work: std::path::PathBuf,
    tmp_target: std::path::PathBuf,
    listener: TcpListener,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let work = dir.path().join("run/work");
        fs_err::create_dir_all(home.join(".ssh")).unwrap();
        fs_err::create_dir_all(&work).unwrap();
        fs_err::write(home.join(".ssh/id_ed25519"), "SECRET-KEY").unwrap();
        let tmp_target =
            Path::new("/tmp").join(format!("scimcp-seatbelt-{}.txt", std::process::id()));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Fixture {
            _dir: dir,
            home,
            work,
            tmp_target,
            listener,
        }
    }

    fn script(&self) -> Command {
        let mut sh = Command::new("/bin/sh");
        sh.arg("-c")
            .arg(SCRIPT)
            .env("WORK", &self.work)
            .env("FAKE_HOME", &self.home)
            .env("TMP_TARGET", &self.tmp_target)
            .env(
                "PORT",
                self.listener.local_addr().unwrap().port().to_string(),
            );
        sh
    }

    fn answers(&self, mut command: Command) -> String {
        let out = command.output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn accepted(&self) -> bool {
        self.listener.accept().is_ok()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs_err::remove_file(&self.tmp_target);
    }
}

#[test]
fn seatbelt_is_reported_as_enforcing_files_and_network() {
    let support = probe();
    assert_eq!(
        support.state(Protection::FileSystem),
        Some(&State::Enforced)
    );
    assert_eq!(support.state(Protection::Tcp), Some(&State::Enforced));
}

#[test]
fn the_seatbelt_profile_denies_everything_outside_the_run() {
    let f = Fixture::new();
    let policy = Policy::new().allow_write(&f.work);
    let answers = f.answers(seatbelt_command(&policy, &f.script()));
    for line in [
        "write_work:ok",
        "write_home:denied",
        "write_tmp:denied",
        "read_secret:denied",
        "connect:denied",
    ] {
        assert!(answers.lines().any(|l| l == line), "{line} in:\n{answers}");
    }
    assert_eq!(
        fs_err::read_to_string(f.work.join("out.txt")).unwrap(),
        "x\n"
    );
    assert!(!f.home.join("planted.txt").exists());
    assert!(!f.tmp_target.exists());
    assert!(
        !f.accepted(),
        "the listener accepted a connection from the sandbox"
    );
}

#[test]
fn without_the_profile_the_same_script_does_all_of_it() {
    let f = Fixture::new();
    let answers = f.answers(f.script());
    for line in [
        "write_work:ok",
        "write_home:ok",
        "write_tmp:ok",
        "read_secret:ok",
        "connect:ok",
    ] {
        assert!(answers.lines().any(|l| l == line), "{line} in:\n{answers}");
    }
    assert!(f.home.join("planted.txt").exists());
}

#[test]
fn a_policy_that_allows_the_network_lets_the_connection_through() {
    let f = Fixture::new();
    let policy = Policy::new().allow_write(&f.work).allow_network(true);
    let answers = f.answers(seatbelt_command(&policy, &f.script()));
    assert!(answers.lines().any(|l| l == "connect:ok"), "{answers}");
    assert!(
        answers.lines().any(|l| l == "write_home:denied"),
        "{answers}"
    );
}
