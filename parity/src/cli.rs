//! All of `scimcp-parity`'s command-line parsing, and resolving it into [`Settings`].

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::error::{ArgError, Error};

#[derive(Parser, Debug)]
#[command(
    name = "scimcp-parity",
    version,
    about = "Compare direct-CLI runs with runs through the scimcp MCP server",
    long_about = "Compare direct-CLI runs with runs through the scimcp MCP server.\n\n\
        Each scenario in parity/scenarios/*.toml runs twice: as the literal command line a \
        scientist types, and through the real `scimcp serve` as an MCP client. Both must \
        agree (artifacts, hashes, metrics, exit status), and the agreed evidence must match \
        the insta snapshot in parity/snapshots/. Every workflow of every adapter in \
        adapters/*.toml needs a scenario.\n\n\
        Exit status: 0 passed, 1 the gate refused (differences, drift, missing scenarios) or \
        could not run (scenario or manifest files, missing binaries, the runtime probe), \
        2 bad arguments."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the scenarios and record (write or update) their snapshots.
    Run(GateArgs),
    /// Run the scenarios and verify them against the snapshots without writing (CI mode).
    Check(GateArgs),
    /// Run the scenarios and show every drift as a diff (writes `.snap.new` pending files).
    Review(GateArgs),
}

#[derive(Args, Debug)]
struct GateArgs {
    /// Run only shard I of N (1-based): scenario k of the name-sorted list goes to shard (k mod N) + 1.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Run one scenario per workflow (the first by name that expects success): a fast
    /// signal for pull requests, not release evidence. Coverage is still checked in full.
    #[arg(long)]
    quick: bool,
    /// Run N scenarios at a time. Each scenario's two paths still run one after
    /// the other, so both see the same load; the timings are then of a busier machine.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// Run only the scenarios whose name matches GLOB (repeatable).
    #[arg(long = "scenario", value_name = "GLOB")]
    scenarios_glob: Vec<String>,
    /// Also write the machine report (JSON) to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// The scimcp binary to drive [default: `scimcp` next to this binary].
    #[arg(long, value_name = "PATH")]
    scimcp: Option<PathBuf>,
    /// Python interpreter of the scientific runtime [default: .venv/bin/python of the workspace].
    #[arg(long, value_name = "PATH", env = "SCIMCP_PYTHON")]
    python: Option<PathBuf>,
    /// The interpreter of one adapter's runtime (repeatable) [default: the workspace's
    /// `.venv-ADAPTER` when it exists, else --python].
    #[arg(long = "adapter-python", value_name = "ADAPTER=PATH", value_parser = parse_adapter_python)]
    adapter_python: Vec<(String, PathBuf)>,
    /// Directory of scenario files [default: parity/scenarios].
    #[arg(long, value_name = "DIR")]
    scenarios: Option<PathBuf>,
    /// Directory of snapshots [default: parity/snapshots].
    #[arg(long, value_name = "DIR")]
    snapshots: Option<PathBuf>,
    /// Directory of adapter manifests whose workflows all need scenarios [default: adapters].
    #[arg(long, value_name = "DIR")]
    adapters: Option<PathBuf>,
    /// A variable for both paths of every scenario (repeatable): the direct command gets it,
    /// the server gets `--env NAME=VALUE`. E.g. OPENBLAS_CORETYPE=Haswell runs another
    /// CPU's kernels, to see the evidence hold there.
    #[arg(long = "env", value_name = "NAME=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// `run` only: record this platform's own snapshot (`parity/snapshots/<os>-<arch>/`),
    /// for scenarios whose results here differ beyond tolerance from the shared snapshot.
    #[arg(long)]
    platform: bool,
}

fn parse_adapter_python(s: &str) -> Result<(String, PathBuf), ArgError> {
    let (name, path) = s
        .split_once('=')
        .ok_or_else(|| ArgError::NotAdapterPath(s.to_string()))?;
    Ok((name.to_string(), PathBuf::from(path)))
}

fn parse_env(s: &str) -> Result<(String, String), ArgError> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| ArgError::NotNameValue(s.to_string()))?;
    if let Some(problem) = scimcp_core::run_env::manifest_env_problem(name, value) {
        return Err(ArgError::Env(problem));
    }
    Ok((name.to_string(), value.to_string()))
}

fn parse_shard(s: &str) -> Result<(usize, usize), ArgError> {
    let bad = || ArgError::NotShard(s.to_string());
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let i: usize = i.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// What the gate does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Run,
    Check,
    Review,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Run => "run",
            Mode::Check => "check",
            Mode::Review => "review",
        }
    }
}

/// Resolved settings: every default applied, every path checked.
#[derive(Debug)]
pub struct Settings {
    pub mode: Mode,
    pub scenarios_dir: PathBuf,
    pub snapshots_dir: PathBuf,
    pub adapters_dir: PathBuf,
    /// The workspace root, when found: snapshot headers name scenario files relative to it.
    pub workspace_root: Option<PathBuf>,
    pub scimcp: PathBuf,
    pub python: PathBuf,
    /// Interpreters of particular adapters' runtimes.
    pub adapter_pythons: std::collections::BTreeMap<String, PathBuf>,
    pub filters: Vec<String>,
    pub filter: Option<GlobSet>,
    pub shard: Option<(usize, usize)>,
    /// One scenario per workflow only.
    pub quick: bool,
    /// Scenarios run at a time (`--jobs`).
    pub jobs: usize,
    pub json: Option<PathBuf>,
    /// Test hook: the scenario whose direct artifact gets one flipped byte.
    pub perturb: Option<String>,
    /// `--env`: variables for both paths.
    pub extra_env: std::collections::BTreeMap<String, String>,
    /// `run --platform`: record into this platform's own snapshot directory.
    pub platform_snapshot: bool,
}

/// The environment variable of the perturbation test hook.
pub const PERTURB_ENV: &str = "SCIMCP_PARITY_PERTURB";

/// Parse the command line (exits on `--help` or bad arguments, like any clap program).
pub fn parse() -> (Mode, GateArgsHandle) {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(a) => (Mode::Run, GateArgsHandle(a)),
        Command::Check(a) => (Mode::Check, GateArgsHandle(a)),
        Command::Review(a) => (Mode::Review, GateArgsHandle(a)),
    }
}

/// Parsed gate arguments, opaque outside this module.
#[derive(Debug)]
pub struct GateArgsHandle(GateArgs);

impl Settings {
    /// The interpreter of `adapter`'s runtime.
    pub fn python_for(&self, adapter: &str) -> &Path {
        self.adapter_pythons
            .get(adapter)
            .map_or(self.python.as_path(), PathBuf::as_path)
    }

    /// Apply the defaults: directories from the workspace root (found from the current
    /// directory, then from this executable's location), `scimcp` beside this binary, the
    /// workspace's `.venv` interpreter.
    pub fn resolve(mode: Mode, args: GateArgsHandle) -> Result<Settings, Error> {
        let a = args.0;
        if a.platform && mode != Mode::Run {
            return Err(Error::usage(
                "--platform applies to `run` (recording)",
                "`check` and `review` use a platform's own snapshot by themselves when it exists",
            ));
        }
        let exe = std::env::current_exe().ok();
        let root = find_root(std::env::current_dir().ok().as_deref())
            .or_else(|| find_root(exe.as_deref().and_then(Path::parent)));
        let from_root = |given: Option<PathBuf>, rel: &str| -> Result<PathBuf, Error> {
            match (given, &root) {
                (Some(p), _) => Ok(p),
                (None, Some(r)) => Ok(r.join(rel)),
                (None, None) => Err(Error::usage(
                    "cannot find the scimcp workspace (a directory holding parity/scenarios and adapters/) from the current directory or this binary",
                    "run from the repository or pass --scenarios, --snapshots and --adapters",
                )),
            }
        };
        let scenarios_dir = from_root(a.scenarios, "parity/scenarios")?;
        let snapshots_dir = from_root(a.snapshots, "parity/snapshots")?;
        let adapters_dir = from_root(a.adapters, "adapters")?;
        for (dir, flag) in [
            (&scenarios_dir, "--scenarios"),
            (&adapters_dir, "--adapters"),
        ] {
            if !dir.is_dir() {
                return Err(Error::usage(
                    format!("{} is not a directory", dir.display()),
                    format!("pass {flag} DIR"),
                ));
            }
        }
        let scimcp = match a.scimcp {
            Some(p) => p,
            None => exe
                .as_deref()
                .and_then(Path::parent)
                .map(|d| d.join(format!("scimcp{}", std::env::consts::EXE_SUFFIX)))
                .ok_or_else(|| {
                    Error::usage("cannot locate this executable", "pass --scimcp PATH")
                })?,
        };
        if !scimcp.is_file() {
            return Err(Error::usage(
                format!("{} does not exist", scimcp.display()),
                "run `cargo build --workspace --bins` or pass --scimcp PATH",
            ));
        }
        let python = match a.python {
            Some(p) => p,
            None => root
                .as_deref()
                .and_then(|r| {
                    [".venv/bin/python", ".venv/Scripts/python.exe"]
                        .iter()
                        .map(|rel| r.join(rel))
                        .find(|p| p.is_file())
                })
                .ok_or_else(|| {
                    Error::usage(
                        "no Python runtime",
                        "run `scripts/dev-env.sh` (creates .venv with refsci), pass --python PATH or set SCIMCP_PYTHON",
                    )
                })?,
        };
        if !python.is_file() {
            return Err(Error::usage(
                format!("{} does not exist", python.display()),
                "run `scripts/dev-env.sh` or pass --python PATH",
            ));
        }
        // Absolute, so changing directory for a child never changes what runs.
        let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
        let filter = if a.scenarios_glob.is_empty() {
            None
        } else {
            let mut set = GlobSetBuilder::new();
            for g in &a.scenarios_glob {
                set.add(Glob::new(g).map_err(|source| Error::Glob {
                    glob: g.clone(),
                    source,
                })?);
            }
            Some(set.build().map_err(Error::GlobSet)?)
        };
        Ok(Settings {
            mode,
            scenarios_dir: absolute(scenarios_dir),
            snapshots_dir: absolute(snapshots_dir),
            adapters_dir: absolute(adapters_dir),
            workspace_root: root.clone(),
            scimcp: absolute(scimcp),
            adapter_pythons: {
                let mut map = std::collections::BTreeMap::new();
                if let Some(r) = root.as_deref()
                    && let Ok(entries) = fs_err::read_dir(r)
                {
                    for entry in entries.flatten() {
                        let name = entry.file_name().to_string_lossy().into_owned();
                        let Some(adapter) = name.strip_prefix(".venv-") else {
                            continue;
                        };
                        let venv = entry.path();
                        if let Some(p) = ["bin/python", "Scripts/python.exe"]
                            .iter()
                            .map(|rel| venv.join(rel))
                            .find(|p| p.is_file())
                        {
                            map.insert(adapter.to_string(), p);
                        }
                    }
                }
                map.extend(a.adapter_python.into_iter().map(|(n, p)| (n, absolute(p))));
                map
            },
            python: absolute(python),
            filters: a.scenarios_glob,
            filter,
            shard: a.shard,
            quick: a.quick,
            jobs: usize::from(a.jobs),
            json: a.json,
            perturb: std::env::var(PERTURB_ENV).ok().filter(|s| !s.is_empty()),
            extra_env: a.env.into_iter().collect(),
            platform_snapshot: a.platform,
        })
    }
}

/// The nearest ancestor of `start` (inclusive) that holds `parity/scenarios` and `adapters/`.
fn find_root(start: Option<&Path>) -> Option<PathBuf> {
    start?
        .ancestors()
        .find(|d| d.join("parity/scenarios").is_dir() && d.join("adapters").is_dir())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_is_one_to_sixty_four() {
        let jobs = |args: &[&str]| {
            Cli::try_parse_from(["scimcp-parity", "check"].iter().chain(args)).map(|c| {
                match c.command {
                    Command::Check(a) => a.jobs,
                    _ => unreachable!(),
                }
            })
        };
        assert_eq!(jobs(&[]).unwrap(), 1);
        assert_eq!(jobs(&["--jobs", "2"]).unwrap(), 2);
        for bad in ["0", "65", "-1", "two"] {
            assert!(jobs(&["--jobs", bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_are_one_based_and_bounded() {
        assert_eq!(parse_shard("1/1"), Ok((1, 1)));
        assert_eq!(parse_shard("3/4"), Ok((3, 4)));
        for bad in ["0/2", "3/2", "1/0", "1", "a/b", ""] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
