//! Load-time checks of `[[workflow.input]]`: ids, formats, counts, and that templates name
//! only declared inputs and every required input reaches the CLI somewhere.

use std::collections::BTreeSet;

use super::checker::{Checker, Seg};
use super::names::{check_id, is_id};
use crate::manifest::inputs::{InputKind, InputSpec};
use crate::manifest::template::{Placeholder, Template};
use crate::manifest::types::Workflow;

/// Every input of workflow `i`.
pub(super) fn check_inputs(c: &mut Checker<'_>, i: usize, wf: &Workflow) {
    let mut seen = BTreeSet::new();
    let used = used_inputs(wf);
    for (j, input) in wf.inputs.iter().enumerate() {
        let at = |k| {
            [
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("input"),
                Seg::Index(j),
                Seg::Key(k),
            ]
        };
        check_id(
            c,
            &at("id"),
            "input",
            &input.id,
            &mut seen,
            " in this workflow",
            None,
        );
        if input.summary.trim().is_empty() || input.summary.len() > 500 {
            c.error(&at("summary"), "summary must be 1 to 500 characters", None);
        }
        if input.formats.is_empty() {
            c.error(
                &at("formats"),
                format!("input '{}' accepts no format", input.id),
                Some("list file extensions (lower case, no dot) or media types, e.g. formats = [\"pdbqt\"] or [\"chemical/x-pdb\"]".into()),
            );
        }
        let mut formats = BTreeSet::new();
        for f in &input.formats {
            if let Some(problem) = format_problem(f) {
                c.error(
                    &at("formats"),
                    format!("input '{}': format {f:?} {problem}", input.id),
                    Some("an extension is lower case without the dot (\"fasta\", \"tar.gz\"); a media type is type/subtype (\"chemical/x-pdb\")".into()),
                );
            } else if !formats.insert(f.as_str()) {
                c.error(
                    &at("formats"),
                    format!("input '{}': format {f:?} is listed twice", input.id),
                    None,
                );
            }
        }
        check_counts(c, input, &at);
        if input.required && is_id(&input.id) && !used.contains(input.id.as_str()) {
            c.error(
                &at("id"),
                format!(
                    "required input '{}' is used by no argument, step argument, stdin line or input file",
                    input.id
                ),
                Some(format!(
                    "pass it to the CLI, e.g. argv = [\"--in\", \"{{input.{}}}\"], or make it required = false",
                    input.id
                )),
            );
        }
    }
}

fn check_counts(c: &mut Checker<'_>, input: &InputSpec, at: &dyn Fn(&'static str) -> [Seg; 5]) {
    match input.kind {
        InputKind::Files => {
            if input.min_count == Some(0) {
                c.error(
                    &at("min_count"),
                    format!("input '{}': min_count must be at least 1", input.id),
                    Some("an input that may be left out is required = false".into()),
                );
            }
            if let (Some(min), Some(max)) = (input.min_count, input.max_count)
                && min > max
            {
                c.error(
                    &at("max_count"),
                    format!(
                        "input '{}': min_count {min} is above max_count {max}",
                        input.id
                    ),
                    None,
                );
            }
            if input.max_count == Some(0) {
                c.error(
                    &at("max_count"),
                    format!("input '{}': max_count must be at least 1", input.id),
                    None,
                );
            }
        }
        InputKind::File | InputKind::Directory => {
            for (key, value) in [
                ("min_count", input.min_count),
                ("max_count", input.max_count),
            ] {
                if value.is_some() {
                    c.error(
                        &at(key),
                        format!(
                            "input '{}': {key} applies only to kind = \"files\" (this input is kind = \"{}\")",
                            input.id,
                            input.kind.as_str()
                        ),
                        None,
                    );
                }
            }
        }
    }
}

/// Why `f` is not a well-formed format, if it is not.
use crate::manifest::inputs::ANY_FORMAT;

fn format_problem(f: &str) -> Option<&'static str> {
    if f == ANY_FORMAT {
        return None;
    }
    if f.is_empty() || f.len() > 100 {
        return Some("must be 1 to 100 characters");
    }
    if let Some((ty, sub)) = f.split_once('/') {
        let token = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "!#$&^_.+-".contains(c))
        };
        return (!token(ty) || !token(sub) || f.chars().any(|c| c.is_ascii_uppercase()))
            .then_some("is not a lower-case media type");
    }
    if f.starts_with('.') {
        return Some("starts with a dot");
    }
    let ok = f.split('.').all(|part| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
    });
    (!ok).then_some("is not a lower-case extension")
}

/// `{input.<id>}` in one template: `id` must be a declared input and take no filter.
pub(super) fn check_input_placeholder(
    c: &mut Checker<'_>,
    wf: &Workflow,
    path: &[Seg],
    p: &Placeholder,
    id: &str,
) {
    if !wf.inputs.iter().any(|input| input.id == id) {
        let declared: Vec<&str> = wf.inputs.iter().map(|i| i.id.as_str()).collect();
        c.error(
            path,
            format!(
                "placeholder {{{}}} names no input '{id}' of this workflow",
                p.name
            ),
            Some(if declared.is_empty() {
                format!("declare it: [[workflow.input]] id = \"{id}\", formats = [\"…\"]")
            } else {
                format!("declared inputs: {}", declared.join(", "))
            }),
        );
    }
    if !p.filters.is_empty() {
        c.error(
            path,
            format!("input placeholder {{{}}} takes no filter", p.name),
            None,
        );
    }
}

/// Inputs named by a placeholder anywhere the CLI reads: argv (the workflow's and its
/// steps'), stdin, input files.
fn used_inputs(wf: &Workflow) -> BTreeSet<String> {
    let mut texts: Vec<String> = wf.argv.iter().chain(&wf.stdin).cloned().collect();
    texts.extend(wf.steps.iter().flat_map(|s| s.argv.iter().cloned()));
    for f in &wf.input_files {
        super::input_files::collect_strings(&f.template, &mut texts);
    }
    texts
        .iter()
        .filter_map(|t| Template::parse(t).ok())
        .flat_map(|t| {
            t.placeholder_parts()
                .filter_map(|p| p.input_id().map(String::from))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::manifest::{InputKind, load_file};

    const SCHEMA: &str = r#"{"type": "object", "additionalProperties": false,
        "properties": {"seed": {"type": "integer", "default": 1}}}"#;

    const GOOD: &str = r#"schema_version = 1
name = "dock"
version = "0.1.0"
summary = "Docking."

[runtime]
kind = "executable"
executable = "vina"

[[workflow]]
id = "dock"
summary = "Dock."
parameters = "p.json"
argv = ["--receptor", "{input.receptor}", "--ligand={input.ligands}", "--flex", "{input.flex}", "--seed", "{seed}"]

[[workflow.input]]
id = "receptor"
summary = "Receptor"
formats = ["pdbqt", "chemical/x-pdb"]

[[workflow.input]]
id = "ligands"
summary = "Ligands"
formats = ["pdbqt"]
kind = "files"
max_count = 4

[[workflow.input]]
id = "flex"
summary = "Flexible residues"
formats = ["pdbqt"]
required = false

[[workflow.artifact]]
id = "poses"
path = "poses.pdbqt"
media_type = "chemical/x-pdbqt"
"#;

    fn load(manifest: &str) -> Result<crate::Adapter, crate::manifest::ManifestErrors> {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("p.json"), SCHEMA).unwrap();
        let path = dir.path().join("dock.toml");
        fs_err::write(&path, manifest).unwrap();
        load_file(&path)
    }

    fn problems(manifest: &str) -> Vec<String> {
        load(manifest)
            .expect_err("manifest must be refused")
            .0
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect()
    }

    #[test]
    fn declared_inputs_load_and_stay_out_of_old_canonical_forms() {
        let a = load(GOOD).unwrap();
        let wf = a.workflow("dock").unwrap();
        assert_eq!(wf.inputs.len(), 3);
        assert_eq!(wf.inputs[1].kind, InputKind::Files);
        assert!(!wf.inputs[2].required);
        assert!(a.canonical_json().contains("\"input\":["));
        // Defaults (kind file, required) are not written out.
        assert!(!a.canonical_json().contains("\"kind\":\"file\""));
        assert!(
            !a.canonical_json()
                .contains("\"required\":true,\"summary\":\"Receptor\"")
        );
    }

    #[test]
    fn every_input_mistake_is_reported_with_its_field() {
        let bad = GOOD
            .replace("id = \"flex\"", "id = \"Flex\"")
            .replace(
                "formats = [\"pdbqt\", \"chemical/x-pdb\"]",
                "formats = [\".PDBQT\", \"Chemical/X\"]",
            )
            .replace("max_count = 4", "min_count = 5\nmax_count = 4")
            .replace("--seed", "{input.nope}");
        let found = problems(&bad);
        let has = |field: &str, text: &str| {
            assert!(
                found
                    .iter()
                    .any(|p| p.starts_with(field) && p.contains(text)),
                "no {field} problem with {text:?} in {found:#?}"
            );
        };
        has("workflow[0].input[2].id", "not a valid input id");
        has("workflow[0].input[0].formats", "starts with a dot");
        has(
            "workflow[0].input[0].formats",
            "not a lower-case media type",
        );
        has(
            "workflow[0].input[1].max_count",
            "min_count 5 is above max_count 4",
        );
        has("workflow[0].argv[5]", "names no input 'nope'");
        // An input renamed away is named where it is still used.
        has("workflow[0].argv[4]", "names no input 'flex'");
    }

    #[test]
    fn duplicates_unused_required_inputs_filters_and_counts_on_files_are_refused() {
        let bad = GOOD
            .replace("id = \"flex\"", "id = \"receptor\"")
            .replace("\"--flex\", \"{input.flex}\", ", "")
            .replace(
                "formats = [\"pdbqt\"]\nrequired = false",
                "formats = []\nmin_count = 2",
            )
            .replace("{input.ligands}", "{input.ligands|text}");
        let found = problems(&bad);
        let has = |text: &str| {
            assert!(
                found.iter().any(|p| p.contains(text)),
                "no {text:?} in {found:#?}"
            );
        };
        has("input id 'receptor' is declared twice");
        has("accepts no format");
        has("min_count applies only to kind = \"files\"");
        has("takes no filter");
        let unused = GOOD.replace("\"--ligand={input.ligands}\", ", "");
        let found = problems(&unused);
        assert!(
            found
                .iter()
                .any(|p| p.contains("required input 'ligands' is used by no argument")),
            "{found:#?}"
        );
    }
}
