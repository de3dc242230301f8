//! The sandbox's cost per run (#29): the trivial CLI started through `scimcp __sandbox`
//! (the exec wrapper the run guard puts in front of every CLI: one more exec of scimcp, the
//! Landlock ruleset, no_new_privs, the limits, the report file) against the same CLI started
//! directly, interleaved round by round in this one bench run. The policy is a run's: the
//! system paths and the CLI read-only, the run's directory read-write, no network.
//!
//! Printed as its own table (not in bench/results.json); docs/BENCHMARKS.md's sandbox
//! section quotes a real run. Skipped, said, where the scimcp binary has no `__sandbox`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, ensure};
use scimcp_process::sandbox::Policy;

use crate::fixture::Fixture;
use crate::stats::{Summary, ms};

/// Measure `rounds` runs each way and print the table.
pub fn report(fx: &Fixture, rounds: usize) -> anyhow::Result<()> {
    let scimcp = fx.exe("scimcp");
    let has_wrapper = Command::new(&scimcp)
        .args(["__sandbox", "--help"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_wrapper {
        eprintln!(
            "  skipped the sandbox's cost: {} has no `__sandbox`",
            scimcp.display()
        );
        return Ok(());
    }
    let cli = fx.exe("scimcp-bench-cli");
    let dir = fx.dir("sandbox-run")?;
    fs_err::create_dir_all(dir.join("inputs"))?;
    fs_err::create_dir_all(dir.join("output"))?;
    fs_err::write(dir.join("inputs/data.csv"), "x,y\n1,2\n")?;
    let policy = Policy::new().allow_read_resolved(&cli).allow_write(&dir);
    let policy = serde_json::to_string(&policy)?;
    let args = ["--data", "inputs/data.csv", "--out", "output"];

    let (mut direct, mut wrapped) = (Vec::new(), Vec::new());
    // One round of each first, unmeasured: the page cache and the binaries' first load.
    for i in 0..=rounds {
        let report = dir.join(format!("sandbox-{i}.json"));
        let mut through = command(&scimcp, &dir);
        through
            .args(["__sandbox", "--policy", &policy, "--report"])
            .arg(&report)
            .arg("--")
            .arg(&cli)
            .args(args);
        let t = timed(through)?;
        let w = timed({
            let mut alone = command(&cli, &dir);
            alone.args(args);
            alone
        })?;
        if i > 0 {
            wrapped.push(t);
            direct.push(w);
        }
        ensure!(
            fs_err::read_to_string(&report)?.contains("file_system"),
            "the wrapper wrote no sandbox report to {}",
            report.display()
        );
    }
    let extra: Vec<f64> = wrapped.iter().zip(&direct).map(|(s, d)| s - d).collect();
    println!();
    println!("### The sandbox's cost per run ({rounds} rounds, interleaved)");
    println!();
    println!("| start | median | p99 | min |");
    println!("|---|---|---|---|");
    for (name, v) in [
        ("trivial CLI directly", &direct),
        ("trivial CLI through `scimcp __sandbox`", &wrapped),
        ("the sandbox's cost (paired difference)", &extra),
    ] {
        let s = Summary::of(v);
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {:.2} ms |",
            s.median, s.p99, s.min
        );
    }
    Ok(())
}

/// `program` in `dir` with an empty environment but `PATH` and in its own process group,
/// as the server starts a run; output discarded.
fn command(program: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd
}

/// Spawn to exit, in milliseconds; a failure is an error.
fn timed(mut cmd: Command) -> anyhow::Result<f64> {
    let t0 = Instant::now();
    let status = cmd
        .spawn()
        .with_context(|| format!("cannot start {:?}", cmd.get_program()))?
        .wait()?;
    let t = ms(t0.elapsed());
    ensure!(status.success(), "{:?} failed: {status}", cmd.get_program());
    Ok(t)
}
