//! `state.history`: the run history the server keeps (`runs/` under the data root): how many
//! runs, how many bytes, and the free space on its volume. It warns when free space is under
//! the registered server's `--min-free-bytes` or under [`FREE_WARN_PERCENT`] of the volume,
//! when the history is at or over the server's `--max-history-bytes` (new runs are refused
//! then), and when a prune was interrupted (a `.pruned-run-…` tombstone is left).
//!
//! It only reads: the history is measured by walking `runs/` (the doctor runs rarely; the
//! server keeps its own figure instead).

use std::path::Path;

use scimcp_core::history::{HistoryUsage, measure};

use crate::check::{CheckResult, Status};
use crate::context::Context;

/// Free space under this share of the volume is a warning, whatever the quota.
pub const FREE_WARN_PERCENT: u64 = 5;

/// The quota the registered server commands give (`--max-history-bytes`, `--min-free-bytes`):
/// the tightest over every adapter, as the runs directory is shared.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub max_history_bytes: Option<u64>,
    pub min_free_bytes: Option<u64>,
}

/// The value of `--flag N` or `--flag=N` in `args`.
fn flag_value(args: &[String], flag: &str) -> Option<u64> {
    args.iter().enumerate().find_map(|(i, a)| {
        let value = match a.strip_prefix(flag) {
            Some("") => args.get(i + 1)?.as_str(),
            Some(rest) => rest.strip_prefix('=')?,
            None => return None,
        };
        value.parse().ok()
    })
}

fn quota(ctx: &Context) -> Quota {
    let mut q = Quota::default();
    for adapter in ctx.adapter_names() {
        let args = ctx.server(&adapter).args;
        let tighter = |a: Option<u64>, b: Option<u64>, pick: fn(u64, u64) -> u64| match (a, b) {
            (Some(a), Some(b)) => Some(pick(a, b)),
            (a, b) => a.or(b),
        };
        q.max_history_bytes = tighter(
            q.max_history_bytes,
            flag_value(&args, "--max-history-bytes"),
            u64::min,
        );
        q.min_free_bytes = tighter(
            q.min_free_bytes,
            flag_value(&args, "--min-free-bytes"),
            u64::max,
        );
    }
    q
}

pub fn check(ctx: &Context, id: &str) -> CheckResult {
    let runs = ctx.layout.runs_dir();
    let usage = match measure(&runs) {
        Ok(usage) => usage,
        Err(e) => {
            return CheckResult::warn(id, format!("cannot read {}: {e}", runs.display()))
                .remedy("check the permissions of the data root (state.permissions)");
        }
    };
    // Before the first run the directory may not exist: measure the volume it will be on.
    let Some(volume) = runs.ancestors().find(|p| p.is_dir()) else {
        return CheckResult::skipped(id, "no existing directory above the runs directory");
    };
    let space = fs4::available_space(volume).and_then(|free| Ok((free, fs4::total_space(volume)?)));
    match space {
        Ok((free, total)) => history_status(id, usage, &runs, free, total, quota(ctx)),
        Err(e) => CheckResult::warn(
            id,
            format!(
                "{}; cannot measure free space at {}: {e}",
                usage_text(usage, &runs),
                volume.display()
            ),
        ),
    }
}

fn usage_text(usage: HistoryUsage, runs: &Path) -> String {
    format!(
        "{} run{}, {}, in {}",
        usage.runs,
        if usage.runs == 1 { "" } else { "s" },
        bytes_text(usage.bytes),
        runs.display()
    )
}

/// The result for `usage` of `runs`, with `free` of `total` bytes on its volume.
pub fn history_status(
    id: &str,
    usage: HistoryUsage,
    runs: &Path,
    free: u64,
    total: u64,
    quota: Quota,
) -> CheckResult {
    let mut problems = Vec::new();
    if let Some(limit) = quota.max_history_bytes
        && usage.bytes >= limit
    {
        problems.push((
            Status::Warn,
            format!(
                "the history takes {}, at or over the server's --max-history-bytes {limit} ({}): new runs are refused",
                bytes_text(usage.bytes),
                bytes_text(limit)
            ),
        ));
    }
    if let Some(limit) = quota.min_free_bytes
        && free < limit
    {
        problems.push((
            Status::Warn,
            format!(
                "{} free, under the server's --min-free-bytes {limit} ({}): new runs are refused",
                bytes_text(free),
                bytes_text(limit)
            ),
        ));
    }
    if total > 0 && free.saturating_mul(100) < total.saturating_mul(FREE_WARN_PERCENT) {
        problems.push((
            Status::Warn,
            format!(
                "{} free, under {FREE_WARN_PERCENT}% of the volume ({} in all)",
                bytes_text(free),
                bytes_text(total)
            ),
        ));
    }
    if usage.tombstones > 0 {
        problems.push((
            Status::Warn,
            format!(
                "{} deletion(s) an interrupted `scimcp runs prune` left unfinished (.pruned-run-… in {})",
                usage.tombstones,
                runs.display()
            ),
        ));
    }
    let remedy = (!problems.is_empty()).then(|| {
        if usage.tombstones > 0 && problems.len() == 1 {
            "scimcp runs prune --older-than 0s --dry-run shows them; any scimcp runs prune finishes them".to_string()
        } else {
            "delete old runs: scimcp runs prune --older-than 30d --dry-run, then the same without --dry-run".to_string()
        }
    });
    let ok = format!(
        "{}; {} free on its volume",
        usage_text(usage, runs),
        bytes_text(free)
    );
    let result = CheckResult::from_problems(id, ok, problems);
    match remedy {
        Some(r) => result.remedy(r),
        None => result,
    }
}

/// Bytes in the unit that reads best (`812 bytes`, `4.0 KiB`, `12.3 MiB`, `1.2 GiB`).
fn bytes_text(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if n >= size {
            return format!("{:.1} {unit}", n as f64 / size as f64);
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(runs: u64, bytes: u64, tombstones: u64) -> HistoryUsage {
        HistoryUsage {
            runs,
            bytes,
            tombstones,
        }
    }

    #[test]
    fn history_reports_its_size_and_warns_under_the_quota_or_five_percent() {
        let runs = Path::new("/data/runs");
        let ok = history_status(
            "state.history",
            usage(3, 5 << 20, 0),
            runs,
            50 << 30,
            100 << 30,
            Quota::default(),
        );
        assert_eq!(ok.status, Status::Ok);
        assert_eq!(
            ok.finding,
            "3 runs, 5.0 MiB, in /data/runs; 50.0 GiB free on its volume"
        );
        let low = history_status(
            "state.history",
            usage(1, 10, 0),
            runs,
            4 << 30,
            100 << 30,
            Quota::default(),
        );
        assert_eq!(low.status, Status::Warn);
        assert!(
            low.finding.contains("under 5% of the volume"),
            "{}",
            low.finding
        );
        let quota = Quota {
            max_history_bytes: Some(1 << 20),
            min_free_bytes: Some(60 << 30),
        };
        let over = history_status(
            "state.history",
            usage(9, 2 << 20, 0),
            runs,
            50 << 30,
            100 << 30,
            quota,
        );
        assert_eq!(over.status, Status::Warn);
        assert!(
            over.finding.contains("--max-history-bytes 1048576"),
            "{}",
            over.finding
        );
        assert!(
            over.details.iter().any(|d| d.contains("--min-free-bytes")),
            "{:?}",
            over.details
        );
        assert!(over.remedy.unwrap().contains("scimcp runs prune"));
        let left = history_status(
            "state.history",
            usage(1, 10, 1),
            runs,
            50 << 30,
            100 << 30,
            Quota::default(),
        );
        assert_eq!(left.status, Status::Warn);
        assert!(left.finding.contains(".pruned-run-"), "{}", left.finding);
    }

    #[test]
    fn history_quota_flags_are_read_in_both_spellings() {
        let args: Vec<String> = ["serve", "--max-history-bytes", "100", "--min-free-bytes=7"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(flag_value(&args, "--max-history-bytes"), Some(100));
        assert_eq!(flag_value(&args, "--min-free-bytes"), Some(7));
        assert_eq!(flag_value(&args, "--data-dir"), None);
    }
}
