//! The human report, snapshot-tested on a real installation (healthy, then broken in
//! several ways). Paths, times, hashes, sizes and versions are filtered out, so the
//! snapshot holds only what the doctor decides.

#![cfg(unix)]

mod common;

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
    let install = Install::new();
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
