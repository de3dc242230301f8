//! Many people at once over HTTP (issue #31): N token holders, each with its own token
//! (`scimcp token add`), its own MCP session and its own loopback source address (as people
//! on their own machines; the server caps connections per address), for a fixed time
//! against `scimcp serve --transport http --require-token`, then the same load against the
//! Python SDK peer (which checks the same bearer tokens).
//!
//! Each holder sends a paced mix — `get_run_status` (half of the calls), `list_runs`,
//! `validate_analysis` and `resources/read` of a finished run's result — and keeps one
//! long-polling `get_run_result` open on a run that lasts longer than the test, on a second
//! connection of the same session. Pacing is below the server's default per-token rate,
//! so a refusal is an error, not the limit doing its job. The load generator is tokio and
//! hyper's HTTP/1.1 client, in this process, on the same 2 cores as the server: its own
//! work is inside every figure.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde::Serialize;
use serde_json::{Value, json};

use crate::fixture::Fixture;
use crate::rpc::{PROTOCOL_VERSION, ServerSpec, free_port, initialize_params, rss_mib};
use crate::stats::{Summary, ms, round};

/// Calls each holder makes per second (the server's default token rate is 10 per second).
pub const RATE_PER_HOLDER: f64 = 5.0;

/// Runs in the history the holders list and read.
const HISTORY: usize = 100;

/// `wait_s` of each long poll.
const LONG_POLL_S: u64 = 10;

/// Error texts kept per server.
const ERROR_SAMPLES: usize = 5;

/// One server under the load.
#[derive(Debug, Serialize)]
pub struct LoadResult {
    pub server: String,
    pub requests: usize,
    pub errors: usize,
    /// The first few errors, for the post-mortem.
    pub error_samples: Vec<String>,
    /// Completed calls per second (long polls not counted).
    pub throughput_rps: f64,
    /// Calls per second the holders asked for.
    pub offered_rps: f64,
    pub get_run_status_ms: Summary,
    pub list_runs_ms: Summary,
    pub validate_analysis_ms: Summary,
    pub resources_read_ms: Summary,
    /// Long polls that came back (each after its wait, the run still going).
    pub long_polls: usize,
    pub long_poll_errors: usize,
    pub peak_rss_mib: f64,
}

/// Both servers under the same load.
#[derive(Debug, Serialize)]
pub struct HttpMany {
    pub holders: usize,
    pub duration_s: f64,
    pub rate_per_holder: f64,
    pub scimcp: LoadResult,
    pub peer: LoadResult,
}

/// A server child, killed on drop.
struct ServerChild(Child);

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Measure `holders` token holders for `duration` against scimcp, then against the peer.
pub fn run(fx: &Fixture, holders: usize, duration: Duration) -> anyhow::Result<HttpMany> {
    let home = fx.dir("home-http-many")?;
    let cwd = fx.start_dir("start-http-many")?;
    eprintln!("  seeding {HISTORY} runs and {holders} tokens");
    fx.seed_history(&home, HISTORY)?;
    let history = run_ids(&home)?;
    // The peer reads the same history from its own copy, with one run recorded as running
    // for its long polls (it cannot start runs).
    let peer_home = fx.dir("home-http-many-peer")?;
    crate::copy_tree(&home, &peer_home)?;
    let peer_long_run = fake_running_run(&peer_home, &history[0])?;
    let secrets = (0..holders)
        .map(|i| add_token(fx, &home, &format!("person-{i:02}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let secrets_file = fx.work.join("http-many-tokens.txt");
    fs_err::write(&secrets_file, secrets.join("\n") + "\n")?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;

    eprintln!("  scimcp, {holders} holders, {} s", duration.as_secs());
    let port = free_port()?;
    let listen = format!("127.0.0.1:{port}");
    let spec = fx.scimcp(
        "refsci",
        &home,
        &cwd,
        &[
            "--transport",
            "http",
            "--listen",
            &listen,
            "--require-token",
            "--confirm",
            "optional",
        ],
    );
    let scimcp = {
        let child = spawn(&spec)?;
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let long_run = runtime.block_on(start_long_run(addr, &secrets[0], duration))?;
        let r = runtime.block_on(load(
            "scimcp",
            addr,
            child.0.id(),
            &secrets,
            &history,
            &long_run,
            duration,
        ))?;
        runtime.block_on(cancel(addr, &secrets[0], &long_run))?;
        r
    };

    eprintln!(
        "  python-sdk peer, {holders} holders, {} s",
        duration.as_secs()
    );
    let port = free_port()?;
    let mut spec = fx.peer(&peer_home, &cwd, &["--http", &port.to_string()]);
    spec.env.push((
        "SCIMCP_BENCH_TOKENS".into(),
        secrets_file.display().to_string(),
    ));
    let peer = {
        let child = spawn(&spec)?;
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        runtime.block_on(wait_listening(addr, &secrets[0]))?;
        runtime.block_on(load(
            "python-sdk",
            addr,
            child.0.id(),
            &secrets,
            &history,
            &peer_long_run,
            duration,
        ))?
    };
    Ok(HttpMany {
        holders,
        duration_s: duration.as_secs_f64(),
        rate_per_holder: RATE_PER_HOLDER,
        scimcp,
        peer,
    })
}

fn spawn(spec: &ServerSpec) -> anyhow::Result<ServerChild> {
    let mut cmd = spec.command()?;
    cmd.stdin(Stdio::null()).stdout(Stdio::null());
    Ok(ServerChild(cmd.spawn().with_context(|| {
        format!("cannot start {}", spec.program.display())
    })?))
}

/// The run ids of `home`'s history.
fn run_ids(home: &Path) -> anyhow::Result<Vec<String>> {
    let mut ids: Vec<String> = fs_err::read_dir(home.join("runs"))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("run-"))
        .collect();
    ids.sort();
    ensure!(ids.len() >= HISTORY, "the history has {} runs", ids.len());
    Ok(ids)
}

/// A copy of `template` in `home` recorded as running (for the peer's long polls).
fn fake_running_run(home: &Path, template: &str) -> anyhow::Result<String> {
    let id = "run-10a9000000000001".to_string();
    let runs = home.join("runs");
    crate::copy_tree(&runs.join(template), &runs.join(&id))?;
    let path = runs.join(&id).join("status.json");
    let mut status: Value = serde_json::from_slice(&fs_err::read(&path)?)?;
    status["run_id"] = json!(id);
    status["state"] = json!("running");
    if let Some(s) = status.as_object_mut() {
        s.remove("ended_at");
        s.remove("exit_code");
    }
    fs_err::write(&path, serde_json::to_vec_pretty(&status)?)?;
    let _ = fs_err::remove_file(runs.join(&id).join("result.json"));
    Ok(id)
}

/// `scimcp token add NAME` in `home`: the secret it prints once.
fn add_token(fx: &Fixture, home: &Path, name: &str) -> anyhow::Result<String> {
    let out = Command::new(fx.exe("scimcp"))
        .args(["token", "add", name])
        .env("SCIMCP_HOME", home)
        .output()?;
    ensure!(
        out.status.success(),
        "scimcp token add {name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?.trim().to_string())
}

/// One keep-alive HTTP/1.1 connection from one loopback source address, reopened when the
/// server closed it.
struct Conn {
    server: SocketAddr,
    local: IpAddr,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    fn new(server: SocketAddr, local: IpAddr) -> Conn {
        Conn {
            server,
            local,
            sender: None,
        }
    }

    async fn open(&mut self) -> anyhow::Result<&mut SendRequest<Full<Bytes>>> {
        let reusable = match &mut self.sender {
            Some(s) => !s.is_closed() && s.ready().await.is_ok(),
            None => false,
        };
        if !reusable {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind(SocketAddr::new(self.local, 0))?;
            let stream = socket.connect(self.server).await?;
            stream.set_nodelay(true)?;
            let (sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            self.sender = Some(sender);
        }
        Ok(self.sender.as_mut().expect("just opened"))
    }

    /// POST `message` to /mcp: the status, the session id header, and every JSON-RPC
    /// message of the answer (a JSON body or an SSE stream, read to its end).
    async fn post(
        &mut self,
        token: &str,
        session: Option<&str>,
        message: &Value,
    ) -> anyhow::Result<(u16, Option<String>, Vec<Value>)> {
        let mut request = hyper::Request::post("/mcp")
            .header("host", format!("127.0.0.1:{}", self.server.port()))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {token}"));
        if let Some(id) = session {
            request = request
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", PROTOCOL_VERSION);
        }
        let request = request.body(Full::new(Bytes::from(message.to_string())))?;
        let sender = self.open().await?;
        let response = sender.send_request(request).await?;
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let body = response.into_body().collect().await?.to_bytes();
        let body = String::from_utf8_lossy(&body);
        if !(200..300).contains(&status) {
            bail!(
                "HTTP {status}: {}",
                body.chars().take(200).collect::<String>()
            );
        }
        Ok((status, session, crate::rpc::messages_of(sse, &body)))
    }
}

/// One token holder's MCP session.
struct Session {
    conn: Conn,
    token: String,
    id: Option<String>,
    next: u64,
}

impl Session {
    async fn open(server: SocketAddr, local: IpAddr, token: &str) -> anyhow::Result<Session> {
        let mut s = Session {
            conn: Conn::new(server, local),
            token: token.to_string(),
            id: None,
            next: 1,
        };
        s.request("initialize", initialize_params()).await?;
        ensure!(s.id.is_some(), "initialize gave no Mcp-Session-Id");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        s.conn.post(&s.token, s.id.as_deref(), &note).await?;
        Ok(s)
    }

    /// The same session on a second connection (for the long poll).
    fn second_connection(&self) -> Session {
        Session {
            conn: Conn::new(self.conn.server, self.conn.local),
            token: self.token.clone(),
            id: self.id.clone(),
            next: 1_000_000,
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next;
        self.next += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (_, session, messages) = self
            .conn
            .post(&self.token, self.id.as_deref(), &message)
            .await?;
        if self.id.is_none() {
            self.id = session;
        }
        let answer = messages
            .into_iter()
            .find(|m| m["id"] == id)
            .with_context(|| format!("{method}: no answer"))?;
        if let Some(error) = answer.get("error") {
            bail!("{method}: JSON-RPC error {error}");
        }
        Ok(answer["result"].clone())
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> anyhow::Result<Value> {
        let result = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await?;
        crate::rpc::tool_content(tool, result)
    }
}

/// The loopback source address of holder `i` (127.0.1.1, 127.0.1.2, …).
fn source(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(
        127,
        0,
        1 + (i / 250) as u8,
        1 + (i % 250) as u8,
    ))
}

/// Retry `initialize` until the server answers (60 s at most).
async fn wait_listening(addr: SocketAddr, token: &str) -> anyhow::Result<Session> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match Session::open(addr, source(250 * 3), token).await {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() > deadline => {
                return Err(e.context(format!("no MCP server answered at {addr}")));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// Start the run the long polls wait on: refsci's regression, delayed past the test.
async fn start_long_run(
    addr: SocketAddr,
    token: &str,
    duration: Duration,
) -> anyhow::Result<String> {
    let mut s = wait_listening(addr, token).await?;
    let started = s
        .call(
            "start_analysis",
            json!({
                "workflow": "regression",
                "dataset": "data.csv",
                "parameters": {"target": "y", "sleep_s": duration.as_secs() + 120}
            }),
        )
        .await?;
    started["run_id"]
        .as_str()
        .map(String::from)
        .with_context(|| format!("start_analysis gave no run_id: {started}"))
}

async fn cancel(addr: SocketAddr, token: &str, run_id: &str) -> anyhow::Result<()> {
    let mut s = wait_listening(addr, token).await?;
    s.call("cancel_run", json!({"run_id": run_id, "confirm": true}))
        .await?;
    Ok(())
}

/// Samples of one holder: per call kind, the milliseconds of each success.
#[derive(Default)]
struct Tally {
    status: Vec<f64>,
    list: Vec<f64>,
    validate: Vec<f64>,
    read: Vec<f64>,
    errors: Vec<String>,
    error_count: usize,
    long_polls: usize,
    long_poll_errors: usize,
}

/// Run the load against one server: every holder's session opened first, then the clock.
async fn load(
    label: &str,
    addr: SocketAddr,
    pid: u32,
    secrets: &[String],
    history: &[String],
    long_run: &str,
    duration: Duration,
) -> anyhow::Result<LoadResult> {
    let mut sessions = Vec::with_capacity(secrets.len());
    for (i, token) in secrets.iter().enumerate() {
        let s = Session::open(addr, source(i), token)
            .await
            .with_context(|| format!("{label}: holder {i} could not open a session"))?;
        sessions.push(s);
    }
    let tally = Arc::new(Mutex::new(Tally::default()));
    let peak = Arc::new(Mutex::new(0f64));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, stop) = (peak.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                if let Some(r) = rss_mib(pid) {
                    let mut p = peak.lock().expect("peak");
                    *p = p.max(r.rss);
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        })
    };
    let t0 = Instant::now();
    let deadline = tokio::time::Instant::now() + duration;
    let mut tasks = Vec::new();
    let mut polls = Vec::new();
    for (i, mut s) in sessions.into_iter().enumerate() {
        let mut poller = s.second_connection();
        let (tally_a, tally_b) = (tally.clone(), tally.clone());
        let poll_run = long_run.to_string();
        polls.push(tokio::spawn(async move {
            loop {
                let r = poller
                    .call(
                        "get_run_result",
                        json!({"run_id": poll_run, "wait_s": LONG_POLL_S}),
                    )
                    .await;
                let failed = {
                    let mut t = tally_b.lock().expect("tally");
                    match r {
                        Ok(_) => {
                            t.long_polls += 1;
                            false
                        }
                        Err(e) => {
                            t.long_poll_errors += 1;
                            if t.errors.len() < ERROR_SAMPLES {
                                t.errors.push(format!("long poll: {e:#}"));
                            }
                            true
                        }
                    }
                };
                if failed {
                    // A refused poll is not retried in a tight loop.
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }));
        let history: Vec<String> = history.to_vec();
        let long_run = long_run.to_string();
        tasks.push(tokio::spawn(async move {
            let interval = Duration::from_secs_f64(1.0 / RATE_PER_HOLDER);
            // Holders start spread over one interval, not all in the same millisecond.
            let mut next = tokio::time::Instant::now() + interval.mul_f64(i as f64 / 64.0 % 1.0);
            let mut k = i;
            while next < deadline {
                tokio::time::sleep_until(next).await;
                next = (next + interval).max(tokio::time::Instant::now());
                let run = if k % 4 == 0 {
                    long_run.clone()
                } else {
                    history[(k * 7919) % history.len()].clone()
                };
                let sent = Instant::now();
                let (kind, r) = match k % 6 {
                    0 | 2 | 4 => (0, s.call("get_run_status", json!({"run_id": run})).await),
                    1 => (1, s.call("list_runs", json!({})).await),
                    3 => (
                        2,
                        s.call(
                            "validate_analysis",
                            json!({
                                "workflow": "regression",
                                "dataset": "data.csv",
                                "parameters": {"target": "y"}
                            }),
                        )
                        .await,
                    ),
                    _ => (
                        3,
                        s.request(
                            "resources/read",
                            json!({"uri": format!("scimcp://runs/{run}/result")}),
                        )
                        .await
                        .and_then(|v| {
                            ensure!(
                                v["contents"].as_array().is_some_and(|c| !c.is_empty()),
                                "resources/read gave no contents"
                            );
                            Ok(v)
                        }),
                    ),
                };
                let took = ms(sent.elapsed());
                k += 1;
                let mut t = tally_a.lock().expect("tally");
                match r {
                    Ok(_) => match kind {
                        0 => t.status.push(took),
                        1 => t.list.push(took),
                        2 => t.validate.push(took),
                        _ => t.read.push(took),
                    },
                    Err(e) => {
                        t.error_count += 1;
                        if t.errors.len() < ERROR_SAMPLES {
                            t.errors.push(format!("{e:#}"));
                        }
                    }
                }
            }
        }));
    }
    for task in tasks {
        task.await?;
    }
    let elapsed = t0.elapsed().as_secs_f64();
    for p in polls {
        p.abort();
    }
    stop.store(true, Ordering::SeqCst);
    let _ = sampler.await;
    let t = tally.lock().expect("tally");
    let ok = t.status.len() + t.list.len() + t.validate.len() + t.read.len();
    let peak_rss = *peak.lock().expect("peak");
    Ok(LoadResult {
        server: label.to_string(),
        requests: ok + t.error_count,
        errors: t.error_count,
        error_samples: t.errors.clone(),
        throughput_rps: round(ok as f64 / elapsed, 1),
        offered_rps: round(secrets.len() as f64 * RATE_PER_HOLDER, 1),
        get_run_status_ms: Summary::of(&t.status),
        list_runs_ms: Summary::of(&t.list),
        validate_analysis_ms: Summary::of(&t.validate),
        resources_read_ms: Summary::of(&t.read),
        long_polls: t.long_polls,
        long_poll_errors: t.long_poll_errors,
        peak_rss_mib: round(peak_rss, 1),
    })
}
