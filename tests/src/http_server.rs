//! A real `scimcp serve --transport http` for the tests: a private `SCIMCP_HOME` and start
//! directory (with refsci's datasets), tokens made with the real `scimcp token add`, the
//! listening port read from the server's log, and the process killed on drop.

use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A private home and start directory, shared by a server and the commands around it.
pub struct TestRoot {
    root: tempfile::TempDir,
    /// The server's start directory; `data/` holds refsci's datasets.
    pub cwd: PathBuf,
    /// `SCIMCP_HOME`.
    pub home: PathBuf,
    pub python: PathBuf,
}

impl TestRoot {
    pub fn new() -> anyhow::Result<TestRoot> {
        let root = tempfile::Builder::new()
            .prefix("scimcp remote ")
            .tempdir()?;
        let cwd = root.path().join("Données");
        let home = root.path().join("home");
        fs_err::create_dir_all(cwd.join("data"))?;
        let python = crate::dev_python()?;
        crate::export_datasets(&python, &cwd.join("data"))?;
        Ok(TestRoot {
            root,
            cwd,
            home,
            python,
        })
    }

    /// A path inside the root (not a data directory).
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    /// `scimcp ARGS` with this root's `SCIMCP_HOME`, in its start directory.
    pub fn scimcp(&self, args: &[&str]) -> anyhow::Result<std::process::Output> {
        Ok(Command::new(crate::sibling_binary("scimcp")?)
            .args(args)
            .env("SCIMCP_HOME", &self.home)
            .env_remove("SCIMCP_TOKEN")
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .output()?)
    }

    /// Add a token with the real `scimcp token add NAME`; its secret.
    pub fn add_token(&self, name: &str) -> anyhow::Result<String> {
        let out = self.scimcp(&["token", "add", name])?;
        anyhow::ensure!(out.status.success(), "token add {name}: {out:?}");
        Ok(String::from_utf8(out.stdout)?.trim().to_string())
    }

    /// Revoke a token with the real `scimcp token revoke NAME`.
    pub fn revoke_token(&self, name: &str) -> anyhow::Result<()> {
        let out = self.scimcp(&["token", "revoke", name])?;
        anyhow::ensure!(out.status.success(), "token revoke {name}: {out:?}");
        Ok(())
    }

    /// The runs directory.
    pub fn runs_dir(&self) -> PathBuf {
        self.home.join("runs")
    }

    /// The run directories that exist now.
    pub fn run_dirs(&self) -> Vec<String> {
        let Ok(entries) = fs_err::read_dir(self.runs_dir()) else {
            return Vec::new();
        };
        let mut runs: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("run-"))
            .collect();
        runs.sort();
        runs
    }

    /// The TLS test certificate (for `scimcp.test` and 127.0.0.1), its key (copied private)
    /// and the CA that signed it.
    pub fn tls_files(&self) -> anyhow::Result<(PathBuf, PathBuf, Vec<u8>)> {
        let fixtures = crate::workspace_root().join("tests/fixtures/tls");
        let key = self.path("server.key");
        fs_err::copy(fixtures.join("server.key"), &key)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs_err::set_permissions(&key, std::fs::Permissions::from_mode(0o600))?;
        }
        Ok((
            fixtures.join("server.pem"),
            key,
            fs_err::read(fixtures.join("ca.pem"))?,
        ))
    }
}

/// A running `scimcp serve --transport http`, killed on drop.
pub struct HttpServer {
    pub child: Child,
    /// The port it listens on.
    pub port: u16,
    /// `http` or `https`.
    pub scheme: String,
    log: Arc<Mutex<String>>,
}

impl HttpServer {
    /// Start `scimcp serve --transport http --python … ARGS` in `root` with `env` added.
    pub fn start(root: &TestRoot, args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<Self> {
        let mut command = Command::new(crate::sibling_binary("scimcp")?);
        command
            .args(["serve", "--transport", "http", "--python"])
            .arg(&root.python)
            .args(args)
            .env("SCIMCP_HOME", &root.home)
            .env("SCIMCP_LOG", "info")
            .env_remove("SCIMCP_TOKEN")
            .current_dir(&root.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn()?;
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push_str(&format!("{line}\n"));
                if !sent
                    && line.contains("serving MCP over HTTP at ")
                    && let Some(url) = line.split_whitespace().last()
                {
                    let _ = tx.send(url.to_string());
                    sent = true;
                }
            }
        });
        let Ok(url) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            let status = child.wait()?;
            std::thread::sleep(Duration::from_millis(200));
            anyhow::bail!(
                "the server never said where it listens ({status}):\n{}",
                log.lock().unwrap()
            );
        };
        let (scheme, rest) = url.split_once("://").unwrap_or(("http", &url));
        let authority = rest.trim_end_matches("/mcp");
        let port = authority
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .ok_or_else(|| anyhow::anyhow!("no port in {url}"))?;
        Ok(HttpServer {
            child,
            port,
            scheme: scheme.to_string(),
            log,
        })
    }

    /// Everything the server logged so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Peak resident memory (`VmHWM`) of the server process, in KiB (Linux).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = fs_err::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An IPv4 address of this machine that is not a loopback address (an interface's own
/// address: connecting to it never leaves the machine), from the kernel's routing tables
/// (`/proc/net/fib_trie`, Linux) or `hostname -I`.
pub fn non_loopback_ipv4() -> Option<Ipv4Addr> {
    let usable = |ip: &Ipv4Addr| !ip.is_loopback() && !ip.is_unspecified() && !ip.is_multicast();
    if let Ok(trie) = fs_err::read_to_string("/proc/net/fib_trie") {
        let mut last: Option<Ipv4Addr> = None;
        for line in trie.lines() {
            let line = line.trim();
            if let Some(ip) = line.strip_prefix("|-- ") {
                last = ip.trim().parse().ok();
            } else if line.contains("/32 host LOCAL")
                && let Some(ip) = last.filter(usable)
            {
                return Some(ip);
            }
        }
    }
    let out = Command::new("hostname").arg("-I").output().ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|w| w.parse::<Ipv4Addr>().ok())
        .find(usable)
}

/// `address:port` for connecting to a server bound to every address.
pub fn socket(ip: Ipv4Addr, port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(ip), port)
}

/// Every process descended from `pid` (Linux, from `/proc`).
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = fs_err::read_dir("/proc") {
        for entry in entries.flatten() {
            let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = fs_err::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
            let Some(after) = stat.rsplit_once(')').map(|(_, a)| a) else {
                continue;
            };
            if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
                parent_of.push((child, ppid));
            }
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
}

/// True when `path` holds a run directory's files.
pub fn is_run_dir(path: &Path) -> bool {
    path.join("status.json").is_file()
}
