//! What every measurement stands on: the built binaries, the two Python environments, a
//! scratch directory on the same disk as the repository, datasets, the trivial adapter and
//! run histories.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, ensure};
use serde_json::{Value, json};

use crate::rpc::{ServerSpec, StdioClient};

/// Paths of everything a measurement runs.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub repo: PathBuf,
    /// `target/release`.
    pub bin: PathBuf,
    /// A fresh scratch directory under `target/bench/` (same file system as the repository,
    /// so fsync costs what it costs for a real data directory).
    pub work: PathBuf,
    /// `bench/.venv/bin/python`: the Python MCP SDK and sigstore-python.
    pub peer_python: PathBuf,
    /// `.venv/bin/python`: refsci and its pinned requirements (scripts/dev-env.sh).
    pub dev_python: PathBuf,
    /// The scimcp binary measured (default `target/release/scimcp`).
    pub scimcp: PathBuf,
    /// The measured binary's own `tools/list` (its `tools` array), written for the peer to
    /// serve: tools added to scimcp then never make the two lists drift apart.
    pub peer_tools: PathBuf,
    /// How many tools that list holds.
    pub tool_count: usize,
}

/// The peer's committed copy of scimcp's tool list, for running it alone.
pub const PEER_TOOLS: &str = "bench/peers/tools.json";

/// Rows of the small regression dataset (`data.csv`).
pub const DATA_ROWS: usize = 1000;

impl Fixture {
    /// Check what `bench/run.sh` provides and make a fresh scratch directory.
    pub fn new(repo: &Path, scimcp: Option<&Path>) -> anyhow::Result<Fixture> {
        let repo = fs_err::canonicalize(repo)?;
        let bin = repo.join("target/release");
        let fixture = Fixture {
            scimcp: match scimcp {
                Some(p) => fs_err::canonicalize(p)?,
                None => bin.join("scimcp"),
            },
            work: repo.join("target/bench/work"),
            peer_python: repo.join("bench/.venv/bin/python"),
            dev_python: repo.join(".venv/bin/python"),
            peer_tools: repo.join("target/bench/work/tools.json"),
            tool_count: 0,
            bin,
            repo,
        };
        for exe in ["scimcp", "scimcp-bench-cli"] {
            ensure!(
                fixture.exe(exe).is_file(),
                "{} is not built: run bench/run.sh (it builds the release binaries)",
                fixture.exe(exe).display()
            );
        }
        if fixture.work.exists() {
            fs_err::remove_dir_all(&fixture.work)?;
        }
        fs_err::create_dir_all(&fixture.work)?;
        let mut fixture = fixture;
        fixture.tool_count = fixture.write_peer_tools()?;
        Ok(fixture)
    }

    /// Ask the measured scimcp for its `tools/list` and write the `tools` array to
    /// [`Fixture::peer_tools`]; returns how many tools it lists. Says so when the committed
    /// `bench/peers/tools.json` (for running the peer alone) is out of date.
    fn write_peer_tools(&self) -> anyhow::Result<usize> {
        let home = self.dir("home-tools")?;
        let cwd = self.start_dir("start-tools")?;
        let tools = StdioClient::list_tools(&self.scimcp("refsci", &home, &cwd, &[]))?;
        ensure!(!tools.is_empty(), "scimcp lists no tools");
        let mut bytes = serde_json::to_vec_pretty(&tools)?;
        bytes.push(b'\n');
        fs_err::write(&self.peer_tools, &bytes)?;
        let committed = self.repo.join(PEER_TOOLS);
        if fs_err::read(&committed).ok().as_deref() != Some(bytes.as_slice()) {
            eprintln!(
                "note: {PEER_TOOLS} differs from scimcp's tools/list ({} tools); the peer serves \
                 the live list in this run, and a full run rewrites the file",
                tools.len()
            );
        }
        Ok(tools.len())
    }

    /// A release binary.
    pub fn exe(&self, name: &str) -> PathBuf {
        if name == "scimcp" {
            return self.scimcp.clone();
        }
        self.bin.join(name)
    }

    /// A new directory in the scratch space.
    pub fn dir(&self, name: &str) -> anyhow::Result<PathBuf> {
        let dir = self.work.join(name);
        fs_err::create_dir_all(&dir)?;
        Ok(dir)
    }

    /// `scimcp serve` on `adapter` with `home` as `SCIMCP_HOME`, started in `cwd`.
    pub fn scimcp(&self, adapter: &str, home: &Path, cwd: &Path, extra: &[&str]) -> ServerSpec {
        let mut args = vec![
            "serve".to_string(),
            "--adapter".into(),
            adapter.into(),
            "--python".into(),
            self.dev_python.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        ServerSpec {
            label: "scimcp",
            program: self.exe("scimcp"),
            args,
            env: vec![
                ("SCIMCP_HOME".into(), home.display().to_string()),
                ("SCIMCP_LOG".into(), "warn".into()),
            ],
            cwd: cwd.to_path_buf(),
            stderr: self.work.join("scimcp.stderr.log"),
        }
    }

    /// The Python MCP SDK peer with `home` as `SCIMCP_HOME`, started in `cwd`.
    pub fn peer(&self, home: &Path, cwd: &Path, extra: &[&str]) -> ServerSpec {
        let mut args = vec![
            self.repo
                .join("bench/peers/python_sdk_server.py")
                .display()
                .to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        ServerSpec {
            label: "python-sdk",
            program: self.peer_python.clone(),
            args,
            env: vec![
                ("SCIMCP_HOME".into(), home.display().to_string()),
                (
                    "SCIMCP_PYTHON".into(),
                    self.dev_python.display().to_string(),
                ),
                (
                    "SCIMCP_BENCH_TOOLS".into(),
                    self.peer_tools.display().to_string(),
                ),
            ],
            cwd: cwd.to_path_buf(),
            stderr: self.work.join("peer.stderr.log"),
        }
    }

    /// A start directory holding `data.csv` ([`DATA_ROWS`] rows: x1..x5 and y).
    pub fn start_dir(&self, name: &str) -> anyhow::Result<PathBuf> {
        let dir = self.dir(name)?;
        fs_err::write(dir.join("data.csv"), regression_csv(DATA_ROWS))?;
        Ok(dir)
    }

    /// Write the trivial adapter (the `scimcp-bench-cli` program) and return its manifest.
    pub fn trivial_adapter(&self) -> anyhow::Result<PathBuf> {
        let dir = self.dir("trivial-adapter")?;
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "files": {"type": "integer", "minimum": 0, "maximum": 511},
                "sleep_s": {"type": "number", "minimum": 0, "maximum": 60},
                "seed": {"type": "integer", "minimum": 0}
            }
        });
        fs_err::write(
            dir.join("touch.json"),
            serde_json::to_string_pretty(&schema)?,
        )?;
        let manifest = format!(
            r#"schema_version = 1
name = "bench-trivial"
version = "0.1.0"
summary = "The benchmark's trivial CLI: writes its artifacts and exits."

[runtime]
kind = "executable"
executable = {exe}

[[workflow]]
id = "touch"
summary = "Write metrics.json (and more small files when asked) and exit."
parameters = "touch.json"
argv = ["--data", "{{dataset}}", "--out", "{{output_dir}}"]
options = [
  {{ param = "files", flag = "--files" }},
  {{ param = "sleep_s", flag = "--sleep-s" }},
  {{ param = "seed", flag = "--seed" }},
]

[[workflow.artifact]]
id = "metrics"
path = "metrics.json"
media_type = "application/json"
json_keys = ["ok"]
"#,
            exe = toml_string(&self.exe("scimcp-bench-cli").display().to_string()),
        );
        let path = dir.join("trivial.toml");
        fs_err::write(&path, manifest)?;
        Ok(path)
    }

    /// A runs history of `count` runs in `home`: one real run of the trivial CLI through
    /// `scimcp serve`, then its record files copied `count - 1` times under new run ids and
    /// timestamps (one second apart, going back from now).
    pub fn seed_history(&self, home: &Path, count: usize) -> anyhow::Result<()> {
        let adapter = self.trivial_adapter()?;
        let cwd = self.start_dir("seed-start")?;
        let spec = self.scimcp(&adapter.display().to_string(), home, &cwd, &[]);
        let mut client = StdioClient::connect(&spec)?;
        let args = json!({"workflow": "touch", "dataset": "data.csv", "parameters": {}});
        let started = client.call("start_analysis", args)?;
        let run_id = started["run_id"].as_str().context("no run_id")?.to_string();
        let result = client.call("get_run_result", json!({"run_id": run_id, "wait_s": 60}))?;
        ensure!(
            result["state"] == "succeeded",
            "the seed run did not succeed: {result}"
        );
        client.close(Duration::from_secs(10))?;
        let runs = home.join("runs");
        let template = runs.join(&run_id);
        let records: Vec<(String, Vec<u8>)> = fs_err::read_dir(&template)?
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                fs_err::read(e.path()).map(|bytes| (name, bytes))
            })
            .collect::<Result<_, _>>()?;
        let status: Value = serde_json::from_slice(
            &records
                .iter()
                .find(|(n, _)| n == "status.json")
                .context("the seed run has no status.json")?
                .1,
        )?;
        let now = jiff::Timestamp::now();
        for i in 1..count {
            let id = format!("run-{:016x}", 0x5eed_0000_0000_0000u64 + i as u64);
            let dir = runs.join(&id);
            fs_err::create_dir_all(dir.join("work/output"))?;
            let at = now - jiff::SignedDuration::from_secs(i as i64);
            for (name, bytes) in &records {
                let bytes = if name == "status.json" {
                    let mut s = status.clone();
                    s["run_id"] = json!(id);
                    s["created_at"] = json!(at.to_string());
                    s["started_at"] = json!(at.to_string());
                    s["ended_at"] = json!(at.to_string());
                    serde_json::to_vec_pretty(&s)?
                } else {
                    bytes.clone()
                };
                fs_err::write(dir.join(name), bytes)?;
            }
        }
        Ok(())
    }
}

/// A TOML basic string.
pub fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A deterministic regression table: five features and a target `y`.
pub fn regression_csv(rows: usize) -> String {
    let mut rng = Lcg(0x2545_f491_4f6c_dd1d);
    let mut out = String::from("x1,x2,x3,x4,x5,y\n");
    for _ in 0..rows {
        let x: Vec<f64> = (0..5).map(|_| rng.unit() * 10.0).collect();
        let y = 3.0 * x[0] - 2.0 * x[1] + 0.5 * x[2] + x[3] * x[4] * 0.1 + rng.unit();
        out.push_str(&format!(
            "{:.4},{:.4},{:.4},{:.4},{:.4},{:.4}\n",
            x[0], x[1], x[2], x[3], x[4], y
        ));
    }
    out
}

/// A CSV of exactly `bytes` bytes (a header, then numeric rows, the last one padded).
pub fn write_large_csv(path: &Path, bytes: u64) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut file = std::io::BufWriter::with_capacity(1 << 20, fs_err::File::create(path)?);
    let header = b"a,b,c,d\n";
    file.write_all(header)?;
    let mut written = header.len() as u64;
    let mut rng = Lcg(7);
    let mut line = String::new();
    while written < bytes {
        line.clear();
        let remaining = bytes - written;
        if remaining < 64 {
            line.push_str(&"0".repeat(remaining as usize - 1));
            line.push('\n');
        } else {
            line.push_str(&format!(
                "{},{},{},{}\n",
                rng.next() % 100_000,
                rng.next() % 100_000,
                rng.next() % 100_000,
                rng.next() % 100_000
            ));
        }
        file.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    file.flush()?;
    Ok(())
}

/// Write `bytes` pseudo-random bytes (incompressible, so no file system shortcut).
pub fn write_random_file(path: &Path, bytes: u64) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut file = fs_err::File::create(path)?;
    let mut rng = Lcg(42);
    let mut block = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        for chunk in block.chunks_exact_mut(8) {
            chunk.copy_from_slice(&rng.next().to_le_bytes());
        }
        let n = left.min(block.len() as u64) as usize;
        file.write_all(&block[..n])?;
        left -= n as u64;
    }
    file.sync_all()?;
    Ok(())
}

/// A 64-bit linear congruential generator (Knuth's MMIX constants): reproducible data
/// without a dependency.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 ^ (self.0 >> 29)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
