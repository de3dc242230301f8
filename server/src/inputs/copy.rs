//! The run's copies of its inputs: made through a handle opened the way validation opened
//! the file, hashed as written (a file swapped or changed since validation is refused), and
//! hashed again when the run ends.

use std::path::Path;

use scimcp_core::fs::create_private_dir;

use super::resolved::ResolvedInput;
use crate::datasets::open::open_confined;
use crate::envelope::{ErrorCode, ToolError};
use crate::plan::PlannedInput;

/// The run stops with this reason when an input's bytes differ from the validated ones.
pub const INPUT_CHANGED: &str = "input_changed";

/// Copy every input file into `work/<run_path>`, refusing any whose bytes are not the
/// validated ones (the error's field is `inputs.<id>`).
pub fn copy_inputs(work: &Path, inputs: &[ResolvedInput], max_bytes: u64) -> Result<(), ToolError> {
    for input in inputs {
        for file in &input.files {
            let target = work.join(&file.planned.run_path);
            if let Some(parent) = target.parent() {
                create_private_dir(parent).map_err(|e| {
                    ToolError::internal(format!("cannot create {}: {e}", parent.display()))
                })?;
            }
            let reference = &file.planned.reference;
            let copied = open_confined(&file.root, &file.relative, reference, max_bytes)
                .and_then(|mut opened| opened.copy_to(&target, reference, max_bytes))
                .map_err(|e| e.field(format!("inputs.{}", input.id)))?;
            if copied != file.planned.sha256 {
                return Err(ToolError::new(
                    ErrorCode::DatasetChanged,
                    format!(
                        "input '{}': file '{reference}' changed after validation: sha256 was {}, now {copied}",
                        input.id, file.planned.sha256
                    ),
                    "validate the analysis again",
                )
                .field(format!("inputs.{}", input.id)));
            }
        }
    }
    Ok(())
}

/// Each input file's copy as it is now: its run path and SHA-256 (`None` when unreadable).
pub fn hashes_now(work: &Path, inputs: &[PlannedInput]) -> Vec<(String, Option<String>)> {
    inputs
        .iter()
        .flat_map(|i| &i.files)
        .map(|f| {
            let now = scimcp_core::hash::sha256_file(&work.join(&f.run_path))
                .map(|(h, _)| h)
                .ok();
            (f.run_path.clone(), now)
        })
        .collect()
}

/// Why the run's copies are not the validated bytes any more, naming the input, if so.
pub fn changed_since_validation(
    inputs: &[PlannedInput],
    now: &[(String, Option<String>)],
) -> Option<String> {
    inputs.iter().find_map(|input| {
        input.files.iter().find_map(|f| {
            let current = now
                .iter()
                .find(|(p, _)| *p == f.run_path)
                .and_then(|(_, h)| h.as_deref());
            (current != Some(f.sha256.as_str())).then(|| {
                format!(
                    "the run's copy of input '{}' ({}) changed while the CLI ran",
                    input.id, f.run_path
                )
            })
        })
    })
}

/// The inputs as the run manifest records them: each file with its validated hash and the
/// hash of its copy at the end.
pub fn manifest_records(
    inputs: &[PlannedInput],
    now: &[(String, Option<String>)],
) -> Vec<serde_json::Value> {
    inputs
        .iter()
        .flat_map(|input| {
            input.files.iter().map(move |f| {
                let at_end = now
                    .iter()
                    .find(|(p, _)| *p == f.run_path)
                    .and_then(|(_, h)| h.clone());
                serde_json::json!({
                    "input": input.id,
                    "reference": f.reference,
                    "path": f.run_path,
                    "validated_sha256": f.sha256,
                    "sha256_at_end": at_end,
                    "size_bytes": f.size_bytes,
                    "from_run": f.from_run,
                })
            })
        })
        .collect()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::inputs::resolved::ResolvedInputFile;
    use crate::plan::PlannedInputFile;
    use scimcp_core::manifest::InputKind;

    fn input(root: &Path, name: &str, sha256: &str) -> ResolvedInput {
        ResolvedInput {
            id: "ligand".into(),
            kind: InputKind::File,
            files: vec![ResolvedInputFile {
                planned: PlannedInputFile {
                    reference: name.into(),
                    run_path: format!("inputs/ligand/{name}"),
                    sha256: sha256.into(),
                    size_bytes: 4,
                    from_run: None,
                },
                path: root.join(name),
                root: root.to_path_buf(),
                relative: name.into(),
            }],
        }
    }

    #[test]
    fn a_file_changed_after_validation_is_refused_and_a_copy_changed_by_the_cli_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        let work = root.join("work");
        fs_err::create_dir(&work).unwrap();
        fs_err::write(root.join("lig.pdbqt"), "ATOM").unwrap();
        let validated = scimcp_core::hash::sha256_hex(b"ATOM");
        let ok = input(&root, "lig.pdbqt", &validated);
        copy_inputs(&work, std::slice::from_ref(&ok), 100).unwrap();
        let copy = work.join("inputs/ligand/lig.pdbqt");
        assert_eq!(fs_err::read_to_string(&copy).unwrap(), "ATOM");
        let planned = vec![ok.planned()];
        let now = hashes_now(&work, &planned);
        assert_eq!(changed_since_validation(&planned, &now), None);
        let records = manifest_records(&planned, &now);
        assert_eq!(records[0]["sha256_at_end"], validated.as_str());
        // The CLI rewrote its input: the end names it.
        fs_err::write(&copy, "HETATM").unwrap();
        let now = hashes_now(&work, &planned);
        let why = changed_since_validation(&planned, &now).unwrap();
        assert!(why.contains("input 'ligand'"), "{why}");
        assert_ne!(
            manifest_records(&planned, &now)[0]["sha256_at_end"],
            validated.as_str()
        );
        // The source changed between validation and the copy.
        let work2 = root.join("work2");
        fs_err::create_dir(&work2).unwrap();
        fs_err::write(root.join("lig.pdbqt"), "ATOX").unwrap();
        let e = copy_inputs(&work2, std::slice::from_ref(&ok), 100).unwrap_err();
        assert_eq!(e.code, ErrorCode::DatasetChanged);
        assert_eq!(e.field.as_deref(), Some("inputs.ligand"));
        // Swapped for a link after validation: refused by the confined open.
        fs_err::remove_file(root.join("lig.pdbqt")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("lig.pdbqt")).unwrap();
        let work3 = root.join("work3");
        fs_err::create_dir(&work3).unwrap();
        let e = copy_inputs(&work3, &[ok], 100).unwrap_err();
        assert_eq!(e.code, ErrorCode::DatasetOutsideRoots, "{}", e.message);
        assert_eq!(e.field.as_deref(), Some("inputs.ligand"));
    }
}
