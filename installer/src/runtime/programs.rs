//! The programs an adapter runs that the installer does not provide: an executable runtime's
//! own and each `[programs.<id>]`. System packages are the scientist's (or their
//! administrator's) to install, so `scimcp-setup install` only says which package provides a
//! missing program, per package manager, as the manifest's `provided_by` declares.

use std::path::Path;

use scimcp_core::RuntimeKind;
use scimcp_core::manifest::{Manifest, RUNTIME_PROGRAM, missing_program_remedy};
use scimcp_core::program_identity::find_executable;

/// One note per declared program that is not found (on PATH, or first in the python
/// runtime's scripts directory), naming the adapter, the program and what to install.
pub fn missing_programs(manifest: &Manifest, python: Option<&Path>) -> Vec<String> {
    let mut ids: Vec<&str> = Vec::new();
    if manifest.runtime.kind == RuntimeKind::Executable {
        ids.push(RUNTIME_PROGRAM);
    }
    ids.extend(manifest.programs.keys().map(String::as_str));
    let dirs: Vec<std::path::PathBuf> = python
        .and_then(scimcp_core::program_identity::scripts_dir)
        .into_iter()
        .collect();
    let path = std::env::var_os("PATH");
    ids.into_iter()
        .filter_map(|id| {
            let facts = manifest.program_facts(id)?;
            if find_executable(facts.executable, &dirs, path.clone()).is_some() {
                return None;
            }
            Some(format!(
                "the {} adapter runs `{}`, which is not installed (scimcp-setup does not install \
                 system packages): {}",
                manifest.name,
                facts.executable,
                missing_program_remedy(facts.executable, facts.provided_by)
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_gets_a_note_with_its_packages_and_a_present_one_none() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("p.json"),
            r#"{"type": "object", "additionalProperties": false, "properties": {}}"#,
        )
        .unwrap();
        let text = r#"schema_version = 1
name = "docker"
version = "0.1.0"
summary = "x"
[runtime]
kind = "executable"
executable = "scimcp-installer-test-missing"
provided_by = { debian = "autodock-vina", conda = "conda-forge::vina" }
[programs.cat]
executable = "cat"
[[workflow]]
id = "w"
summary = "w"
parameters = "p.json"
argv = ["x"]
"#;
        fs_err::write(dir.path().join("a.toml"), text).unwrap();
        let m = scimcp_core::manifest::load_file(&dir.path().join("a.toml"))
            .unwrap()
            .manifest;
        let notes = missing_programs(&m, None);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("`scimcp-installer-test-missing`"),
            "{}",
            notes[0]
        );
        assert!(
            notes[0].contains("sudo apt install autodock-vina"),
            "{}",
            notes[0]
        );
        assert!(
            notes[0].contains("conda install -c conda-forge vina"),
            "{}",
            notes[0]
        );
    }
}
