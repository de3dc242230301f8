//! Per-call latency of `get_capabilities`, `validate_analysis` and `list_runs` (with 2,000
//! runs in history) and of a bare `ping`, over stdio and Streamable HTTP, against the
//! Python SDK peer: one long-lived server of each, calls interleaved round by round.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, ensure};
use serde::Serialize;
use serde_json::{Value, json};

use crate::fixture::Fixture;
use crate::rpc::{HttpClient, ServerSpec, StdioClient, free_port, tool_content};
use crate::stats::{Summary, ms};

/// One tool over one transport, both servers.
#[derive(Debug, Serialize)]
pub struct CallLatency {
    pub transport: String,
    pub call: String,
    pub scimcp_ms: Summary,
    pub peer_ms: Summary,
    /// Peer median / scimcp median.
    pub speedup_median: f64,
    /// Peer p99 / scimcp p99.
    pub speedup_p99: f64,
}

/// The calls timed, with their arguments (`None`: a `ping` request, not a tool).
fn calls() -> Vec<(&'static str, Option<Value>)> {
    vec![
        ("ping", None),
        ("get_capabilities", Some(json!({}))),
        (
            "validate_analysis",
            Some(json!({
                "workflow": "regression",
                "dataset": "data.csv",
                "parameters": {"target": "y", "model": "ridge", "params": {"alpha": 0.5}}
            })),
        ),
        ("list_runs", Some(json!({}))),
    ]
}

/// Either transport, one call at a time.
trait Caller {
    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value>;
}

impl Caller for StdioClient {
    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        StdioClient::request(self, method, params)
    }
}

impl Caller for HttpClient {
    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        HttpClient::request(self, method, params)
    }
}

fn one(c: &mut dyn Caller, call: &str, args: &Option<Value>) -> anyhow::Result<(Duration, Value)> {
    let t0 = Instant::now();
    let out = match args {
        None => c.request("ping", json!({}))?,
        Some(a) => tool_content(
            call,
            c.request("tools/call", json!({"name": call, "arguments": a}))?,
        )?,
    };
    Ok((t0.elapsed(), out))
}

/// Tool names with their input schemas, as `tools/list` gives them.
fn tool_schemas(c: &mut dyn Caller) -> anyhow::Result<Vec<(String, Value)>> {
    let listed = c.request("tools/list", json!({}))?;
    Ok(listed["tools"]
        .as_array()
        .context("tools/list has no tools")?
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or_default().to_string(),
                t["inputSchema"].clone(),
            )
        })
        .collect())
}

/// Check that the answers are real (a validation id, the whole history counted).
fn check_answers(label: &str, c: &mut dyn Caller, history: usize) -> anyhow::Result<()> {
    let (_, v) = one(c, "validate_analysis", &calls()[2].1)?;
    ensure!(
        v["validation_id"]
            .as_str()
            .is_some_and(|s| s.starts_with("val-")),
        "{label}: validate_analysis gave no validation id: {v}"
    );
    let (_, runs) = one(c, "list_runs", &calls()[3].1)?;
    ensure!(
        runs["runs"]["total"] == history,
        "{label}: list_runs counted {} runs, not {history}",
        runs["runs"]["total"]
    );
    Ok(())
}

fn interleave(
    transport: &str,
    ours: &mut dyn Caller,
    theirs: &mut dyn Caller,
    rounds: usize,
) -> anyhow::Result<Vec<CallLatency>> {
    let calls = calls();
    let mut samples = vec![(Vec::new(), Vec::new()); calls.len()];
    // Warm-up.
    for (call, args) in &calls {
        for _ in 0..3 {
            one(ours, call, args)?;
            one(theirs, call, args)?;
        }
    }
    for round in 0..rounds {
        if round % 20 == 0 {
            eprint!("\r  {transport} calls {round}/{rounds}");
        }
        for (i, (call, args)) in calls.iter().enumerate() {
            if round % 2 == 0 {
                samples[i].0.push(one(ours, call, args)?.0);
                samples[i].1.push(one(theirs, call, args)?.0);
            } else {
                samples[i].1.push(one(theirs, call, args)?.0);
                samples[i].0.push(one(ours, call, args)?.0);
            }
        }
    }
    eprintln!("\r  {transport} calls {rounds}/{rounds}");
    Ok(calls
        .iter()
        .zip(samples)
        .map(|((call, _), (a, b))| {
            let (a, b) = (Summary::ms(&a), Summary::ms(&b));
            CallLatency {
                transport: transport.into(),
                call: call.to_string(),
                speedup_median: b.median / a.median,
                speedup_p99: b.p99 / a.p99,
                scimcp_ms: a,
                peer_ms: b,
            }
        })
        .collect())
}

/// A server child for the HTTP transport, killed on drop.
struct HttpServer(Child);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_http(spec: &ServerSpec) -> anyhow::Result<HttpServer> {
    let mut cmd = spec.command()?;
    cmd.stdin(Stdio::null()).stdout(Stdio::null());
    Ok(HttpServer(cmd.spawn().with_context(|| {
        format!("cannot start {}", spec.program.display())
    })?))
}

/// Measure both transports; `home` holds `history` runs.
pub fn run(
    fx: &Fixture,
    rounds: usize,
    home: &Path,
    history: usize,
) -> anyhow::Result<Vec<CallLatency>> {
    let cwd = fx.start_dir("start-calls")?;
    let mut out = Vec::new();
    {
        let mut ours = StdioClient::connect(&fx.scimcp("refsci", home, &cwd, &[]))?;
        let mut theirs = StdioClient::connect(&fx.peer(home, &cwd, &[]))?;
        ensure!(
            tool_schemas(&mut ours)? == tool_schemas(&mut theirs)?,
            "the peer's tool names or input schemas differ from scimcp's tools/list, which it \
             was handed (SCIMCP_BENCH_TOOLS): is bench/.venv's peer out of date?"
        );
        check_answers("scimcp", &mut ours, history)?;
        check_answers("python-sdk", &mut theirs, history)?;
        out.extend(interleave("stdio", &mut ours, &mut theirs, rounds)?);
        ours.close(Duration::from_secs(10))?;
        theirs.close(Duration::from_secs(10))?;
    }
    let (port_a, port_b) = (free_port()?, free_port()?);
    let listen = format!("127.0.0.1:{port_a}");
    let _a = spawn_http(&fx.scimcp(
        "refsci",
        home,
        &cwd,
        &["--transport", "http", "--listen", &listen],
    ))?;
    let _b = spawn_http(&fx.peer(home, &cwd, &["--http", &port_b.to_string()]))?;
    let wait = Duration::from_secs(60);
    let mut ours = HttpClient::connect(&format!("http://127.0.0.1:{port_a}/mcp"), wait)?;
    let mut theirs = HttpClient::connect(&format!("http://127.0.0.1:{port_b}/mcp"), wait)?;
    check_answers("scimcp over HTTP", &mut ours, history)?;
    check_answers("python-sdk over HTTP", &mut theirs, history)?;
    out.extend(interleave("http", &mut ours, &mut theirs, rounds)?);
    Ok(out)
}

/// Median round trip of a bare `ping` over stdio (the protocol's floor), in milliseconds.
pub fn ping_floor(client: &mut StdioClient, n: usize) -> anyhow::Result<f64> {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        client.request("ping", json!({}))?;
        v.push(ms(t0.elapsed()));
    }
    Ok(Summary::of(&v).median)
}
