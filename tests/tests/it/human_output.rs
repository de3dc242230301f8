//! Golden files of every binary's human output: each `--help` (subcommands included) and the
//! plain-text reports a scientist reads (`scimcp adapter list` and `check`, `scimcp-setup
//! status` and `clients` in an empty fake home). Temporary paths, the version and hashes are
//! filtered, so a snapshot changes only when what a person reads changes. The doctor's report
//! has its own (doctor/tests/it/human_report.rs), and failures theirs (one per binary, with
//! the exit status convention).
//!
//! Update after an intended change: `INSTA_UPDATE=always cargo nextest run --workspace -E
//! 'test(/^human_output::/)'`, then review the diff.

use std::path::Path;
use std::process::Command;

use scimcp_testkit::{FakeHome, binary, run_bounded};

const LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// `program args…` with a clean environment (so clap shows no `[env: …=value]` of this
/// machine) in `home`, its stdout and stderr as one text with the exit status.
fn human(home: &FakeHome, program: &str, args: &[&str]) -> String {
    let mut cmd: Command = home.command(&binary(program), Path::new("/usr/bin:/bin"));
    cmd.args(args).env("COLUMNS", "100");
    let (out, _) = run_bounded(&mut cmd, LIMIT);
    format!(
        "$ {program} {}\nexit status: {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        out.status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn settings(home: &FakeHome) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("snapshots");
    s.set_prepend_module_to_snapshot(true);
    let root = regex_escape(&home.root().display().to_string());
    s.add_filter(&root, "[TMP]");
    s.add_filter(&regex_escape(env!("CARGO_PKG_VERSION")), "[VERSION]");
    s.add_filter(r"\b[0-9a-f]{64}\b", "[SHA256]");
    s
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

#[test]
fn every_binary_explains_itself() {
    let home = FakeHome::new();
    let helps: &[(&str, &[&str])] = &[
        ("scimcp", &["--help"]),
        ("scimcp", &["serve", "--help"]),
        ("scimcp", &["adapter", "--help"]),
        ("scimcp", &["token", "--help"]),
        ("scimcp", &["runs", "prune", "--help"]),
        ("scimcp-setup", &["--help"]),
        ("scimcp-setup", &["install", "--help"]),
        ("scimcp-setup", &["uninstall", "--help"]),
        ("scimcp-doctor", &["--help"]),
        ("scimcp-parity", &["--help"]),
        ("scimcp-parity", &["check", "--help"]),
        ("scimcp-release", &["--help"]),
        ("scimcp-release", &["verify", "--help"]),
        ("scimcp-release", &["preflight", "--help"]),
    ];
    settings(&home).bind(|| {
        for (program, args) in helps {
            let name = format!("{program} {}", args.join(" "))
                .replace(' ', "_")
                .replace("--", "");
            insta::assert_snapshot!(name, human(&home, program, args));
        }
    });
}

/// Linux only: the client files' locations are each OS's own.
#[cfg(target_os = "linux")]
#[test]
fn the_plain_text_reports_read_as_they_should() {
    let home = FakeHome::new();
    let reports: &[(&str, &[&str])] = &[
        ("scimcp", &["adapter", "list"]),
        ("scimcp", &["adapter", "check", "refsci"]),
        ("scimcp-setup", &["status"]),
        ("scimcp-setup", &["clients"]),
    ];
    settings(&home).bind(|| {
        for (program, args) in reports {
            let name = format!("{program} {}", args.join(" ")).replace(' ', "_");
            insta::assert_snapshot!(name, human(&home, program, args));
        }
    });
}
