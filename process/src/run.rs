//! [`Step`]: one helper program run to completion, and what it left behind ([`Captured`]).

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::TERMINATE_GRACE;
use crate::tree::{Kill, signal_tree, terminate_blocking};

/// Captured bytes kept per stream by default: the first half and the last half of it.
pub const DEFAULT_MAX_OUTPUT: usize = 1024 * 1024;

/// How long to wait for the pipes to close after the child exited or was killed: a process
/// that left the group (a daemon) may hold them open forever.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// One helper program to run: what it is called in messages, the command, its limits.
pub struct Step<'a> {
    name: String,
    command: Command,
    timeout: Duration,
    stdin: Option<Vec<u8>>,
    max_output: usize,
    on_tick: Option<Box<dyn FnMut(Duration) + Send + 'a>>,
}

impl std::fmt::Debug for Step<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Step")
            .field("name", &self.name)
            .field("command", &self.command)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl<'a> Step<'a> {
    /// `name` says what the step does, for messages: "the runtime probe", "pip install".
    pub fn new(name: impl Into<String>, command: Command) -> Step<'a> {
        Step {
            name: name.into(),
            command,
            timeout: Duration::from_secs(600),
            stdin: None,
            max_output: DEFAULT_MAX_OUTPUT,
            on_tick: None,
        }
    }

    /// End the step (and every process it started) after `limit`.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = limit;
        self
    }

    /// Write `bytes` to the program's stdin, then close it (default: stdin is closed).
    pub fn stdin(mut self, bytes: Vec<u8>) -> Self {
        self.stdin = Some(bytes);
        self
    }

    /// Keep at most `bytes` of each stream (its head and its tail).
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = bytes.max(2);
        self
    }

    /// Called about once a second while the step runs, with the time so far: a progress
    /// line for a slow install.
    pub fn on_tick(mut self, tick: impl FnMut(Duration) + Send + 'a) -> Self {
        self.on_tick = Some(Box::new(tick));
        self
    }

    /// The command line, for messages.
    pub fn describe(&self) -> String {
        describe(&self.command)
    }
}

pub(crate) fn describe(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| {
            let a = a.to_string_lossy();
            if a.contains(' ') || a.is_empty() {
                format!("{a:?}")
            } else {
                a.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a step that ran left behind.
#[derive(Debug, Clone)]
pub struct Captured {
    pub step: String,
    pub command: String,
    /// `None` when it was killed (at the time limit, or by a signal).
    pub code: Option<i32>,
    /// The signal that ended it, on Unix.
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub timeout: Duration,
    pub stdout: String,
    pub stderr: String,
    /// Bytes left out of the middle of stdout and stderr (over the output bound).
    pub omitted: u64,
    pub took: Duration,
}

impl Captured {
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// The first `n` non-empty lines of stderr.
    pub fn stderr_head(&self, n: usize) -> Vec<String> {
        lines(&self.stderr).take(n).collect()
    }

    /// The last `n` non-empty lines of stderr: a Python traceback ends with its cause.
    pub fn stderr_tail(&self, n: usize) -> Vec<String> {
        let all: Vec<String> = lines(&self.stderr).collect();
        all[all.len().saturating_sub(n)..].to_vec()
    }

    /// `Ok` when the step succeeded; otherwise the error naming the step, how it ended and
    /// the end of its stderr.
    pub fn check(self) -> Result<Captured, ProcessError> {
        if self.timed_out {
            return Err(ProcessError::TimedOut {
                step: self.step.clone(),
                limit: self.timeout,
                command: self.command.clone(),
                tail: self.stderr_tail(12).join("\n"),
            });
        }
        if self.code != Some(0) {
            let status = match (self.code, self.signal) {
                (Some(c), _) => format!("exit status {c}"),
                (None, Some(s)) => format!("signal {s}"),
                (None, None) => "no exit status".to_string(),
            };
            return Err(ProcessError::Failed {
                step: self.step.clone(),
                status,
                command: self.command.clone(),
                tail: self.stderr_tail(12).join("\n"),
            });
        }
        Ok(self)
    }
}

fn lines(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
}

/// Why a step did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("{step} could not start ({command}): {source}")]
    Spawn {
        step: String,
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{step} took longer than {} s and was stopped, with every process it started ({command}){}", limit.as_secs_f64(), tail_text(.tail))]
    TimedOut {
        step: String,
        limit: Duration,
        command: String,
        tail: String,
    },
    #[error("{step} failed with {status} ({command}){}", tail_text(.tail))]
    Failed {
        step: String,
        status: String,
        command: String,
        tail: String,
    },
}

fn tail_text(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!(":\n{tail}")
    }
}

impl ProcessError {
    /// The step's name.
    pub fn step(&self) -> &str {
        match self {
            ProcessError::Spawn { step, .. }
            | ProcessError::TimedOut { step, .. }
            | ProcessError::Failed { step, .. } => step,
        }
    }
}

/// Run `step` to completion. `Err` only when it could not start; a failure or a timeout is
/// in the [`Captured`] (see [`Captured::check`]).
pub fn run(step: Step<'_>) -> Result<Captured, ProcessError> {
    let Step {
        name,
        mut command,
        timeout,
        stdin,
        max_output,
        mut on_tick,
    } = step;
    let text = describe(&command);
    // Its own process group, so the time limit ends the whole tree: a grandchild left holding
    // the pipes would otherwise keep the readers waiting.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = command.spawn().map_err(|source| ProcessError::Spawn {
        step: name.clone(),
        command: text.clone(),
        source,
    })?;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A program that exits without reading everything closes the pipe: not an error.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let (tx, rx) = mpsc::channel();
    for (index, pipe) in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .enumerate()
    {
        let Some(mut pipe) = pipe else { continue };
        let tx = tx.clone();
        // Drain both pipes on their own threads, or a chatty child blocks on a full pipe
        // and looks like a hang.
        std::thread::spawn(move || {
            let mut kept = Bounded::new(max_output);
            let mut chunk = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                kept.push(&chunk[..n]);
            }
            let _ = tx.send((index, kept));
        });
    }
    drop(tx);

    let mut timed_out = false;
    let mut last_tick = Instant::now();
    let status: Option<ExitStatus> = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if start.elapsed() >= timeout {
            // The suite's one ending: SIGTERM, the grace, SIGKILL, the whole group each time.
            timed_out = true;
            break terminate_blocking(&mut child, TERMINATE_GRACE);
        }
        if let Some(tick) = on_tick.as_mut()
            && last_tick.elapsed() >= Duration::from_secs(1)
        {
            last_tick = Instant::now();
            tick(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // The program is done; what it started in its group goes with it.
    signal_tree(child.id(), Kill::Kill);
    let mut streams = [Bounded::new(max_output), Bounded::new(max_output)];
    let deadline = Instant::now() + PIPE_GRACE;
    for _ in 0..2 {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((index, kept)) => streams[index] = kept,
            Err(_) => break,
        }
    }
    let [out, err] = streams;
    let omitted = out.omitted + err.omitted;
    #[cfg(unix)]
    let signal = status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s));
    #[cfg(not(unix))]
    let signal = None;
    Ok(Captured {
        step: name,
        command: text,
        code: status.and_then(|s| s.code()),
        signal,
        timed_out,
        timeout,
        stdout: out.text(),
        stderr: err.text(),
        omitted,
        took: start.elapsed(),
    })
}

/// The head and the tail of a stream, at most `max` bytes in all.
struct Bounded {
    max: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl Bounded {
    fn new(max: usize) -> Bounded {
        Bounded {
            max,
            head: Vec::new(),
            tail: VecDeque::new(),
            omitted: 0,
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        let half = self.max / 2;
        if self.head.len() < half {
            let take = (half - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        let tail_max = self.max - half;
        for &b in bytes {
            if self.tail.len() == tail_max {
                self.tail.pop_front();
                self.omitted += 1;
            }
            self.tail.push_back(b);
        }
    }

    fn text(self) -> String {
        let mut bytes = self.head;
        if self.omitted > 0 {
            bytes
                .extend_from_slice(format!("\n[… {} bytes left out …]\n", self.omitted).as_bytes());
        }
        bytes.extend(self.tail);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn a_hanging_step_is_stopped_with_its_children_and_named() {
        let marker = tempfile_path();
        // The background child touches the marker 1 s in, long after the 0.3 s limit: it
        // exists afterwards only if the child outlived the kill.
        let script = format!("(sleep 1; touch {marker}) & echo started; sleep 30");
        let c = run(Step::new("the import check", sh(&script)).timeout(Duration::from_millis(300)))
            .unwrap();
        assert!(c.timed_out && !c.success());
        assert!(c.took < Duration::from_secs(5), "{:?}", c.took);
        let e = c.check().unwrap_err();
        assert_eq!(e.step(), "the import check");
        assert!(
            e.to_string()
                .starts_with("the import check took longer than 0.3 s"),
            "{e}"
        );
        std::thread::sleep(Duration::from_millis(1500));
        assert!(
            !std::path::Path::new(&marker).exists(),
            "the background child died too"
        );
    }

    #[test]
    fn a_step_over_its_limit_is_asked_to_stop_before_it_is_killed() {
        // SIGTERM first: the step's handler runs and says so; a straight SIGKILL would leave
        // no line and a signal 9.
        let c = run(Step::new(
            "the export",
            sh("trap 'echo stopping >&2; exit 0' TERM; sleep 30 & wait"),
        )
        .timeout(Duration::from_millis(300)))
        .unwrap();
        assert!(c.timed_out && !c.success());
        assert_eq!(c.stderr_tail(1), ["stopping"], "{c:?}");
        assert!(
            c.took < crate::TERMINATE_GRACE + Duration::from_secs(5),
            "{:?}",
            c.took
        );
    }

    #[test]
    fn both_streams_are_captured_and_bounded() {
        let c = run(Step::new(
            "x",
            sh("echo out; echo one >&2; echo two >&2; exit 3"),
        ))
        .unwrap();
        assert_eq!((c.code, c.stdout.trim()), (Some(3), "out"));
        assert_eq!(c.stderr_head(1), ["one"]);
        assert_eq!(c.stderr_tail(1), ["two"]);
        let e = c.check().unwrap_err();
        assert!(e.to_string().contains("x failed with exit status 3"), "{e}");
        assert!(e.to_string().ends_with("one\ntwo"), "{e}");

        let big = run(
            Step::new("big", sh("head -c 100000 /dev/zero | tr '\\0' a; echo END"))
                .max_output(1000),
        )
        .unwrap();
        assert!(big.stdout.len() < 1100, "{}", big.stdout.len());
        assert!(big.stdout.starts_with("aaa") && big.stdout.trim_end().ends_with("END"));
        assert!(big.omitted > 98_000);
    }

    #[test]
    fn stdin_is_fed_and_ticks_come_while_waiting() {
        let mut ticks = 0;
        let c = run(Step::new("cat", sh("cat; sleep 1.2"))
            .stdin(b"hello\n".to_vec())
            .on_tick(|_| ticks += 1))
        .unwrap();
        assert_eq!(c.stdout, "hello\n");
        assert!(ticks >= 1);
        let e = run(Step::new("nothing", Command::new("/nonexistent/program"))).unwrap_err();
        assert!(e.to_string().starts_with("nothing could not start"), "{e}");
    }

    fn tempfile_path() -> String {
        let dir = std::env::temp_dir();
        dir.join(format!("scimcp-process-test-{}", std::process::id()))
            .to_string_lossy()
            .into_owned()
    }
}
