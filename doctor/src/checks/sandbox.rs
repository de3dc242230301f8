//! `runtime.sandbox`: what this machine's kernel enforces of the run sandbox (issue 29) and
//! in which mode the server runs it, so an operator learns before a run (not from its
//! record) that a protection is missing here.
//!
//! The facts come from `scimcp_process::sandbox::probe`, the same answer the server's
//! `get_environment` gives; the decision is [`evaluate`], a pure function of that answer and
//! the mode, so every kernel's outcome is unit-tested here with a fake [`Support`].
//!
//! What counts: the baseline protections (file system, TCP connect/bind, no_new_privs,
//! process limits) are what issue 29 promises every run; a missing one warns, and fails when
//! the server is started with `--sandbox required` (its runs would be refused). The newer
//! kernels' hardening (UDP from Landlock ABI 10, pathname UNIX sockets from ABI 9, …) is
//! named in the finding but does not warn: no released distribution kernel has all of it
//! yet, and a warning every machine shows is one users learn to ignore.

use scimcp_process::sandbox::{Protection, State, Support};

use crate::check::CheckResult;
use crate::context::Context;

/// The server's sandbox mode, as `serve --sandbox` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Off,
    BestEffort,
    Required,
}

impl Mode {
    fn parse(text: &str) -> Option<Mode> {
        match text {
            "off" => Some(Mode::Off),
            "best-effort" => Some(Mode::BestEffort),
            "required" => Some(Mode::Required),
            _ => None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::BestEffort => "best-effort",
            Mode::Required => "required",
        }
    }
}

/// The mode and where it was read from (for the finding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeSource {
    pub mode: Mode,
    pub from: String,
}

pub fn check(ctx: &Context, id: &str, adapter: &str) -> CheckResult {
    let args = ctx.server(adapter).args;
    let env = std::env::var("SCIMCP_SANDBOX").ok();
    match mode_of(&args, env.as_deref()) {
        Ok(mode) => evaluate(&scimcp_process::sandbox::probe(), &mode, id),
        Err(e) => CheckResult::fail(id, format!("{e}: the server will not start"))
            .remedy("register the server with `--sandbox required`, `--sandbox best-effort` or `--sandbox off`, or unset SCIMCP_SANDBOX"),
    }
}

/// A `--sandbox` or `SCIMCP_SANDBOX` value the server refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the sandbox mode {value:?} (from {from}) is not one the server accepts")]
pub struct UnknownMode {
    pub value: String,
    pub from: String,
}

/// The server's mode: the registered command's `--sandbox` (a flag wins over the
/// environment, as clap reads them), else `SCIMCP_SANDBOX` of this environment (which a
/// client starting the server usually passes on), else the default, best-effort.
pub fn mode_of(args: &[String], env: Option<&str>) -> Result<ModeSource, UnknownMode> {
    let parse = |value: &str, from: &str| {
        Mode::parse(value)
            .map(|mode| ModeSource {
                mode,
                from: from.to_owned(),
            })
            .ok_or_else(|| UnknownMode {
                value: value.to_owned(),
                from: from.to_owned(),
            })
    };
    let mut it = args.iter();
    let mut flag = None;
    while let Some(arg) = it.next() {
        if let Some(v) = arg.strip_prefix("--sandbox=") {
            flag = Some(v.to_owned());
        } else if arg == "--sandbox" {
            flag = it.next().cloned();
        }
    }
    if let Some(value) = flag {
        return parse(&value, "the registered command");
    }
    match env.filter(|v| !v.is_empty()) {
        Some(value) => parse(value, "SCIMCP_SANDBOX"),
        None => Ok(ModeSource {
            mode: Mode::BestEffort,
            from: "the default".to_owned(),
        }),
    }
}

/// The check's result for what this machine supports and the server's mode.
pub fn evaluate(support: &Support, mode: &ModeSource, id: &str) -> CheckResult {
    let label = format!("mode {} ({})", mode.mode.label(), mode.from);
    // Only what is missing: the finding already names what is enforced.
    let details: Vec<String> = support
        .protections
        .iter()
        .filter(|p| !p.state.is_satisfied())
        .map(|p| match p.state.reason() {
            Some(reason) => format!("{}: {} — {reason}", p.protection, state_word(&p.state)),
            None => format!("{}: {}", p.protection, state_word(&p.state)),
        })
        .collect();
    let kernel = match support.landlock_abi {
        Some(abi) => format!("{} with Landlock ABI {abi}", support.os),
        None => format!("{} without Landlock", support.os),
    };
    if mode.mode == Mode::Off {
        return CheckResult::warn(
            id,
            format!(
                "{label}: runs start their CLI without the sandbox ({kernel} could enforce more)"
            ),
        )
        .details(details)
        .remedy("start the server without `--sandbox off` (and unset SCIMCP_SANDBOX=off)");
    }
    let missing: Vec<Protection> = support
        .protections
        .iter()
        .filter(|p| p.protection.is_baseline() && !p.state.is_satisfied())
        .map(|p| p.protection)
        .collect();
    let uncovered: Vec<&str> = support
        .protections
        .iter()
        .filter(|p| !p.protection.is_baseline() && !p.state.is_satisfied())
        .map(|p| p.protection.name())
        .collect();
    let not_covered = if uncovered.is_empty() {
        String::new()
    } else {
        format!("; not covered here: {}", uncovered.join(", "))
    };
    if missing.is_empty() {
        // No details: the finding names the gaps, and `get_environment` gives their reasons.
        return CheckResult::ok(
            id,
            format!(
                "{label}: {kernel} enforces the baseline (file system, TCP connect/bind, \
                 no_new_privs, process limits){not_covered}"
            ),
        );
    }
    let names: Vec<&str> = missing.iter().map(|p| p.name()).collect();
    let finding = format!(
        "{label}: {kernel} cannot enforce {}{not_covered}",
        names.join(", ")
    );
    if mode.mode == Mode::Required {
        CheckResult::fail(
            id,
            format!("{finding}: every run will be refused (sandbox_unavailable)"),
        )
        .details(details)
        .remedy(
            "run the server on Linux 6.7 or later with Landlock enabled (`landlock` in the \
             kernel's `lsm=` list), or start it with `--sandbox best-effort`",
        )
    } else {
        CheckResult::warn(
            id,
            format!("{finding}: runs start with that protection missing (each run records it)"),
        )
        .details(details)
        .remedy(
            "run on Linux 6.7 or later with Landlock enabled (`landlock` in the kernel's `lsm=` \
             list) for the full sandbox",
        )
    }
}

fn state_word(state: &State) -> &'static str {
    match state {
        State::Enforced => "enforced",
        State::Partial { .. } => "partial",
        State::NotEnforced { .. } => "not enforced",
        State::NotRequested => "not requested",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Status;
    use scimcp_process::sandbox::ProtectionState;

    /// A Linux with Landlock `abi`: the protections of that ABI enforced, the rest not.
    fn linux(abi: u32) -> Support {
        let needs = |p: Protection| match p {
            Protection::FileSystem => Some(3),
            Protection::Tcp => Some(4),
            Protection::DeviceIoctl => Some(5),
            Protection::Signals | Protection::AbstractUnixSockets => Some(6),
            Protection::UnixSocketConnect => Some(9),
            Protection::Udp => Some(10),
            Protection::NoNewPrivileges | Protection::ProcessLimits => None,
        };
        Support {
            os: "linux".into(),
            landlock_abi: Some(abi),
            protections: Protection::ALL
                .into_iter()
                .map(|protection| ProtectionState {
                    protection,
                    state: match needs(protection) {
                        Some(n) if n > abi => State::NotEnforced {
                            reason: format!("needs Landlock ABI {n}"),
                        },
                        _ => State::Enforced,
                    },
                })
                .collect(),
        }
    }

    fn mode(mode: Mode) -> ModeSource {
        ModeSource {
            mode,
            from: "the default".into(),
        }
    }

    #[test]
    fn abi_7_is_ok_and_names_udp_and_unix_sockets_as_not_covered() {
        let r = evaluate(&linux(7), &mode(Mode::BestEffort), "runtime.sandbox");
        assert_eq!(r.status, Status::Ok, "{r:?}");
        assert!(
            r.finding.contains("Landlock ABI 7 enforces the baseline"),
            "{}",
            r.finding
        );
        assert!(
            r.finding
                .ends_with("not covered here: unix_socket_connect, udp"),
            "{}",
            r.finding
        );
        assert!(r.details.is_empty(), "{:?}", r.details);
        let warned = evaluate(&linux(3), &mode(Mode::BestEffort), "runtime.sandbox");
        assert_eq!(warned.details.len(), 6, "{:?}", warned.details);
        assert!(
            warned
                .details
                .contains(&"udp: not enforced — needs Landlock ABI 10".to_owned())
        );
        let required = evaluate(&linux(7), &mode(Mode::Required), "runtime.sandbox");
        assert_eq!(required.status, Status::Ok);
        let full = evaluate(&linux(10), &mode(Mode::BestEffort), "runtime.sandbox");
        assert!(!full.finding.contains("not covered"), "{}", full.finding);
    }

    #[test]
    fn a_missing_baseline_warns_and_fails_when_required() {
        let r = evaluate(&linux(3), &mode(Mode::BestEffort), "runtime.sandbox");
        assert_eq!(r.status, Status::Warn, "{r:?}");
        assert!(r.finding.contains("cannot enforce tcp"), "{}", r.finding);
        assert!(r.remedy.as_deref().unwrap().contains("Linux 6.7"));
        let r = evaluate(&linux(3), &mode(Mode::Required), "runtime.sandbox");
        assert_eq!(r.status, Status::Fail, "{r:?}");
        assert!(
            r.finding.contains("every run will be refused"),
            "{}",
            r.finding
        );
        assert!(
            r.remedy
                .as_deref()
                .unwrap()
                .contains("--sandbox best-effort")
        );
    }

    #[test]
    fn no_landlock_names_every_missing_baseline_protection() {
        let mut support = linux(0);
        support.landlock_abi = None;
        support.os = "macos".into();
        let r = evaluate(&support, &mode(Mode::Required), "runtime.sandbox");
        assert_eq!(r.status, Status::Fail);
        assert!(
            r.finding
                .contains("macos without Landlock cannot enforce file_system, tcp"),
            "{}",
            r.finding
        );
    }

    #[test]
    fn off_warns_even_where_everything_could_be_enforced() {
        let r = evaluate(&linux(10), &mode(Mode::Off), "runtime.sandbox");
        assert_eq!(r.status, Status::Warn);
        assert!(r.finding.contains("without the sandbox"), "{}", r.finding);
    }

    #[test]
    fn the_mode_comes_from_the_flag_then_the_environment() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let m = mode_of(&args(&["serve", "--sandbox", "required"]), Some("off")).unwrap();
        assert_eq!(
            (m.mode, m.from.as_str()),
            (Mode::Required, "the registered command")
        );
        let m = mode_of(&args(&["serve", "--sandbox=off"]), None).unwrap();
        assert_eq!(m.mode, Mode::Off);
        let plain = args(&["serve", "--adapter", "refsci"]);
        assert_eq!(mode_of(&plain, Some("off")).unwrap().mode, Mode::Off);
        let default = mode_of(&plain, None).unwrap();
        assert_eq!(
            (default.mode, default.from.as_str()),
            (Mode::BestEffort, "the default")
        );
        let bad = mode_of(&plain, Some("strict")).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "the sandbox mode \"strict\" (from SCIMCP_SANDBOX) is not one the server accepts"
        );
    }
}
