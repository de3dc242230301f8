//! Reading a `scimcp-doctor --json` report in a test that expects a healthy installation.
//!
//! Two checks look at the test machine rather than at what the test built: `state.disk`
//! (free space on the data root's volume) and `state.history` (free space under a share of
//! that volume). On a shared runner whose disk fills up during a long run they warn, rightly,
//! and a test that demands "all ok" then fails on the machine, not on the code (the likely
//! cause of CI's failure of f193e4c in the GeochemistryPi test, whose log lost the check's
//! name). Such a warning is accepted here only when this harness measures the volume itself
//! and finds the warning true; anything else that is not ok is a problem.

use std::path::Path;

use serde_json::Value;

/// `scimcp-doctor`'s thresholds, which `scimcp-doctor`'s own tests hold equal to its code
/// (this crate cannot depend on the doctor, whose tests depend on it).
pub const DISK_WARN_BYTES: u64 = 1 << 30;
pub const FREE_WARN_PERCENT: u64 = 5;

/// The doctor's exit code for warnings (`scimcp_core::exit::DOCTOR_WARNINGS`).
const WARNINGS_EXIT: i32 = scimcp_core::exit::DOCTOR_WARNINGS as i32;

/// What a report says that a healthy installation should not.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Every check that is not ok, except the confirmed host warnings: `id [adapter] status:
    /// finding`.
    pub problems: Vec<String>,
    /// Warnings about the machine's free space that a measurement here confirms.
    pub host_warnings: Vec<String>,
}

impl Verdict {
    /// The exit code the doctor should have given for this report.
    pub fn expected_exit(&self) -> i32 {
        if self.host_warnings.is_empty() {
            0
        } else {
            WARNINGS_EXIT
        }
    }
}

fn line(check: &Value) -> String {
    format!(
        "{} [{}] {}: {}",
        check["id"].as_str().unwrap_or("?"),
        check["adapter"].as_str().unwrap_or("-"),
        check["status"].as_str().unwrap_or("?"),
        check["finding"].as_str().unwrap_or("")
    )
}

/// Free and total bytes on the volume holding `path` (or its nearest existing ancestor).
fn volume(path: &Path) -> Option<(u64, u64)> {
    let existing = path.ancestors().find(|p| p.is_dir())?;
    Some((
        fs4::available_space(existing).ok()?,
        fs4::total_space(existing).ok()?,
    ))
}

/// Whether `check`, a warning, is about the machine's free space and is true of a volume
/// with `free` of `total` bytes (`None`: not measured, so nothing is confirmed). The space may
/// have moved a little since the doctor measured it, hence the margin of a tenth.
fn confirmed_host_warning(check: &Value, space: Option<(u64, u64)>) -> bool {
    let Some((free, total)) = space else {
        return false;
    };
    if check["status"] != "warn" {
        return false;
    }
    let finding = check["finding"].as_str().unwrap_or("");
    match check["id"].as_str() {
        Some("state.disk") => disk_low(free),
        // Only the share-of-the-volume warning: a quota, an unreadable directory or a
        // half-done prune is the installation's, not the machine's.
        Some("state.history") => {
            finding.contains("% of the volume")
                && !finding.contains(';')
                && !finding.contains("new runs are refused")
                && !finding.contains("deletion")
                && share_low(free, total)
        }
        _ => false,
    }
}

fn disk_low(free: u64) -> bool {
    free < DISK_WARN_BYTES + DISK_WARN_BYTES / 10
}

fn share_low(free: u64, total: u64) -> bool {
    free.saturating_mul(1000) < total.saturating_mul(FREE_WARN_PERCENT * 11)
}

/// Why `scimcp-doctor` would warn about the free space of `data_root`'s volume now, if it
/// would: for a test whose expected output (a snapshot) is of a machine with room.
pub fn low_disk(data_root: &Path) -> Option<String> {
    let (free, total) = volume(data_root)?;
    (disk_low(free) || share_low(free, total)).then(|| {
        format!(
            "{free} bytes free of {total} on the volume of {}: state.disk or state.history warns",
            data_root.display()
        )
    })
}

/// Sort the checks of `report` into problems and confirmed host warnings.
pub fn verdict(report: &Value, data_root: &Path) -> Verdict {
    sort(report, volume(data_root))
}

fn sort(report: &Value, space: Option<(u64, u64)>) -> Verdict {
    let mut v = Verdict::default();
    for check in report["checks"].as_array().into_iter().flatten() {
        if check["status"] == "ok" {
            continue;
        }
        if confirmed_host_warning(check, space) {
            v.host_warnings.push(line(check));
        } else {
            v.problems.push(line(check));
        }
    }
    v
}

/// Assert that `report` (with the doctor's exit `code`) is of a healthy installation under
/// `data_root`: nothing is not ok but true warnings about the machine's free space, and the
/// exit code says so. A failure lists the checks that are not ok, in full, not the whole
/// report (whose middle a CI log's tail cuts off).
#[allow(clippy::print_stderr)]
pub fn assert_healthy(report: &Value, code: i32, data_root: &Path) {
    let v = verdict(report, data_root);
    for warning in &v.host_warnings {
        eprintln!("accepted, as this machine's disk is that full: {warning}");
    }
    if !v.problems.is_empty() {
        let bad: Vec<&Value> = report["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["status"] != "ok")
            .collect();
        panic!(
            "not healthy: {} check(s) not ok:\n{}\nin full:\n{bad:#?}",
            v.problems.len(),
            v.problems.join("\n")
        );
    }
    assert_eq!(
        code,
        v.expected_exit(),
        "the doctor's exit code; its report:\n{report:#}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const GIB: u64 = 1 << 30;

    fn report(checks: Value) -> Value {
        json!({ "checks": checks })
    }

    #[test]
    fn a_free_space_warning_counts_only_when_the_volume_is_that_full() {
        let r = report(json!([
            {"id": "install.layout", "status": "ok", "finding": "fine"},
            {"id": "state.disk", "status": "warn", "finding": "900 MiB free on the volume of /d"},
            {"id": "state.history", "status": "warn", "adapter": null,
             "finding": "9.0 GiB free, under 5% of the volume (252 GiB in all)"},
        ]));
        let full = sort(&r, Some((900 << 20, 252 * GIB)));
        assert!(full.problems.is_empty(), "{full:?}");
        assert_eq!(full.host_warnings.len(), 2);
        assert_eq!(full.expected_exit(), 1);
        // With room on the volume the same warnings are the doctor's mistake.
        let roomy = sort(&r, Some((60 * GIB, 252 * GIB)));
        assert_eq!(roomy.problems.len(), 2, "{roomy:?}");
        assert!(roomy.problems[0].starts_with("state.disk [-] warn: 900 MiB"));
        // Between the thresholds: the history warning holds, the disk one does not.
        let mid = sort(&r, Some((10 * GIB, 252 * GIB)));
        assert_eq!(mid.problems.len(), 1, "{mid:?}");
        assert!(mid.problems[0].starts_with("state.disk"));
        // A volume that could not be measured confirms nothing.
        assert_eq!(sort(&r, None).problems.len(), 2);
    }

    #[test]
    fn other_warnings_and_failures_are_problems_whatever_the_disk() {
        let r = report(json!([
            {"id": "state.history", "status": "warn",
             "finding": "1 GiB free, under the server's --min-free-bytes 2 (2 B): new runs are refused"},
            {"id": "state.disk", "status": "fail", "finding": "10 MiB free"},
            {"id": "runtime.import", "status": "skipped", "adapter": "refsci", "finding": "--fast"},
        ]));
        let v = sort(&r, Some((10 << 20, 252 * GIB)));
        assert_eq!(v.problems.len(), 3, "{v:?}");
        assert!(v.host_warnings.is_empty());
        assert!(v.problems[2].starts_with("runtime.import [refsci] skipped"));
        assert_eq!(sort(&report(json!([])), None).expected_exit(), 0);
    }
}
