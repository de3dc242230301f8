//! The stdio transport, with every line a client sends checked before rmcp sees it.
//!
//! rmcp drops a line that is not a JSON-RPC message without answering, so a client that sent
//! `NaN`, a 130-deep array, 20 MiB without a newline or an empty line waits forever for a
//! reply. JSON-RPC says such a line gets an error response: here a line that is not JSON gets
//! a parse error (-32700) and a JSON value that is not a JSON-RPC message an invalid-request
//! error (-32600), each with `id: null` unless an id could be read, and the session goes on.
//!
//! Lines flow stdin → check → rmcp, and rmcp's frames → stdout one whole line at a time, with
//! the error answers written between them, so the two never interleave inside a line.
//!
//! A `tools/list` of a set-up session is answered here, from the embedded catalog text
//! (tools/listing.rs), rather than parsed into rmcp's types and written back out.
//!
//! Both directions also pass the 2025-11-25 tasks layer (tasks/wire.rs), which rewrites the
//! few messages of that version's experimental tasks that rmcp cannot route.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest line accepted (a request larger than this is refused, not buffered).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The reader and writer rmcp serves on, and the task writing stdout: await it once rmcp is
/// done, so the last answers reach the client before the process exits.
pub fn transport() -> (
    (tokio::io::DuplexStream, tokio::io::DuplexStream),
    tokio::task::JoinHandle<()>,
) {
    checked(tokio::io::stdin(), tokio::io::stdout())
}

/// [`transport`] over any byte streams (tests use in-memory pipes).
pub fn checked(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> (
    (tokio::io::DuplexStream, tokio::io::DuplexStream),
    tokio::task::JoinHandle<()>,
) {
    let (rmcp_in, mut to_rmcp) = tokio::io::duplex(1024 * 1024);
    let (from_rmcp, rmcp_out) = tokio::io::duplex(1024 * 1024);
    let (answers, mut answers_rx) = mpsc::channel::<String>(64);
    let wire = std::sync::Arc::new(crate::tasks::wire::Wire::default());
    let outbound = std::sync::Arc::clone(&wire);
    tokio::spawn(async move {
        let mut lines = BufReader::with_capacity(64 * 1024, input);
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_line_capped(&mut lines, &mut line, MAX_LINE_BYTES).await {
                Ok(LineRead::End) => break,
                Ok(LineRead::TooLong(n)) => {
                    if answers.send(BadLine::TooLong(n).answer()).await.is_err() {
                        break;
                    }
                }
                Ok(LineRead::Line) => match check(&line) {
                    Ok(message) => {
                        // The tool list is this build's: once the session is set up, its
                        // answer is written from the embedded catalog text (tools/listing.rs).
                        if crate::tools::listing::answers(&message)
                            && let Some(version) = wire.initialized_version()
                        {
                            let answer =
                                crate::tools::listing::answer_line(&message["id"], &version);
                            if answers.send(answer).await.is_err() {
                                break;
                            }
                            continue;
                        }
                        if let Some(rewritten) = wire.inbound(&message) {
                            line = rewritten.to_string().into_bytes();
                        }
                        line.push(b'\n');
                        if to_rmcp.write_all(&line).await.is_err() {
                            break;
                        }
                    }
                    Err(bad) => {
                        if answers.send(bad.answer()).await.is_err() {
                            break;
                        }
                    }
                },
                Err(_) => break,
            }
        }
        // EOF on rmcp's input ends the session the way the client's hang-up should.
        let _ = to_rmcp.shutdown().await;
    });
    let writer = tokio::spawn(async move {
        let mut output = output;
        let mut frames = BufReader::new(from_rmcp);
        let mut frame = Vec::new();
        let (mut rmcp_open, mut answers_open) = (true, true);
        while rmcp_open || answers_open {
            let line = tokio::select! {
                read = frames.read_until(b'\n', &mut frame), if rmcp_open => match read {
                    Ok(0) | Err(_) => {
                        rmcp_open = false;
                        continue;
                    }
                    Ok(_) => rewrite(&outbound, std::mem::take(&mut frame)),
                },
                answer = answers_rx.recv(), if answers_open => match answer {
                    None => {
                        answers_open = false;
                        continue;
                    }
                    Some(answer) => format!("{answer}\n").into_bytes(),
                },
            };
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    ((rmcp_in, rmcp_out), writer)
}

/// One frame of rmcp's as the 2025-11-25 tasks layer passes it (most frames unparsed).
fn rewrite(wire: &crate::tasks::wire::Wire, frame: Vec<u8>) -> Vec<u8> {
    if !wire.watching() {
        return frame;
    }
    let Ok(message) = serde_json::from_slice::<Value>(&frame) else {
        return frame;
    };
    match wire.outbound(&message) {
        Some(rewritten) => format!("{rewritten}\n").into_bytes(),
        None => frame,
    }
}

enum LineRead {
    Line,
    End,
    /// A line over the cap, discarded up to its newline; how much was seen.
    TooLong(usize),
}

/// One line (without its newline) into `line`, never buffering more than `max` bytes.
async fn read_line_capped(
    reader: &mut (impl AsyncBufReadExt + Unpin),
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    let mut discarded = 0usize;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if discarded > 0 {
                LineRead::TooLong(discarded)
            } else if line.is_empty() {
                LineRead::End
            } else {
                LineRead::Line
            });
        }
        let (taken, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if discarded > 0 || line.len() + taken > max {
            discarded += line.len() + taken;
            line.clear();
        } else {
            line.extend_from_slice(&chunk[..taken]);
        }
        reader.consume(taken + usize::from(done));
        if done {
            if discarded > 0 {
                return Ok(LineRead::TooLong(discarded));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(LineRead::Line);
        }
    }
}

/// A line rmcp cannot take, and so the error response it gets.
#[derive(Debug, thiserror::Error)]
enum BadLine {
    #[error("Parse error: a line of {0} bytes or more; at most {MAX_LINE_BYTES} bytes per message")]
    TooLong(usize),
    #[error("Parse error: an empty line")]
    Empty,
    #[error("Parse error: not JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    #[error(
        "Invalid Request: a JSON-RPC 2.0 message is an object with \"jsonrpc\": \"2.0\" and a method (or a result or an error)"
    )]
    NotJsonRpc {
        /// The id it carried, when it could be read (a string or a number).
        id: Value,
    },
}

impl BadLine {
    /// The JSON-RPC error response line: -32700 for a line that is not JSON, -32600 for a
    /// JSON value that is not a message, with its id when one could be read.
    fn answer(&self) -> String {
        let (id, code) = match self {
            BadLine::TooLong(_) | BadLine::Empty | BadLine::NotJson(_) => (Value::Null, -32700),
            BadLine::NotJsonRpc { id } => (id.clone(), -32600),
        };
        error(id, code, &self.to_string())
    }
}

/// The message of a line rmcp can take; otherwise what is wrong with it.
fn check(line: &[u8]) -> Result<Value, BadLine> {
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(_) if line.iter().all(u8::is_ascii_whitespace) => return Err(BadLine::Empty),
        Err(e) => return Err(BadLine::NotJson(e)),
    };
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let message = value.as_object().filter(|o| {
        o.get("jsonrpc") == Some(&json!("2.0"))
            && (o.contains_key("method") || o.contains_key("result") || o.contains_key("error"))
    });
    if message.is_none() {
        let id = if matches!(id, Value::String(_) | Value::Number(_)) {
            id
        } else {
            Value::Null
        };
        return Err(BadLine::NotJsonRpc { id });
    }
    Ok(value)
}

fn error(id: Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_lines_get_the_json_rpc_error_they_deserve() {
        let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
        for (line, code) in [
            (&b"NaN"[..], -32700),
            (b"", -32700),
            (b"   ", -32700),
            (deep.as_bytes(), -32700),
            (b"{\"jsonrpc\": \"2.0\", \"id\": 7}", -32600),
            (b"[1, 2]", -32600),
            (b"42", -32600),
        ] {
            let answer: Value = serde_json::from_str(&check(line).unwrap_err().answer()).unwrap();
            assert_eq!(
                answer["error"]["code"],
                code,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        assert!(check(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}").is_ok());
        let answer: Value = serde_json::from_str(
            &check(b"{\"jsonrpc\": \"1.0\", \"id\": 7, \"method\": \"x\"}")
                .unwrap_err()
                .answer(),
        )
        .unwrap();
        assert_eq!(answer["id"], 7);
    }

    #[tokio::test]
    async fn a_line_over_the_cap_is_answered_and_the_next_one_read() {
        let mut input: &[u8] = b"0123456789ABCDEF\nshort\n";
        let mut reader = BufReader::with_capacity(4, &mut input);
        let mut line = Vec::new();
        assert!(matches!(
            read_line_capped(&mut reader, &mut line, 8).await.unwrap(),
            LineRead::TooLong(16)
        ));
        line.clear();
        assert!(matches!(
            read_line_capped(&mut reader, &mut line, 8).await.unwrap(),
            LineRead::Line
        ));
        assert_eq!(line, b"short");
        line.clear();
        assert!(matches!(
            read_line_capped(&mut reader, &mut line, 8).await.unwrap(),
            LineRead::End
        ));
    }
}
