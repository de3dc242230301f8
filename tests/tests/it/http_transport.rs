//! `scimcp serve --transport http`: the real binary on 127.0.0.1, driven over plain HTTP the
//! way a Streamable HTTP client does it (POST JSON-RPC, `Mcp-Session-Id`, answers as SSE
//! events), with a whole analysis, two sessions sharing one server's runs, the loopback-only
//! rules (listen address, `Host`, `Origin`) and a clean stop on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
#[cfg(unix)]
use std::time::Instant;

use serde_json::{Value, json};

/// A running `scimcp serve --transport http`, killed on drop.
struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>/mcp`
    url: String,
    _root: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        Self::start_with_fd_limit(None).0
    }

    /// Start the server, with at most `nofile` open file descriptors when given (through the
    /// shell's `ulimit`); the counter counts stderr lines saying an accept failed.
    fn start_with_fd_limit(
        nofile: Option<u32>,
    ) -> (Server, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        let root = tempfile::Builder::new()
            .prefix("scimcp http ")
            .tempdir()
            .unwrap();
        let cwd = root.path().join("Données");
        fs_err::create_dir_all(cwd.join("data")).unwrap();
        let python = scimcp_e2e::dev_python().unwrap();
        scimcp_e2e::export_datasets(&python, &cwd.join("data")).unwrap();
        let scimcp = scimcp_e2e::sibling_binary("scimcp").unwrap();
        let mut command = match nofile {
            Some(n) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                    .arg(&scimcp);
                c
            }
            None => Command::new(&scimcp),
        };
        let mut child = command
            .args(["serve", "--transport", "http", "--listen", "127.0.0.1:0"])
            .arg("--python")
            .arg(&python)
            .env("SCIMCP_HOME", root.path().join("home"))
            .env("SCIMCP_LOG", "info")
            .current_dir(&cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let failures = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let url = listening_url(&mut child, failures.clone());
        (
            Server {
                child,
                url,
                _root: root,
            },
            failures,
        )
    }

    fn authority(&self) -> &str {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Read stderr until the server says where it listens; keep draining it afterwards so the
/// server never blocks on a full pipe.
fn listening_url(
    child: &mut Child,
    accept_failures: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> String {
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if line.contains("accepting a connection failed") {
                accept_failures.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            if !sent && let Some(at) = line.find("http://") {
                let _ = tx.send(line[at..].trim().to_owned());
                sent = true;
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the server never said where it listens")
}

/// One MCP session over Streamable HTTP.
struct Session {
    agent: ureq::Agent,
    url: String,
    id: Option<String>,
    next: u64,
}

impl Session {
    fn open(url: &str) -> (Session, Value) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(180)))
            .build()
            .into();
        let mut session = Session {
            agent,
            url: url.to_owned(),
            id: None,
            next: 1,
        };
        let info = session.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "scimcp-http-test", "version": "1"}
            }),
        );
        assert!(session.id.is_some(), "no Mcp-Session-Id after initialize");
        let (status, _) =
            session.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(status, 202);
        (session, info)
    }

    /// POST one message; the status and every JSON-RPC message in the answer.
    fn post(&mut self, message: &Value) -> (u16, Vec<Value>) {
        let mut request = self
            .agent
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        if let Some(id) = &self.id {
            request = request.header("Mcp-Session-Id", id);
        }
        let mut response = request.send(message.to_string()).unwrap();
        if let Some(id) = response.headers().get("mcp-session-id") {
            self.id = Some(id.to_str().unwrap().to_owned());
        }
        let status = response.status().as_u16();
        let sse = response
            .headers()
            .get("content-type")
            .is_some_and(|v| v.to_str().unwrap_or("").starts_with("text/event-stream"));
        let body = response.body_mut().read_to_string().unwrap();
        let messages = if sse {
            body.split("\n\n")
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
            serde_json::from_str(&body).into_iter().collect()
        };
        (status, messages)
    }

    /// A request's result (panics on a JSON-RPC error).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let (status, messages) =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(status, 200, "{method}: {messages:?}");
        let answer = messages
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("{method}: no answer"));
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// A tool's structured success.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_eq!(result["isError"], false, "{tool}: {result:#}");
        result["structuredContent"].clone()
    }
}

#[test]
fn a_whole_analysis_over_http_and_two_sessions_share_the_runs() {
    let server = Server::start();
    let (mut a, info) = Session::open(&server.url);
    assert_eq!(info["serverInfo"]["name"], "scimcp");
    let tools = a.request("tools/list", json!({}));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, scimcp_server::TOOL_NAMES);

    let request = json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": {"target": "target"}});
    let validation = a.call("validate_analysis", request.clone());
    assert_eq!(validation["ready"], true, "{validation:#}");
    let mut start = request;
    start["validation_id"] = validation["validation_id"].clone();
    let started = a.call("start_analysis", start);
    let run_id = started["run_id"].as_str().unwrap().to_owned();
    let result = a.call("get_run_result", json!({"run_id": run_id, "wait_s": 120}));
    assert_eq!(result["state"], "succeeded", "{result:#}");
    assert_eq!(result["result"]["plan_sha256"], validation["plan_sha256"]);
    assert_eq!(result["result"]["problems"]["total"], 0, "{result:#}");
    let artifacts = result["result"]["artifacts"]["items"].as_array().unwrap();
    assert!(
        artifacts.iter().any(|a| a["path"] == "metrics.json"),
        "{result:#}"
    );

    // A second client of the same server sees the run: one state, many sessions.
    let (mut b, _) = Session::open(&server.url);
    assert_ne!(a.id, b.id);
    let runs = b.call("list_runs", json!({}));
    assert!(
        runs["runs"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["run_id"] == run_id.as_str()),
        "{runs:#}"
    );
}

/// A raw HTTP/1.1 exchange, for headers a client library would not let us forge.
fn raw(authority: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

fn initialize_with(authority: &str, extra_headers: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string();
    raw(
        authority,
        &format!(
            "POST /mcp HTTP/1.1\r\n{extra_headers}Accept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

#[test]
fn only_this_computer_may_talk_to_it() {
    let server = Server::start();
    let authority = server.authority().to_owned();

    let ok = initialize_with(&authority, &format!("Host: {authority}\r\n"));
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    // DNS rebinding: a page on another name resolving to 127.0.0.1.
    let rebound = initialize_with(&authority, "Host: attacker.example\r\n");
    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
    // A web page on another origin.
    let foreign = initialize_with(
        &authority,
        &format!("Host: {authority}\r\nOrigin: https://attacker.example\r\n"),
    );
    assert!(foreign.starts_with("HTTP/1.1 403"), "{foreign}");
    let local_page = initialize_with(
        &authority,
        &format!("Host: {authority}\r\nOrigin: http://localhost:3000\r\n"),
    );
    assert!(local_page.starts_with("HTTP/1.1 200"), "{local_page}");
    // Anything but /mcp.
    let other = raw(
        &authority,
        &format!("GET / HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"),
    );
    assert!(other.starts_with("HTTP/1.1 404"), "{other}");
    assert!(other.contains("/mcp"), "{other}");

    // Listening on a network address is refused up front.
    for listen in ["0.0.0.0:8765", "192.0.2.1:8765", "not-an-address"] {
        let out = Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap())
            .args(["serve", "--transport", "http", "--listen", listen])
            .env(
                "SCIMCP_HOME",
                Path::new(server._root.path()).join("other home"),
            )
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{listen}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--listen"), "{listen}: {stderr}");
        assert!(out.stdout.is_empty(), "stdout must stay empty: {out:?}");
    }
}

/// SIGTERM with an analysis running: the server ends the run's process tree, records it
/// `failed` (`interrupted`), and exits 0 without a byte on stdout.
#[cfg(unix)]
#[test]
fn sigterm_stops_the_http_server_cleanly() {
    let mut server = Server::start();
    let (mut session, _) = Session::open(&server.url);
    let started = session.call(
        "start_analysis",
        json!({"workflow": "regression", "dataset": "data/diabetes.csv",
               "parameters": {"target": "target", "sleep_s": 60}}),
    );
    let run_id = started["run_id"].as_str().unwrap().to_owned();
    let run_dir = server._root.path().join("home").join("runs").join(&run_id);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !run_dir.join("work/output/worker.pid").is_file() {
        assert!(Instant::now() < deadline, "the worker never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    let pid = nix::unistd::Pid::from_raw(server.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running 20 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let recorded: Value =
        serde_json::from_slice(&fs_err::read(run_dir.join("status.json")).unwrap()).unwrap();
    assert_eq!(recorded["state"], "failed", "{recorded:#}");
    assert_eq!(recorded["reason"], "interrupted", "{recorded:#}");
    let worker: u32 = fs_err::read_to_string(run_dir.join("work/output/worker.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let t0 = Instant::now();
    while scimcp_e2e::process_alive(worker) {
        assert!(
            t0.elapsed() < scimcp_testkit::limits::process_tree_gone(),
            "the worker outlived the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stdout = String::new();
    server
        .child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(
        stdout.is_empty(),
        "the HTTP transport wrote to stdout: {stdout}"
    );
}

/// 300 clients that send half a request and then nothing (slowloris) hold no slot for long:
/// the server drops each after its header timeout, and a real client gets through.
#[test]
fn slow_clients_are_dropped_and_a_real_client_gets_through() {
    let server = Server::start();
    let started = std::time::Instant::now();
    let mut slow = Vec::new();
    for _ in 0..300 {
        let mut stream = TcpStream::connect(server.authority()).unwrap();
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .unwrap();
        slow.push(stream);
    }
    let (mut session, _) = Session::open(&server.url);
    let tools = session.request("tools/list", json!({}));
    assert!(tools["tools"].as_array().is_some_and(|t| !t.is_empty()));
    let served_after = started.elapsed();
    assert!(
        served_after < Duration::from_secs(30),
        "a real client waited {served_after:?} behind 300 slow ones"
    );
    // Each slow connection was ended by the server, not left open.
    let mut closed = 0;
    for mut stream in slow {
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut buf = [0u8; 256];
        match stream.read(&mut buf) {
            Ok(_) => closed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => closed += 1,
            Err(e) => panic!("a slow connection was still open after 30 s: {e}"),
        }
    }
    assert_eq!(closed, 300);
}

/// A connection to `authority` from the loopback address `127.0.0.<last>`.
#[cfg(unix)]
fn connect_from(last: u8, authority: &str) -> std::io::Result<TcpStream> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let target: std::net::SocketAddr = authority.parse().map_err(std::io::Error::other)?;
    runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind((std::net::Ipv4Addr::new(127, 0, 0, last), 0).into())?;
        tokio::time::timeout(Duration::from_secs(2), socket.connect(target))
            .await
            .map_err(std::io::Error::other)??
            .into_std()
    })
}

/// Out of file descriptors, accepting fails; the server backs off instead of spinning (the
/// log stays short) and serves again as soon as descriptors are free.
#[cfg(unix)]
#[test]
fn out_of_file_descriptors_the_server_backs_off_and_recovers() {
    let (server, failures) = Server::start_with_fd_limit(Some(48));
    let mut held = Vec::new();
    // From 30 loopback addresses: one peer alone may hold only a few idle connections (the
    // server ends its older ones), 30 together hold more than 48 descriptors.
    for i in 0..120 {
        match connect_from(2 + (i % 30), server.authority()) {
            Ok(s) => held.push(s),
            Err(_) => break,
        }
    }
    std::thread::sleep(Duration::from_secs(3));
    let warned = failures.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        warned >= 1,
        "descriptors never ran out (held {})",
        held.len()
    );
    assert!(
        warned <= 6,
        "{warned} warnings in 3 s: accepting must back off, not spin"
    );
    drop(held);
    let started = std::time::Instant::now();
    let (mut session, _) = Session::open(&server.url);
    session.request("tools/list", json!({}));
    assert!(started.elapsed() < Duration::from_secs(30));
}
