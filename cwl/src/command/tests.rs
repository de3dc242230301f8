//! The command lines of real conformance tools (tests/cwl/tests), asserted against what
//! tests/cwl/command_line_tool.yaml expects. Jobs are filled here by hand (File objects with
//! `path`/`basename` from their location, defaults applied) so these tests need only norm.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

fn suite(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/cwl/tests")
        .join(name)
}

/// A File or Directory completed the way the inputs module would, with its path left
/// relative so the argv reads like the expected `args` (which are basenames).
fn complete(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if matches!(
                o.get("class").and_then(Value::as_str),
                Some("File" | "Directory")
            ) {
                let loc = o
                    .get("path")
                    .or_else(|| o.get("location"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .trim_start_matches("./")
                    .to_string();
                let base = loc.rsplit('/').next().unwrap_or_default().to_string();
                o.insert("path".into(), json!(loc));
                o.insert("basename".into(), json!(base));
            }
            for (_, v) in o.iter_mut() {
                complete(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(complete),
        _ => {}
    }
}

fn filled(tool: &Value, job: Option<&str>) -> Value {
    let mut j = match job {
        Some(name) => {
            let text = fs_err::read_to_string(suite(name)).unwrap();
            crate::doc::parse_yaml(&text).unwrap()
        }
        None => json!({}),
    };
    for input in tool["inputs"].as_array().unwrap() {
        let id = input["id"].as_str().unwrap();
        if j.get(id).is_none_or(Value::is_null)
            && let Some(d) = input.get("default")
        {
            j[id] = d.clone();
        }
    }
    complete(&mut j);
    j
}

fn runtime() -> Value {
    json!({"outdir": "/out", "tmpdir": "/tmp/t", "cores": 2, "ram": 1024,
           "outdirSize": 1024, "tmpdirSize": 1024})
}

fn run(tool: &str, job: Option<&str>) -> CommandLine {
    let t = crate::norm::load(&suite(tool)).unwrap();
    let j = filled(&t, job);
    build(&t, &j, &runtime(), &Expressions::new(false, Vec::new())).unwrap()
}

/// The argv after `python args.py`, as the tests' args.py prints it (basenames).
fn args(cl: &CommandLine) -> Vec<String> {
    assert_eq!(cl.argv[..2], ["python", "args.py"], "{:?}", cl.argv);
    cl.argv[2..]
        .iter()
        .map(|a| a.rsplit('/').next().unwrap_or(a).to_string())
        .collect()
}

#[test]
fn cl_basic_generation() {
    let cl = run("bwa-mem-tool.cwl", Some("bwa-mem-job.json"));
    assert_eq!(
        args(&cl),
        [
            "bwa",
            "mem",
            "-t",
            "2",
            "-I",
            "1,2,3,4",
            "-m",
            "3",
            "chr20.fa",
            "example_human_Illumina.pe_1.fastq",
            "example_human_Illumina.pe_2.fastq"
        ]
    );
    assert_eq!(cl.stdout.as_deref(), Some("output.sam"));
    assert_eq!(cl.cores, Some(2.0));
    assert!(!cl.shell && !cl.network);
}

#[test]
fn nested_prefixes_arrays() {
    let cl = run("binding-test.cwl", Some("bwa-mem-job.json"));
    assert_eq!(
        args(&cl),
        [
            "bwa",
            "mem",
            "chr20.fa",
            "-XXX",
            "-YYY",
            "example_human_Illumina.pe_1.fastq",
            "-YYY",
            "example_human_Illumina.pe_2.fastq"
        ]
    );
}

#[test]
fn record_order_with_input_bindings() {
    let cl = run("record-order.cwl", Some("record-order-job.json"));
    assert_eq!(
        args(&cl),
        ["-a", "-b", "1", "-c", "3", "-d", "-e", "2", "-f", "4"]
    );
}

#[test]
fn array_of_arrays_booleans_empty_arrays_and_optionals() {
    let cl = run("nested-array.cwl", Some("nested-array-job.yml"));
    assert_eq!(cl.argv, ["echo", "a"]);
    assert_eq!(cl.stdout.as_deref(), Some("echo.txt"));

    assert!(
        args(&run(
            "bool-empty-inputbinding.cwl",
            Some("bool-empty-inputbinding-job.json")
        ))
        .is_empty()
    );
    assert!(args(&run("empty-array-input.cwl", Some("empty-array-job.json"))).is_empty());
    assert_eq!(
        args(&run("cat1-testcli.cwl", Some("cat-job.json"))),
        ["cat", "hello.txt"]
    );
    assert_eq!(
        args(&run("cat1-testcli.cwl", Some("cat-n-job.json"))),
        ["cat", "-n", "hello.txt"]
    );
}

#[test]
fn value_from_replaces_the_value_and_skips_null_inputs() {
    assert_eq!(
        args(&run(
            "valueFrom-constant.cwl",
            Some("array-of-strings-job.yml")
        )),
        ["replacementValue"]
    );
    assert!(args(&run("stage-unprovided-file.cwl", Some("empty.json"))).is_empty());
}

#[test]
fn floats_print_in_plain_decimal() {
    let cl = run("floats_small_and_large_nojs.cwl", Some("empty.json"));
    assert_eq!(
        cl.argv,
        ["echo", "-n", "0.00001", "0.0000123", "123000", "1230000"]
    );
}

/// A tool written inline, normalized, built with `job`.
fn inline(tool: Value, job: Value) -> Result<CommandLine, CwlError> {
    let mut doc = json!({"cwlVersion": "v1.2", "class": "CommandLineTool", "outputs": []});
    doc.as_object_mut()
        .unwrap()
        .extend(tool.as_object().unwrap().clone());
    let t = crate::norm::normalize(&doc)?;
    build(&t, &job, &runtime(), &Expressions::new(false, Vec::new()))
}

#[test]
fn separate_false_enums_records_and_sorting_ties() {
    let cl = inline(
        json!({
            "baseCommand": ["tool"],
            "arguments": [{"valueFrom": "$(runtime.cores)", "prefix": "-j", "separate": false},
                          "lit", {"position": 2, "valueFrom": "last"}],
            "inputs": {
                "b": {"type": "string", "inputBinding": {"prefix": "--b="}},
                "a": {"type": {"type": "enum", "symbols": ["x", "y"]}, "inputBinding": {"position": 1}},
                "off": {"type": "boolean", "inputBinding": {"prefix": "-o"}},
                "on": {"type": "boolean", "inputBinding": {"prefix": "-n"}},
                "missing": {"type": "int?", "inputBinding": {"prefix": "-m"}},
                "u": {"type": ["int", "string"], "inputBinding": {"prefix": "-u", "separate": false}},
            },
        }),
        json!({"b": "v", "a": "y", "off": false, "on": true, "missing": null, "u": "s"}),
    )
    .unwrap();
    // Position 0: arguments first (numeric key), then inputs by name; then positions 1, 2.
    assert_eq!(
        cl.argv,
        ["tool", "-j2", "lit", "--b=", "v", "-n", "-us", "y", "last"]
    );
}

#[test]
fn streams_env_resources_codes_and_limits() {
    let cl = inline(
        json!({
            "baseCommand": "wc",
            "inputs": {"f": "File", "name": "string"},
            "stdin": "$(inputs.f.path)",
            "stdout": "$(inputs.name).out",
            "stderr": "err.txt",
            "successCodes": [0, 3], "temporaryFailCodes": [75], "permanentFailCodes": [9],
            "hints": {"EnvVarRequirement": {"envDef": {"A": "hint", "B": "b"}},
                      "ResourceRequirement": {"coresMin": 8}},
            "requirements": {
                "EnvVarRequirement": {"envDef": [{"envName": "A", "envValue": "$(inputs.name)"}]},
                "ResourceRequirement": {"coresMax": 4, "ramMin": "$(inputs.f.size)"},
                "ToolTimeLimit": {"timelimit": 30},
                "NetworkAccess": {"networkAccess": true},
            },
        }),
        json!({"f": {"class": "File", "path": "/in/x.txt", "size": 7}, "name": "n"}),
    )
    .unwrap();
    assert_eq!(cl.argv, ["wc"]);
    assert_eq!(cl.stdin.as_deref(), Some("/in/x.txt"));
    assert_eq!(cl.stdout.as_deref(), Some("n.out"));
    assert_eq!(cl.stderr.as_deref(), Some("err.txt"));
    assert_eq!(cl.env.get("A").map(String::as_str), Some("n"));
    assert_eq!(cl.env.get("B").map(String::as_str), Some("b"));
    assert_eq!(
        (cl.cores, cl.ram_mb, cl.time_limit_s),
        (Some(4.0), Some(7.0), Some(30))
    );
    assert!(cl.network);
    assert_eq!(
        (
            cl.success_codes,
            cl.temporary_fail_codes,
            cl.permanent_fail_codes
        ),
        (vec![0, 3], vec![75], vec![9])
    );

    let out_of_dir = inline(
        json!({"baseCommand": "x", "inputs": {}, "stdout": "../escape"}),
        json!({}),
    );
    assert!(
        matches!(out_of_dir, Err(CwlError::Command { .. })),
        "{out_of_dir:?}"
    );
}

#[test]
fn stream_shortcuts_get_fixed_names() {
    let cl = run("cat-tool-shortcut.cwl", Some("cat-job.json"));
    assert_eq!(cl.stdin.as_deref(), Some("hello.txt"));
    let cl = inline(
        json!({"baseCommand": "x", "inputs": {}, "outputs": {"o": "stdout", "e": "stderr"}}),
        json!({}),
    )
    .unwrap();
    assert_eq!(cl.stdout.as_deref(), Some(crate::norm::STDOUT_NAME));
    assert_eq!(cl.stderr.as_deref(), Some(crate::norm::STDERR_NAME));
}

#[test]
fn shell_command_quotes_unless_told_not_to() {
    let cl = inline(
        json!({
            "requirements": {"ShellCommandRequirement": {}},
            "baseCommand": ["echo"],
            "arguments": [{"valueFrom": "a b", "position": 1},
                          {"valueFrom": "|", "shellQuote": false, "position": 2},
                          {"valueFrom": "it's", "position": 3}],
            "inputs": {},
        }),
        json!({}),
    )
    .unwrap();
    assert!(cl.shell);
    assert_eq!(cl.argv, ["echo", "'a b'", "|", "'it'\"'\"'s'"]);
    assert_eq!(shell_quote(""), "''");
    assert_eq!(shell_quote("a-b_c/d.e"), "a-b_c/d.e");

    // Without ShellCommandRequirement, shellQuote has no effect and nothing is quoted.
    let cl = inline(
        json!({"baseCommand": ["echo"],
               "arguments": [{"valueFrom": "a b|c", "shellQuote": false}], "inputs": {}}),
        json!({}),
    )
    .unwrap();
    assert_eq!(cl.argv, ["echo", "a b|c"]);
    assert!(!cl.shell);
}

#[test]
fn initial_work_dir_entries() {
    let cl = inline(
        json!({
            "baseCommand": "ls",
            "inputs": {"f": "File", "fs": "File[]", "d": "Directory", "n": "int"},
            "requirements": {"InitialWorkDirRequirement": {"listing": [
                "$(inputs.f)",
                "$(inputs.fs)",
                {"entryname": "renamed", "entry": "$(inputs.d)", "writable": true},
                {"entryname": "conf.txt", "entry": "n=$(inputs.n)\n"},
                {"entryname": "n.json", "entry": "$(inputs.fs)"},
                {"entryname": "lit", "entry": "$(inputs.n)"},
                {"class": "Directory", "basename": "made", "listing": [
                    {"class": "File", "basename": "inner", "contents": "hi"}]},
            ]}},
        }),
        json!({
            "f": {"class": "File", "path": "/s/a.txt", "basename": "a.txt"},
            "fs": [{"class": "File", "path": "/s/b.txt", "basename": "b.txt"}],
            "d": {"class": "Directory", "path": "/s/dir", "basename": "dir"},
            "n": 5,
        }),
    );
    // `n.json` names a single-file array: that is the file staged under the name.
    let cl = cl.unwrap();
    let file = |name: &str, source: &str, writable: bool| WorkdirEntry::File {
        name: name.into(),
        source: source.into(),
        writable,
    };
    assert_eq!(
        cl.workdir,
        vec![
            file("a.txt", "/s/a.txt", false),
            file("b.txt", "/s/b.txt", false),
            WorkdirEntry::Directory {
                name: "renamed".into(),
                source: Some("/s/dir".into()),
                listing: vec![],
                writable: true
            },
            WorkdirEntry::Text {
                name: "conf.txt".into(),
                contents: "n=5\n".into(),
                writable: false
            },
            file("n.json", "/s/b.txt", false),
            WorkdirEntry::Text {
                name: "lit".into(),
                contents: "5".into(),
                writable: false
            },
            WorkdirEntry::Directory {
                name: "made".into(),
                source: None,
                listing: vec![WorkdirEntry::Text {
                    name: "inner".into(),
                    contents: "hi".into(),
                    writable: false
                }],
                writable: false
            },
        ]
    );

    let escape = inline(
        json!({"baseCommand": "ls", "inputs": {},
               "requirements": {"InitialWorkDirRequirement": {"listing": [
                   {"entryname": "../x", "entry": "t"}]}}}),
        json!({}),
    );
    assert!(
        matches!(escape, Err(CwlError::Command { .. })),
        "{escape:?}"
    );
    let absolute = inline(
        json!({"baseCommand": "ls", "inputs": {},
               "requirements": {"InitialWorkDirRequirement": {"listing": [
                   {"entryname": "/etc/x", "entry": "t"}]}}}),
        json!({}),
    );
    assert!(absolute.unwrap_err().is_unsupported());
}

#[test]
fn union_values_bind_by_their_member_type() {
    // An array in a union binds its items (an empty binding per item), a File by its path.
    let tool = json!({
        "baseCommand": "x",
        "inputs": {"v": {"type": ["File", {"type": "array", "items": "File"}],
                         "inputBinding": {"prefix": "-v"}}},
    });
    let one = json!({"v": {"class": "File", "path": "/a"}});
    assert_eq!(inline(tool.clone(), one).unwrap().argv, ["x", "-v", "/a"]);
    let many = json!({"v": [{"class": "File", "path": "/a"}, {"class": "File", "path": "/b"}]});
    assert_eq!(
        inline(tool.clone(), many).unwrap().argv,
        ["x", "-v", "/a", "/b"]
    );
    let wrong = inline(tool, json!({"v": 3}));
    assert!(matches!(wrong, Err(CwlError::Command { .. })), "{wrong:?}");
}

/// Every conformance test of the vendored suite: its command line builds from its filled job
/// (JavaScript included), unless the test expects failure.
#[test]
fn every_suite_command_line_builds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cwl");
    let text = fs_err::read_to_string(root.join("command_line_tool.yaml")).unwrap();
    let tests = crate::doc::parse_yaml(&text).unwrap();
    let staging = tempfile::tempdir().unwrap();
    // Their data files are not vendored (names with `:` and `#`).
    // underscore.js (expressionLib) sets `this._` at top level, which strict-mode QuickJS
    // refuses: crate::expr's to fix, not the command line's.
    const KNOWN: &[&str] = &["initworkdir_expreng_requirements"];
    const NOT_VENDORED: &[&str] = &["colon_in_paths", "filename_with_hash_mark"];
    let (mut built, mut compared, mut not_filled) = (0, 0, 0);
    let (mut failures, mut unsupported) = (Vec::new(), Vec::new());
    for t in tests.as_array().unwrap() {
        let id = t["id"].as_str().unwrap_or_default();
        let tool_path = root.join(t["tool"].as_str().unwrap());
        let Ok(tool) = crate::norm::load(&tool_path) else {
            continue;
        };
        let uses_js = ["requirements", "hints"].iter().any(|k| {
            list(&tool, k)
                .iter()
                .any(|r| r["class"] == "InlineJavascriptRequirement")
        });
        if t["should_fail"] == true || NOT_VENDORED.contains(&id) {
            continue;
        }
        let job = match t.get("job").and_then(Value::as_str) {
            Some(j) => {
                let text = fs_err::read_to_string(root.join(j)).unwrap();
                crate::doc::parse_yaml(&text).unwrap()
            }
            None => json!({}),
        };
        let job_base = t
            .get("job")
            .and_then(Value::as_str)
            .map(|j| root.join(j).parent().unwrap().to_path_buf())
            .unwrap_or_else(|| root.clone());
        let filled = crate::inputs::fill(
            &tool,
            job.as_object().unwrap(),
            &job_base,
            tool_path.parent().unwrap(),
            staging.path(),
            &Default::default(),
            // The inputs module's own stand-in until crate::expr is committed.
            &Default::default(),
        );
        let filled = match filled {
            Ok(f) => f,
            // Filling is the inputs module's (tested there); some jobs name data files the
            // suite does not vendor.
            Err(_) => {
                not_filled += 1;
                continue;
            }
        };
        let lib = ["requirements", "hints"]
            .iter()
            .flat_map(|k| list(&tool, k))
            .filter(|r| r["class"] == "InlineJavascriptRequirement")
            .flat_map(|r| list(r, "expressionLib"))
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect();
        match build(&tool, &filled, &runtime(), &Expressions::new(uses_js, lib)) {
            Ok(cl) => {
                built += 1;
                // The tools that run args.py print their argv: compare with what is expected.
                if let Some(expected) = t["output"]["args"].as_array()
                    && cl.argv.first().is_some_and(|p| p == "python")
                    && cl.argv.get(1).is_some_and(|p| p.ends_with("args.py"))
                {
                    let got: Vec<Value> = cl.argv[2..]
                        .iter()
                        .map(|a| json!(a.rsplit('/').next().unwrap_or(a)))
                        .collect();
                    if &got == expected {
                        compared += 1;
                    } else {
                        failures.push(format!("{id}: argv {got:?}, expected {expected:?}"));
                    }
                }
            }
            Err(e) if e.is_unsupported() => unsupported.push(id.to_string()),
            Err(_) if KNOWN.contains(&id) => {}
            Err(e) => failures.push(format!("{id}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{built} built; failed:\n{}",
        failures.join("\n")
    );
    // 163 built, 10 compared and 5 not filled when written.
    assert!(
        built > 150 && not_filled < 10,
        "{built} built, {not_filled} not filled"
    );
    assert!(compared >= 10, "only {compared} argv compared");
    // An absolute entryname is a container mount point.
    assert_eq!(unsupported, ["iwd-container-entryname1"]);
}

/// `run` with the tool's InlineJavascriptRequirement honoured.
fn run_js(tool: &str, job: Option<&str>) -> CommandLine {
    let t = crate::norm::load(&suite(tool)).unwrap();
    let j = filled(&t, job);
    build(&t, &j, &runtime(), &Expressions::new(true, Vec::new())).unwrap()
}

#[test]
fn positions_given_by_expressions() {
    // inputBinding_position_expr: `$(self)`, `${return self+1;}`, `${return 2;}` and a null.
    let cl = run_js("echo-position-expr.cwl", Some("echo-position-expr-job.yml"));
    assert_eq!(cl.argv, ["echo", "🕺", "1", "singular", "sensation!"]);
}

/// Files InitialWorkDirRequirement writes that the tool leaves as they are: their contents
/// must hash to what the suite expects of the output that globs them.
#[test]
fn work_dir_texts_match_the_suite_checksums() {
    use sha1::Digest;
    let ids = [
        "iwd-nolimit",
        "iwd-jsondump1",
        "iwd-jsondump1-nl",
        "iwd-jsondump2",
        "iwd-jsondump2-nl",
        "iwd-jsondump3",
        "iwd-jsondump3-nl",
        "escaping_expression_no_extra_quotes",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cwl");
    let text = fs_err::read_to_string(root.join("command_line_tool.yaml")).unwrap();
    let tests = crate::doc::parse_yaml(&text).unwrap();
    let mut checked = 0;
    for t in tests.as_array().unwrap() {
        if !ids.contains(&t["id"].as_str().unwrap_or_default()) {
            continue;
        }
        let tool = t["tool"].as_str().unwrap().trim_start_matches("tests/");
        let cl = run_js(tool, None);
        let (_, expected) = t["output"].as_object().unwrap().iter().next().unwrap();
        let want = expected["location"].as_str().unwrap();
        let contents = cl
            .workdir
            .iter()
            .find_map(|e| match e {
                WorkdirEntry::Text { name, contents, .. } if name == want => Some(contents),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{tool}: no {want} in {:?}", cl.workdir));
        let digest = sha1::Sha1::digest(contents.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            contents.len() as u64,
            expected["size"].as_u64().unwrap(),
            "{tool}"
        );
        assert_eq!(format!("sha1${hex}"), expected["checksum"], "{tool}");
        checked += 1;
    }
    assert_eq!(checked, ids.len());
}

#[test]
fn work_dir_files_bring_their_secondary_files_and_move_the_inputs_there() {
    let sec = |p: &str, b: &str| json!({"class": "File", "path": p, "basename": b});
    let with_sec = |p: &str, b: &str| {
        json!({"class": "File", "path": p, "basename": b,
               "secondaryFiles": [sec(&format!("{p}.sec"), &format!("{b}.sec"))]})
    };
    let tool = crate::norm::normalize(&json!({
            "cwlVersion": "v1.2", "class": "CommandLineTool", "outputs": [],
            "baseCommand": "cat",
            "inputs": {"f": "File", "fs": "File[]"},
            "arguments": ["$(inputs.f.path)", "$(inputs.f.secondaryFiles[0].path)",
                          "$(inputs.fs[0].path)"],
            "requirements": {"InitialWorkDirRequirement": {"listing": [
                {"entryname": "sub/bob.txt", "entry": "$(inputs.f)"},
                {"entryname": "dir", "entry":
                    "${ return {class: 'Directory', listing: inputs.fs} }"},
            ]}, "InlineJavascriptRequirement": {}},
    }))
    .unwrap();
    let job = json!({"f": with_sec("/s/a.txt", "a.txt"), "fs": [with_sec("/s/b.txt", "b.txt")]});
    let cl = build(&tool, &job, &runtime(), &Expressions::new(true, Vec::new())).unwrap();
    let file = |name: &str, source: &str| WorkdirEntry::File {
        name: name.into(),
        source: source.into(),
        writable: false,
    };
    // Each secondary file keeps its own name beside its (renamed) primary.
    assert_eq!(
        cl.workdir,
        vec![
            file("sub/bob.txt", "/s/a.txt"),
            file("sub/a.txt.sec", "/s/a.txt.sec"),
            WorkdirEntry::Directory {
                name: "dir".into(),
                source: None,
                listing: vec![file("b.txt", "/s/b.txt"), file("b.txt.sec", "/s/b.txt.sec")],
                writable: false,
            },
        ]
    );
    // The command names the copies in the output directory, not the staged sources.
    assert_eq!(
        cl.argv,
        [
            "cat",
            "/out/sub/bob.txt",
            "/out/sub/a.txt.sec",
            "/out/dir/b.txt"
        ]
    );
}
