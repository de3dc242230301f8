//! What one check found: a stable id, a status, a one-line finding with the measured value,
//! and the exact command that fixes it.

use std::time::Duration;

use serde::Serialize;

/// How a check came out. The order is the severity order: the worst status of a report
/// decides its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not run: a precondition is missing or the user asked to skip it (the finding says why).
    Skipped,
    Ok,
    Warn,
    Fail,
}

impl Status {
    /// The word shown in the human report.
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
            Status::Skipped => "skip",
        }
    }
}

/// The section of the human report a check belongs to, from its id's first segment.
pub fn group_of(id: &str) -> &'static str {
    match id.split('.').next().unwrap_or("") {
        "install" => "Installation",
        "runtime" => "Scientific runtime",
        "client" => "Clients",
        "server" => "Server",
        "cluster" => "Cluster",
        _ => "Data directory",
    }
}

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    /// Stable id (`install.layout`, `client.cursor`, …).
    pub id: String,
    /// The adapter the check is about (runtime, client and handshake checks run once per
    /// adapter); absent for the installation-wide checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// The remote server the check is about (its registered name, or the URL given with
    /// `--remote`); absent for the checks of this computer's installation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    pub status: Status,
    /// One line with the measured value (for `skipped`, the reason).
    pub finding: String,
    /// Further lines: every problem when there is more than one, a stderr excerpt, …
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
    /// The exact command (or action) that fixes it; `None` when nothing needs fixing.
    pub remedy: Option<String>,
    /// Whether `--fix` (the installer's repair) can fix it.
    pub fixable: bool,
    pub duration_ms: u64,
}

impl CheckResult {
    pub fn ok(id: &str, finding: impl Into<String>) -> CheckResult {
        CheckResult::new(id, Status::Ok, finding)
    }

    pub fn warn(id: &str, finding: impl Into<String>) -> CheckResult {
        CheckResult::new(id, Status::Warn, finding)
    }

    pub fn fail(id: &str, finding: impl Into<String>) -> CheckResult {
        CheckResult::new(id, Status::Fail, finding)
    }

    pub fn skipped(id: &str, reason: impl Into<String>) -> CheckResult {
        CheckResult::new(id, Status::Skipped, reason)
    }

    pub fn new(id: &str, status: Status, finding: impl Into<String>) -> CheckResult {
        CheckResult {
            id: id.to_string(),
            adapter: None,
            remote: None,
            status,
            finding: finding.into(),
            details: Vec::new(),
            remedy: None,
            fixable: false,
            duration_ms: 0,
        }
    }

    /// The command that fixes it. Only kept for warn and fail: an ok check needs no remedy.
    pub fn remedy(mut self, remedy: impl Into<String>) -> CheckResult {
        if matches!(self.status, Status::Warn | Status::Fail) {
            self.remedy = Some(remedy.into());
        }
        self
    }

    /// Mark it as fixable by the installer's repair (only meaningful for warn and fail).
    pub fn fixable(mut self) -> CheckResult {
        self.fixable = matches!(self.status, Status::Warn | Status::Fail);
        self
    }

    pub fn details(mut self, details: Vec<String>) -> CheckResult {
        self.details = details;
        self
    }

    /// Mark the result as about `adapter`; a `scimcp-setup install|repair …` remedy then
    /// names the adapter, so it fixes this adapter and no other.
    pub(crate) fn about(mut self, adapter: Option<&str>) -> CheckResult {
        let Some(adapter) = adapter else {
            return self;
        };
        self.adapter = Some(adapter.to_string());
        if let Some(remedy) = &self.remedy
            && let Some(rest) = remedy
                .strip_prefix("scimcp-setup repair")
                .map(|r| ("repair", r))
                .or_else(|| {
                    remedy
                        .strip_prefix("scimcp-setup install")
                        .map(|r| ("install", r))
                })
            && !remedy.contains("--adapter")
        {
            let (verb, rest) = rest;
            self.remedy = Some(format!("scimcp-setup {verb} --adapter {adapter}{rest}"));
        }
        self
    }

    /// Mark the result as about the remote server `remote` (remedies name it themselves).
    pub(crate) fn about_remote(mut self, remote: Option<&str>) -> CheckResult {
        if let Some(remote) = remote {
            self.remote = Some(remote.to_string());
        }
        self
    }

    /// What the check is about, for the human report: the adapter, or `remote <name>`.
    pub fn subject(&self) -> Option<String> {
        self.adapter
            .clone()
            .or_else(|| self.remote.as_ref().map(|r| format!("remote {r}")))
    }

    pub(crate) fn timed(mut self, took: Duration) -> CheckResult {
        self.duration_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// A check made of several problems: the worst one decides the status, the first of
    /// the worst is the finding, all of them are the details.
    pub fn from_problems(id: &str, ok: String, problems: Vec<(Status, String)>) -> CheckResult {
        let Some(worst) = problems.iter().map(|(s, _)| *s).max() else {
            return CheckResult::ok(id, ok);
        };
        let first = problems
            .iter()
            .find(|(s, _)| *s == worst)
            .map(|(_, m)| m.clone())
            .unwrap_or_default();
        let finding = match problems.len() {
            1 => first,
            n => format!("{first} (and {} more)", n - 1),
        };
        let details = if problems.len() > 1 {
            problems
                .into_iter()
                .map(|(s, m)| format!("{}: {m}", s.label()))
                .collect()
        } else {
            Vec::new()
        };
        CheckResult::new(id, worst, finding).details(details)
    }
}

/// `'path'` quoted for a POSIX shell (a remedy must be copy-pasteable even when the path has
/// spaces and non-ASCII letters).
pub fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@%".contains(c))
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_problem_decides() {
        let r = CheckResult::from_problems(
            "x",
            "fine".into(),
            vec![
                (Status::Warn, "a".into()),
                (Status::Fail, "b".into()),
                (Status::Fail, "c".into()),
            ],
        );
        assert_eq!(r.status, Status::Fail);
        assert_eq!(r.finding, "b (and 2 more)");
        assert_eq!(r.details, ["warn: a", "FAIL: b", "FAIL: c"]);
        assert_eq!(
            CheckResult::from_problems("x", "fine".into(), vec![]).status,
            Status::Ok
        );
    }

    #[test]
    fn remedies_are_kept_only_when_something_is_wrong() {
        assert_eq!(CheckResult::ok("x", "y").remedy("z").fixable().remedy, None);
        let w = CheckResult::warn("x", "y").remedy("z").fixable();
        assert_eq!(w.remedy.as_deref(), Some("z"));
        assert!(w.fixable);
    }

    #[test]
    fn quotes_paths_for_the_shell() {
        assert_eq!(shell_quote("/a/b"), "/a/b");
        assert_eq!(shell_quote("/Jürgen Müller/x"), "'/Jürgen Müller/x'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
