//! Version consistency: every crate carries the workspace version, every adapter's version
//! is valid and, when its package ships in the bundle, equals that package's own version,
//! and the changelog has an entry for the release.

use std::path::Path;
use std::process::Command;

use super::command;
use super::error::StepError;
use crate::child;

/// Check every rule; `Ok` says what was checked.
pub fn check(repo: &Path, version: &str) -> Result<String, StepError> {
    let mut problems = Vec::new();
    let mut cmd = Command::new("cargo");
    cmd.args([
        "metadata",
        "--no-deps",
        "--format-version",
        "1",
        "--offline",
    ])
    .current_dir(repo);
    let metadata = command::run("cargo metadata", cmd, child::METADATA, command::TAIL_LINES)?;
    let meta: serde_json::Value =
        serde_json::from_str(&metadata.stdout).map_err(StepError::Metadata)?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    for p in &packages {
        let (name, v) = (
            p["name"].as_str().unwrap_or("?"),
            p["version"].as_str().unwrap_or("?"),
        );
        if v != version {
            problems.push(format!("crate {name} has version {v}, not the release version {version} (use version.workspace = true)"));
        }
    }
    let adapters = repo.join("adapters");
    let mut adapter_count = 0;
    for entry in fs_err::read_dir(&adapters)
        .map_err(StepError::io("list the adapters"))?
        .flatten()
    {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        adapter_count += 1;
        match scimcp_core::manifest::load_file(&path) {
            Err(e) => problems.push(format!(
                "adapter {} is invalid: {}",
                path.display(),
                e.first()
            )),
            Ok(a) => {
                if let Some(src) = &a.manifest.runtime.package_source {
                    let pyproject = repo.join(src).join("pyproject.toml");
                    match package_version(&pyproject) {
                        Some(pv) if pv == a.manifest.version => {}
                        Some(pv) => problems.push(format!(
                            "adapter {} declares version {} but its bundled package {} is {pv}; keep them equal",
                            a.manifest.name,
                            a.manifest.version,
                            pyproject.display()
                        )),
                        None => problems.push(format!("cannot read the version of {}", pyproject.display())),
                    }
                }
            }
        }
    }
    let changelog = fs_err::read_to_string(repo.join("CHANGELOG.md")).unwrap_or_default();
    let has_entry = changelog.lines().any(|l| {
        let l = l.trim_start_matches('#').trim();
        l.starts_with(&format!("[{version}]"))
            || l.starts_with(&format!("{version} "))
            || l == version
            || l.starts_with(&format!("v{version}"))
    });
    if !has_entry {
        problems.push(format!(
            "CHANGELOG.md has no entry for {version}; add a `## [{version}]` section"
        ));
    }
    if problems.is_empty() {
        Ok(format!(
            "{} crates at {version}, {adapter_count} adapters consistent, CHANGELOG entry present",
            packages.len()
        ))
    } else {
        Err(StepError::Versions { problems })
    }
}

fn package_version(pyproject: &Path) -> Option<String> {
    let text = fs_err::read_to_string(pyproject).ok()?;
    let doc: toml::Value = toml::from_str(&text).ok()?;
    doc.get("project")?
        .get("version")?
        .as_str()
        .map(String::from)
}
