//! A workflow's templates (argv, stdin, input-file templates): every placeholder names a run
//! value, an input, `{options}` or a parameter its schema can fill, with filters that fit.

use super::checker::{Checker, Seg};
use super::input_files::collect_strings;
use super::parameters::schema_params;
use super::{inputs, placement};
use crate::manifest::template::{Filter, NULL, OPTIONS, RUN_VALUES, Template};
use crate::manifest::types::{COLUMN_KEYWORD, InputFileFormat, Workflow};

/// One template of a workflow: every placeholder names a run value, `{null}` (only as a whole
/// value of a structured input file), or a parameter of the schema — a required one, or an
/// optional one with a default — and its filters fit the parameter.
pub(super) fn check_template(
    c: &mut Checker<'_>,
    wf: &Workflow,
    path: &[Seg],
    text: &str,
    structured: bool,
) {
    let t = match Template::parse(text) {
        Err(e) => return c.error(path, e.to_string(), None),
        Ok(t) => t,
    };
    let (props, required) = schema_params(&wf.parameters_schema);
    let schema_of = |name: &str| wf.parameters_schema.pointer(&format!("/properties/{name}"));
    let whole = t.sole_placeholder().is_some();
    for p in t.placeholder_parts() {
        if p.name == NULL {
            if !(structured && whole && p.filters.is_empty()) {
                c.error(
                    path,
                    "{null} stands for a JSON null: use it alone as a value of a json, toml or yaml input file",
                    None,
                );
            }
            continue;
        }
        if RUN_VALUES.contains(&p.name.as_str()) {
            if !p.filters.is_empty() {
                c.error(
                    path,
                    format!("run value {{{}}} takes no filter", p.name),
                    None,
                );
            }
            continue;
        }
        if let Some(id) = p.input_id() {
            inputs::check_input_placeholder(c, wf, path, p, id);
            continue;
        }
        if p.name == OPTIONS {
            placement::check_marker(c, path, &t, props.contains(OPTIONS));
            continue;
        }
        for name in p.parameters() {
            if required.contains(name) {
                continue;
            }
            if props.contains(name) {
                if schema_of(name).and_then(|s| s.get("default")).is_none() {
                    c.error(
                        path,
                        format!("placeholder {{{}}} reads optional parameter '{name}', which has no default", p.name),
                        Some(format!("give '{name}' a \"default\" in the schema, make it required, or pass it through `options`")),
                    );
                }
                continue;
            }
            c.error(
                path,
                format!("placeholder {{{}}} names no parameter '{name}'", p.name),
                Some(format!(
                    "use a parameter of the schema ({}) or a run value ({})",
                    props.iter().cloned().collect::<Vec<_>>().join(", "),
                    RUN_VALUES.join(", ")
                )),
            );
        }
        for f in &p.filters {
            match f {
                Filter::Positions(_) | Filter::PositionsIn(_) => {
                    for name in p.parameters() {
                        if schema_of(name)
                            .and_then(|s| s.get(COLUMN_KEYWORD))
                            .is_none()
                        {
                            c.error(
                                path,
                                format!("{{{}}} turns '{name}' into column positions, but the schema does not mark it as dataset columns", p.name),
                                Some(format!("add \"{COLUMN_KEYWORD}\": {{}} to the '{name}' property")),
                            );
                        }
                    }
                }
                Filter::Map(pairs) => {
                    let Some(schema) = schema_of(&p.name) else {
                        continue;
                    };
                    let mut must: Vec<String> = Vec::new();
                    if let Some(values) = schema.get("enum").and_then(|e| e.as_array()) {
                        must.extend(
                            values
                                .iter()
                                .map(|v| v.as_str().map_or_else(|| v.to_string(), String::from)),
                        );
                    } else if schema.get("type").and_then(|t| t.as_str()) == Some("boolean") {
                        must.extend(["true".to_string(), "false".to_string()]);
                    }
                    let missing: Vec<&String> = must
                        .iter()
                        .filter(|m| !pairs.iter().any(|(k, _)| k == *m))
                        .collect();
                    if !missing.is_empty() {
                        c.error(
                            path,
                            format!(
                                "{{{}}}'s map has no entry for {}",
                                p.name,
                                missing
                                    .iter()
                                    .map(|m| format!("'{m}'"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                            Some(
                                "map every value the schema allows, e.g. map:true=1,false=2".into(),
                            ),
                        );
                    }
                }
                Filter::Text | Filter::Json | Filter::Count => {}
            }
        }
    }
}

/// Every template of workflow `i` (argv, stdin, input-file templates).
pub(super) fn check_workflow_templates(c: &mut Checker<'_>, i: usize, wf: &Workflow) {
    for (j, arg) in wf.argv.iter().enumerate() {
        check_template(
            c,
            wf,
            &[
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("argv"),
                Seg::Index(j),
            ],
            arg,
            false,
        );
    }
    for (j, line) in wf.stdin.iter().enumerate() {
        check_template(
            c,
            wf,
            &[
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("stdin"),
                Seg::Index(j),
            ],
            line,
            false,
        );
    }
    for (j, f) in wf.input_files.iter().enumerate() {
        let path = [
            Seg::Key("workflow"),
            Seg::Index(i),
            Seg::Key("input_file"),
            Seg::Index(j),
            Seg::Key("template"),
        ];
        let structured = f.format != InputFileFormat::Text;
        let mut strings = Vec::new();
        collect_strings(&f.template, &mut strings);
        for s in strings {
            check_template(c, wf, &path, &s, structured);
        }
    }
}
