//! The lifecycle smoke: what a scientist's machine goes through, in a fake home whose path
//! has spaces and non-ASCII letters. Install from the bundle, doctor, repair, upgrade to a
//! second version from a local mirror, roll back, uninstall, and prove that marker files in
//! `runs/` came through byte for byte. Every binary is driven as a user would (no library
//! calls), with `HOME` and `SCIMCP_HOME` pointing into the work directory, so the real
//! home and client configurations are never touched.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Run the smoke on the first bundle zip in `bundles`.
pub(super) fn run(
    bin_dir: &Path,
    bundles: &Path,
    work: &Path,
    python: Option<&Path>,
) -> Result<String, String> {
    let zip = fs_err::read_dir(bundles)
        .map_err(|e| format!("no bundles to install ({e}); the bundle step must run first"))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "zip"))
        .ok_or("no bundle zip to install: the bundle step must run first")?;
    let root = work.join("Jürgen Müller").join("Données de test");
    let home = root.join("home");
    let data = home.join("scimcp data");
    fs_err::create_dir_all(&home).map_err(|e| e.to_string())?;
    let exe = std::env::consts::EXE_SUFFIX;
    let setup = bin_dir.join(format!("scimcp-setup{exe}"));
    let run = |args: &[&str], what: &str| -> Result<String, String> {
        let mut cmd = Command::new(&setup);
        cmd.args(args)
            .env("HOME", &home)
            .env("USERPROFILE", &home)
            .env("SCIMCP_HOME", &data)
            .env_remove("SCIMCP_PYTHON")
            .env_remove("XDG_CONFIG_HOME");
        if let Some(py) = python.filter(|_| {
            args.first()
                .is_some_and(|a| *a == "install" || *a == "repair" || *a == "upgrade")
        }) {
            cmd.arg("--python").arg(py);
        }
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run scimcp-setup: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{what} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let zip_text = zip.to_string_lossy().into_owned();
    run(
        // Signatures are proven by the signature step; this smoke proves the lifecycle on
        // the same bytes, so the unsigned local build goes in with the explicit override.
        &[
            "install",
            "--from",
            &zip_text,
            "--client",
            "generic",
            "--allow-unsigned",
        ],
        "install from the bundle",
    )?;

    let markers = write_markers(&data.join("runs"))?;
    let doctor = data
        .join("current")
        .join("bin")
        .join(format!("scimcp-doctor{exe}"));
    let doctor_out = Command::new(&doctor)
        .arg("--json")
        .env("HOME", &home)
        .env("SCIMCP_HOME", &data)
        .output()
        .map_err(|e| format!("cannot run the installed doctor: {e}"))?;
    if !matches!(doctor_out.status.code(), Some(0 | 1)) {
        return Err(format!(
            "the doctor found failures after install: {}",
            String::from_utf8_lossy(&doctor_out.stdout)
        ));
    }
    run(&["repair", "--client", "generic"], "repair")?;

    let mirror = root.join("mirror");
    let next = second_version(&zip, &mirror)?;
    run(
        &[
            "upgrade",
            "--from",
            &mirror.to_string_lossy(),
            "--client",
            "generic",
            "--allow-unsigned",
        ],
        "upgrade",
    )?;
    run(&["rollback", "--client", "generic"], "rollback")?;
    run(
        &[
            "upgrade",
            "--from",
            &mirror.to_string_lossy(),
            "--client",
            "generic",
            "--allow-unsigned",
        ],
        "upgrade again",
    )?;
    run(&["uninstall", "--client", "generic", "--yes"], "uninstall")?;
    check_markers(&markers)?;
    Ok(format!(
        "installed under '{}', doctor {}, repair, upgrade to {next}, rollback, upgrade, uninstall; {} run marker(s) unchanged",
        root.display(),
        if doctor_out.status.code() == Some(0) {
            "all ok"
        } else {
            "warnings only"
        },
        markers.len()
    ))
}

fn write_markers(runs: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, String> {
    let dir = runs.join("run-preflightmark01");
    fs_err::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let files = [
        ("result.json", b"{\"marker\": \"preflight\"}\n".to_vec()),
        ("work/output/metrics.json", b"{\"r2\": 0.5}\n".to_vec()),
    ];
    let mut out = Vec::new();
    for (rel, bytes) in files {
        let path = dir.join(rel);
        fs_err::create_dir_all(path.parent().expect("has a parent")).map_err(|e| e.to_string())?;
        fs_err::write(&path, &bytes).map_err(|e| e.to_string())?;
        out.push((path, bytes));
    }
    Ok(out)
}

fn check_markers(markers: &[(PathBuf, Vec<u8>)]) -> Result<(), String> {
    for (path, bytes) in markers {
        match fs_err::read(path) {
            Ok(now) if &now == bytes => {}
            Ok(_) => return Err(format!("{} changed during the lifecycle", path.display())),
            Err(_) => {
                return Err(format!(
                    "{} was deleted during the lifecycle",
                    path.display()
                ));
            }
        }
    }
    Ok(())
}

/// Unpack `zip` into `mirror/scimcp-<patch+1>/` with that version in its RELEASE.json: the
/// "second locally built version" an upgrade moves to.
fn second_version(zip: &Path, mirror: &Path) -> Result<String, String> {
    let file = fs_err::File::open(zip).map_err(|e| e.to_string())?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| e.to_string())?;
    let mut release = String::new();
    archive
        .by_name("RELEASE.json")
        .map_err(|e| e.to_string())?
        .read_to_string(&mut release)
        .map_err(|e| e.to_string())?;
    let mut value: serde_json::Value = serde_json::from_str(&release).map_err(|e| e.to_string())?;
    let mut version = semver::Version::parse(value["version"].as_str().unwrap_or_default())
        .map_err(|e| e.to_string())?;
    version.patch += 1;
    let dir = mirror.join(format!("scimcp-{version}"));
    archive.extract(&dir).map_err(|e| e.to_string())?;
    value["version"] = serde_json::Value::String(version.to_string());
    fs_err::write(
        dir.join("RELEASE.json"),
        serde_json::to_vec_pretty(&value).expect("json"),
    )
    .map_err(|e| e.to_string())?;
    #[cfg(unix)]
    for entry in fs_err::read_dir(dir.join("bin"))
        .map_err(|e| e.to_string())?
        .flatten()
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = fs_err::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o755));
    }
    Ok(version.to_string())
}
