//! A test harness: a private `SCIMCP_HOME`, a start directory holding the exported
//! built-in datasets, and an MCP session with a real `scimcp serve` child process.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use scimcp_client::McpSession;
use serde_json::Value;

/// One server under test, with its private directories.
pub struct Harness {
    root: Arc<tempfile::TempDir>,
    /// The server's start directory; `data/` holds the exported datasets.
    pub cwd: PathBuf,
    /// `SCIMCP_HOME` of the server.
    pub home: PathBuf,
    pub python: PathBuf,
    args: Vec<String>,
    pub session: McpSession,
}

/// What to start.
#[derive(Debug, Clone)]
pub struct Options {
    /// Adapter name or manifest path.
    pub adapter: String,
    /// Pass `--python` with the development runtime.
    pub python: bool,
    /// Export refsci's datasets into `<cwd>/data`.
    pub datasets: bool,
    pub extra_args: Vec<String>,
    /// Start the server in this directory instead of the harness's own.
    pub start_dir: Option<PathBuf>,
    /// Extra environment variables for the server (e.g. a `HOME`).
    pub env: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            adapter: "refsci".into(),
            python: true,
            datasets: true,
            extra_args: Vec::new(),
            start_dir: None,
            env: Vec::new(),
        }
    }
}

fn envs(home: &Path) -> Vec<(String, String)> {
    vec![
        ("SCIMCP_HOME".to_string(), home.display().to_string()),
        ("SCIMCP_LOG".to_string(), "warn".to_string()),
    ]
}

impl Harness {
    /// Start a server on the embedded refsci adapter with the development runtime.
    pub async fn start() -> anyhow::Result<Harness> {
        Self::start_opts(Options::default()).await
    }

    /// Start a server; `with_python` false starts it with no scientific runtime.
    pub async fn start_with(with_python: bool, extra_args: &[&str]) -> anyhow::Result<Harness> {
        Self::start_opts(Options {
            python: with_python,
            extra_args: extra_args.iter().map(|s| s.to_string()).collect(),
            ..Options::default()
        })
        .await
    }

    /// Start a server as `opts` says.
    pub async fn start_opts(opts: Options) -> anyhow::Result<Harness> {
        let root = tempfile::Builder::new().prefix("scimcp e2e ").tempdir()?;
        let cwd = root.path().join("Données de départ");
        let home = root.path().join("home");
        fs_err::create_dir_all(cwd.join("data"))?;
        fs_err::create_dir_all(&home)?;
        let python = crate::dev_python()?;
        if opts.datasets {
            crate::export_datasets(&python, &cwd.join("data"))?;
        }
        let mut args = vec![
            "serve".to_string(),
            "--adapter".into(),
            opts.adapter.clone(),
        ];
        if opts.python {
            args.push("--python".into());
            args.push(python.display().to_string());
        }
        args.extend(opts.extra_args);
        let mut env = envs(&home);
        env.extend(opts.env);
        let start_dir = opts.start_dir.unwrap_or_else(|| cwd.clone());
        let session =
            McpSession::spawn(&crate::sibling_binary("scimcp")?, &args, &env, &start_dir).await?;
        Ok(Harness {
            root: Arc::new(root),
            cwd,
            home,
            python,
            args,
            session,
        })
    }

    /// A second server process with the same start directory, state directory and
    /// arguments (as two clients of one scientist would run).
    pub async fn another_server(&self) -> anyhow::Result<McpSession> {
        McpSession::spawn(
            &crate::sibling_binary("scimcp")?,
            &self.args,
            &envs(&self.home),
            &self.cwd,
        )
        .await
        .map_err(Into::into)
    }

    /// Replace this harness's session with a fresh server process on the same directories.
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        self.session = self.another_server().await?;
        Ok(())
    }

    /// End the session the way a quitting client does (its input closes; the server exits),
    /// keeping the directories; returns the runs directory and what keeps it alive.
    pub async fn hang_up(self) -> anyhow::Result<(PathBuf, Arc<tempfile::TempDir>)> {
        let runs = self.runs_dir();
        let Harness { root, session, .. } = self;
        session.close().await?;
        Ok((runs, root))
    }

    /// A directory outside the server's allowed roots, kept as long as the harness.
    pub fn outside_dir(&self) -> PathBuf {
        let dir = self.root.path().join("outside");
        fs_err::create_dir_all(&dir).expect("create outside dir");
        dir
    }

    /// Call a tool and return its structured success, failing with the server's stderr.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        ok_on(&self.session, tool, args).await
    }

    /// Call a tool that must fail and return its error envelope.
    pub async fn err(&self, tool: &str, args: Value) -> Value {
        let outcome = self
            .session
            .call(tool, args)
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e:#}"));
        outcome.err().unwrap_or_else(|e| panic!("{tool}: {e:#}"))
    }

    /// The runs directory of this server.
    pub fn runs_dir(&self) -> PathBuf {
        self.home.join("runs")
    }

    /// Run `python -m refsci ARGS` directly in the start directory (the scientist's way),
    /// with the numerical threading the refsci adapter fixes for its runs (one thread), so
    /// both ways sum in the same order.
    pub fn direct(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new(&self.python)
            .args(["-m", "refsci"])
            .args(args)
            .current_dir(&self.cwd)
            .envs(
                scimcp_core::run_env::NUMERIC_THREAD_VARS
                    .iter()
                    .map(|name| (*name, "1")),
            )
            .output()
            .expect("python runs")
    }
}

/// Call a tool on `session` that must fail, and return its error envelope.
pub async fn err_on(session: &McpSession, tool: &str, args: Value) -> Value {
    let outcome = session
        .call(tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e:#}"));
    outcome.err().unwrap_or_else(|e| panic!("{tool}: {e:#}"))
}

/// Call a tool on `session` and return its structured success.
pub async fn ok_on(session: &McpSession, tool: &str, args: Value) -> Value {
    let outcome = session
        .call(tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e:#}\nserver stderr:\n{}", session.stderr()));
    outcome
        .ok()
        .unwrap_or_else(|e| panic!("{tool}: {e:#}\nserver stderr:\n{}", session.stderr()))
}

/// Validate `request`, start it with the validation's id, and wait (up to `within`) for its
/// terminal result: the validation and the result.
pub async fn run_on(
    session: &McpSession,
    request: Value,
    within: std::time::Duration,
) -> (Value, Value) {
    let validation = ok_on(session, "validate_analysis", request.clone()).await;
    assert_eq!(validation["ready"], true, "{validation:#}");
    let mut start = request;
    start["validation_id"] = validation["validation_id"].clone();
    let started = ok_on(session, "start_analysis", start).await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        let out = ok_on(
            session,
            "get_run_result",
            serde_json::json!({"run_id": run_id, "wait_s": 30}),
        )
        .await;
        if out["terminal"] == true {
            return (validation, out["result"].clone());
        }
    }
    panic!("run {run_id} did not end within {within:?}");
}

/// Call `get_campaign_result` until the campaign is terminal (up to `within`); its last answer.
pub async fn campaign_result_on(
    session: &McpSession,
    campaign_id: &str,
    within: std::time::Duration,
) -> Value {
    let deadline = std::time::Instant::now() + within;
    loop {
        let r = ok_on(
            session,
            "get_campaign_result",
            serde_json::json!({"campaign_id": campaign_id, "wait_s": 15}),
        )
        .await;
        if r["terminal"] == true || std::time::Instant::now() >= deadline {
            return r;
        }
    }
}

/// Write the misbehaving fixture adapter into `dir` with these `[limits]` lines, and
/// return the manifest's path.
pub fn fixture_adapter(dir: &Path, limits: &str) -> anyhow::Result<PathBuf> {
    let exe = crate::sibling_binary("scimcp-fixture-cli")?;
    fs_err::create_dir_all(dir)?;
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "flood_bytes": {"type": "integer", "minimum": 0},
            "sleep_s": {"type": "number", "minimum": 0},
            "files": {"type": "integer", "minimum": 0},
            "exit_code": {"type": "integer", "minimum": 0, "maximum": 255},
            "skip_artifact": {"type": "boolean"},
            "write_outside": {"type": "boolean"},
            "spawn_child": {"type": "boolean"}
        }
    });
    fs_err::write(
        dir.join("misbehave.json"),
        serde_json::to_string_pretty(&schema)?,
    )?;
    let manifest = format!(
        r#"schema_version = 1
name = "fixture"
version = "0.1.0"
summary = "A misbehaving CLI for the server's hardening tests."

[runtime]
kind = "executable"
executable = {exe}

[limits]
{limits}

[[workflow]]
id = "misbehave"
summary = "Do what the parameters say, however badly."
parameters = "misbehave.json"
argv = ["--data", "{{dataset}}", "--out", "{{output_dir}}"]
options = [
  {{ param = "flood_bytes", flag = "--flood-bytes" }},
  {{ param = "sleep_s", flag = "--sleep-s" }},
  {{ param = "files", flag = "--files" }},
  {{ param = "exit_code", flag = "--exit-code" }},
  {{ param = "skip_artifact", flag = "--skip-artifact", format = "switch" }},
  {{ param = "write_outside", flag = "--write-outside", format = "switch" }},
  {{ param = "spawn_child", flag = "--spawn-child", format = "switch" }},
]

[[workflow.artifact]]
id = "result"
path = "result.json"
media_type = "application/json"
json_keys = ["ok"]
"#,
        exe = toml::Value::String(exe.display().to_string()),
    );
    let path = dir.join("fixture.toml");
    fs_err::write(&path, manifest)?;
    Ok(path)
}

/// SHA-256 of every file under `dir`, keyed by `/`-separated relative path.
pub fn tree_hashes(dir: &Path) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d).expect("readable dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, scimcp_core::hash::sha256_file(&path).unwrap().0);
            }
        }
    }
    out
}
