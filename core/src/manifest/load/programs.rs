//! Load-time checks of `[programs.<id>]`, the runtime's version probe and remedy, and each
//! workflow's `program`, `launch` and `[[workflow.step]]`s.

use std::collections::{BTreeMap, BTreeSet};

use super::checker::{Checker, Seg};
use super::names::check_id;
use super::templates::check_template;
use crate::manifest::programs::{PACKAGE_MANAGERS, RUNTIME_PROGRAM};
use crate::manifest::types::{Manifest, OptionFormat, RuntimeKind, VersionProbe, Workflow};

/// Most arguments a version probe may pass.
const MAX_PROBE_ARGS: usize = 16;

/// `[programs.<id>]`, `runtime.version`/`provided_by`, and every workflow's program references.
pub(super) fn check_programs(c: &mut Checker<'_>, m: &Manifest) {
    for (id, p) in &m.programs {
        let at = [Seg::Key("programs")];
        if !is_program_id(id) || id == RUNTIME_PROGRAM {
            c.error(
                &at,
                format!("'{id}' is not a valid program id"),
                Some(format!(
                    "use lower-case letters, digits, '_' and '-', starting with a letter ('{RUNTIME_PROGRAM}' names the runtime's own program)"
                )),
            );
        }
        check_executable(c, &at, &format!("program '{id}'"), &p.executable);
        if let Some(v) = &p.version {
            check_version(c, &at, &format!("program '{id}'"), v);
        }
        check_provided_by(c, &at, &format!("program '{id}'"), &p.provided_by);
    }
    let rt = &m.runtime;
    let at = |k| [Seg::Key("runtime"), Seg::Key(k)];
    if rt.kind == RuntimeKind::Python {
        // The python runtime's program is the provisioned interpreter: the installer owns its
        // identity, so a probe or package remedy for it would never be used.
        for (key, set) in [
            ("version", rt.version.is_some()),
            ("provided_by", !rt.provided_by.is_empty()),
            ("paths_with_spaces", rt.paths_with_spaces.is_some()),
        ] {
            if set {
                c.error(
                    &at(key),
                    format!("`{key}` applies only to kind = \"executable\""),
                    Some("declare the program under [programs.<id>] instead".into()),
                );
            }
        }
    } else {
        if let Some(exe) = rt.executable.as_deref().filter(|e| !e.is_empty()) {
            check_executable(c, &at("executable"), "the runtime", exe);
        }
        if let Some(v) = &rt.version {
            check_version(c, &at("version"), "the runtime", v);
        }
        check_provided_by(c, &at("provided_by"), "the runtime", &rt.provided_by);
    }
    for (i, wf) in m.workflows.iter().enumerate() {
        check_workflow(c, m, i, wf);
    }
}

fn is_program_id(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_' | '-'))
        && s.len() <= 64
}

/// A program name looked up on PATH, or an absolute path; a relative path with a separator
/// would depend on the server's working directory.
fn check_executable(c: &mut Checker<'_>, at: &[Seg], what: &str, exe: &str) {
    let has_sep = exe.contains('/') || exe.contains('\\');
    let absolute = std::path::Path::new(exe).is_absolute() || exe.starts_with('/');
    if exe.trim().is_empty() || exe.contains(char::is_control) {
        c.error(
            at,
            format!("{what}: the executable is empty or has control characters"),
            None,
        );
    } else if has_sep && !absolute {
        c.error(
            at,
            format!("{what}: executable '{exe}' is a relative path"),
            Some("give a program name found on PATH (e.g. \"vina\") or an absolute path".into()),
        );
    }
}

fn check_version(c: &mut Checker<'_>, at: &[Seg], what: &str, v: &VersionProbe) {
    if v.args.len() > MAX_PROBE_ARGS {
        c.error(
            at,
            format!(
                "{what}: the version probe passes {} arguments (at most {MAX_PROBE_ARGS})",
                v.args.len()
            ),
            None,
        );
    }
    match regex::Regex::new(&v.pattern) {
        Err(e) => c.error(
            at,
            format!("{what}: the version pattern does not compile: {e}"),
            Some("e.g. pattern = '(?P<version>\\d+\\.\\d+(\\.\\d+)?)'".into()),
        ),
        Ok(re) if !re.capture_names().any(|n| n == Some("version")) => c.error(
            at,
            format!("{what}: the version pattern has no group named `version`"),
            Some("name the part that is the version, e.g. 'v(?P<version>\\S+)'".into()),
        ),
        Ok(_) => {}
    }
}

fn check_provided_by(
    c: &mut Checker<'_>,
    at: &[Seg],
    what: &str,
    provided_by: &BTreeMap<String, String>,
) {
    for (manager, package) in provided_by {
        if !PACKAGE_MANAGERS.contains(&manager.as_str()) {
            c.error(
                at,
                format!("{what}: provided_by names unknown package manager '{manager}'"),
                Some(format!("use one of: {}", PACKAGE_MANAGERS.join(", "))),
            );
        }
        if package.trim().is_empty()
            || package.len() > 200
            || package.contains(|ch: char| ch.is_whitespace() || ch.is_control())
        {
            c.error(
                at,
                format!("{what}: provided_by.{manager} = {package:?} is not a package name"),
                Some(
                    "give the package's name as that manager spells it, e.g. \"autodock-vina\""
                        .into(),
                ),
            );
        }
    }
}

fn known_program(m: &Manifest, id: &str) -> bool {
    id == RUNTIME_PROGRAM || m.programs.contains_key(id)
}

fn program_hint(m: &Manifest) -> String {
    let mut ids: Vec<&str> = vec![RUNTIME_PROGRAM];
    ids.extend(m.programs.keys().map(String::as_str));
    format!(
        "declare it as [programs.<id>] or use one of: {}",
        ids.join(", ")
    )
}

fn check_workflow(c: &mut Checker<'_>, m: &Manifest, i: usize, wf: &Workflow) {
    let at = |k| [Seg::Key("workflow"), Seg::Index(i), Seg::Key(k)];
    if let Some(id) = &wf.program
        && !known_program(m, id)
    {
        c.error(
            &at("program"),
            format!("program '{id}' is not declared"),
            Some(program_hint(m)),
        );
    }
    if wf.steps.is_empty() {
        if wf.argv.is_empty() && wf.engine.is_none() && m.workflow_program(wf).launch.is_empty() {
            c.error(
                &at("argv"),
                "argv is empty and the program has no launch arguments",
                Some("give the program's arguments in argv, or split the workflow into [[workflow.step]]s".into()),
            );
        }
        return;
    }
    for (key, set) in [
        ("argv", !wf.argv.is_empty()),
        ("options", !wf.options.is_empty()),
        ("stdin", !wf.stdin.is_empty()),
    ] {
        if set {
            c.error(
                &at(key),
                format!("a workflow with [[workflow.step]]s has no top-level `{key}`"),
                Some(format!("move `{key}` into the step that takes it")),
            );
        }
    }
    let mut seen = BTreeSet::new();
    for (j, step) in wf.steps.iter().enumerate() {
        let at = |k| {
            [
                Seg::Key("workflow"),
                Seg::Index(i),
                Seg::Key("step"),
                Seg::Index(j),
                Seg::Key(k),
            ]
        };
        check_id(
            c,
            &at("id"),
            "step",
            &step.id,
            &mut seen,
            " in this workflow",
            None,
        );
        if let Some(id) = &step.program
            && !known_program(m, id)
        {
            c.error(
                &at("program"),
                format!("program '{id}' is not declared"),
                Some(program_hint(m)),
            );
        }
        if step.argv.is_empty() && m.step_program(wf, step).launch.is_empty() {
            c.error(
                &at("argv"),
                "argv is empty and the step's program has no launch arguments",
                None,
            );
        }
    }
}

/// The steps' templates and options, against the workflow's schema (after it is loaded).
pub(super) fn check_step_refs(c: &mut Checker<'_>, i: usize, wf: &Workflow) {
    let (props, _) = super::parameters::schema_params(&wf.parameters_schema);
    let mut optioned = BTreeSet::new();
    for (j, step) in wf.steps.iter().enumerate() {
        let base = [
            Seg::Key("workflow"),
            Seg::Index(i),
            Seg::Key("step"),
            Seg::Index(j),
        ];
        for (key, texts) in [("argv", &step.argv), ("stdin", &step.stdin)] {
            for (k, text) in texts.iter().enumerate() {
                let mut path = base.to_vec();
                path.extend([Seg::Key(key), Seg::Index(k)]);
                check_template(c, wf, &path, text, false);
            }
        }
        for (k, opt) in step.options.iter().enumerate() {
            let mut path = base.to_vec();
            path.extend([Seg::Key("options"), Seg::Index(k)]);
            if !props.contains(&opt.param) {
                c.error(
                    &path,
                    format!(
                        "option parameter '{}' is not a property of {}",
                        opt.param, wf.parameters
                    ),
                    None,
                );
            } else if !optioned.insert(opt.param.as_str()) {
                c.error(
                    &path,
                    format!("parameter '{}' has two options", opt.param),
                    None,
                );
            }
            if !opt.flag.starts_with('-')
                || opt.flag.len() < 2
                || opt.flag.contains(char::is_whitespace)
            {
                c.error(
                    &path,
                    format!("'{}' is not a command-line flag", opt.flag),
                    Some("flags start with '-' and contain no spaces".into()),
                );
            }
            if opt.format == OptionFormat::Switch
                && wf
                    .parameters_schema
                    .pointer(&format!("/properties/{}/type", opt.param))
                    != Some(&serde_json::Value::String("boolean".into()))
            {
                c.error(
                    &path,
                    format!("a switch needs a boolean parameter; '{}' is not declared \"type\": \"boolean\"", opt.param),
                    None,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::manifest::{RUNTIME_PROGRAM, load_file};

    const SCHEMA: &str = r#"{"type": "object", "additionalProperties": false,
      "properties": {"n": {"type": "integer", "default": 3}, "fast": {"type": "boolean"}}}"#;

    const STEPS: &str = r#"schema_version = 1
name = "chain"
version = "0.1.0"
summary = "Two programs."

[runtime]
kind = "executable"
executable = "sha256sum"
version = { args = ["--version"], pattern = '(?P<version>\d+\.\d+)' }
provided_by = { debian = "coreutils", homebrew = "coreutils" }

[programs.head]
executable = "head"
provided_by = { debian = "coreutils" }

[[workflow]]
id = "chain"
summary = "Hash then cut."
parameters = "p.json"

[[workflow.step]]
id = "hash"
argv = ["{dataset}"]

[[workflow.step]]
id = "cut"
program = "head"
argv = ["-n", "{n}", "{options}", "{dataset}"]
options = [{ param = "fast", flag = "-q", format = "switch" }]
"#;

    fn load(manifest: &str) -> Result<crate::manifest::Adapter, String> {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("p.json"), SCHEMA).unwrap();
        let path = dir.path().join("chain.toml");
        fs_err::write(&path, manifest).unwrap();
        load_file(&path).map_err(|e| e.to_string())
    }

    #[test]
    fn steps_and_programs_load_and_resolve_their_program() {
        let a = load(STEPS).unwrap();
        let m = &a.manifest;
        let wf = a.workflow("chain").unwrap();
        assert_eq!(m.workflow_program_ids(wf), vec![RUNTIME_PROGRAM, "head"]);
        assert_eq!(m.program_facts("head").unwrap().executable, "head");
        assert!(m.program_facts("runtime").unwrap().version.is_some());
        assert!(m.workflow_uses_programs(wf));
        // Absent keys stay out of the canonical form.
        assert!(
            !a.canonical_json().contains("paths_with_spaces"),
            "{}",
            a.canonical_json()
        );
        assert!(!a.canonical_json().contains("\"launch\":null"));
    }

    #[test]
    fn every_program_mistake_is_reported_at_once() {
        let bad = STEPS
            .replace(
                "debian = \"coreutils\", homebrew",
                "debain = \"coreutils\", homebrew",
            )
            .replace("(?P<version>\\d+\\.\\d+)", "(\\d+")
            .replace("program = \"head\"", "program = \"tail\"")
            .replace("id = \"cut\"", "id = \"hash\"");
        let e = load(&bad).unwrap_err();
        assert!(e.contains("unknown package manager 'debain'"), "{e}");
        assert!(e.contains("version pattern does not compile"), "{e}");
        assert!(e.contains("program 'tail' is not declared"), "{e}");
        assert!(e.contains("step id 'hash' is declared twice"), "{e}");
    }

    #[test]
    fn version_pattern_needs_a_version_group() {
        let bad = STEPS.replace("(?P<version>\\d+\\.\\d+)", "(\\d+\\.\\d+)");
        let e = load(&bad).unwrap_err();
        assert!(e.contains("no group named `version`"), "{e}");
    }

    #[test]
    fn a_stepped_workflow_has_no_top_level_argv_and_a_plain_one_needs_argv() {
        let bad = STEPS.replace(
            "parameters = \"p.json\"\n",
            "parameters = \"p.json\"\nargv = [\"x\"]\n",
        );
        let e = load(&bad).unwrap_err();
        assert!(e.contains("has no top-level `argv`"), "{e}");
        let plain = STEPS.split("[[workflow.step]]").next().unwrap().to_string();
        let e = load(&plain).unwrap_err();
        assert!(e.contains("argv is empty"), "{e}");
    }

    #[test]
    fn step_templates_and_options_are_checked_against_the_schema() {
        let bad = STEPS
            .replace("\"{n}\"", "\"{count}\"")
            .replace("param = \"fast\"", "param = \"quick\"");
        let e = load(&bad).unwrap_err();
        assert!(e.contains("workflow[0].step[1].argv[1]"), "{e}");
        assert!(e.contains("names no parameter 'count'"), "{e}");
        assert!(e.contains("option parameter 'quick'"), "{e}");
    }

    #[test]
    fn a_python_runtime_takes_no_version_probe_and_relative_paths_are_refused() {
        let py = STEPS.replace(
            "kind = \"executable\"\nexecutable = \"sha256sum\"",
            "kind = \"python\"\npython = \">=3.10\"\npackage = \"x\"\nlaunch = [\"-m\", \"x\"]",
        );
        let e = load(&py).unwrap_err();
        assert!(
            e.contains("`version` applies only to kind = \"executable\""),
            "{e}"
        );
        let rel = STEPS.replace("executable = \"head\"", "executable = \"bin/head\"");
        let e = load(&rel).unwrap_err();
        assert!(e.contains("'bin/head' is a relative path"), "{e}");
    }
}
