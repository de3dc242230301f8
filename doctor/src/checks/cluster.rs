//! `cluster.slurm`: the cluster the Slurm executor submits to, checked from the executor's
//! own configuration (`--slurm-config FILE`, the file `scimcp serve --executor slurm` reads)
//! with the executor's own client (the `scimcp-slurm` crate): the file passes the server's
//! checks, Slurm's client commands are on `PATH`, the controller answers, the partition jobs
//! go to exists, is up and has a node that takes jobs, and every workflow of the checked
//! adapters asks for no more CPUs, memory or time than that partition allows (`sbatch`
//! refuses such a run). Skipped without a configuration: nothing says this computer submits
//! to Slurm.

use std::path::Path;
use std::time::{Duration, Instant};

use scimcp_slurm::{Partition, Slurm, SlurmConfig};

use crate::check::{CheckResult, Status, shell_quote};
use crate::context::Context;

/// The commands the executor runs (`sacct` is optional: it only helps after a long outage).
const COMMANDS: [&str; 4] = ["sbatch", "squeue", "scancel", "sinfo"];

/// What one workflow's jobs ask for: the same numbers the executor puts on `sbatch`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ask {
    /// `adapter/workflow`.
    pub what: String,
    pub cpus: u64,
    pub memory_mb: Option<u64>,
    pub time_limit_min: u64,
}

pub fn check(ctx: &Context, id: &str) -> CheckResult {
    let Some(path) = ctx.options.slurm_config.as_deref() else {
        return CheckResult::skipped(
            id,
            "no Slurm executor to check: give --slurm-config FILE (the file scimcp serve \
             --executor slurm reads)",
        );
    };
    let config = match SlurmConfig::load(path) {
        Ok(c) => c,
        Err(e) => {
            // The message with its causes, as anyhow's `{:#}` showed them (a read error's
            // message names the file, its cause says why).
            let failure = scimcp_core::failure::Failure::new(&e);
            let finding = std::iter::once(failure.message)
                .chain(failure.causes)
                .collect::<Vec<_>>()
                .join(": ");
            return CheckResult::fail(id, finding).remedy(format!(
                "edit {} (docs/SLURM.md lists its keys and the allowed directives)",
                shell_quote(&path.display().to_string())
            ));
        }
    };
    let missing: Vec<&str> = COMMANDS
        .into_iter()
        .filter(|c| on_path(c).is_none())
        .collect();
    if !missing.is_empty() {
        return CheckResult::fail(id, format!("{} not found on PATH", missing.join(", "))).remedy(
            "run the server where Slurm's client commands are (a login node; `module load slurm`), \
             or install them (Debian/Ubuntu: sudo apt-get install slurm-client) and put their \
             directory on PATH",
        );
    }
    let slurm = Slurm::new(config);
    let start = Instant::now();
    let partitions = match slurm.partitions() {
        Ok(p) => p,
        Err(e) => {
            return CheckResult::fail(
                id,
                format!("the Slurm controller did not answer: {}", one_line(&e.0)),
            )
            .remedy(
                "check that slurmctld runs and is reachable from here (`scontrol ping`), and \
                     that SLURM_CONF names the cluster's slurm.conf when it is not in the default \
                     place",
            );
        }
    };
    let answered_in = start.elapsed();
    // Slurm's own words (the last line) say why: "Slurm accounting storage is disabled".
    let accounting = slurm.accounting_available().err().map(|e| {
        e.0.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no answer")
            .trim()
            .to_string()
    });
    assess(
        id,
        path,
        &slurm.config,
        &partitions,
        &asks(ctx),
        answered_in,
        accounting,
    )
}

/// What every workflow of the checked adapters asks for.
fn asks(ctx: &Context) -> Vec<Ask> {
    let mut asks = Vec::new();
    for adapter in ctx.adapter_names() {
        // An adapter that cannot be loaded is reported by its own checks.
        let Ok(manifest) = ctx.manifest(&adapter) else {
            continue;
        };
        let timeout_s = manifest.effective_limits().run_timeout_s;
        for w in &manifest.workflows {
            let r = w.resources.unwrap_or_default();
            asks.push(Ask {
                what: format!("{adapter}/{}", w.id),
                cpus: u64::from(r.job_cpus()),
                memory_mb: r.memory_mb,
                time_limit_min: r.job_time_limit_min(timeout_s),
            });
        }
    }
    asks
}

/// The verdict on what the cluster answered; no I/O but the `scimcp` binary's presence.
pub(crate) fn assess(
    id: &str,
    path: &Path,
    config: &SlurmConfig,
    partitions: &[Partition],
    asks: &[Ask],
    answered_in: Duration,
    accounting: Option<String>,
) -> CheckResult {
    let file = shell_quote(&path.display().to_string());
    let names = || {
        partitions
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut details: Vec<String> = partitions.iter().map(describe).collect();
    match &accounting {
        None => details.push("sacct answers (accounting is configured)".into()),
        Some(why) => details.push(format!(
            "sacct does not answer ({why}): a job the controller forgets while no server \
             follows it is read from the exit status it left"
        )),
    }
    let target = match &config.partition {
        Some(name) => partitions.iter().find(|p| &p.name == name).ok_or_else(|| {
            format!(
                "partition {name:?} is not one of the cluster's partitions ({})",
                names()
            )
        }),
        None => partitions.iter().find(|p| p.default).ok_or_else(|| {
            format!(
                "the configuration names no partition and the cluster has no default one \
                 (partitions: {})",
                names()
            )
        }),
    };
    let target = match target {
        Ok(p) => p,
        Err(finding) => {
            return CheckResult::fail(id, finding)
                .remedy(format!(
                    "set partition = \"<name>\" in {file} to one of: {}",
                    names()
                ))
                .details(details);
        }
    };
    let which = if config.partition.is_some() {
        format!("partition {}", target.name)
    } else {
        format!("partition {} (the default)", target.name)
    };
    if target.availability != "up" {
        return CheckResult::fail(
            id,
            format!("{which} is {}: its jobs do not start", target.availability),
        )
        .remedy(format!(
            "ask the cluster's administrators (scontrol show partition {}), or set partition \
             in {file} to another one",
            target.name
        ))
        .details(details);
    }
    // (status, finding, remedy) of every problem; the worst decides.
    let mut problems: Vec<(Status, String, String)> = Vec::new();
    if !target.takes_jobs() {
        problems.push((
            Status::Warn,
            format!(
                "no node of {which} takes jobs now ({}): runs wait queued",
                target.node_states.join(", ")
            ),
            format!(
                "sinfo -R -p {} says why; ask the cluster's administrators, or set partition in \
                 {file} to another one",
                target.name
            ),
        ));
    }
    let manifest_fix = format!(
        "lower [workflow.resources] (cpus, memory_mb, time_limit_min; without time_limit_min, \
         [limits] run_timeout_s) in the adapter manifest, or set partition in {file} to one \
         that allows it (sinfo -s lists them)"
    );
    for ask in asks {
        if let Some(max) = target.max_time_min()
            && ask.time_limit_min > max
        {
            problems.push((
                Status::Warn,
                format!(
                    "{} asks for {} min, more than {which} allows ({}): its jobs are refused or never start",
                    ask.what, ask.time_limit_min, target.max_time
                ),
                manifest_fix.clone(),
            ));
        }
        if let Some(max) = target.max_cpus_per_node()
            && ask.cpus > max
        {
            problems.push((
                Status::Warn,
                format!(
                    "{} asks for {} CPUs, more than a node of {which} has ({max})",
                    ask.what, ask.cpus
                ),
                manifest_fix.clone(),
            ));
        }
        if let (Some(max), Some(mb)) = (target.max_memory_mb_per_node(), ask.memory_mb)
            && mb > max
        {
            problems.push((
                Status::Warn,
                format!(
                    "{} asks for {mb} MiB, more than a node of {which} has ({max} MiB)",
                    ask.what
                ),
                manifest_fix.clone(),
            ));
        }
    }
    if let Some(scimcp) = &config.scimcp
        && !scimcp.is_file()
    {
        problems.push((
            Status::Warn,
            format!(
                "scimcp = {} is not a file here; the compute nodes run it from that path",
                scimcp.display()
            ),
            format!("set scimcp in {file} to the scimcp binary on the shared file system"),
        ));
    }
    let summary = format!(
        "the controller answered in {} ms; {which}: {}",
        answered_in.as_millis(),
        describe_limits(target)
    );
    // The first of the worst problems is the finding, and its remedy the remedy.
    let worst = problems
        .iter()
        .enumerate()
        .max_by_key(|(i, (s, _, _))| (*s, std::cmp::Reverse(*i)))
        .map(|(i, _)| i);
    let Some(worst) = worst else {
        let fit = match asks.len() {
            0 => String::new(),
            1 => "; the one workflow fits".to_string(),
            n => format!("; all {n} workflows fit"),
        };
        return CheckResult::ok(id, format!("{summary}{fit}")).details(details);
    };
    let (status, first, remedy) = problems[worst].clone();
    let finding = match problems.len() {
        1 => first,
        n => format!("{first} (and {} more)", n - 1),
    };
    let mut all: Vec<String> = vec![summary];
    all.extend(
        problems
            .into_iter()
            .map(|(s, m, _)| format!("{}: {m}", s.label())),
    );
    all.extend(details);
    CheckResult::new(id, status, finding)
        .remedy(remedy)
        .details(all)
}

/// `up, 1 node (idle), at most 1:00:00, 2 CPUs and 22900 MiB per node`.
fn describe_limits(p: &Partition) -> String {
    format!(
        "{}, {} node{} ({}), at most {}, {} CPUs and {} MiB per node",
        p.availability,
        p.nodes,
        if p.nodes == 1 { "" } else { "s" },
        p.node_states.join(", "),
        p.max_time,
        p.cpus_per_node,
        p.memory_mb_per_node
    )
}

/// One partition as a detail line.
fn describe(p: &Partition) -> String {
    format!(
        "partition {}{}: {}",
        p.name,
        if p.default { " (default)" } else { "" },
        describe_limits(p)
    )
}

/// A command's error on one line (a finding is one line; the command's stderr follows its
/// summary on the next ones).
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// `name` in a directory of `PATH`, as the server's Slurm client finds it.
fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scimcp_slurm::parse_sinfo;

    const SINFO: &str = "debug|debug*|up|1:00:00|10:00|1|2|22900|idle\n\
                         short|short|up|5:00|1:00|1|2|22900|idle\n";

    fn ask(what: &str, cpus: u64, memory_mb: Option<u64>, time_limit_min: u64) -> Ask {
        Ask {
            what: what.into(),
            cpus,
            memory_mb,
            time_limit_min,
        }
    }

    fn run(config: SlurmConfig, sinfo: &str, asks: &[Ask]) -> CheckResult {
        assess(
            "cluster.slurm",
            Path::new("/etc/scimcp/slurm.toml"),
            &config,
            &parse_sinfo(sinfo),
            asks,
            Duration::from_millis(12),
            Some("Slurm accounting storage is disabled".into()),
        )
    }

    fn partition(name: &str) -> SlurmConfig {
        SlurmConfig {
            partition: Some(name.into()),
            ..SlurmConfig::default()
        }
    }

    #[test]
    fn the_default_partition_with_workflows_that_fit_is_ok() {
        let r = run(
            SlurmConfig::default(),
            SINFO,
            &[ask("refsci/regression", 1, None, 60)],
        );
        assert_eq!(r.status, Status::Ok, "{r:#?}");
        assert_eq!(
            r.finding,
            "the controller answered in 12 ms; partition debug (the default): up, 1 node (idle), \
             at most 1:00:00, 2 CPUs and 22900 MiB per node; the one workflow fits"
        );
        assert_eq!(r.remedy, None);
        assert!(r.details[0].starts_with("partition debug (default): up"));
        assert!(r.details[2].contains("accounting storage is disabled"));
    }

    #[test]
    fn an_unknown_partition_fails_naming_the_ones_there_are() {
        let r = run(partition("gpu"), SINFO, &[]);
        assert_eq!(r.status, Status::Fail);
        assert_eq!(
            r.finding,
            "partition \"gpu\" is not one of the cluster's partitions (debug, short)"
        );
        assert_eq!(
            r.remedy.as_deref(),
            Some("set partition = \"<name>\" in /etc/scimcp/slurm.toml to one of: debug, short")
        );
        let none = run(
            SlurmConfig::default(),
            "short|short|up|5:00|1:00|1|2|22900|idle\n",
            &[],
        );
        assert_eq!(none.status, Status::Fail);
        assert!(none.finding.contains("no default one"), "{}", none.finding);
    }

    #[test]
    fn a_partition_that_is_not_up_fails() {
        let r = run(
            partition("debug"),
            "debug|debug*|down|1:00:00|10:00|1|2|22900|idle\n",
            &[],
        );
        assert_eq!(r.status, Status::Fail);
        assert_eq!(r.finding, "partition debug is down: its jobs do not start");
    }

    #[test]
    fn workflows_over_the_partitions_limits_warn_each() {
        let r = run(
            partition("short"),
            SINFO,
            &[
                ask("refsci/regression", 1, None, 60),
                ask("refsci/big", 4, Some(50_000), 5),
                ask("refsci/small", 1, Some(100), 1),
            ],
        );
        assert_eq!(r.status, Status::Warn, "{r:#?}");
        assert_eq!(
            r.finding,
            "refsci/regression asks for 60 min, more than partition short allows (5:00): its jobs \
             are refused or never start (and 2 more)"
        );
        assert!(
            r.remedy
                .as_deref()
                .unwrap()
                .contains("[workflow.resources]")
        );
        let warns: Vec<&String> = r
            .details
            .iter()
            .filter(|d| d.starts_with("warn:"))
            .collect();
        assert_eq!(warns.len(), 3, "{:#?}", r.details);
        assert!(warns[1].contains("4 CPUs, more than a node of partition short has (2)"));
        assert!(
            warns[2].contains("50000 MiB, more than a node of partition short has (22900 MiB)")
        );
    }

    #[test]
    fn a_partition_without_a_usable_node_warns() {
        let r = run(
            SlurmConfig::default(),
            "debug|debug*|up|1:00:00|10:00|1|2|22900|down*\ndebug|debug*|up|1:00:00|10:00|2|2|22900|drain\n",
            &[],
        );
        assert_eq!(r.status, Status::Warn);
        assert_eq!(
            r.finding,
            "no node of partition debug (the default) takes jobs now (down*, drain): runs wait queued"
        );
        assert!(
            r.remedy
                .as_deref()
                .unwrap()
                .starts_with("sinfo -R -p debug")
        );
    }

    #[test]
    fn a_commands_error_is_one_line() {
        assert_eq!(
            one_line("sinfo took longer than 2 s (sinfo -h):\nsinfo: error: cannot stat\n\n"),
            "sinfo took longer than 2 s (sinfo -h): | sinfo: error: cannot stat"
        );
    }

    #[test]
    fn a_scimcp_binary_missing_here_warns() {
        let config = SlurmConfig {
            scimcp: Some("/nonexistent/scimcp".into()),
            ..SlurmConfig::default()
        };
        let r = run(config, SINFO, &[]);
        assert_eq!(r.status, Status::Warn);
        assert!(
            r.finding
                .starts_with("scimcp = /nonexistent/scimcp is not a file here")
        );
    }
}
