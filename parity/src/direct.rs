//! The direct side: the scenario's command line, run the way a scientist runs it — the
//! interpreter, the literal arguments, answers typed on stdin — in a private directory.
//!
//! The environment is the caller's, plus the reproducibility settings a careful scientist
//! exports before a run ([`DIRECT_ENV`]: hash seed, unbuffered UTF-8 output, no user site,
//! no bytecode litter, a headless plotting backend, one thread for every numerical
//! library), the scenario's own `direct.env` and the gate's `--env`.
//! These values are restated here on purpose rather than imported from the server: if the
//! server's fixed environment ever changed results, parity must notice.
//!
//! The command runs as a [`scimcp_process::Child`], in a process group of its own like a job
//! started from a shell. For `expect = "cancelled"` it is stopped the way the server stops a
//! run, through the same [`Child::terminate`](scimcp_process::Child::terminate) and grace
//! ([`scimcp_process::TERMINATE_GRACE`]): once stdout shows the scenario's marker and
//! `after_s` more seconds have passed, SIGTERM goes to the command's whole process group, then
//! SIGKILL after the grace. A command past its timeout is ended the same way. What is compared
//! for such a run is its terminal facts (killed by SIGTERM, no exit code), that no process of
//! its group is left alive, and the files it had written by then (with any declared
//! normalization, e.g. of a pid file).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scimcp_process::{ChildCommand, TERMINATE_GRACE, exit_signal};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::error::SideError;
use crate::evidence::{self, Evidence};
use crate::scenario::{self, Scenario};

/// Variables set for the direct command on top of the inherited environment.
pub const DIRECT_ENV: &[(&str, &str)] = &[
    ("PYTHONHASHSEED", "0"),
    ("PYTHONUNBUFFERED", "1"),
    ("PYTHONIOENCODING", "utf-8"),
    ("PYTHONNOUSERSITE", "1"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("MPLBACKEND", "Agg"),
    ("OMP_NUM_THREADS", "1"),
    ("OPENBLAS_NUM_THREADS", "1"),
    ("MKL_NUM_THREADS", "1"),
    ("VECLIB_MAXIMUM_THREADS", "1"),
    ("NUMEXPR_NUM_THREADS", "1"),
];

/// How the direct command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited by itself with this code.
    Exited(i32),
    /// A signal ended it that we did not send.
    Signaled(i32),
    /// We stopped it (the cancelled scenario); the signal that ended it, if known.
    Stopped(Option<i32>),
    /// It exceeded the scenario's timeout and was killed.
    TimedOut,
}

/// Everything the direct side left behind.
#[derive(Debug)]
pub struct DirectRun {
    pub ending: Ending,
    pub out_dir: PathBuf,
    /// The working directory (`{work}`).
    pub work_dir: PathBuf,
    pub stderr: String,
    pub wall: Duration,
    /// For the cancelled scenario: no process of its group was alive afterwards.
    pub tree_ended: Option<bool>,
}

/// Paths the direct placeholders stand for.
#[derive(Debug, Clone)]
pub struct DirectPaths {
    pub python: PathBuf,
    pub datasets: PathBuf,
    pub work: PathBuf,
    /// The adapters directory: the request's input files are below it.
    pub adapters: PathBuf,
    /// The adapter's runtime is a Python interpreter (it gets [`DIRECT_ENV`]).
    pub python_runtime: bool,
    /// The gate's `--env` variables (the MCP side's server gets the same).
    pub extra_env: BTreeMap<String, String>,
}

/// The variables the direct command runs with on top of the inherited environment, in the
/// order they apply: [`DIRECT_ENV`] (for a Python runtime), the scenario's `direct.env`,
/// the gate's `--env`.
///
/// A scientist typing `vina …` or `mafft …` exports no Python or BLAS settings, and the
/// server sets none for an executable runtime unless its manifest says so; giving them to
/// one side only would be a difference of the gate's making.
pub fn environment(
    scenario: &Scenario,
    extra: &BTreeMap<String, String>,
    python_runtime: bool,
) -> BTreeMap<String, String> {
    let mut env = if python_runtime {
        environment_of_gate(&BTreeMap::new())
    } else {
        BTreeMap::new()
    };
    env.extend(scenario.direct.env.clone());
    env.extend(extra.clone());
    env
}

/// [`DIRECT_ENV`] and the gate's `--env`: what every direct command and the gate's own
/// runtime probes run with.
pub fn environment_of_gate(extra: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = DIRECT_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    env.extend(extra.clone());
    env
}

impl DirectPaths {
    pub fn out(&self) -> PathBuf {
        self.work.join("out")
    }

    fn values(&self) -> BTreeMap<&'static str, String> {
        BTreeMap::from([
            ("{python}", self.python.display().to_string()),
            ("{datasets}", self.datasets.display().to_string()),
            ("{work}", self.work.display().to_string()),
            ("{out}", self.out().display().to_string()),
            ("{adapters}", self.adapters.display().to_string()),
        ])
    }
}

/// Run the scenario's direct command.
pub async fn run(scenario: &Scenario, paths: &DirectPaths) -> Result<DirectRun, SideError> {
    let values = paths.values();
    let args: Vec<String> = scenario
        .direct
        .argv
        .iter()
        .map(|a| scenario::expand(a, &values))
        .collect();
    let program = PathBuf::from(scenario::expand(&scenario.direct.program, &values));
    let cwd = PathBuf::from(scenario::expand(&scenario.direct.cwd, &values));
    fs_err::create_dir_all(&paths.work)?;
    fs_err::create_dir_all(&cwd)?;
    // As the server's run has its output directory before the CLI starts, so does this one
    // (a CLI told `--out out/poses.pdbqt` does not create the directory).
    fs_err::create_dir_all(paths.out())?;
    for file in &scenario.direct.files {
        let target = paths.work.join(&file.path);
        if let Some(parent) = target.parent() {
            fs_err::create_dir_all(parent)?;
        }
        match &file.source {
            scenario::FileSource::Content(text) => {
                fs_err::write(&target, scenario::expand(text, &values))?
            }
            scenario::FileSource::Copy(from) => {
                fs_err::copy(scenario::expand(from, &values), &target)?;
            }
        }
    }
    let mut cmd = std::process::Command::new(&program);
    cmd.args(&args).current_dir(&cwd).envs(environment(
        scenario,
        &paths.extra_env,
        paths.python_runtime,
    ));
    // Its own process group (ChildCommand's default), like a job started from a shell, so
    // stopping it reaches every process it started.
    let command = ChildCommand::new(cmd)
        .stdin(if scenario.direct.stdin.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());

    let started = Instant::now();
    let mut child = command.spawn().map_err(|source| SideError::StartDirect {
        program: program.clone(),
        source,
    })?;
    if let Some(mut stdin) = child.take_stdin() {
        let answers: Vec<u8> = scenario
            .direct
            .stdin
            .iter()
            .flat_map(|a| format!("{}\n", scenario::expand(a, &values)).into_bytes())
            .collect();
        tokio::spawn(async move {
            // A CLI that exits without reading every answer closes the pipe: not our concern.
            let _ = stdin.write_all(&answers).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = Arc::new(Mutex::new(Vec::new()));
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let pumps = [
        child.take_stdout().map(|s| pump(s, Arc::clone(&stdout))),
        child.take_stderr().map(|s| pump(s, Arc::clone(&stderr))),
    ];

    let timeout = Duration::from_secs(scenario.timeout_s);
    let ending = match &scenario.cancel {
        None => match tokio::time::timeout(timeout, child.wait()).await {
            Ok(status) => ending_of(status?, false),
            Err(_) => {
                child.terminate(TERMINATE_GRACE).await;
                Ending::TimedOut
            }
        },
        Some(cancel) => {
            let marker = cancel.when_stdout_contains.as_bytes();
            let seen = async {
                loop {
                    if contains(&stdout.lock().expect("stdout buffer"), marker) {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            };
            tokio::select! {
                status = child.wait() => {
                    // It ended before it could be cancelled: that is a difference to report.
                    ending_of(status?, false)
                }
                () = seen => {
                    tokio::time::sleep(Duration::from_secs_f64(cancel.after_s)).await;
                    match child.terminate(TERMINATE_GRACE).await.status() {
                        Some(s) => ending_of(s, true),
                        None => Ending::Stopped(None),
                    }
                }
                () = tokio::time::sleep(timeout) => {
                    child.terminate(TERMINATE_GRACE).await;
                    Ending::TimedOut
                }
            }
        }
    };
    let wall = started.elapsed();
    let tree_ended = match &scenario.cancel {
        Some(_) => Some(crate::process::wait_group_gone(child.group()).await),
        None => None,
    };
    for p in pumps.into_iter().flatten() {
        let _ = tokio::time::timeout(Duration::from_secs(5), p).await;
    }
    let text = |b: &Arc<Mutex<Vec<u8>>>| {
        String::from_utf8_lossy(&b.lock().expect("output buffer")).into_owned()
    };
    // What a shell redirect would have left in the file: the stream's bytes, complete.
    for (target, stream) in [
        (&scenario.direct.stdout, &stdout),
        (&scenario.direct.stderr, &stderr),
    ] {
        if let Some(rel) = target {
            let file = paths.out().join(rel);
            if let Some(parent) = file.parent() {
                fs_err::create_dir_all(parent)?;
            }
            fs_err::write(&file, &*stream.lock().expect("output buffer"))?;
        }
    }
    Ok(DirectRun {
        ending,
        out_dir: paths.out(),
        work_dir: paths.work.clone(),
        stderr: text(&stderr),
        wall,
        tree_ended,
    })
}

fn pump(
    mut stream: impl AsyncRead + Unpin + Send + 'static,
    sink: Arc<Mutex<Vec<u8>>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut chunk = vec![0u8; 8192];
        while let Ok(n) = stream.read(&mut chunk).await {
            if n == 0 {
                break;
            }
            sink.lock()
                .expect("output buffer")
                .extend_from_slice(&chunk[..n]);
        }
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn ending_of(status: std::process::ExitStatus, stopped: bool) -> Ending {
    match (status.code(), exit_signal(&status), stopped) {
        (_, sig, true) => Ending::Stopped(sig),
        (Some(code), _, false) => Ending::Exited(code),
        (None, Some(sig), false) => Ending::Signaled(sig),
        (None, None, false) => Ending::Exited(-1),
    }
}

/// The direct run's evidence.
pub fn evidence(
    scenario: &Scenario,
    run: &DirectRun,
    adapter: &str,
    work_globs: &[globset::GlobMatcher],
) -> Result<Evidence, SideError> {
    let (state, exit_code, signal) = match run.ending {
        Ending::Exited(0) => ("succeeded", Some(0), None),
        Ending::Exited(code) => ("failed", Some(code), None),
        Ending::Signaled(sig) => ("failed", None, Some(sig)),
        Ending::Stopped(sig) => ("cancelled", None, sig),
        Ending::TimedOut => {
            return Err(SideError::DirectTimedOut {
                timeout_s: scenario.timeout_s,
            });
        }
    };
    let places = evidence::ArtifactPlaces {
        output: &run.out_dir,
        work: (!work_globs.is_empty()).then_some((run.work_dir.as_path(), work_globs)),
    };
    let (artifacts, metrics) = evidence::collect_artifacts(scenario, &places)?;
    Ok(Evidence {
        format: evidence::EVIDENCE_FORMAT,
        recorded_on: None,
        adapter: adapter.to_string(),
        workflow: scenario.workflow.clone(),
        state: state.to_string(),
        exit_code,
        signal,
        error_line: (state != "succeeded")
            .then(|| evidence::error_line(scenario, &run.stderr))
            .flatten(),
        process_tree_ended: run.tree_ended,
        artifacts,
        metrics,
        reported: None,
    })
}

/// The test hook behind `SCIMCP_PARITY_PERTURB`: flip one bit of one byte in the first
/// artifact (by path) of `out_dir`, so a test can prove that one changed byte fails the
/// gate. Returns the path it changed.
pub fn perturb_first_artifact(out_dir: &Path) -> std::io::Result<Option<String>> {
    let Some(first) = evidence::list_files(out_dir)?.into_iter().next() else {
        return Ok(None);
    };
    let path = out_dir.join(&first);
    let mut bytes = fs_err::read(&path)?;
    let middle = bytes.len() / 2;
    if let Some(b) = bytes.get_mut(middle) {
        *b ^= 0x01;
    } else {
        bytes.push(b'\n');
    }
    fs_err::write(&path, bytes)?;
    Ok(Some(first))
}
