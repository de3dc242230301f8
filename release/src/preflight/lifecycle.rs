//! The lifecycle smoke: what a scientist's machine goes through, in a fake home whose path
//! has spaces and non-ASCII letters. Install from the bundle, doctor, repair, upgrade to a
//! second version from a local mirror, roll back, uninstall, and prove that marker files in
//! `runs/` came through byte for byte. Every binary is driven as a user would (no library
//! calls), with `HOME` and `SCIMCP_HOME` pointing into the work directory, so the real
//! home and client configurations are never touched.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::command;
use super::error::StepError;
use crate::child;

/// Run the smoke on the first bundle zip in `bundles`.
pub(super) fn run(
    bin_dir: &Path,
    bundles: &Path,
    work: &Path,
    python: Option<&Path>,
) -> Result<String, StepError> {
    let no_bundle = || StepError::NoBundle {
        dir: bundles.to_path_buf(),
    };
    let zip = fs_err::read_dir(bundles)
        .map_err(|_| no_bundle())?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "zip"))
        .ok_or_else(no_bundle)?;
    let root = work.join("Jürgen Müller").join("Données de test");
    let home = root.join("home");
    let data = home.join("scimcp data");
    fs_err::create_dir_all(&home).map_err(StepError::io("create the fake home"))?;
    let exe = std::env::consts::EXE_SUFFIX;
    let setup = bin_dir.join(format!("scimcp-setup{exe}"));
    let run = |args: &[&str], what: &str| -> Result<String, StepError> {
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
        // The whole output: an install's failure may be explained well before its last lines.
        let out = command::run(
            &format!("scimcp-setup {what}"),
            cmd,
            child::SETUP,
            usize::MAX,
        )?;
        Ok(out.stdout)
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
    let mut doctor_cmd = Command::new(&doctor);
    doctor_cmd
        .arg("--json")
        .env("HOME", &home)
        .env("SCIMCP_HOME", &data);
    let doctor_out = command::start("the installed scimcp-doctor", doctor_cmd, child::DOCTOR)?;
    // Exit 1 covers warnings and failures alike; only failures stop the lifecycle.
    let doctor_status = serde_json::from_str::<serde_json::Value>(&doctor_out.stdout)
        .ok()
        .and_then(|r| r["status"].as_str().map(String::from));
    if !matches!(doctor_status.as_deref(), Some("ok" | "warn")) {
        return Err(StepError::Doctor {
            report: format!("{}{}", doctor_out.stdout, doctor_out.stderr),
        });
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
        if doctor_status.as_deref() == Some("ok") {
            "all ok"
        } else {
            "warnings only"
        },
        markers.len()
    ))
}

fn write_markers(runs: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, StepError> {
    let dir = runs.join("run-preflightmark01");
    fs_err::create_dir_all(&dir).map_err(StepError::io("create the marker run"))?;
    let files = [
        ("result.json", b"{\"marker\": \"preflight\"}\n".to_vec()),
        ("work/output/metrics.json", b"{\"r2\": 0.5}\n".to_vec()),
    ];
    let mut out = Vec::new();
    for (rel, bytes) in files {
        let path = dir.join(rel);
        fs_err::create_dir_all(path.parent().expect("has a parent"))
            .map_err(StepError::io("create the marker run"))?;
        fs_err::write(&path, &bytes).map_err(StepError::io("write a run marker"))?;
        out.push((path, bytes));
    }
    Ok(out)
}

fn check_markers(markers: &[(PathBuf, Vec<u8>)]) -> Result<(), StepError> {
    for (path, bytes) in markers {
        let path = path.clone();
        match fs_err::read(&path) {
            Ok(now) if &now == bytes => {}
            Ok(_) => return Err(StepError::MarkerChanged { path }),
            Err(_) => return Err(StepError::MarkerDeleted { path }),
        }
    }
    Ok(())
}

/// Unpack `zip` into `mirror/scimcp-<patch+1>/` with that version in its RELEASE.json: the
/// "second locally built version" an upgrade moves to. The bundle's files sit under its one
/// top-level folder; that folder's contents become the mirror's bundle folder.
fn second_version(zip: &Path, mirror: &Path) -> Result<String, StepError> {
    let bad = |message: String| StepError::BundleZip {
        zip: zip.to_path_buf(),
        message,
    };
    let file = fs_err::File::open(zip).map_err(StepError::io("open the bundle"))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| bad(e.to_string()))?;
    let folder = zip
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut release = String::new();
    archive
        .by_name(&format!("{folder}/RELEASE.json"))
        .map_err(|e| bad(format!("{folder}/RELEASE.json: {e}")))?
        .read_to_string(&mut release)
        .map_err(|e| bad(format!("RELEASE.json: {e}")))?;
    let mut value: serde_json::Value =
        serde_json::from_str(&release).map_err(|e| bad(format!("RELEASE.json: {e}")))?;
    let mut version = semver::Version::parse(value["version"].as_str().unwrap_or_default())
        .map_err(|e| bad(format!("RELEASE.json version: {e}")))?;
    version.patch += 1;
    let dir = mirror.join(format!("scimcp-{version}"));
    let unpacked = mirror.join(".unpacked");
    archive
        .extract(&unpacked)
        .map_err(|e| bad(format!("extracting into {}: {e}", unpacked.display())))?;
    fs_err::rename(unpacked.join(&folder), &dir)
        .map_err(StepError::io("move the second version into the mirror"))?;
    fs_err::remove_dir_all(&unpacked)
        .map_err(StepError::io("remove the emptied unpacking folder"))?;
    value["version"] = serde_json::Value::String(version.to_string());
    fs_err::write(
        dir.join("RELEASE.json"),
        serde_json::to_vec_pretty(&value).expect("json"),
    )
    .map_err(StepError::io("write the second version's RELEASE.json"))?;
    #[cfg(unix)]
    for entry in fs_err::read_dir(dir.join("bin"))
        .map_err(StepError::io("list the second version's bin/"))?
        .flatten()
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = fs_err::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o755));
    }
    Ok(version.to_string())
}
