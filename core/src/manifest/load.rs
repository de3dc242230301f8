//! Loading and validating manifests: strict TOML, referenced schemas, cross-references.
//!
//! This file is the order of the checks; each section of the manifest is checked in a file
//! named for it (`top_level`, `runtime`, `programs`, `placement`, `limits`, `datasets`,
//! `workflow` and the workflow's parts, `sandbox`, `parameters` with `columns`, `templates`,
//! `options`),
//! all writing through one [`Checker`]. The sections never import this file.

use std::path::{Path, PathBuf};

use checker::Checker;
use files::Files;

use super::adapter::{Adapter, AdapterOrigin};
use super::embedded::{EMBEDDED_ADAPTERS, embedded_names};
use super::error::{ManifestError, ManifestErrors};
use super::types::Manifest;

/// Load `name_or_path`: an embedded adapter's name, or a path to a manifest file.
pub fn resolve(name_or_path: &str) -> Result<Adapter, ManifestErrors> {
    let looks_like_path = name_or_path.contains(['/', '\\']) || name_or_path.ends_with(".toml");
    if !looks_like_path {
        if let Some(result) = load_embedded(name_or_path) {
            return result;
        }
        let path = Path::new(name_or_path);
        if path.is_file() {
            return load_file(path);
        }
        return Err(ManifestErrors(vec![ManifestError {
            file: PathBuf::from(name_or_path),
            line: None,
            column: None,
            field: String::new(),
            message: format!("no adapter named '{name_or_path}'"),
            hint: Some(format!(
                "use one of the shipped adapters ({}) or give the path of a manifest file",
                embedded_names().join(", ")
            )),
        }]));
    }
    load_file(Path::new(name_or_path))
}

/// Load the embedded adapter `name`, or `None` when no adapter has that name.
pub fn load_embedded(name: &str) -> Option<Result<Adapter, ManifestErrors>> {
    let embedded = EMBEDDED_ADAPTERS.iter().find(|a| a.name == name)?;
    let files = Files::Embedded(embedded);
    let text = files
        .read(embedded.manifest_path)
        .expect("embedded manifest is present");
    Some(load_text(
        &text,
        &files,
        embedded.manifest_path,
        AdapterOrigin::Embedded {
            name: name.to_string(),
        },
    ))
}

/// Load and validate the manifest file at `path` (schemas resolve against its directory).
pub fn load_file(path: &Path) -> Result<Adapter, ManifestErrors> {
    let text = files::read_text(path).map_err(|reason| {
        ManifestErrors(vec![ManifestError {
            file: path.to_path_buf(),
            line: None,
            column: None,
            field: String::new(),
            message: format!("cannot read the manifest: {reason}"),
            hint: Some("check the path and that it is a readable UTF-8 TOML file".into()),
        }])
    })?;
    let base = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let origin = AdapterOrigin::File {
        path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
    };
    load_text(&text, &Files::Disk(base), &name, origin)
}

/// Load and validate a manifest that a front end generated from another tool description (a
/// CWL CommandLineTool): `text` is its TOML, `files` the files it names (its parameter schemas)
/// by relative path, `source` the document it was made from (the origin, and the directory
/// errors name). It goes through every check a manifest file does, so what it plans is as
/// validated and hashed; `notes` are the front end's own warnings (what it ignored), kept
/// with the checker's.
pub fn load_generated(
    text: &str,
    files: &[(String, String)],
    source: &Path,
    notes: Vec<ManifestError>,
) -> Result<Adapter, ManifestErrors> {
    let dir = match source.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = source
        .file_name()
        .map(|n| format!("{}.generated.toml", n.to_string_lossy()))
        .unwrap_or_default();
    let origin = AdapterOrigin::File {
        path: std::path::absolute(source).unwrap_or_else(|_| source.to_path_buf()),
    };
    let mut adapter = load_text(text, &Files::Memory { dir, files }, &name, origin)?;
    let mut warnings = notes;
    warnings.append(&mut adapter.warnings);
    adapter.warnings = warnings;
    Ok(adapter)
}

fn load_text(
    text: &str,
    files: &Files<'_>,
    manifest_rel: &str,
    origin: AdapterOrigin,
) -> Result<Adapter, ManifestErrors> {
    let file = files.display(manifest_rel);
    let mut manifest = parse::parse_strict(text, &file)?;
    let mut checker = Checker::new(file, text, matches!(files, Files::Embedded(_)));
    check_manifest(&mut checker, &manifest);
    parameters::load_schemas(&mut checker, &mut manifest, files);
    for (i, wf) in manifest.workflows.iter().enumerate() {
        // Cross-references need the schema; a workflow whose schema failed to load was
        // already reported.
        if wf.parameters_schema.is_object() {
            templates::check_workflow_templates(&mut checker, i, wf);
            options::check_options(&mut checker, i, wf);
            programs::check_step_refs(&mut checker, i, wf);
        }
    }
    if !checker.errors.is_empty() {
        return Err(ManifestErrors(checker.errors));
    }
    Ok(Adapter::new(manifest, origin, checker.warnings))
}

/// Every section's own checks, in the order their errors are reported.
fn check_manifest(c: &mut Checker<'_>, m: &Manifest) {
    top_level::check_top_level(c, m);
    runtime::check_runtime(c, m);
    programs::check_programs(c, m);
    placement::check_placement(c, m);
    limits::check_limits(c, m);
    if let Some(ds) = &m.datasets {
        datasets::check_datasets(c, m, ds);
    }
    workflow::check_workflows(c, m);
    sandbox::check_sandboxes(c, m);
}

mod artifacts;
mod checker;
mod columns;
mod datasets;
mod env;
mod files;
mod input_files;
mod inputs;
mod limits;
mod names;
mod options;
mod outputs;
mod parameters;
mod parse;
mod placement;
mod programs;
mod resources;
mod runtime;
mod sandbox;
mod structure;
mod templates;
#[cfg(test)]
mod tests;
mod top_level;
mod workflow;
