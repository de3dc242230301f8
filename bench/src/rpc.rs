//! Minimal MCP clients for timing: JSON-RPC lines over a child's stdio (one request at a
//! time, or pipelined from several threads) and Streamable HTTP. No SDK in between, so
//! what is timed is the server and the pipe, the same for scimcp and its peer.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

/// Requests in flight, by id: where each answer goes (with the time it was read).
type Pending = Arc<Mutex<HashMap<u64, mpsc::Sender<(Instant, Value)>>>>;

/// The protocol version both servers are asked for.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// How to start one server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub label: &'static str,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// Where the server's stderr goes.
    pub stderr: PathBuf,
}

impl ServerSpec {
    /// The command, with stdin and stdout piped and stderr appended to [`ServerSpec::stderr`].
    pub fn command(&self) -> anyhow::Result<Command> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .current_dir(&self.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let log = fs_err::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.stderr)?;
        cmd.stderr(Stdio::from(log.into_file()));
        Ok(cmd)
    }
}

/// `initialize` request parameters.
pub fn initialize_params() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "scimcp-bench", "version": "1"}
    })
}

/// One server over stdio, one request at a time from one thread.
pub struct StdioClient {
    pub child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl StdioClient {
    /// Spawn the server (nothing sent yet).
    pub fn spawn(spec: &ServerSpec) -> anyhow::Result<StdioClient> {
        let mut child = spec
            .command()?
            .spawn()
            .with_context(|| format!("cannot start {}", spec.program.display()))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().expect("piped stdout"));
        Ok(StdioClient {
            child,
            stdin,
            stdout,
            next: 1,
        })
    }

    /// Spawn, `initialize` and `notifications/initialized`.
    pub fn connect(spec: &ServerSpec) -> anyhow::Result<StdioClient> {
        let mut client = StdioClient::spawn(spec)?;
        client
            .request("initialize", initialize_params())
            .with_context(|| format!("{} did not initialize", spec.label))?;
        client.notify("notifications/initialized")?;
        Ok(client)
    }

    /// The `tools` a fresh server of `spec` lists (it is started and stopped for this).
    pub fn list_tools(spec: &ServerSpec) -> anyhow::Result<Vec<Value>> {
        let mut client = StdioClient::connect(spec)?;
        let listed = client.request("tools/list", json!({}))?;
        client.close(Duration::from_secs(10))?;
        match listed {
            Value::Object(mut result) => match result.remove("tools") {
                Some(Value::Array(tools)) => Ok(tools),
                _ => anyhow::bail!("{}: tools/list has no tools array", spec.label),
            },
            _ => anyhow::bail!("{}: tools/list answered no object", spec.label),
        }
    }

    /// Send one line.
    pub fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        self.stdin.write_all(&line)?;
        self.stdin.flush()?;
        Ok(())
    }

    /// A notification.
    pub fn notify(&mut self, method: &str) -> anyhow::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
    }

    /// A request; its `result` (a JSON-RPC error is an error).
    pub fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.request_received(method, params)
            .map(|(result, _)| result)
    }

    /// [`StdioClient::request`], and when the answer's line had arrived: before this client
    /// parsed it, so a timing ends when the server's answer does, not the client's work.
    pub fn request_received(
        &mut self,
        method: &str,
        params: Value,
    ) -> anyhow::Result<(Value, Instant)> {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("the server closed stdout while {method} was pending");
            }
            let received = Instant::now();
            let message: Value = serde_json::from_str(&line)
                .with_context(|| format!("not JSON on stdout: {line:?}"))?;
            if message["id"] == id {
                return result_of(method, message).map(|result| (result, received));
            }
        }
    }

    /// `tools/call`; the structured content of a success.
    pub fn call(&mut self, tool: &str, arguments: Value) -> anyhow::Result<Value> {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        tool_content(tool, result)
    }

    /// Close stdin and wait for the process to exit (killed after `grace`).
    pub fn close(mut self, grace: Duration) -> anyhow::Result<()> {
        drop(self.stdin);
        wait_or_kill(&mut self.child, grace)
    }

    /// Hand reading over to a thread, so several threads can have requests in flight.
    pub fn pipelined(self) -> Pipelined {
        let pending: Pending = Arc::default();
        let sink = Arc::clone(&pending);
        let mut stdout = self.stdout;
        let reader = std::thread::spawn(move || {
            let mut line = String::new();
            loop {
                line.clear();
                match stdout.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let at = Instant::now();
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                let Some(id) = message["id"].as_u64() else {
                    continue;
                };
                if let Some(tx) = sink.lock().expect("pending lock").remove(&id) {
                    let _ = tx.send((at, message));
                }
            }
        });
        Pipelined {
            child: self.child,
            stdin: Mutex::new(Some(self.stdin)),
            pending,
            next: AtomicU64::new(self.next),
            reader: Some(reader),
        }
    }
}

/// One server over stdio with requests in flight from several threads.
pub struct Pipelined {
    child: Child,
    stdin: Mutex<Option<ChildStdin>>,
    pending: Pending,
    next: AtomicU64,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// A request in flight: when it was sent and where its answer arrives.
pub struct InFlight {
    pub method: String,
    pub sent: Instant,
    answer: mpsc::Receiver<(Instant, Value)>,
}

impl InFlight {
    /// Wait for the answer: when it arrived and its `result`.
    pub fn wait(self) -> anyhow::Result<(Instant, Value)> {
        let (at, message) = self
            .answer
            .recv()
            .context("the server closed stdout with a request pending")?;
        Ok((at, result_of(&self.method, message)?))
    }
}

impl Pipelined {
    /// Send a request without waiting.
    pub fn start(&self, method: &str, params: Value) -> anyhow::Result<InFlight> {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = mpsc::channel();
        self.pending.lock().expect("pending lock").insert(id, tx);
        let mut line = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )?;
        line.push(b'\n');
        let mut stdin = self.stdin.lock().expect("stdin lock");
        let stdin = stdin.as_mut().context("the session is closed")?;
        let sent = Instant::now();
        stdin.write_all(&line)?;
        stdin.flush()?;
        Ok(InFlight {
            method: method.to_string(),
            sent,
            answer: rx,
        })
    }

    /// `tools/call` and wait; the structured content of a success.
    pub fn call(&self, tool: &str, arguments: Value) -> anyhow::Result<Value> {
        let (_, result) = self
            .start("tools/call", json!({"name": tool, "arguments": arguments}))?
            .wait()?;
        tool_content(tool, result)
    }

    /// Close stdin and wait for the process to exit.
    pub fn close(mut self, grace: Duration) -> anyhow::Result<()> {
        self.stdin.lock().expect("stdin lock").take();
        let waited = wait_or_kill(&mut self.child, grace);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        waited
    }
}

/// One MCP session over Streamable HTTP.
pub struct HttpClient {
    agent: ureq::Agent,
    url: String,
    session: Option<String>,
    next: u64,
}

impl HttpClient {
    /// `initialize` and `notifications/initialized` at `url`, retrying the connection until
    /// the server listens (at most `wait`).
    pub fn connect(url: &str, wait: Duration) -> anyhow::Result<HttpClient> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into();
        let mut client = HttpClient {
            agent,
            url: url.to_string(),
            session: None,
            next: 1,
        };
        let deadline = Instant::now() + wait;
        loop {
            match client.request("initialize", initialize_params()) {
                Ok(_) => break,
                Err(e) if Instant::now() > deadline => {
                    return Err(e.context(format!("no MCP server answered at {url}")));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        client.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(client)
    }

    /// POST one message; every JSON-RPC message of the answer (JSON or an SSE stream).
    fn post(&mut self, message: &Value) -> anyhow::Result<Vec<Value>> {
        let mut request = self
            .agent
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        if let Some(id) = &self.session {
            request = request
                .header("Mcp-Session-Id", id)
                .header("Mcp-Protocol-Version", PROTOCOL_VERSION);
        }
        let mut response = request.send(message.to_string())?;
        if let Some(id) = response.headers().get("mcp-session-id") {
            self.session = Some(id.to_str()?.to_owned());
        }
        let status = response.status().as_u16();
        let sse = response
            .headers()
            .get("content-type")
            .is_some_and(|v| v.to_str().unwrap_or("").starts_with("text/event-stream"));
        let body = response.body_mut().read_to_string()?;
        if !(200..300).contains(&status) {
            bail!("HTTP {status}: {body}");
        }
        Ok(messages_of(sse, &body))
    }

    /// A request; its `result`.
    pub fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next;
        self.next += 1;
        let messages =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let message = messages
            .into_iter()
            .find(|m| m["id"] == id)
            .with_context(|| format!("{method}: no answer"))?;
        result_of(method, message)
    }
}

/// Every JSON-RPC message of an HTTP answer's body: one JSON value, or an SSE stream's
/// `data:` events.
pub fn messages_of(sse: bool, body: &str) -> Vec<Value> {
    if sse {
        // Events may end lines with CRLF (the SSE grammar allows either).
        body.replace("\r\n", "\n")
            .split("\n\n")
            .filter_map(|event| {
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                serde_json::from_str(&data.join("\n")).ok()
            })
            .collect()
    } else {
        serde_json::from_str(body).into_iter().collect()
    }
}

fn result_of(method: &str, message: Value) -> anyhow::Result<Value> {
    if let Some(error) = message.get("error") {
        bail!("{method}: JSON-RPC error {error}");
    }
    Ok(message["result"].clone())
}

/// The structured content of a successful `tools/call` result.
pub fn tool_content(tool: &str, result: Value) -> anyhow::Result<Value> {
    if result["isError"] == true {
        bail!("{tool} failed: {}", result["structuredContent"]);
    }
    Ok(result["structuredContent"].clone())
}

/// Wait for `child` to exit; kill it after `grace`.
pub fn wait_or_kill(child: &mut Child, grace: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + grace;
    loop {
        if child.try_wait()?.is_some() {
            return Ok(());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            child.wait()?;
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Resident set size and its peak (VmRSS, VmHWM) of a live process, in MiB (Linux).
pub fn rss_mib(pid: u32) -> Option<Rss> {
    let status =
        fs_err::read_to_string(Path::new("/proc").join(pid.to_string()).join("status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    };
    Some(Rss {
        rss: field("VmRSS:")?,
        peak: field("VmHWM:")?,
        anon: field("RssAnon:")?,
        file: field("RssFile:")?,
    })
}

/// A process's resident set, in MiB.
#[derive(Debug, Clone, Copy)]
pub struct Rss {
    /// `VmRSS`: everything resident.
    pub rss: f64,
    /// `VmHWM`: the peak of that.
    pub peak: f64,
    /// `RssAnon`: private memory (heap, stacks, written pages).
    pub anon: f64,
    /// `RssFile`: pages of the executable and libraries mapped from the page cache (shared
    /// with every process running them, and reclaimable).
    pub file: f64,
}

/// A free loopback TCP port (bound, then released for the server to take).
pub fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_of_reads_json_and_sse_with_either_line_end() {
        assert_eq!(messages_of(false, r#"{"id":1}"#), vec![json!({"id": 1})]);
        let lf = "event: message\ndata: {\"id\":1}\n\ndata: {\"id\":2}\n\n";
        let crlf = lf.replace('\n', "\r\n");
        for body in [lf.to_string(), crlf] {
            assert_eq!(
                messages_of(true, &body),
                vec![json!({"id": 1}), json!({"id": 2})]
            );
        }
        assert!(messages_of(true, ": keep-alive\n\n").is_empty());
    }
}
