//! The human report, snapshot-tested on a real installation (healthy, then broken in
//! several ways). Paths, times, hashes, sizes and versions are filtered out, so the
//! snapshot holds only what the doctor decides.

#![cfg(unix)]

use crate::common;

use common::Install;

/// Replace what varies between machines and runs with placeholders.
fn normalize(text: &str, install: &Install) -> String {
    let mut out = text
        .replace(&install.data.display().to_string(), "[DATA]")
        .replace(&install.home.display().to_string(), "[HOME]");
    let rules: &[(&str, &str)] = &[
        (r"refsci-[0-9a-f]{16}", "refsci-[KEY]"),
        (r"sha256 [0-9a-f]{12}", "sha256 [HASH]"),
        (r"\d+ ms", "[MS] ms"),
        (r"in \d+\.\d s", "in [S] s"),
        (r"Python \d+\.\d+\.\d+", "Python [PY]"),
        (r"\d+\.\d GiB free|\d+ MiB free", "[FREE] free"),
        (
            r"on the volume of \S.*? \(warn",
            "on the volume of [DIR] (warn",
        ),
        (r"probe \d+\.tmp", "probe [PID].tmp"),
        (r"their \d+ recorded files", "their [N] recorded files"),
        // state.history: the runs a handshake left and the volume's free space.
        (
            r"\d+ runs?, [\d.]+ (bytes|KiB|MiB|GiB), in",
            "[N] runs, [SIZE], in",
        ),
        (r"[\d.]+ (KiB|MiB|GiB) free on its", "[FREE] free on its"),
        // runtime.sandbox: the kernel's Landlock ABI and what it lacks vary by machine.
        (r"Landlock ABI \d+", "Landlock ABI [N]"),
        (
            r"process limits\); not covered here: [a-z_, ]+",
            "process limits)[; GAPS]",
        ),
    ];
    for (pattern, with) in rules {
        out = regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&out, *with)
            .into_owned();
    }
    out.replace(scimcp_core::version::SUITE_VERSION, "[VERSION]")
}

#[test]
fn human_report_of_a_healthy_and_a_broken_installation() {
    // The snapshot is of a machine whose kernel enforces the sandbox's baseline (Linux 6.7+
    // with Landlock): elsewhere runtime.sandbox warns, rightly, and the report differs.
    if !scimcp_process::sandbox::probe().is_complete() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: this kernel lacks the sandbox's baseline (runtime.sandbox warns)");
        }
        return;
    }
    let install = Install::new();
    if let Some(why) = scimcp_testkit::doctor::low_disk(&install.data) {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: the snapshot is of a machine with room, and here {why}");
        }
        return;
    }
    let out = install.doctor(&[]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b'), "no colour off a terminal");
    insta::assert_snapshot!("healthy", normalize(&text, &install));

    fs_err::remove_file(install.data.join("versions/0.1.0/bin/scimcp-setup")).unwrap();
    fs_err::create_dir_all(install.data.join("versions/9.9.9")).unwrap();
    fs_err::write(
        install.package_dir().join("__init__.py"),
        "raise ImportError('damaged on purpose')\n",
    )
    .unwrap();
    fs_err::write(install.generic_file(), "{ \"mcpServers\": ").unwrap();
    let out = install.doctor(&["--fast"]);
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stdout).unwrap();
    insta::assert_snapshot!("broken", normalize(&text, &install));
}

/// An empty home with nothing installed, asked for a check that does not exist: an error of
/// the doctor's own, so it exits 2 (DESIGN.md: 1 is warnings only) with
/// `error:` and a `hint:` listing the checks; with `--json`, one failure object on stdout in
/// place of the report.
#[test]
fn an_unknown_check_in_an_empty_home_exits_2_with_a_hint() {
    let home = tempfile::tempdir().unwrap();
    let doctor = || {
        common::command(
            &common::bin("scimcp-doctor"),
            home.path(),
            &home.path().join("data"),
        )
    };
    let out = doctor().args(["--check", "no.such"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(
            "error: there is no check \"no.such\"\n  hint: the checks here are: install.layout, "
        ) && err.ends_with(" (`scimcp-doctor --list`)\n"),
        "{err}"
    );

    let out = doctor()
        .args(["--check", "no.such", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let failure: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(failure["schema_version"], 1, "{failure:#}");
    assert_eq!(failure["message"], "there is no check \"no.such\"");
    assert_eq!(failure["causes"], serde_json::json!([]));
    assert!(
        failure["hint"]
            .as_str()
            .unwrap()
            .starts_with("the checks here are: install.layout, "),
        "{failure:#}"
    );
}
