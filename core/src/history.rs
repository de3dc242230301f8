//! The run history's size on disk, as the server's quota, `scimcp runs prune` and the
//! doctor's `state.history` check all measure it: which entries of the runs directory are
//! runs, which are deletions a prune began (tombstones), and how many bytes they hold.
//!
//! Sizes are apparent sizes (the sum of the files' lengths, links not followed): what the
//! user sees in a file manager, the same on every platform, and never more than a few blocks
//! per file away from what the volume gives up for them.

use std::path::Path;

/// The prefix a run directory is renamed to before it is deleted: `.pruned-run-…`. A name
/// that is not a run id, so recovery, listing and pending counts skip it; a prune that died
/// mid-delete leaves one, which the next prune removes.
pub const TOMBSTONE_PREFIX: &str = ".pruned-";

/// `run-` and 16 lower-case hex digits: the names of run directories, and so what a run id
/// is (the server's `runs::is_run_id` calls this).
pub fn is_run_dir_name(name: &str) -> bool {
    name.strip_prefix("run-").is_some_and(|hex| {
        hex.len() == 16 && hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
    })
}

/// Whether `name` is a deletion a prune began and has not finished.
pub fn is_tombstone_name(name: &str) -> bool {
    name.strip_prefix(TOMBSTONE_PREFIX)
        .is_some_and(is_run_dir_name)
}

/// Bytes held by every file below `path` (links counted as links, never followed; entries
/// that vanish while they are read count as nothing, since another process may be deleting
/// them).
pub fn tree_bytes(path: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = fs_err::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}

/// What a runs directory holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HistoryUsage {
    /// Run directories.
    pub runs: u64,
    /// Bytes of the runs and of anything else in the directory (tombstones, locks).
    pub bytes: u64,
    /// Deletions a prune began and did not finish.
    pub tombstones: u64,
}

/// Measure `runs_dir` by walking it (a missing directory holds nothing). This reads every
/// run's files: callers that need the figure often keep it (the server's quota does).
pub fn measure(runs_dir: &Path) -> std::io::Result<HistoryUsage> {
    let entries = match fs_err::read_dir(runs_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(HistoryUsage::default());
        }
        Err(e) => return Err(e),
    };
    let mut usage = HistoryUsage::default();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = fs_err::symlink_metadata(entry.path()) else {
            continue;
        };
        if meta.is_dir() {
            usage.runs += u64::from(is_run_dir_name(&name));
            usage.tombstones += u64::from(is_tombstone_name(&name));
            usage.bytes += tree_bytes(&entry.path());
        } else {
            usage.bytes += meta.len();
        }
    }
    Ok(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_tombstones_and_bytes_are_counted_and_links_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        let run = runs.join("run-00000000000000aa");
        fs_err::create_dir_all(run.join("work/output")).unwrap();
        fs_err::write(run.join("status.json"), vec![b'x'; 100]).unwrap();
        fs_err::write(run.join("work/output/a.bin"), vec![b'y'; 1000]).unwrap();
        let tomb = runs.join(".pruned-run-00000000000000bb");
        fs_err::create_dir_all(&tomb).unwrap();
        fs_err::write(tomb.join("stdout.log"), vec![b'z'; 10]).unwrap();
        fs_err::create_dir_all(runs.join("not-a-run")).unwrap();
        let big = dir.path().join("big");
        fs_err::write(&big, vec![0u8; 1 << 20]).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&big, run.join("link")).unwrap();

        let usage = measure(&runs).unwrap();
        assert_eq!(usage.runs, 1);
        assert_eq!(usage.tombstones, 1);
        assert!(
            usage.bytes >= 1110 && usage.bytes < 1110 + 4096,
            "{usage:?}"
        );
        assert_eq!(
            measure(&dir.path().join("missing")).unwrap(),
            HistoryUsage::default()
        );
        assert!(is_tombstone_name(".pruned-run-00000000000000bb"));
        assert!(!is_tombstone_name(".pruned-x") && !is_run_dir_name("run-1"));
    }
}
