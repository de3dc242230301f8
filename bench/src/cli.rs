//! All of `scimcp-bench`'s command-line parsing.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "scimcp-bench",
    about = "Benchmark scimcp against its peers (run it through bench/run.sh)"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Run the measurements, print the tables, write bench/results.json and docs/BENCHMARKS.md.
    Run(RunArgs),
    /// Internal: time scimcp's start-up steps once in this fresh process (JSON on stdout).
    #[command(hide = true)]
    StartupPhases {
        #[arg(long)]
        python: PathBuf,
    },
}

/// A group of measurements.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Section {
    Startup,
    Calls,
    Runs,
    Stall,
    Hashing,
    Bundle,
    Verify,
    Installer,
    Doctor,
    /// 100,000 runs in history: cold start and list_runs pages (issue #31).
    History,
    /// A campaign at its item limit: preview, start, RSS, status and result pages.
    Campaigns,
    /// 64 token holders over HTTP for a fixed time, against the peer.
    HttpMany,
}

#[derive(clap::Args, Debug)]
pub(crate) struct RunArgs {
    /// The repository root.
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// Fewer rounds of everything (a smoke run; its figures are not for the docs).
    #[arg(long)]
    pub quick: bool,
    /// Only these groups (comma-separated: startup, calls, runs, stall, hashing, bundle,
    /// verify, installer, doctor, history, campaigns, http-many); results then go to
    /// target/bench/ only.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Section>,
    /// Print the tables but write neither bench/results.json nor docs/BENCHMARKS.md.
    #[arg(long)]
    pub no_write: bool,
    /// Keep target/bench/work afterwards.
    #[arg(long)]
    pub keep_work: bool,
    /// Measure this scimcp binary instead of target/release/scimcp (a candidate build; the
    /// in-process step timings still use the code this benchmark was built with).
    #[arg(long, value_name = "PATH")]
    pub scimcp: Option<PathBuf>,
    /// The `history` group also measures this scimcp binary's empty-history cold start and
    /// idle RSS, interleaved with the measured one: the build whose figures a target
    /// compares against (e.g. one built from the commit that recorded them), so the
    /// comparison holds on this machine at this load.
    #[arg(long, value_name = "PATH")]
    pub baseline: Option<PathBuf>,
    /// Seconds bench/run.sh spent building (recorded in the results).
    #[arg(long, default_value_t = 0.0)]
    pub build_s: f64,
    /// Seconds bench/run.sh spent creating the Python environments.
    #[arg(long, default_value_t = 0.0)]
    pub provision_s: f64,
}

/// How many times each measurement repeats.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rounds {
    pub cold_starts: usize,
    pub calls: usize,
    pub runs: usize,
    pub refsci_runs: usize,
    pub hashing: usize,
    pub bundles: usize,
    pub verify: usize,
    pub installer: usize,
    pub doctor: usize,
    pub history_cold_starts: usize,
    pub history_calls: usize,
    pub campaign_calls: usize,
    pub http_holders: usize,
    pub http_seconds: u64,
}

impl RunArgs {
    pub fn rounds(&self) -> Rounds {
        if self.quick {
            Rounds {
                cold_starts: 3,
                calls: 20,
                runs: 4,
                refsci_runs: 2,
                hashing: 2,
                bundles: 1,
                verify: 2,
                installer: 2,
                doctor: 1,
                history_cold_starts: 3,
                history_calls: 20,
                campaign_calls: 5,
                http_holders: 64,
                http_seconds: 15,
            }
        } else {
            Rounds {
                cold_starts: 15,
                calls: 150,
                runs: 30,
                refsci_runs: 8,
                hashing: 4,
                bundles: 3,
                verify: 10,
                installer: 8,
                doctor: 4,
                history_cold_starts: 15,
                history_calls: 200,
                campaign_calls: 30,
                http_holders: 64,
                http_seconds: 60,
            }
        }
    }
}
