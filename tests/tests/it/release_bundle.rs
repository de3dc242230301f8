//! A scientist's path from a release bundle: the zip `scimcp-release bundle` builds unpacks
//! into one folder named like the zip (a README.txt inside says what to run and how to undo
//! it), and both ways of installing it work from a path with a space and accents:
//! `scimcp-setup install --from` the zip, and `bin/scimcp-setup install` run from the
//! unpacked folder.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use scimcp_testkit::{FakeHome, binary, run_bounded, stderr, stdout};

fn host_target() -> String {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "macos" => format!("{arch}-apple-darwin"),
        "windows" => format!("{arch}-pc-windows-msvc"),
        _ => format!("{arch}-unknown-linux-gnu"),
    }
}

/// `scimcp-release bundle` of the built binaries into `out`; returns the zip.
fn build_bundle(out: &Path) -> PathBuf {
    let release = binary("scimcp-release");
    let mut cmd = std::process::Command::new(&release);
    cmd.arg("bundle")
        .arg("--repo")
        .arg(scimcp_e2e::workspace_root())
        .arg("--bin-dir")
        .arg(release.parent().unwrap())
        .arg("--out")
        .arg(out)
        .env("SOURCE_DATE_EPOCH", "1767225600");
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(120));
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    out.join(format!(
        "scimcp-{}-{}.zip",
        scimcp_core::version::SUITE_VERSION,
        host_target()
    ))
}

/// `scimcp-doctor --check install.layout --json` of `home`'s installation: that check's JSON.
fn layout_check(home: &FakeHome) -> serde_json::Value {
    let empty = home.root().join("empty bin");
    let mut cmd = home.command(&binary("scimcp-doctor"), &empty);
    cmd.args(["--check", "install.layout", "--json"]);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(120));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    report["checks"][0].clone()
}

fn setup(home: &FakeHome, program: &Path, args: &[&str]) -> std::process::Output {
    let empty = home.root().join("empty bin");
    fs_err::create_dir_all(&empty).unwrap();
    let mut cmd = home.command(program, &empty);
    cmd.args(args);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(120));
    assert!(o.status.success(), "{args:?}\n{}{}", stdout(&o), stderr(&o));
    o
}

#[test]
fn the_bundle_unpacks_to_one_folder_with_a_readme_and_installs_both_ways() {
    let home = FakeHome::new();
    let downloads = home.home().join("Téléchargements du labo");
    let zip_path = build_bundle(&downloads);
    let folder = zip_path.file_stem().unwrap().to_str().unwrap().to_string();

    // One top-level folder, named like the zip: `unzip` in Downloads makes one folder.
    let mut zip = zip::ZipArchive::new(fs_err::File::open(&zip_path).unwrap()).unwrap();
    let names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    let outside: Vec<&String> = names
        .iter()
        .filter(|n| !n.starts_with(&format!("{folder}/")))
        .collect();
    assert!(outside.is_empty(), "outside {folder}/: {outside:?}");
    let mut readme = String::new();
    zip.by_name(&format!("{folder}/README.txt"))
        .unwrap()
        .read_to_string(&mut readme)
        .unwrap();
    let exe = std::env::consts::EXE_SUFFIX;
    for needle in ["bin", "scimcp-setup", " install", " uninstall"] {
        assert!(readme.contains(needle), "{needle:?} missing from\n{readme}");
    }

    // 1. The zip itself (unsigned: a development bundle needs --allow-unsigned).
    let version = scimcp_core::version::SUITE_VERSION;
    let from_zip = setup(
        &home,
        &binary("scimcp-setup"),
        &[
            "install",
            "--from",
            zip_path.to_str().unwrap(),
            "--allow-unsigned",
            "--skip-runtime",
            "--client",
            "generic",
        ],
    );
    let installed = home.data_root().join("versions").join(version);
    assert!(
        installed.join("bin").join(format!("scimcp{exe}")).is_file(),
        "{}",
        stdout(&from_zip)
    );
    assert!(installed.join("adapters/refsci.toml").is_file());
    assert!(installed.join("RELEASE.json").is_file());
    // The doctor says the override is there: nothing checked who built this bundle.
    let check = layout_check(&home);
    assert_eq!(check["status"], "warn", "{check:#}");
    let finding = check["finding"].as_str().unwrap();
    assert!(
        finding.contains("development override") && finding.contains("--allow-unsigned"),
        "{check:#}"
    );
    assert!(
        check["remedy"].as_str().unwrap().contains("signed release"),
        "{check:#}"
    );
    assert_eq!(check["fixable"], false, "{check:#}");

    // 2. The unpacked folder's own scimcp-setup, in another home.
    let other = FakeHome::new();
    let unpacked = other.home().join("Téléchargements du labo");
    zip.extract(&unpacked).unwrap();
    let own = unpacked
        .join(&folder)
        .join("bin")
        .join(format!("scimcp-setup{exe}"));
    #[cfg(unix)]
    for entry in fs_err::read_dir(own.parent().unwrap()).unwrap() {
        use std::os::unix::fs::PermissionsExt;
        let path = entry.unwrap().path();
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    setup(
        &other,
        &own,
        &["install", "--skip-runtime", "--client", "generic"],
    );
    let installed = other.data_root().join("versions").join(version);
    assert!(installed.join("bin").join(format!("scimcp{exe}")).is_file());
    assert!(installed.join("adapters/refsci.toml").is_file());
    // Installed as a local build (nothing was downloaded by scimcp-setup): no override.
    let check = layout_check(&other);
    assert_eq!(check["status"], "ok", "{check:#}");
}
