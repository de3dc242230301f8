//! `[workflow.resources]`: what one run of a workflow asks of a batch scheduler.

use super::checker::{Checker, Seg};
use crate::limits::Limits;
use crate::manifest::types::Resources;

/// `[workflow.resources]`: positive, bounded, and a time limit the run timeout allows.
pub(super) fn check_resources(c: &mut Checker<'_>, i: usize, r: &Resources, limits: Limits) {
    let at = |k| {
        [
            Seg::Key("workflow"),
            Seg::Index(i),
            Seg::Key("resources"),
            Seg::Key(k),
        ]
    };
    if let Some(cpus) = r.cpus
        && !(1..=Resources::MAX_CPUS).contains(&cpus)
    {
        c.error(
            &at("cpus"),
            format!("cpus = {cpus} is outside 1..={}", Resources::MAX_CPUS),
            Some("the CPUs one run of this workflow uses (Slurm --cpus-per-task)".into()),
        );
    }
    if let Some(mb) = r.memory_mb
        && !(1..=Resources::MAX_MEMORY_MB).contains(&mb)
    {
        c.error(
            &at("memory_mb"),
            format!(
                "memory_mb = {mb} is outside 1..={}",
                Resources::MAX_MEMORY_MB
            ),
            Some("memory in MiB for one run (Slurm --mem), e.g. 2048 for 2 GiB".into()),
        );
    }
    if let Some(min) = r.time_limit_min {
        let ceiling = limits.run_timeout_s.div_ceil(60);
        if min == 0 || u64::from(min) > ceiling {
            c.error(
                &at("time_limit_min"),
                format!("time_limit_min = {min} is outside 1..={ceiling}"),
                Some(format!(
                    "at most the run timeout ({} s, limits.run_timeout_s) rounded up to minutes",
                    limits.run_timeout_s
                )),
            );
        }
    }
}
