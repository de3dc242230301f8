//! Running a child program with a time limit and captured output: the doctor must finish
//! even when an interpreter hangs on a broken import.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a finished (or killed) child left behind.
#[derive(Debug)]
pub struct Captured {
    /// `None` when it was killed at the time limit or by a signal.
    pub code: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Captured {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// The first `n` non-empty lines of stderr, for a finding.
    pub fn stderr_head(&self, n: usize) -> Vec<String> {
        head(&self.stderr, n)
    }

    /// The last `n` non-empty lines of stderr: a Python traceback ends with the cause.
    pub fn stderr_tail(&self, n: usize) -> Vec<String> {
        let lines: Vec<String> = head(&self.stderr, usize::MAX);
        lines[lines.len().saturating_sub(n)..].to_vec()
    }
}

fn head(text: &str, n: usize) -> Vec<String> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .map(String::from)
        .collect()
}

/// Run `cmd` with stdin closed, killing it after `limit`.
pub fn run(cmd: &mut Command, limit: Duration) -> std::io::Result<Captured> {
    let start = Instant::now();
    // Its own process group, so the time limit ends the whole tree: a grandchild left
    // holding the pipes would otherwise keep the readers below waiting.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Drain both pipes on their own threads, or a chatty child blocks on a full pipe and
    // looks like a hang.
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() >= limit {
            kill_tree(&mut child);
            let _ = child.wait();
            timed_out = true;
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    Ok(Captured {
        code: status.and_then(|s| s.code()),
        timed_out,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        took: start.elapsed(),
    })
}

fn kill_tree(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = child.kill();
}

/// A command for the scientific runtime's interpreter, isolated from the caller's Python
/// settings the same way the installer and the server run it. `-B`: the doctor must not
/// leave `.pyc` files behind in the runtime.
pub fn python(interpreter: &std::path::Path) -> Command {
    let mut cmd = Command::new(interpreter);
    cmd.args(["-I", "-B"])
        .env_remove("PYTHONHOME")
        .env_remove("PYTHONPATH")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    cmd
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn kills_a_child_at_the_time_limit() {
        let c = run(
            Command::new("sh").args(["-c", "echo started; sleep 5"]),
            Duration::from_millis(200),
        )
        .unwrap();
        assert!(c.timed_out);
        assert!(!c.success());
        assert!(c.took < Duration::from_secs(3));
    }

    #[test]
    fn captures_both_streams() {
        let c = run(
            Command::new("sh").args(["-c", "echo out; echo one >&2; echo two >&2; exit 3"]),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(c.code, Some(3));
        assert_eq!(c.stdout.trim(), "out");
        assert_eq!(c.stderr_head(1), ["one"]);
        assert_eq!(c.stderr_tail(1), ["two"]);
    }
}
