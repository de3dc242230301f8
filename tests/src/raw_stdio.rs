//! A `scimcp serve` over stdio driven line by line with raw JSON-RPC, no SDK in between:
//! for tests of what the server answers to exact bytes (malformed lines, the spliced
//! `tools/list`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::Value;

/// One stdio session of the real binary in a fresh home; its stdout is read on a thread, one
/// JSON message per line. The server is killed on drop.
pub struct RawSession {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: Receiver<Value>,
    kept: Vec<Value>,
    _home: tempfile::TempDir,
}

impl RawSession {
    pub fn start() -> anyhow::Result<RawSession> {
        let home = tempfile::tempdir()?;
        let mut child = Command::new(crate::sibling_binary("scimcp")?)
            .args(["serve"])
            .env("SCIMCP_HOME", home.path())
            .env("SCIMCP_LOG", "error")
            .current_dir(home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped");
        let (tx, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not one JSON message per line ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Ok(RawSession {
            child,
            stdin,
            answers,
            kept: Vec::new(),
            _home: home,
        })
    }

    /// The server's stdin, to write from another thread (a line larger than a pipe holds).
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.stdin.take().expect("stdin not taken yet")
    }

    /// `line` and a newline.
    pub fn send_line(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin not taken");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: &Value) {
        self.send_line(message.to_string().as_bytes());
    }

    /// The next message the server writes, whatever it answers.
    pub fn next(&mut self, wait: Duration) -> Option<Value> {
        if !self.kept.is_empty() {
            return Some(self.kept.remove(0));
        }
        self.answers.recv_timeout(wait).ok()
    }

    /// The answer to request `id` (answers come in any order; the others are kept).
    pub fn answer(&mut self, id: &Value) -> Value {
        if let Some(i) = self.kept.iter().position(|a| &a["id"] == id) {
            return self.kept.remove(i);
        }
        loop {
            let a = self
                .answers
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no answer to {id}"));
            if &a["id"] == id {
                return a;
            }
            self.kept.push(a);
        }
    }
}

impl Drop for RawSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
