//! The HTTP transport against strict real clients and hostile ones (issue 26), over real
//! sockets on loopback only: SSE priming events only for clients on protocol 2025-11-25 or
//! later (a client on 2025-06-18 such as Gemini CLI parses every event as JSON), the doctor's
//! remote check failing on a server that still sends them, idle connections from another
//! peer that cannot starve a token holder, absolute-form request targets refused, and a
//! token file replaced by a FIFO or a link to `/dev/zero` that freezes nothing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use scimcp_e2e::http_server::{HttpServer, TestRoot};
use serde_json::{Value, json};

/// The events of an SSE body: each one's fields (`data` lines joined by `\n`).
fn events(body: &str) -> Vec<Vec<(String, String)>> {
    let body = body.replace("\r\n", "\n");
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            e.lines()
                .map(|l| {
                    let (f, v) = l.split_once(':').unwrap_or((l, ""));
                    (f.to_string(), v.strip_prefix(' ').unwrap_or(v).to_string())
                })
                .collect()
        })
        .collect()
}

/// The data of every event that has a `data` field.
fn event_data(body: &str) -> Vec<String> {
    events(body)
        .into_iter()
        .filter(|fields| fields.iter().any(|(f, _)| f == "data"))
        .map(|fields| {
            fields
                .iter()
                .filter(|(f, _)| f == "data")
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

/// POST `message` to `url` as a client on `version`; the answer's session id and SSE body.
fn post(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    version: Option<&str>,
    message: &Value,
) -> (Option<String>, String) {
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(60)))
            .proxy(None)
            .build(),
    );
    let mut request = agent
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json");
    if let Some(t) = token {
        request = request.header("Authorization", format!("Bearer {t}"));
    }
    if let Some(s) = session {
        request = request.header("Mcp-Session-Id", s);
    }
    if let Some(v) = version {
        request = request.header("MCP-Protocol-Version", v);
    }
    let mut response = request.send(message.to_string().as_bytes()).unwrap();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = response.body_mut().read_to_string().unwrap();
    (session, body)
}

fn initialize(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "strict", "version": "1"}}})
}

/// `initialize`, `notifications/initialized` and `tools/list` as a client on `version`: the
/// SSE bodies of the two answers.
fn session_bodies(url: &str, token: Option<&str>, version: &str) -> [String; 2] {
    let (session, init) = post(url, token, None, None, &initialize(version));
    let session = session.expect("initialize opens a session");
    post(
        url,
        token,
        Some(&session),
        Some(version),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let (_, list) = post(
        url,
        token,
        Some(&session),
        Some(version),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
    );
    [init, list]
}

#[test]
fn priming_events_go_only_to_clients_on_2025_11_25_or_later() {
    let root = TestRoot::new().unwrap();
    let server = HttpServer::start(&root, &["--listen", "127.0.0.1:0"], &[]).unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", server.port);

    // A client on 2025-06-18 (Gemini CLI): every event's data is a JSON-RPC message.
    let [init, list] = session_bodies(&url, None, "2025-06-18");
    for (what, body) in [("initialize", &init), ("tools/list", &list)] {
        let data = event_data(body);
        assert!(!data.is_empty(), "{what}: no event in {body:?}");
        for d in data {
            assert!(
                serde_json::from_str::<Value>(&d).is_ok(),
                "{what} sent an event whose data is not JSON ({d:?}) to a 2025-06-18 client:\n{body}"
            );
        }
    }
    assert!(list.contains("get_capabilities"), "{list}");

    // A client on 2025-11-25 still gets its priming event (empty data, an event id, a retry).
    let [init, list] = session_bodies(&url, None, "2025-11-25");
    for (what, body) in [("initialize", &init), ("tools/list", &list)] {
        let primed = events(body).into_iter().any(|fields| {
            fields.iter().any(|(f, v)| f == "data" && v.is_empty())
                && fields.iter().any(|(f, _)| f == "id")
                && fields.iter().any(|(f, _)| f == "retry")
        });
        assert!(
            primed,
            "{what}: no priming event for a 2025-11-25 client:\n{body}"
        );
    }
}

/// A server that answers like scimcp did before the fix: every SSE answer starts with an
/// empty priming event, whatever protocol the client speaks.
fn priming_everywhere() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        listener.set_nonblocking(false).unwrap();
        let started = Instant::now();
        for stream in listener.incoming() {
            if started.elapsed() > Duration::from_secs(60) {
                break;
            }
            let Ok(stream) = stream else { continue };
            if answer_primed(stream) {
                break;
            }
        }
    });
    (port, handle)
}

/// Answer one request; true after the session's DELETE (the last request of a check).
fn answer_primed(mut stream: TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return false;
    }
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    if first.starts_with("DELETE") {
        let _ =
            stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return true;
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let result = match message["method"].as_str() {
        Some("initialize") => {
            json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "scimcp", "version": "0.0.0"}})
        }
        Some("tools/list") => json!({"tools": [{"name": "get_capabilities",
            "inputSchema": {"type": "object"}}]}),
        Some("tools/call") => {
            json!({"content": [{"type": "text", "text": "{}"}], "isError": false})
        }
        _ => {
            let _ = stream.write_all(
                b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            return false;
        }
    };
    let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nMcp-Session-Id: s-1\r\n\
         Connection: close\r\n\r\ndata: \nid: 0\nretry: 3000\n\ndata: {answer}\nid: 1\n\n"
    );
    false
}

/// `scimcp-doctor ARGS --json` in an empty fake home: the exit code and the report.
fn doctor(args: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let home: PathBuf = dir.path().join("home");
    fs_err::create_dir_all(&home).unwrap();
    let out: Output = Command::new(scimcp_e2e::sibling_binary("scimcp-doctor").unwrap())
        .args(args)
        .arg("--json")
        .env_clear()
        .env("HOME", &home)
        .env("SCIMCP_HOME", dir.path().join("data"))
        .env("PATH", home.join("no-bin"))
        .env("LC_ALL", "C.UTF-8")
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

#[test]
fn the_doctor_fails_a_server_that_primes_a_2025_06_18_client_and_passes_scimcp() {
    let (port, server) = priming_everywhere();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, report) = doctor(&["--remote", &url, "--no-token"]);
    let handshake = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "server.handshake")
        .unwrap_or_else(|| panic!("{report:#}"))
        .clone();
    assert_eq!(handshake["status"], "fail", "{report:#}");
    assert_ne!(code, 0);
    let finding = handshake["finding"].as_str().unwrap_or_default();
    assert!(
        finding.contains("initialize") && finding.contains("priming") && finding.contains("Gemini"),
        "{handshake:#}"
    );
    assert!(
        handshake["remedy"]
            .as_str()
            .is_some_and(|r| r.contains("2025-11-25")),
        "{handshake:#}"
    );
    drop(server);

    // The real server passes the same check.
    let root = TestRoot::new().unwrap();
    let server = HttpServer::start(&root, &["--listen", "127.0.0.1:0"], &[]).unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let (code, report) = doctor(&["--remote", &url, "--no-token"]);
    assert_eq!(code, 0, "{report:#}\n{}", server.log());
}

#[test]
fn an_absolute_form_request_target_is_refused() {
    let root = TestRoot::new().unwrap();
    let server = HttpServer::start(&root, &["--listen", "127.0.0.1:0"], &[]).unwrap();
    let authority = format!("127.0.0.1:{}", server.port);
    let body = initialize("2025-06-18").to_string();
    for target in ["http://evil.com/mcp", &format!("http://{authority}/mcp")] {
        let mut stream = TcpStream::connect(&authority).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "POST {target} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json, \
             text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 400"), "{target}: {answer}");
        assert!(!answer.contains("serverInfo"), "{target}: {answer}");
    }
}

/// What an attacker's connections saw.
#[derive(Debug, Default)]
struct Attack {
    /// Connections the server accepted.
    opened: std::sync::atomic::AtomicUsize,
    /// Connections the server closed.
    closed: std::sync::atomic::AtomicUsize,
}

/// Keep `count` connections open from `127.0.0.2`…, spread over `peers` addresses, each of
/// which sends the start of a request and then nothing; one the server closes is opened
/// again at once (as an attacker does), until `stop` turns true.
fn idle_connections(
    runtime: &tokio::runtime::Runtime,
    port: u16,
    peers: u8,
    count: usize,
    attack: &std::sync::Arc<Attack>,
    stop: &tokio::sync::watch::Receiver<bool>,
) {
    use std::sync::atomic::Ordering::SeqCst;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    for i in 0..count {
        let ip = std::net::Ipv4Addr::new(127, 0, 0, 2 + (i % usize::from(peers)) as u8);
        let attack = std::sync::Arc::clone(attack);
        let mut stop = stop.clone();
        runtime.spawn(async move {
            while !*stop.borrow() {
                let Ok(socket) = tokio::net::TcpSocket::new_v4() else {
                    return;
                };
                if socket.bind((ip, 0).into()).is_err() {
                    return;
                }
                let connect = socket.connect(([127, 0, 0, 1], port).into());
                let Ok(Ok(mut stream)) =
                    tokio::time::timeout(Duration::from_secs(2), connect).await
                else {
                    continue;
                };
                attack.opened.fetch_add(1, SeqCst);
                let _ = stream
                    .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                    .await;
                let mut buf = [0u8; 256];
                tokio::select! {
                    _ = stream.read(&mut buf) => {
                        attack.closed.fetch_add(1, SeqCst);
                    }
                    _ = stop.changed() => return,
                }
            }
        });
    }
}

#[test]
fn idle_connections_from_other_peers_do_not_starve_a_token_holder() {
    use std::sync::atomic::Ordering::SeqCst;
    let root = TestRoot::new().unwrap();
    let alice = root.add_token("alice").unwrap();
    let server =
        HttpServer::start(&root, &["--listen", "127.0.0.1:0", "--require-token"], &[]).unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // 1,500 connections that never finish their headers, kept up for the whole test: 1,200
    // from one peer, 300 spread over 20 more (more than all the waiting slots together).
    let attack = std::sync::Arc::new(Attack::default());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    idle_connections(&runtime, server.port, 1, 1200, &attack, &stopped);
    idle_connections(&runtime, server.port, 20, 300, &attack, &stopped);
    let warm_up = Instant::now();
    while attack.opened.load(SeqCst) < 1500 && warm_up.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let attacked = Instant::now();
    let (session, init) = post(&url, Some(&alice), None, None, &initialize("2025-06-18"));
    let took = attacked.elapsed();
    // The measured figure, for docs/RELIABILITY.md (`--no-capture`).
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "the token holder's initialize: {took:?} after {} attacker connections ({} closed by the \
             server so far)",
            attack.opened.load(SeqCst),
            attack.closed.load(SeqCst)
        );
    }
    let _ = stop.send(true);
    assert!(session.is_some() && init.contains("serverInfo"), "{init}");
    assert!(
        took < Duration::from_secs(10),
        "the token holder's initialize took {took:?} after {} attacker connections",
        attack.opened.load(SeqCst)
    );
    assert!(
        attack.opened.load(SeqCst) >= 1500,
        "the attack never had its 1,500 connections: {attack:?}"
    );
    runtime.shutdown_timeout(Duration::from_secs(5));
}

#[cfg(unix)]
#[test]
fn a_token_file_replaced_by_a_fifo_or_a_link_to_dev_zero_freezes_nothing() {
    let root = TestRoot::new().unwrap();
    let alice = root.add_token("alice").unwrap();
    let server =
        HttpServer::start(&root, &["--listen", "127.0.0.1:0", "--require-token"], &[]).unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let health = format!("http://127.0.0.1:{}/health", server.port);
    let (session, _) = post(&url, Some(&alice), None, None, &initialize("2025-06-18"));
    assert!(session.is_some());
    let file = root.home.join("tokens.toml");
    assert!(file.is_file(), "{} is not the token file", file.display());
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .http_status_as_error(false)
            .proxy(None)
            .build(),
    );
    let replaced: [&dyn Fn(&std::path::Path); 2] = [
        &|p| nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap(),
        &|p| fs_err::os::unix::fs::symlink("/dev/zero", p).unwrap(),
    ];
    for replace in replaced {
        fs_err::remove_file(&file).unwrap();
        replace(&file);
        // A request with the token (the file is read again: changed) and /health, each
        // answered within ureq's 10 s.
        let refused = agent
            .post(&url)
            .header("Authorization", format!("Bearer {alice}"))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .send(initialize("2025-06-18").to_string().as_bytes())
            .expect("a request with the token was not answered");
        assert_eq!(refused.status().as_u16(), 401);
        let ok = agent.get(&health).call().expect("/health was not answered");
        assert_eq!(ok.status().as_u16(), 200);
    }
    assert!(
        server.log().contains("not a regular file"),
        "{}",
        server.log()
    );
}
