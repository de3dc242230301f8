//! The report: every check's result, a summary and an exit code, printed for people (grouped,
//! coloured on a terminal) or as versioned JSON (`docs/doctor-report.schema.json`).

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::check::{CheckResult, Status, group_of};

/// The `schema_version` of the JSON report. Bump it when a field changes meaning or goes
/// away; adding a field keeps it.
pub const REPORT_SCHEMA_VERSION: u32 = 2;

/// What one run of the checks found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    /// `scimcp-doctor`.
    pub tool: &'static str,
    /// The doctor's own version.
    pub version: &'static str,
    /// The data root as text (a path that is not Unicode is shown lossily, as JSON cannot
    /// carry it).
    pub data_root: String,
    /// The adapters checked (every installed one, or those named with `--adapter`; none with
    /// `--remote`, or where only remote servers are registered).
    pub adapters: Vec<String>,
    /// The remote servers checked (by registered name, or the URL given with `--remote`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remotes: Vec<String>,
    /// The worst status: `ok`, `warn` or `fail` (skipped checks do not count).
    pub status: Status,
    /// 0 all ok, 1 warnings only, 2 any failure.
    pub exit_code: u8,
    pub summary: Summary,
    pub duration_ms: u64,
    pub checks: Vec<CheckResult>,
    /// What `--fix` did, when it was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<FixRecord>,
}

/// How many checks came out each way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub ok: usize,
    pub warn: usize,
    pub fail: usize,
    pub skipped: usize,
}

/// What `--fix` did: the checks before, the repair it ran and what that reported.
#[derive(Debug, Clone, Serialize)]
pub struct FixRecord {
    /// Whether the installer's repair ran (it does not when nothing fixable was wrong).
    pub repaired: bool,
    /// The command that was run, as a user would type it.
    pub command: Option<String>,
    /// What the repair did, step by step.
    pub steps: Vec<String>,
    /// Why the repair failed, when it did.
    pub error: Option<String>,
    /// The checks before the repair (the report's `checks` are after it).
    pub before: Vec<CheckResult>,
    pub before_summary: Summary,
}

impl Report {
    pub fn new(
        data_root: PathBuf,
        adapters: Vec<String>,
        checks: Vec<CheckResult>,
        duration: std::time::Duration,
    ) -> Report {
        let summary = summarize(&checks);
        let status = worst(&checks);
        Report {
            schema_version: REPORT_SCHEMA_VERSION,
            tool: "scimcp-doctor",
            version: scimcp_core::version::SUITE_VERSION,
            data_root: data_root.to_string_lossy().into_owned(),
            adapters,
            remotes: Vec::new(),
            status,
            exit_code: exit_code(status),
            summary,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            checks,
            fix: None,
        }
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a report is JSON");
        s.push('\n');
        s
    }

    /// The human report; `color` adds ANSI colours to the status words.
    pub fn to_text(&self, color: bool) -> String {
        let mut out = String::new();
        let mut about = Vec::new();
        if !self.adapters.is_empty() {
            about.push(format!(
                "adapter{} {}",
                if self.adapters.len() == 1 { "" } else { "s" },
                self.adapters.join(", ")
            ));
        }
        if !self.remotes.is_empty() {
            about.push(format!(
                "remote server{} {}",
                if self.remotes.len() == 1 { "" } else { "s" },
                self.remotes.join(", ")
            ));
        }
        let _ = writeln!(
            out,
            "scimcp doctor {} — {} ({})",
            self.version,
            self.data_root,
            about.join("; ")
        );
        if let Some(fix) = &self.fix {
            out.push_str("\nBefore --fix:\n");
            render_checks(&mut out, &fix.before, color);
            let _ = writeln!(out, "\n{}", summary_line(&fix.before_summary, None));
            match (&fix.command, fix.repaired) {
                (Some(cmd), true) => {
                    let _ = writeln!(out, "\nRan `{cmd}`:");
                    for s in &fix.steps {
                        let _ = writeln!(out, "  {s}");
                    }
                    if let Some(e) = &fix.error {
                        let _ = writeln!(out, "  repair failed: {e}");
                    }
                }
                _ => {
                    let _ = writeln!(
                        out,
                        "\nNothing the installer's repair can fix; see the remedies above."
                    );
                }
            }
            out.push_str("\nAfter --fix:\n");
        }
        render_checks(&mut out, &self.checks, color);
        if let Some(fix) = &self.fix {
            let changed: Vec<String> = self
                .checks
                .iter()
                .filter_map(|after| {
                    let before = fix.before.iter().find(|b| {
                        b.id == after.id && b.adapter == after.adapter && b.remote == after.remote
                    })?;
                    (before.status != after.status).then(|| {
                        let id = match after.subject() {
                            Some(a) => format!("{} ({a})", after.id),
                            None => after.id.clone(),
                        };
                        format!(
                            "  {id:<24} {} → {}",
                            before.status.label(),
                            after.status.label()
                        )
                    })
                })
                .collect();
            if !changed.is_empty() {
                let _ = writeln!(out, "\nChanged by --fix:\n{}", changed.join("\n"));
            }
        }
        let _ = writeln!(
            out,
            "\n{}",
            summary_line(&self.summary, Some(self.duration_ms))
        );
        out
    }
}

fn render_checks(out: &mut String, checks: &[CheckResult], color: bool) {
    let mut group = (String::new(), None);
    let width = checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let subjects: Vec<Option<String>> = checks.iter().map(CheckResult::subject).collect();
    // A section per subject when there are several (or any remote server: its checks must
    // never read as the local installation's).
    let several = checks.iter().any(|c| c.remote.is_some())
        || subjects
            .iter()
            .flatten()
            .any(|a| subjects.iter().flatten().any(|b| b != a));
    for (c, subject) in checks.iter().zip(subjects) {
        let g = (group_of(&c.id).to_string(), subject);
        if g != group {
            match (&g.1, several) {
                (Some(subject), true) => {
                    let _ = writeln!(out, "\n{} — {subject}", g.0);
                }
                _ => {
                    let _ = writeln!(out, "\n{}", g.0);
                }
            }
            group = g;
        }
        let label = format!("{:<4}", c.status.label());
        let label = if color {
            paint(c.status, &label)
        } else {
            label
        };
        let _ = writeln!(out, "  {label}  {:<width$}  {}", c.id, c.finding);
        let pad = " ".repeat(2 + 4 + 2 + width + 2);
        for d in &c.details {
            let _ = writeln!(out, "{pad}- {d}");
        }
        if let Some(r) = &c.remedy {
            let fixable = if c.fixable { " (--fix does this)" } else { "" };
            let _ = writeln!(out, "{pad}fix: {r}{fixable}");
        }
    }
}

fn summary_line(s: &Summary, took_ms: Option<u64>) -> String {
    let verdict = if s.fail > 0 {
        "Not ready"
    } else if s.warn > 0 {
        "Ready, with warnings"
    } else {
        "Ready"
    };
    let took = took_ms.map_or_else(String::new, |ms| format!(" in {:.1} s", ms as f64 / 1000.0));
    format!(
        "{verdict}: {} ok, {} warning{}, {} failure{}, {} skipped{took}.",
        s.ok,
        s.warn,
        if s.warn == 1 { "" } else { "s" },
        s.fail,
        if s.fail == 1 { "" } else { "s" },
        s.skipped
    )
}

fn paint(status: Status, text: &str) -> String {
    let code = match status {
        Status::Ok => "32",
        Status::Warn => "33",
        Status::Fail => "1;31",
        Status::Skipped => "2",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

pub fn summarize(checks: &[CheckResult]) -> Summary {
    let mut s = Summary::default();
    for c in checks {
        match c.status {
            Status::Ok => s.ok += 1,
            Status::Warn => s.warn += 1,
            Status::Fail => s.fail += 1,
            Status::Skipped => s.skipped += 1,
        }
    }
    s
}

/// The worst status; a report of only skipped checks is `ok`.
pub fn worst(checks: &[CheckResult]) -> Status {
    checks
        .iter()
        .map(|c| c.status)
        .max()
        .filter(|s| *s != Status::Skipped)
        .unwrap_or(Status::Ok)
}

/// 0 all ok, 1 warnings only, 2 any failure: the doctor's verdict on the installation, as
/// `DESIGN.md` fixes it ([`scimcp_core::exit`]).
pub fn exit_code(status: Status) -> u8 {
    match status {
        Status::Fail => scimcp_core::exit::DOCTOR_FAILURES,
        Status::Warn => scimcp_core::exit::DOCTOR_WARNINGS,
        Status::Ok | Status::Skipped => scimcp_core::exit::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_worst_status() {
        let ok = CheckResult::ok("a.b", "fine");
        let warn = CheckResult::warn("a.c", "hmm");
        let fail = CheckResult::fail("a.d", "no");
        let skip = CheckResult::skipped("a.e", "why");
        assert_eq!(exit_code(worst(&[ok.clone(), skip.clone()])), 0);
        assert_eq!(exit_code(worst(&[ok.clone(), warn.clone()])), 1);
        assert_eq!(exit_code(worst(&[warn, fail, ok])), 2);
        assert_eq!(exit_code(worst(&[skip])), 0);
    }

    #[test]
    fn several_adapters_get_a_section_each() {
        let about = |r: CheckResult, a: &str| r.about(Some(a));
        let r = Report::new(
            "/d".into(),
            vec!["geochemistrypi".into(), "refsci".into()],
            vec![
                CheckResult::ok("install.layout", "fine"),
                about(
                    CheckResult::ok("runtime.import", "in 6.9 s"),
                    "geochemistrypi",
                ),
                about(
                    CheckResult::fail("runtime.packages", "1 file missing")
                        .remedy("scimcp-setup repair")
                        .fixable(),
                    "geochemistrypi",
                ),
                about(CheckResult::ok("runtime.import", "in 1.2 s"), "refsci"),
                CheckResult::ok("state.disk", "plenty"),
            ],
            std::time::Duration::ZERO,
        );
        let text = r.to_text(false);
        assert!(text.contains("(adapters geochemistrypi, refsci)"), "{text}");
        assert!(
            text.contains("\nScientific runtime — geochemistrypi\n"),
            "{text}"
        );
        assert!(text.contains("\nScientific runtime — refsci\n"), "{text}");
        assert!(
            text.contains("fix: scimcp-setup repair --adapter geochemistrypi (--fix does this)"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(json["checks"][1]["adapter"], "geochemistrypi");
        assert!(json["checks"][0].get("adapter").is_none());
    }

    #[test]
    fn a_remote_server_s_checks_get_their_own_sections() {
        let remote = |r: CheckResult| r.about_remote(Some("scimcp-remote-lab"));
        let mut r = Report::new(
            "/d".into(),
            vec!["refsci".into()],
            vec![
                CheckResult::ok("server.handshake", "local").about(Some("refsci")),
                remote(CheckResult::ok("client.cursor", "entry")),
                remote(
                    CheckResult::fail("server.handshake", "401")
                        .remedy("set SCIMCP_TOKEN to your token"),
                ),
            ],
            std::time::Duration::ZERO,
        );
        r.remotes = vec!["scimcp-remote-lab".into()];
        let text = r.to_text(false);
        assert!(
            text.contains("(adapter refsci; remote server scimcp-remote-lab)"),
            "{text}"
        );
        assert!(text.contains("\nServer — refsci\n"), "{text}");
        assert!(
            text.contains("\nServer — remote scimcp-remote-lab\n"),
            "{text}"
        );
        assert!(
            text.contains("\nClients — remote scimcp-remote-lab\n"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(json["remotes"][0], "scimcp-remote-lab");
        assert_eq!(json["checks"][2]["remote"], "scimcp-remote-lab");
        assert!(json["checks"][0].get("remote").is_none());
    }

    #[test]
    fn colour_only_when_asked() {
        let r = Report::new(
            "/d".into(),
            vec!["refsci".into()],
            vec![CheckResult::fail("install.layout", "broken").remedy("scimcp-setup repair")],
            std::time::Duration::ZERO,
        );
        assert!(!r.to_text(false).contains('\x1b'));
        assert!(r.to_text(true).contains("\x1b[1;31mFAIL\x1b[0m"));
    }
}
