use super::parameters::schema_problems;
use super::*;
use crate::limits::Limits;

const SCHEMA: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["target"],
  "properties": {
    "target": {"type": "string"},
    "seed": {"type": "integer", "default": 0},
    "verbose": {"type": "boolean"}
  }
}"#;

const GOOD: &str = r#"schema_version = 1
name = "demo"
version = "0.2.0"
summary = "A demo adapter."

[runtime]
kind = "python"
python = ">=3.10, <3.14"
requirements = ["numpy==2.1.3"]
package = "demo"
launch = ["-m", "demo"]

[limits]
run_timeout_s = 60

[[workflow]]
id = "fit"
summary = "Fit."
parameters = "schemas/fit.json"
argv = ["fit", "--data", "{dataset}", "--target", "{target}", "--out", "{output_dir}"]
options = [{ param = "seed", flag = "--seed" }, { param = "verbose", flag = "-v", format = "switch" }]

[[workflow.artifact]]
id = "metrics"
path = "metrics.json"
media_type = "application/json"
json_keys = ["r2"]
"#;

fn write_adapter(dir: &Path, manifest: &str, schema: &str) -> PathBuf {
    fs_err::create_dir_all(dir.join("schemas")).unwrap();
    fs_err::write(dir.join("schemas/fit.json"), schema).unwrap();
    let path = dir.join("demo.toml");
    fs_err::write(&path, manifest).unwrap();
    path
}

fn errors_of(manifest: &str, schema: &str) -> ManifestErrors {
    let dir = tempfile::tempdir().unwrap();
    let path = write_adapter(dir.path(), manifest, schema);
    load_file(&path).expect_err("manifest must be refused")
}

#[test]
fn good_manifest_loads_with_stable_hash() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_adapter(dir.path(), GOOD, SCHEMA);
    let a = load_file(&path).unwrap();
    assert_eq!(a.manifest.name, "demo");
    assert_eq!(a.manifest.effective_limits().run_timeout_s, 60);
    assert_eq!(
        a.manifest.effective_limits().max_artifacts,
        Limits::DEFAULT.max_artifacts
    );
    assert_eq!(
        a.workflow("fit").unwrap().parameters_schema["required"][0],
        "target"
    );
    // Reformatting the TOML does not change the canonical form or hash.
    let reformatted = GOOD.replace("id = \"fit\"", "id    =    \"fit\"   # same");
    let path2 = write_adapter(&dir.path().join("copy"), &reformatted, SCHEMA);
    let b = load_file(&path2).unwrap();
    assert_eq!(a.sha256(), b.sha256());
    assert_eq!(a.canonical_json(), b.canonical_json());
    // A schema change does change it.
    let path3 = write_adapter(
        &dir.path().join("other"),
        GOOD,
        &SCHEMA.replace("\"default\": 0", "\"default\": 1"),
    );
    assert_ne!(load_file(&path3).unwrap().sha256(), a.sha256());
}

#[test]
fn unknown_key_is_placed_by_line_and_field() {
    let bad = GOOD.replace("summary = \"Fit.\"", "summary = \"Fit.\"\ncolour = \"red\"");
    let errs = errors_of(&bad, SCHEMA);
    let e = errs.first();
    assert!(e.message.contains("unknown field `colour`"), "{e}");
    assert_eq!(
        e.line,
        Some(bad.lines().position(|l| l.starts_with("colour")).unwrap() + 1)
    );
    assert!(e.field.starts_with("workflow"), "{e}");
}

#[test]
fn wrong_type_names_field() {
    let bad = GOOD.replace("run_timeout_s = 60", "run_timeout_s = \"sixty\"");
    let errs = errors_of(&bad, SCHEMA);
    let e = errs.first();
    assert_eq!(e.field, "limits.run_timeout_s");
    assert_eq!(
        e.line,
        Some(
            bad.lines()
                .position(|l| l.starts_with("run_timeout_s"))
                .unwrap()
                + 1
        )
    );
}

#[test]
fn syntax_error_has_position() {
    let bad = GOOD.replace("name = \"demo\"", "name = \"demo");
    let errs = errors_of(&bad, SCHEMA);
    assert!(errs.first().message.starts_with("not valid TOML"), "{errs}");
    assert_eq!(errs.first().line, Some(2));
}

#[test]
fn semantic_errors_are_all_reported_with_lines() {
    let bad = GOOD
        .replace("\"{target}\"", "\"{colour}\"")
        .replace("run_timeout_s = 60", "run_timeout_s = 999999")
        .replace("\"numpy==2.1.3\"", "\"numpy>=2\"")
        .replace("flag = \"-v\"", "flag = \"v\"");
    let errs = errors_of(&bad, SCHEMA);
    let text = errs.to_string();
    assert!(
        text.contains("workflow[0].argv[4]: placeholder {colour} names no parameter 'colour'"),
        "{text}"
    );
    assert!(
        text.contains("limits.run_timeout_s: run_timeout_s = 999999 exceeds the suite ceiling"),
        "{text}"
    );
    assert!(
        text.contains("runtime.requirements[0]: 'numpy>=2' is not an exact pin"),
        "{text}"
    );
    assert!(text.contains("workflow[0].options[1].flag"), "{text}");
    let argv_line = bad.lines().position(|l| l.starts_with("argv")).unwrap() + 1;
    let argv_err = errs
        .0
        .iter()
        .find(|e| e.field == "workflow[0].argv[4]")
        .unwrap();
    assert_eq!(argv_err.line, Some(argv_line));
    assert!(argv_err.column.unwrap() > 1);
}

#[test]
fn loose_schema_is_refused() {
    let errs = errors_of(
        GOOD,
        &SCHEMA.replace(
            "\"additionalProperties\": false",
            "\"additionalProperties\": true",
        ),
    );
    assert!(errs.to_string().contains("must be strict"), "{errs}");
    assert!(errs.first().file.ends_with("schemas/fit.json"));
}

#[test]
fn missing_schema_file_is_named() {
    let bad = GOOD.replace("schemas/fit.json", "schemas/nope.json");
    let errs = errors_of(&bad, SCHEMA);
    assert!(
        errs.to_string()
            .contains("cannot read the parameter schema"),
        "{errs}"
    );
    assert_eq!(errs.first().field, "workflow[0].parameters");
}

#[test]
fn switch_needs_boolean_and_escape_is_refused() {
    let bad = GOOD
        .replace(
            "format = \"switch\"",
            "format = \"switch\" }, { param = \"target\", flag = \"--t\", format = \"switch\"",
        )
        .replace("path = \"metrics.json\"", "path = \"../metrics.json\"");
    let errs = errors_of(&bad, SCHEMA);
    let text = errs.to_string();
    assert!(
        text.contains("a switch needs a boolean parameter"),
        "{text}"
    );
    assert!(
        text.contains("must be a relative path inside the output directory"),
        "{text}"
    );
}

#[test]
fn unknown_adapter_name_lists_known() {
    let errs = resolve("nosuch").unwrap_err();
    assert!(errs.to_string().contains("refsci"), "{errs}");
}

#[test]
fn embedded_adapters_load() {
    for name in embedded_names() {
        let adapter = load_embedded(name)
            .unwrap()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(adapter.manifest.name, name);
        assert_eq!(adapter.sha256().len(), 64);
    }
}

#[test]
fn env_tables_merge_per_workflow_and_refuse_what_undoes_isolation() {
    let with_env = GOOD
        .replace(
            "launch = [\"-m\", \"demo\"]",
            "launch = [\"-m\", \"demo\"]\nenv = { OMP_NUM_THREADS = \"1\", TERM = \"dumb\" }",
        )
        .replace(
            "options = [",
            "env = { TERM = \"xterm\", MPLCONFIGDIR = \"mpl\" }\noptions = [",
        );
    let dir = tempfile::tempdir().unwrap();
    let a = load_file(&write_adapter(dir.path(), &with_env, SCHEMA)).unwrap();
    let env = a.manifest.run_env(a.workflow("fit").unwrap());
    assert_eq!(env["OMP_NUM_THREADS"], "1");
    assert_eq!(env["TERM"], "xterm", "the workflow's value wins");
    assert_eq!(env["MPLCONFIGDIR"], "mpl");
    let plain = load_file(&write_adapter(&dir.path().join("plain"), GOOD, SCHEMA)).unwrap();
    assert_ne!(
        a.sha256(),
        plain.sha256(),
        "env is part of the manifest's identity"
    );

    for (bad, needle) in [
        (
            "LD_PRELOAD = \"/tmp/x.so\"",
            "LD_PRELOAD would change which code",
        ),
        (
            "PYTHONPATH = \"/tmp\"",
            "PYTHONPATH would change which code",
        ),
        ("PYTHONHASHSEED = \"1\"", "fixed by scimcp"),
        (
            "\"A-B\" = \"1\"",
            "not a portable environment variable name",
        ),
    ] {
        let text = GOOD.replace(
            "launch = [\"-m\", \"demo\"]",
            &format!("launch = [\"-m\", \"demo\"]\nenv = {{ {bad} }}"),
        );
        let errs = errors_of(&text, SCHEMA);
        let e = errs.first();
        assert_eq!(e.field, "runtime.env", "{e}");
        assert!(e.message.contains(needle), "{e}");
        assert!(e.line.is_some(), "placed by line: {e}");
    }
}

/// The template mistakes a maintainer of a real CLI makes are each explained.
#[test]
fn template_mistakes_are_explained() {
    let input_file = |template: &str| {
        GOOD.replace(
            "[[workflow.artifact]]",
            &format!(
                "[[workflow.input_file]]\npath = \"plan.json\"\nformat = \"json\"\ntemplate = {template}\n\n[[workflow.artifact]]"
            ),
        )
    };
    for (manifest, needle) in [
        // An optional parameter without a default has nothing to render.
        (
            GOOD.replace("\"{target}\"", "\"{verbose}\""),
            "reads optional parameter 'verbose', which has no default",
        ),
        (
            GOOD.replace("\"{target}\"", "\"{target|frobnicate}\""),
            "frobnicate",
        ),
        (
            GOOD.replace("\"{target}\"", "\"{target|positions}\""),
            "does not mark it as dataset columns",
        ),
        // A map over a boolean must say what both values become.
        (input_file("{ v = \"{verbose|map:true=1}\" }"), "false"),
        (GOOD.replace("\"{target}\"", "\"{null}\""), "null"),
        (GOOD.replace("\"{target}\"", "\"{nope}\""), "nope"),
    ] {
        let errs = errors_of(&manifest, SCHEMA);
        let text = errs.to_string();
        assert!(text.contains(needle), "{needle}: {text}");
        assert!(errs.first().line.is_some(), "placed by line: {text}");
    }
    // What is allowed: defaults, filters, {null} and absolute run paths in an input file.
    let good = input_file(
        "{ seed = \"{seed}\", seed_text = \"{seed|text}\", nothing = \"{null}\", at = \"{work_dir}/x\", keep = \"{state_dir}\" }",
    )
    .replace("\"{target}\"", "\"{work_dir}/{target}\"");
    let dir = tempfile::tempdir().unwrap();
    load_file(&write_adapter(dir.path(), &good, SCHEMA)).unwrap();
}

/// `x-scimcp-column` rules are checked when the manifest loads, not ignored at run time.
#[test]
fn column_rules_are_checked() {
    let schema = |rule: &str, ty: &str| {
        SCHEMA.replace(
            "\"target\": {\"type\": \"string\"}",
            &format!("\"target\": {{\"type\": {ty}, \"x-scimcp-column\": {rule}}}"),
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let ok = schema(
        "{\"numeric\": true, \"complete\": true, \"max_distinct\": 2}",
        "\"string\"",
    );
    load_file(&write_adapter(dir.path(), GOOD, &ok)).unwrap();
    for (rule, ty, needle) in [
        (
            "{\"numerc\": true}",
            "\"string\"",
            "unknown column rule 'numerc'",
        ),
        (
            "{\"complete\": \"yes\"}",
            "\"string\"",
            "must be true or false",
        ),
        (
            "{\"max_distinct\": 0}",
            "\"string\"",
            "an integer of at least 1",
        ),
        ("true", "\"string\"", "must be an object"),
        ("{}", "\"integer\"", "not a string or a list of strings"),
    ] {
        let errs = errors_of(GOOD, &schema(rule, ty));
        let text = errs.to_string();
        assert!(text.contains(needle), "{rule} {ty}: {text}");
        assert!(errs.first().file.ends_with("schemas/fit.json"), "{text}");
    }
}

/// Embedded adapters' schemas are not compiled at load (building the meta-schema validator
/// cost a sixth of every server start): they are compiled, meta-schema check included,
/// here instead; a schema on disk still is at every load.
#[test]
fn embedded_schemas_and_patterns_compile() {
    for embedded in EMBEDDED_ADAPTERS {
        let adapter = load_embedded(embedded.name).unwrap().unwrap();
        for wf in &adapter.manifest.workflows {
            if let Some(progress) = &wf.progress {
                progress
                    .compile()
                    .unwrap_or_else(|e| panic!("{} {}: progress: {e}", embedded.name, wf.id));
            }
            let problems = schema_problems(&wf.parameters_schema, true);
            assert!(
                problems.is_empty(),
                "{} {}: {problems:?}",
                embedded.name,
                wf.id
            );
        }
    }
    let bad = serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"n": {"type": "integer", "minimum": "zero"}}
    });
    assert!(!schema_problems(&bad, true).is_empty());
}

#[test]
fn progress_patterns_are_checked_where_they_are_written() {
    let with = |pattern: &str| {
        GOOD.replace(
            "\n[[workflow.artifact]]",
            &format!("\n[workflow.progress]\npattern = '{pattern}'\nstream = \"stderr\"\n\n[[workflow.artifact]]"),
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let good = with(r"^epoch (?P<done>\d+)/(?P<total>\d+)");
    let adapter = load_file(&write_adapter(dir.path(), &good, SCHEMA)).unwrap();
    let progress = adapter.manifest.workflows[0].progress.as_ref().unwrap();
    assert_eq!(progress.stream, crate::manifest::ProgressStream::Stderr);
    for (pattern, needle) in [
        (r"epoch (?P<done>\d+", "does not compile"),
        (r"epoch (?P<step>\d+)", "unknown group 'step'"),
        (r"epoch \d+", "neither a 'done' nor a 'message'"),
    ] {
        let errs = errors_of(&with(pattern), SCHEMA);
        let text = errs.to_string();
        assert!(text.contains(needle), "{pattern}: {text}");
        assert!(text.contains("progress.pattern"), "{pattern}: {text}");
        assert!(text.contains("demo.toml:"), "{pattern}: {text}");
    }
    let errs = errors_of(
        &good.replace("stream = \"stderr\"", "stream = \"both\""),
        SCHEMA,
    );
    assert!(errs.to_string().contains("stream"), "{errs}");
}

#[test]
fn workflow_resources_are_optional_bounded_and_keep_the_hash_when_absent() {
    let dir = tempfile::tempdir().unwrap();
    let plain = load_file(&write_adapter(dir.path(), GOOD, SCHEMA)).unwrap();
    assert!(!plain.canonical_json().contains("resources"));
    let with =
        format!("{GOOD}\n[workflow.resources]\ncpus = 2\nmemory_mb = 1024\ntime_limit_min = 1\n");
    let a = load_file(&write_adapter(&dir.path().join("r"), &with, SCHEMA)).unwrap();
    let r = a.workflow("fit").unwrap().resources.unwrap();
    assert_eq!(
        (r.cpus, r.memory_mb, r.time_limit_min),
        (Some(2), Some(1024), Some(1))
    );
    assert_ne!(a.sha256(), plain.sha256());
    let bad =
        format!("{GOOD}\n[workflow.resources]\ncpus = 0\nmemory_mb = 0\ntime_limit_min = 2\n");
    let text = errors_of(&bad, SCHEMA).to_string();
    assert!(
        text.contains("workflow[0].resources.cpus: cpus = 0 is outside 1..=1024"),
        "{text}"
    );
    assert!(text.contains("workflow[0].resources.memory_mb"), "{text}");
    // run_timeout_s = 60: one minute at most.
    assert!(
        text.contains("workflow[0].resources.time_limit_min: time_limit_min = 2 is outside 1..=1"),
        "{text}"
    );
    let unknown = format!("{GOOD}\n[workflow.resources]\ngpus = 1\n");
    assert!(
        errors_of(&unknown, SCHEMA)
            .to_string()
            .contains("unknown field `gpus`")
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_manifest_or_schema_is_refused_without_reading() {
    use nix::sys::stat::Mode;
    let dir = tempfile::tempdir().unwrap();
    let path = write_adapter(dir.path(), GOOD, SCHEMA);
    // A FIFO nobody writes: reading it would block this test forever.
    let schema = dir.path().join("schemas/fit.json");
    fs_err::remove_file(&schema).unwrap();
    nix::unistd::mkfifo(&schema, Mode::S_IRUSR | Mode::S_IWUSR).unwrap();
    let errs = load_file(&path).expect_err("a FIFO schema must be refused");
    assert!(errs.to_string().contains("FIFO"), "{errs}");
    let manifest = dir.path().join("fifo.toml");
    nix::unistd::mkfifo(&manifest, Mode::S_IRUSR | Mode::S_IWUSR).unwrap();
    let errs = load_file(&manifest).expect_err("a FIFO manifest must be refused");
    assert!(errs.to_string().contains("FIFO"), "{errs}");
    // A link to a device is refused the same way.
    let zero = dir.path().join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let errs = load_file(&zero).expect_err("a link to /dev/zero must be refused");
    assert!(errs.to_string().contains("character device"), "{errs}");
}

#[cfg(unix)]
#[test]
fn a_schema_linked_from_outside_the_manifest_directory_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    fs_err::write(outside.path().join("secret.json"), SCHEMA).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = write_adapter(dir.path(), GOOD, SCHEMA);
    let schema = dir.path().join("schemas/fit.json");
    fs_err::remove_file(&schema).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.json"), &schema).unwrap();
    let errs = load_file(&path).expect_err("an escaping link must be refused");
    assert!(
        errs.to_string()
            .contains("outside the manifest's directory"),
        "{errs}"
    );
    // A link that stays inside the directory still works.
    fs_err::remove_file(&schema).unwrap();
    fs_err::write(dir.path().join("schemas/real.json"), SCHEMA).unwrap();
    std::os::unix::fs::symlink("real.json", &schema).unwrap();
    load_file(&path).expect("a link inside the manifest's directory is fine");
}

#[test]
fn workflow_sandbox_grants_are_optional_and_keep_the_hash_when_absent() {
    let dir = tempfile::tempdir().unwrap();
    let plain = load_file(&write_adapter(dir.path(), GOOD, SCHEMA)).unwrap();
    assert!(!plain.canonical_json().contains("sandbox"));
    assert_eq!(plain.workflow("fit").unwrap().sandbox, None);
    let with = format!(
        "{GOOD}\n[workflow.sandbox]\nnetwork = true\nshared_memory = true\n\
         read_only = [\"~/.config/tool/license.lic\", \"/opt/tool/share\"]\n\
         read_write = [\"~/.cache/tool\"]\n"
    );
    let a = load_file(&write_adapter(&dir.path().join("s"), &with, SCHEMA)).unwrap();
    let s = a.workflow("fit").unwrap().sandbox.clone().unwrap();
    assert!(s.network && s.shared_memory);
    assert_eq!(
        s.read_only,
        ["~/.config/tool/license.lic", "/opt/tool/share"]
    );
    assert_eq!(s.read_write, ["~/.cache/tool"]);
    assert_ne!(a.sha256(), plain.sha256());
    let empty = format!("{GOOD}\n[workflow.sandbox]\n");
    let e = load_file(&write_adapter(&dir.path().join("e"), &empty, SCHEMA)).unwrap();
    let s = e.workflow("fit").unwrap().sandbox.clone().unwrap();
    assert!(!s.network && !s.shared_memory && s.read_only.is_empty() && s.read_write.is_empty());
}

fn sandbox_error(key: &str, path: &str) -> String {
    let bad = format!("{GOOD}\n[workflow.sandbox]\n{key} = [\"/opt/ok\", \"{path}\"]\n");
    errors_of(&bad, SCHEMA).to_string()
}

#[test]
fn a_relative_sandbox_grant_is_refused() {
    let text = sandbox_error("read_only", "data/license.lic");
    assert!(
        text.contains(
            "workflow[0].sandbox.read_only[1]: 'data/license.lic' must be absolute or start with ~/"
        ),
        "{text}"
    );
    assert!(text.contains("e.g. \"~/.cache/tool\""), "{text}");
}

#[test]
fn another_users_home_is_refused_as_a_sandbox_grant() {
    let text = sandbox_error("read_write", "~root/.ssh");
    assert!(
        text.contains(
            "workflow[0].sandbox.read_write[1]: '~root/.ssh' must be absolute or start with ~/"
        ),
        "{text}"
    );
}

#[test]
fn a_sandbox_grant_with_dot_dot_is_refused() {
    for path in ["/opt/tool/../../root", "~/.cache/../.ssh"] {
        let text = sandbox_error("read_only", path);
        assert!(
            text.contains(&format!("'{path}' must not contain '..'")),
            "{text}"
        );
    }
}

#[test]
fn granting_the_whole_file_system_or_home_is_refused() {
    for path in ["/", "~/", "~/."] {
        let text = sandbox_error("read_write", path);
        assert!(
            text.contains(&format!(
                "'{path}' grants the whole file system or the whole home"
            )),
            "{text}"
        );
    }
    let bare = sandbox_error("read_only", "~");
    assert!(
        bare.contains("'~' must be absolute or start with ~/"),
        "{bare}"
    );
}

#[test]
fn an_unknown_sandbox_key_is_refused() {
    let unknown = format!("{GOOD}\n[workflow.sandbox]\nwrite_anywhere = true\n");
    let text = errors_of(&unknown, SCHEMA).to_string();
    assert!(text.contains("unknown field `write_anywhere`"), "{text}");
}
