//! Partitions as `sinfo` describes them, and their limits read as numbers: the longest time
//! limit in minutes, the most CPUs and memory a node offers, whether any node takes jobs.

use schemars::JsonSchema;
use serde::Serialize;

/// A partition as `sinfo` and `scontrol` describe it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Partition {
    pub name: String,
    pub default: bool,
    /// `up`, `down`, `drain`, `inact`.
    pub availability: String,
    /// Longest time limit (`[D-]H:MM:SS`, or `UNLIMITED`).
    pub max_time: String,
    pub default_time: String,
    pub nodes: u32,
    /// CPUs per node (a range on mixed partitions).
    pub cpus_per_node: String,
    /// Memory per node in MiB (a range on mixed partitions).
    pub memory_mb_per_node: String,
    /// Node states, e.g. `idle`, `mix`, `alloc`, `down`.
    pub node_states: Vec<String>,
}

impl Partition {
    /// The longest time limit in whole minutes; `None` when unlimited or not understood.
    pub fn max_time_min(&self) -> Option<u64> {
        parse_minutes(&self.max_time)
    }

    /// The most CPUs one node offers; `None` when `sinfo` gave no upper bound.
    pub fn max_cpus_per_node(&self) -> Option<u64> {
        per_node_max(&self.cpus_per_node)
    }

    /// The most memory (MiB) one node offers; `None` when `sinfo` gave no upper bound.
    pub fn max_memory_mb_per_node(&self) -> Option<u64> {
        per_node_max(&self.memory_mb_per_node)
    }

    /// True when at least one node is in a state that can start jobs.
    pub fn takes_jobs(&self) -> bool {
        self.node_states.iter().any(|s| node_state_takes_jobs(s))
    }
}

/// A Slurm time (`M`, `M:SS`, `H:MM:SS`, `D-H`, `D-H:MM`, `D-H:MM:SS`) in whole minutes,
/// rounded up as Slurm rounds `--time`; `None` for `UNLIMITED`/`infinite` and for anything
/// else it does not understand.
pub fn parse_minutes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (days, rest) = match text.split_once('-') {
        Some((d, r)) => (d.parse::<u64>().ok()?, r),
        None => (0, text),
    };
    let parts: Vec<u64> = rest
        .split(':')
        .map(|p| p.parse::<u64>().ok())
        .collect::<Option<_>>()?;
    let with_days = text.contains('-');
    let seconds = match (with_days, parts.as_slice()) {
        (false, [m]) => m * 60,
        (false, [m, s]) => m * 60 + s,
        (true, [h]) => h * 3600,
        (true, [h, m]) => h * 3600 + m * 60,
        (_, [h, m, s]) => h * 3600 + m * 60 + s,
        _ => return None,
    };
    Some((days * 86_400 + seconds).div_ceil(60))
}

/// The upper end of a per-node figure from `sinfo`: `2` → 2, `2-4` → 4; `None` for `4+`
/// (nodes with more exist, how many more `sinfo` does not say) and for anything else.
pub fn per_node_max(text: &str) -> Option<u64> {
    bounds(text).and_then(|(_, hi, open)| (!open).then_some(hi))
}

/// `(low, high, open-ended)` of `N`, `A-B` or `N+`.
fn bounds(text: &str) -> Option<(u64, u64, bool)> {
    let text = text.trim();
    if let Some(n) = text.strip_suffix('+') {
        let n = n.parse().ok()?;
        return Some((n, n, true));
    }
    match text.split_once('-') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?, false)),
        None => text.parse().ok().map(|n| (n, n, false)),
    }
}

/// Two per-node figures of one partition as one: the range covering both.
fn widen(a: &str, b: &str) -> String {
    let (Some((lo_a, hi_a, open_a)), Some((lo_b, hi_b, open_b))) = (bounds(a), bounds(b)) else {
        return a.to_string();
    };
    let (lo, hi) = (lo_a.min(lo_b), hi_a.max(hi_b));
    match (open_a || open_b, lo == hi) {
        (true, _) => format!("{lo}+"),
        (false, true) => lo.to_string(),
        (false, false) => format!("{lo}-{hi}"),
    }
}

/// Whether a node in `state` (`sinfo`'s short form, e.g. `idle`, `mix`, `down*`, `idle~`)
/// can start jobs. A trailing `*` means the node does not respond; the other suffixes
/// (powered down `~`, powering up `#`, …) do not keep it from taking jobs.
pub fn node_state_takes_jobs(state: &str) -> bool {
    if state.ends_with('*') {
        return false;
    }
    let word = state.trim_end_matches(['~', '#', '!', '%', '$', '@', '^', '-']);
    matches!(
        word,
        "idle" | "mix" | "alloc" | "comp" | "resv" | "plnd" | "pow_up" | "boot"
    )
}

/// `%R|%P|%a|%l|%L|%D|%c|%m|%t` lines. `sinfo` prints one line per partition and node
/// state and configuration; they are merged into one [`Partition`] with every state and the
/// range of CPUs and memory.
pub fn parse_sinfo(out: &str) -> Vec<Partition> {
    let mut parts: Vec<Partition> = Vec::new();
    for line in out.lines() {
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        if f.len() < 9 {
            continue;
        }
        let nodes: u32 = f[5].parse().unwrap_or(0);
        if let Some(p) = parts.iter_mut().find(|p| p.name == f[0]) {
            p.nodes += nodes;
            p.cpus_per_node = widen(&p.cpus_per_node, f[6]);
            p.memory_mb_per_node = widen(&p.memory_mb_per_node, f[7]);
            if !p.node_states.iter().any(|s| s == f[8]) {
                p.node_states.push(f[8].to_string());
            }
            continue;
        }
        parts.push(Partition {
            name: f[0].to_string(),
            default: f[1].ends_with('*'),
            availability: f[2].to_string(),
            max_time: f[3].to_string(),
            default_time: f[4].to_string(),
            nodes,
            cpus_per_node: f[6].to_string(),
            memory_mb_per_node: f[7].to_string(),
            node_states: vec![f[8].to_string()],
        });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinfo_lines_merge_per_partition() {
        let out = "debug|debug*|up|1:00:00|10:00|1|2|22900|idle\nshort|short|up|5:00|1:00|1|2|22900|idle\nshort|short|up|5:00|1:00|2|2|22900|down\n";
        let p = parse_sinfo(out);
        assert_eq!(p.len(), 2);
        assert!(p[0].default && !p[1].default);
        assert_eq!(p[1].nodes, 3);
        assert_eq!(p[1].node_states, vec!["idle", "down"]);
        assert_eq!(p[1].cpus_per_node, "2");
    }

    #[test]
    fn nodes_of_different_sizes_give_a_range() {
        let out = "gpu|gpu|up|2-00:00:00|1:00:00|4|32|190000|mix\n\
                   gpu|gpu|up|2-00:00:00|1:00:00|2|64|380000|idle\n\
                   big|big|up|infinite|n/a|1|128+|1000000|alloc\n";
        let p = parse_sinfo(out);
        assert_eq!(p[0].cpus_per_node, "32-64");
        assert_eq!(p[0].memory_mb_per_node, "190000-380000");
        assert_eq!(p[0].max_cpus_per_node(), Some(64));
        assert_eq!(p[0].max_memory_mb_per_node(), Some(380_000));
        assert_eq!(p[0].max_time_min(), Some(2 * 24 * 60));
        assert_eq!(p[1].max_cpus_per_node(), None);
        assert_eq!(p[1].max_time_min(), None);
    }

    #[test]
    fn times_read_as_slurm_writes_them() {
        assert_eq!(parse_minutes("1:00:00"), Some(60));
        assert_eq!(parse_minutes("5:00"), Some(5));
        assert_eq!(parse_minutes("0:30"), Some(1));
        assert_eq!(parse_minutes("90"), Some(90));
        assert_eq!(parse_minutes("1-12"), Some(36 * 60));
        assert_eq!(parse_minutes("1-00:30"), Some(24 * 60 + 30));
        assert_eq!(parse_minutes("7-00:00:00"), Some(7 * 24 * 60));
        assert_eq!(parse_minutes("UNLIMITED"), None);
        assert_eq!(parse_minutes("infinite"), None);
        assert_eq!(parse_minutes("1:2:3:4"), None);
    }

    #[test]
    fn node_states_that_take_jobs() {
        for s in ["idle", "mix", "alloc", "idle~", "mix-", "comp", "resv"] {
            assert!(node_state_takes_jobs(s), "{s}");
        }
        for s in [
            "down", "down*", "idle*", "drain", "drng", "fail", "maint", "unk", "inval",
        ] {
            assert!(!node_state_takes_jobs(s), "{s}");
        }
    }
}
