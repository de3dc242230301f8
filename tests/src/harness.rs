//! A test harness: a private `SCIMCP_HOME`, a start directory holding the exported
//! built-in datasets, and an MCP session with a real `scimcp serve` child process.

use std::path::{Path, PathBuf};

use scimcp_parity::client::McpSession;
use serde_json::Value;

/// One server under test, with its private directories.
pub struct Harness {
    _root: tempfile::TempDir,
    /// The server's start directory; `data/` holds the exported datasets.
    pub cwd: PathBuf,
    /// `SCIMCP_HOME` of the server.
    pub home: PathBuf,
    pub python: PathBuf,
    pub session: McpSession,
}

impl Harness {
    /// Start a server on the embedded refsci adapter with the development runtime.
    pub async fn start() -> anyhow::Result<Harness> {
        Self::start_with(true, &[]).await
    }

    /// Start a server; `with_python` false starts it with no scientific runtime.
    pub async fn start_with(with_python: bool, extra_args: &[&str]) -> anyhow::Result<Harness> {
        let root = tempfile::Builder::new().prefix("scimcp e2e ").tempdir()?;
        let cwd = root.path().join("Données de départ");
        let home = root.path().join("home");
        fs_err::create_dir_all(cwd.join("data"))?;
        fs_err::create_dir_all(&home)?;
        let python = crate::dev_python()?;
        crate::export_datasets(&python, &cwd.join("data"))?;
        let scimcp = crate::sibling_binary("scimcp")?;
        let mut args = vec!["serve".to_string(), "--adapter".into(), "refsci".into()];
        if with_python {
            args.push("--python".into());
            args.push(python.display().to_string());
        }
        args.extend(extra_args.iter().map(|s| s.to_string()));
        let envs = vec![
            ("SCIMCP_HOME".to_string(), home.display().to_string()),
            ("SCIMCP_LOG".to_string(), "warn".to_string()),
        ];
        let session = McpSession::spawn(&scimcp, &args, &envs, &cwd).await?;
        Ok(Harness {
            _root: root,
            cwd,
            home,
            python,
            session,
        })
    }

    /// Call a tool and return its structured success, failing with the server's stderr.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let outcome =
            self.session.call(tool, args).await.unwrap_or_else(|e| {
                panic!("{tool}: {e:#}\nserver stderr:\n{}", self.session.stderr())
            });
        outcome
            .ok()
            .unwrap_or_else(|e| panic!("{tool}: {e:#}\nserver stderr:\n{}", self.session.stderr()))
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

    /// Run `python -m refsci ARGS` directly in the start directory (the scientist's way).
    pub fn direct(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new(&self.python)
            .args(["-m", "refsci"])
            .args(args)
            .current_dir(&self.cwd)
            .output()
            .expect("python runs")
    }
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
