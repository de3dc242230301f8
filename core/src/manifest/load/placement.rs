//! Load-time checks of option placement: `{options}` is a whole argv element, at most once
//! per argv (a workflow's, or each step's), and nowhere else.

use super::checker::{Checker, Seg};
use crate::manifest::template::{OPTIONS, Template};
use crate::manifest::types::Manifest;

/// At most one `{options}` in each argv.
pub(super) fn check_placement(c: &mut Checker<'_>, m: &Manifest) {
    for (i, wf) in m.workflows.iter().enumerate() {
        let workflow = [Seg::Key("workflow"), Seg::Index(i)];
        let mut argvs = vec![(workflow.to_vec(), &wf.argv)];
        for (j, step) in wf.steps.iter().enumerate() {
            let mut at = workflow.to_vec();
            at.extend([Seg::Key("step"), Seg::Index(j)]);
            argvs.push((at, &step.argv));
        }
        for (at, argv) in argvs {
            let marks: Vec<usize> = argv
                .iter()
                .enumerate()
                .filter(|(_, a)| Template::parse(a).is_ok_and(|t| t.is_options_marker()))
                .map(|(k, _)| k)
                .collect();
            if let [_, second, ..] = marks.as_slice() {
                let mut path = at.clone();
                path.extend([Seg::Key("argv"), Seg::Index(*second)]);
                c.error(
                    &path,
                    format!(
                        "{{{OPTIONS}}} appears {} times in this argv; the options are placed once",
                        marks.len()
                    ),
                    Some(format!(
                        "keep one {{{OPTIONS}}} element where the options go (none: after the argv)"
                    )),
                );
            }
        }
    }
}

/// A placeholder named `options` in the template at `path`: only the whole argv element, and
/// never where the schema has a parameter of that name (`shadowed`), which it would hide.
pub(super) fn check_marker(c: &mut Checker<'_>, path: &[Seg], t: &Template, shadowed: bool) {
    if shadowed {
        c.error(
            path,
            format!(
                "{{{OPTIONS}}} marks where the options go, so it cannot read the parameter '{OPTIONS}' of the schema"
            ),
            Some(format!(
                "rename the parameter '{OPTIONS}' (e.g. '{OPTIONS}_text'), or drop {{{OPTIONS}}} to keep the options after the argv"
            )),
        );
        return;
    }
    let in_argv = matches!(path.iter().rev().nth(1), Some(Seg::Key("argv")));
    if !(in_argv && t.is_options_marker()) {
        c.error(
            path,
            format!(
                "{{{OPTIONS}}} marks where the options go: it must be a whole argv element, alone and without filters"
            ),
            Some(format!(
                "write \"{{{OPTIONS}}}\" as its own element of argv (an option's flag and value are separate arguments already)"
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    fn errors(argv: &str, stdin: &str) -> Vec<crate::manifest::ManifestError> {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("run.json"),
            r#"{"type": "object", "additionalProperties": false,
                "properties": {"fast": {"type": "boolean"}}}"#,
        )
        .unwrap();
        let path = dir.path().join("demo.toml");
        fs_err::write(
            &path,
            format!(
                r#"schema_version = 1
name = "demo"
version = "0.1.0"
summary = "Demo."

[runtime]
kind = "executable"
executable = "demo"

[[workflow]]
id = "run"
summary = "Run."
parameters = "run.json"
argv = {argv}
stdin = {stdin}
options = [{{ param = "fast", flag = "--fast", format = "switch" }}]
"#
            ),
        )
        .unwrap();
        match crate::manifest::load_file(&path) {
            Ok(_) => Vec::new(),
            Err(e) => e.0,
        }
    }

    #[test]
    fn one_whole_options_element_loads() {
        assert_eq!(errors(r#"["{options}", "in.txt"]"#, "[]"), []);
        assert_eq!(errors(r#"["in.txt"]"#, "[]"), []);
    }

    #[test]
    fn the_marker_cannot_hide_a_parameter_named_options() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("run.json"),
            r#"{"type": "object", "additionalProperties": false, "required": ["options"],
                "properties": {"options": {"type": "string"}}}"#,
        )
        .unwrap();
        let path = dir.path().join("demo.toml");
        let text = "schema_version = 1\nname = \"demo\"\nversion = \"0.1.0\"\nsummary = \"Demo.\"\n\n[runtime]\nkind = \"executable\"\nexecutable = \"demo\"\n\n[[workflow]]\nid = \"run\"\nsummary = \"Run.\"\nparameters = \"run.json\"\nargv = [\"{options}\"]\n";
        fs_err::write(&path, text).unwrap();
        let e = crate::manifest::load_file(&path).unwrap_err().0;
        assert!(
            e.iter().any(|e| e.field == "workflow[0].argv[0]"
                && e.message.contains("cannot read the parameter 'options'")),
            "{e:#?}"
        );
    }

    #[test]
    fn options_twice_or_not_as_a_whole_argv_element_is_refused() {
        let twice = errors(r#"["{options}", "x", "{options}"]"#, "[]");
        assert_eq!(twice.len(), 1, "{twice:#?}");
        assert_eq!(twice[0].field, "workflow[0].argv[2]");
        assert!(
            twice[0].message.contains("appears 2 times"),
            "{}",
            twice[0].message
        );

        for (argv, stdin, field) in [
            (r#"["-{options}"]"#, "[]", "workflow[0].argv[0]"),
            (r#"["{options|text}"]"#, "[]", "workflow[0].argv[0]"),
            (r#"["x"]"#, r#"["{options}"]"#, "workflow[0].stdin[0]"),
        ] {
            let e = errors(argv, stdin);
            assert!(
                e.iter().any(|e| e.field == field
                    && e.message.contains("must be a whole argv element")
                    && e.line.is_some()),
                "{argv} {stdin}: {e:#?}"
            );
        }
    }
}
