//! A hostile "scientific CLI" for the sandbox's end-to-end test: in one run it tries to read
//! secrets (an SSH key, a client config holding a token, scimcp's own token file, another
//! run's result), to write into the home and `/tmp`, to connect to a TCP port the test
//! listens on, to bind a port, and to leave a daemon behind. Never shipped.
//!
//! Every attempt prints one line on stdout: `done <what> <path>` (a read also prints what it
//! read, so a leak shows in the run's log) or `denied <what> <path> <errno>`. A denial also
//! prints the OS's own words on stderr, as a real CLI would (`… Permission denied (os error
//! 13)`), which is what the server reads to name the denial. It tries everything, then exits
//! 3 when anything was denied and 0 when all of it worked, so the test sees every attempt of
//! one run. The test checks each attempt from outside as well; these lines are only the
//! CLI's own account.
//!
//! Arguments (each repeatable where it names a path):
//! `--read PATH`, `--write PATH`, `--connect PORT`, `--bind`, `--daemon PIDFILE`,
//! `--daemon-own-group PIDFILE` (the same daemon, in a process group of its own, so a signal
//! to the run's group misses it: what only the run guard's subreaper catches),
//! `--out DIR` (where `report.txt` goes when the run gets that far). `--benign FILE` writes
//! a known result and exits 0 (the "other run" whose directory the hostile one reads);
//! `--probe` prints what this kernel's sandbox can enforce (`landlock_abi N` or `none`).

use std::io::Write as _;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::Duration;

/// What the benign run writes, so the test can look for it where it must not be.
const BENIGN_RESULT: &str = "another run's private result";

/// How long the daemon sleeps: far longer than any run of the test.
const DAEMON_SLEEP: Duration = Duration::from_secs(600);

#[derive(Default)]
struct Attempts {
    reads: Vec<PathBuf>,
    writes: Vec<PathBuf>,
    connect: Option<u16>,
    bind: bool,
    daemon: Option<PathBuf>,
    daemon_own_group: Option<PathBuf>,
    out: Option<PathBuf>,
}

/// The account of one run: every line, and whether anything was denied.
#[derive(Default)]
struct Account {
    lines: Vec<String>,
    denied: bool,
}

impl Account {
    fn done(&mut self, what: &str, detail: &str) {
        self.say(format!("done {what} {detail}"));
    }

    fn denied(&mut self, what: &str, target: &str, error: &std::io::Error) {
        self.denied = true;
        let errno = errno(error);
        self.say(format!("denied {what} {target} {errno}"));
        // The path quoted, as coreutils and Python quote one (the fake home's has spaces);
        // the OS's words alone, without fs-err's repetition of the path.
        let words = std::io::Error::from_raw_os_error(errno);
        let _ = writeln!(
            std::io::stderr(),
            "hostile-cli: cannot {what} '{target}': {words}"
        );
    }

    fn say(&mut self, line: String) {
        let _ = writeln!(std::io::stdout(), "{line}");
        self.lines.push(line);
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut attempts = Attempts::default();
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match arg.as_str() {
            "--read" => attempts.reads.push(value().into()),
            "--write" => attempts.writes.push(value().into()),
            "--connect" => attempts.connect = value().parse().ok(),
            "--bind" => attempts.bind = true,
            "--daemon" => attempts.daemon = Some(value().into()),
            "--daemon-own-group" => attempts.daemon_own_group = Some(value().into()),
            "--out" => attempts.out = Some(value().into()),
            "--benign" => return benign(Path::new(&value())),
            "--probe" => return probe(),
            "--daemon-parent" => {
                let pid_file = PathBuf::from(value());
                let own_group = args.next().as_deref() == Some("--own-group");
                return daemon_parent(&pid_file, own_group);
            }
            "--daemon-sleep" => {
                std::thread::sleep(DAEMON_SLEEP);
                return ExitCode::SUCCESS;
            }
            other => {
                let _ = writeln!(std::io::stderr(), "hostile-cli: unknown argument {other}");
                return ExitCode::from(2);
            }
        }
    }
    let account = attempt_everything(&attempts);
    if account.denied {
        return ExitCode::from(3);
    }
    if let Some(out) = &attempts.out {
        let report = account.lines.join("\n") + "\n";
        if let Err(e) =
            fs_err::create_dir_all(out).and_then(|()| fs_err::write(out.join("report.txt"), report))
        {
            let _ = writeln!(std::io::stderr(), "hostile-cli: {e}");
            return ExitCode::from(4);
        }
    }
    ExitCode::SUCCESS
}

fn attempt_everything(attempts: &Attempts) -> Account {
    let mut account = Account::default();
    for path in &attempts.reads {
        let shown = path.display().to_string();
        match fs_err::read_to_string(path) {
            // What was read goes to the log: a leak is then visible from outside.
            Ok(text) => account.done("read", &format!("{shown} {}", text.trim())),
            Err(e) => account.denied("read", &shown, &e),
        }
    }
    for path in &attempts.writes {
        let shown = path.display().to_string();
        match fs_err::write(path, "planted by the hostile CLI\n") {
            Ok(()) => account.done("write", &shown),
            Err(e) => account.denied("write", &shown, &e),
        }
    }
    if let Some(port) = attempts.connect {
        let target = format!("127.0.0.1:{port}");
        match TcpStream::connect((Ipv4Addr::LOCALHOST, port)) {
            Ok(mut stream) => {
                let _ = stream.write_all(b"exfiltrated\n");
                account.done("connect", &target);
            }
            Err(e) => account.denied("connect", &target, &e),
        }
    }
    if attempts.bind {
        match TcpListener::bind((Ipv4Addr::LOCALHOST, 0)) {
            Ok(listener) => {
                let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
                account.done("bind", &format!("127.0.0.1:{port}"));
            }
            Err(e) => account.denied("bind", "127.0.0.1:0", &e),
        }
    }
    let daemons = [
        ("daemon", &attempts.daemon, false),
        ("daemon_own_group", &attempts.daemon_own_group, true),
    ];
    for (what, pid_file, own_group) in daemons {
        let Some(pid_file) = pid_file else { continue };
        match leave_daemon(pid_file, own_group) {
            Ok(pid) => account.done(what, &pid.to_string()),
            Err(e) => account.denied(what, &pid_file.display().to_string(), &e),
        }
    }
    account
}

/// Double fork: a child starts the sleeper and exits at once, so the sleeper is nobody's
/// child in the CLI and outlives it unless the run's group is ended. Its pid is in `pid_file`.
/// With `own_group` it also leaves the run's group, as a daemon calling `setsid()` does.
fn leave_daemon(pid_file: &Path, own_group: bool) -> std::io::Result<u32> {
    let mut parent = std::process::Command::new(std::env::current_exe()?);
    parent.arg("--daemon-parent").arg(pid_file);
    if own_group {
        parent.arg("--own-group");
    }
    let status = parent.status()?;
    if !status.success() {
        return Err(std::io::Error::other(format!(
            "the daemon's parent ended with {status}"
        )));
    }
    fs_err::read_to_string(pid_file)?
        .trim()
        .parse()
        .map_err(std::io::Error::other)
}

fn daemon_parent(pid_file: &Path, own_group: bool) -> ExitCode {
    let started = std::env::current_exe().and_then(|exe| {
        let mut sleeper = std::process::Command::new(exe);
        sleeper
            .arg("--daemon-sleep")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Windows has no process groups to leave: the sleeper stays an ordinary daemon.
        #[cfg(not(unix))]
        let _ = own_group;
        #[cfg(unix)]
        if own_group {
            // `setpgid(0, 0)` in the sleeper before it runs (std's safe form; the crate
            // forbids `unsafe`, so not `setsid()` itself): like a `setsid()` daemon, it is in
            // no group the server signals.
            use std::os::unix::process::CommandExt as _;
            sleeper.process_group(0);
        }
        sleeper.spawn()
    });
    match started.and_then(|child| fs_err::write(pid_file, child.id().to_string())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "hostile-cli: cannot start a daemon: {e}");
            ExitCode::from(1)
        }
    }
}

/// What this machine's kernel can enforce (`scimcp_process::sandbox::probe`), as JSON: the
/// test skips where there is no Landlock, without asking the server it tests.
fn probe() -> ExitCode {
    let support = scimcp_process::sandbox::probe();
    let text = format!("{support:?}");
    let abi = support
        .landlock_abi
        .map_or_else(|| "none".to_string(), |a| a.to_string());
    let _ = writeln!(std::io::stdout(), "landlock_abi {abi}\n{text}");
    ExitCode::SUCCESS
}

fn benign(file: &Path) -> ExitCode {
    let written = file
        .parent()
        .map_or(Ok(()), fs_err::create_dir_all)
        .and_then(|()| fs_err::write(file, BENIGN_RESULT));
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "hostile-cli: {e}");
            ExitCode::from(1)
        }
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
