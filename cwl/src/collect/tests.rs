//! Each test lays out an output directory as a real run of a conformance tool leaves it
//! (the files its command writes), collects, and compares the output object with the
//! test's expected output in tests/cwl/command_line_tool.yaml the way cwltest does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cwl")
}

fn tool(name: &str) -> Value {
    crate::norm::load(&suite().join("tests").join(name)).unwrap()
}

/// The `output` of conformance test `id` (its `$import` read).
fn expected(id: &str) -> Value {
    let text = fs_err::read_to_string(suite().join("command_line_tool.yaml")).unwrap();
    let tests: Value = serde_norway::from_str(&text).unwrap();
    let t = tests
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no conformance test {id}"));
    match t["output"].get("$import").and_then(Value::as_str) {
        Some(p) => serde_json::from_str(&fs_err::read_to_string(suite().join(p)).unwrap()).unwrap(),
        None => t["output"].clone(),
    }
}

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

/// cwltest's comparison (compare.py): `Any` matches anything; objects key by key (an extra
/// actual key only if null); lists in order; a File's `location` ends with the expected one,
/// exists, and its bytes hash and measure as both sides say; a Directory's expected
/// `listing` entries each match some actual entry.
fn compare(exp: &Value, act: &Value, at: &str) -> Result<(), String> {
    if exp == "Any" {
        return Ok(());
    }
    let object = |v: &Value| {
        v.as_object()
            .cloned()
            .ok_or_else(|| format!("{at}: expected {exp}, got {act}"))
    };
    match exp {
        Value::Object(e)
            if matches!(
                e.get("class").and_then(Value::as_str),
                Some("File" | "Directory")
            ) =>
        {
            let a = object(act)?;
            ensure!(a.get("class") == e.get("class"), "{at}: class of {act}");
            let loc = a["location"].as_str().ok_or(format!("{at}: no location"))?;
            let path = fsobj::decode(loc.strip_prefix("file://").ok_or("not file://")?);
            ensure!(
                a["path"].as_str().map(Path::new) == Some(path.as_path()),
                "{at}: path vs location in {act}"
            );
            if let Some(Value::String(l)) = e.get("location").or(e.get("path"))
                && l != "Any"
            {
                ensure!(
                    loc.ends_with(&format!("/{l}")),
                    "{at}: location {loc} does not end with /{l}"
                );
            }
            if e["class"] == "File" {
                ensure!(path.is_file(), "{at}: {} is not a file", path.display());
                let (sum, size) = fsobj::checksum(&path)?;
                ensure!(
                    a["checksum"] == json!(sum),
                    "{at}: checksum vs the file: {act}"
                );
                ensure!(a["size"] == json!(size), "{at}: size vs the file: {act}");
            } else {
                ensure!(path.is_dir(), "{at}: {} is not a directory", path.display());
                let listing = a["listing"]
                    .as_array()
                    .ok_or(format!("{at}: no listing in {act}"))?;
                for (i, want) in e
                    .get("listing")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let hit = listing.iter().any(|got| compare(want, got, "").is_ok());
                    ensure!(hit, "{at}.listing[{i}]: no entry matches {want} in {act}");
                }
            }
            for (k, v) in e {
                if !matches!(k.as_str(), "location" | "path" | "listing" | "class") {
                    compare(v, a.get(k).unwrap_or(&Value::Null), &format!("{at}.{k}"))?;
                }
            }
        }
        Value::Object(e) => {
            let a = object(act)?;
            for (k, v) in e {
                compare(v, a.get(k).unwrap_or(&Value::Null), &format!("{at}.{k}"))?;
            }
            for (k, v) in &a {
                ensure!(
                    e.contains_key(k) || v.is_null(),
                    "{at}: unexpected key {k}: {v}"
                );
            }
        }
        Value::Array(e) => {
            let a = act
                .as_array()
                .ok_or(format!("{at}: expected {exp}, got {act}"))?;
            ensure!(a.len() == e.len(), "{at}: expected {exp}, got {act}");
            for (i, (x, y)) in e.iter().zip(a).enumerate() {
                compare(x, y, &format!("{at}[{i}]"))?;
            }
        }
        _ => ensure!(exp == act, "{at}: expected {exp}, got {act}"),
    }
    Ok(())
}

/// A run's output directory and what collecting it needs.
struct Run {
    dir: tempfile::TempDir,
    job: Value,
    exit_code: i64,
    stdout: Option<&'static str>,
    stderr: Option<&'static str>,
}

impl Run {
    fn new() -> Run {
        Run {
            dir: tempfile::tempdir().unwrap(),
            job: json!({}),
            exit_code: 0,
            stdout: None,
            stderr: None,
        }
    }

    fn outdir(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    /// Write `contents` at `rel` in the output directory.
    fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Self {
        let p = self.outdir().join(rel);
        fs_err::create_dir_all(p.parent().unwrap()).unwrap();
        fs_err::write(p, contents).unwrap();
        self
    }

    fn touch(&self, names: &[&str]) -> &Self {
        for n in names {
            self.write(n, "");
        }
        self
    }

    fn collect_value(&self, tool: &Value) -> Result<Value, CwlError> {
        let outdir = self.outdir();
        fs_err::create_dir_all(&outdir).unwrap();
        let runtime = json!({
            "outdir": outdir.to_string_lossy(), "tmpdir": "/tmp", "cores": 1, "ram": 1024,
            "outdirSize": 1024, "tmpdirSize": 1024, "exitCode": self.exit_code,
        });
        let namespaces: BTreeMap<String, String> = tool
            .get("$namespaces")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        // JavaScript where the tool declares it (its expressionLib as plain strings).
        let js = tool["requirements"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["class"] == "InlineJavascriptRequirement");
        let lib = js
            .and_then(|r| r["expressionLib"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|l| l.as_str().map(String::from))
            .collect();
        let exprs = Expressions::new(js.is_some(), lib);
        let streams = Streams {
            stdout: self.stdout,
            stderr: self.stderr,
        };
        collect(
            tool,
            &self.job,
            &runtime,
            &outdir,
            &namespaces,
            &exprs,
            streams,
        )
    }

    fn collect(&self, tool_file: &str) -> Result<Value, CwlError> {
        self.collect_value(&tool(tool_file))
    }

    /// Collect and compare with conformance test `id`'s expected output.
    fn check(&self, tool_file: &str, id: &str) -> Value {
        let got = self
            .collect(tool_file)
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        if let Err(e) = compare(&expected(id), &got, id) {
            panic!("{e}\nthe whole output: {got:#}");
        }
        got
    }

    fn fails(&self, tool_file: &str) -> String {
        match self.collect(tool_file) {
            Ok(v) => panic!("collected {v}, expected an error"),
            Err(e) => e.to_string(),
        }
    }
}

/// A File object of the job (as the inputs module fills it) for the suite's data file.
fn input_file(rel: &str) -> Value {
    let p = fs_err::canonicalize(suite().join("tests").join(rel)).unwrap();
    json!({"class": "File", "path": p.to_string_lossy(), "location": fsobj::location(&p),
           "basename": p.file_name().unwrap().to_string_lossy()})
}

#[test]
fn glob_star_is_sorted() {
    let r = Run::new();
    r.touch(&["z", "y", "x", "w", "c", "b", "a"]);
    r.check("glob_test.cwl", "outputbinding_glob_sorted");
}

#[test]
fn glob_from_an_expression_giving_a_list() {
    let mut r = Run::new();
    r.job = json!({"ids": ["a", "b", "c"]});
    r.touch(&["a", "b", "c", "d"]);
    r.check("glob-expr-list.cwl", "multiple_glob_expr_list");
}

#[test]
fn glob_dot_is_the_output_directory_with_its_listing() {
    let r = Run::new();
    fs_err::create_dir_all(r.outdir()).unwrap();
    // What `tar xvf hello.tar` (dir3.cwl) writes.
    let st = std::process::Command::new("tar")
        .arg("xf")
        .arg(suite().join("tests/hello.tar"))
        .current_dir(r.outdir())
        .status()
        .unwrap();
    assert!(st.success());
    let got = r.check("dir3.cwl", "directory_output");
    assert_eq!(got["outdir"]["listing"].as_array().unwrap().len(), 2);
}

#[test]
fn runtime_outdir_glob_lists_deeply() {
    let r = Run::new();
    r.touch(&["baz.txt", "foo/bar.txt"]);
    let got = r.check("runtime-outdir.cwl", "runtime-outdir");
    assert_eq!(
        got["stuff"]["listing"][1]["listing"][0]["basename"],
        "bar.txt"
    );
}

#[test]
fn glob_matches_directories_for_directory_outputs() {
    let r = Run::new();
    for d in ["a_dir", "b_dir", "c_dir"] {
        fs_err::create_dir_all(r.outdir().join(d)).unwrap();
    }
    r.check("glob_directory.cwl", "outputbinding_glob_directory");
}

#[test]
fn colons_in_an_output_directory_name() {
    let mut r = Run::new();
    r.job = json!({"outdir_name": "A:Gln2Cys_result", "input_file": input_file("hello.txt")});
    r.write("A:Gln2Cys_result/hello.txt", "Hello world!\n");
    r.check("colon_test_output.cwl", "colon_in_output_path");
}

/// `cp -r testdir outdir` as capture-*.cwl run it.
fn capture_run() -> Run {
    let mut r = Run::new();
    r.job = json!({"indir": {"class": "Directory", "basename": "testdir",
                             "path": suite().join("tests/testdir").to_string_lossy()}});
    r.touch(&["testdir/a", "testdir/b", "testdir/c/d"]);
    r
}

#[test]
fn a_file_output_that_globbed_a_directory_fails() {
    let e = capture_run().fails("capture-files.cwl");
    let want = "output `result`: is declared File[], but the run gave a Directory";
    assert!(e.starts_with(want), "{e}");
    assert!(e.ends_with("testdir/c`) as item 2"), "{e}");
}

#[test]
fn a_directory_output_that_globbed_files_fails() {
    let e = capture_run().fails("capture-dirs.cwl");
    assert!(e.contains("Directory[]"), "{e}");
}

#[test]
fn a_file_or_directory_union_takes_both() {
    capture_run().check("capture-files-and-dirs.cwl", "capture_files_and_dirs");
}

#[test]
fn cwl_output_json_with_relative_path_and_location() {
    let r = Run::new();
    r.write("foo", "foo\n").write(
        "cwl.output.json",
        r#"{"foo": {"path": "foo", "class": "File"} }"#,
    );
    r.check("test-cwl-out3.cwl", "json_output_path_relative");

    let r = Run::new();
    r.write("foo", "foo\n").write(
        "cwl.output.json",
        r#"{"foo": {"location": "foo", "class": "File"} }"#,
    );
    let got = r.check("test-cwl-out4.cwl", "json_output_location_relative");
    assert_eq!(got["foo"]["basename"], "foo");
}

#[test]
fn cwl_output_json_with_absolute_path_in_the_outdir() {
    let r = Run::new();
    let abs = r.outdir().join("foo");
    r.write("foo", "foo\n").write(
        "cwl.output.json",
        json!({"foo": {"location": fsobj::location(&abs), "class": "File"}}).to_string(),
    );
    r.check("test-cwl-out2.cwl", "docker_json_output_location");
}

#[test]
fn cwl_output_json_has_no_size_limit() {
    let r = Run::new();
    // What mkfilelist.py writes.
    let list: Vec<String> = (1..10000)
        .map(|i| format!("example_input_file{i}.txt"))
        .collect();
    let out = json!({"filelist": list, "bigstring": list.join("\n")}).to_string();
    assert!(out.len() as u64 > 2 * LOAD_CONTENTS_LIMIT);
    r.write("cwl.output.json", out);
    r.check("loadContents/cwloutput-nolimit.cwl", "cwloutput_nolimit");
}

#[test]
fn cwl_output_json_pointing_outside_fails() {
    let r = Run::new();
    r.write(
        "cwl.output.json",
        r#"{"foo": {"path": "/etc/passwd", "class": "File"}}"#,
    );
    let e = r.fails("test-cwl-out3.cwl");
    assert!(e.contains("outside the output directory"), "{e}");
    let r = Run::new();
    r.write("cwl.output.json", r#"{"foo": "#);
    assert!(r.fails("test-cwl-out3.cwl").contains("not JSON"));
}

#[test]
fn record_output_eval_and_stdout() {
    let mut r = Run::new();
    r.job = json!({"ref": {"genome_fa": "GRCm38.primary_assembly.genome.fa",
                           "annotation_gtf": "gencode.vM21.primary_assembly.annotation.gtf"}});
    r.stdout = Some("a1b2c3.stdout");
    r.write(
        "a1b2c3.stdout",
        "GRCm38.primary_assembly.genome.fa gencode.vM21.primary_assembly.annotation.gtf\n",
    );
    r.check("record_outputeval_nojs.cwl", "record_outputeval_nojs");
}

#[test]
fn a_stdout_output_needs_the_captured_stream() {
    let mut r = Run::new();
    r.job = json!({"ref": {"genome_fa": "g", "annotation_gtf": "a"}});
    let e = r.fails("record_outputeval_nojs.cwl");
    assert!(e.contains("`summary`") && e.contains("stdout"), "{e}");
}

#[test]
fn stderr_output() {
    let mut r = Run::new();
    r.stderr = Some("err.txt");
    r.write("err.txt", "foo\n");
    r.check("stderr-shortcut.cwl", "stderr_redirect_shortcut");
}

#[test]
fn output_eval_sees_the_exit_code() {
    let mut r = Run::new();
    r.exit_code = 7;
    r.check("exitcode.cwl", "outputEval_exitCode");
}

#[test]
fn secondary_files_in_output_records() {
    let r = Run::new();
    r.touch(&["A", "A.s2", "B", "B.s3", "C", "C.s3"]);
    r.check(
        "record-out-secondaryFiles.cwl",
        "secondary_files_in_output_records",
    );
}

#[test]
fn output_secondary_files_are_optional_and_optional_outputs_null() {
    let mut r = Run::new();
    r.job = json!({"file1": input_file("hello.txt")});
    r.write("output.txt", "Hello world!\n");
    let got = r.check("optional-output.cwl", "output_secondaryfile_optional");
    assert_eq!(got["output_file"]["secondaryFiles"], json!([]));
    assert!(got["optional_file"].is_null());
}

#[test]
fn secondary_files_of_a_full_path_glob() {
    let mut r = Run::new();
    r.job = json!({"INPUT": input_file("ref.fasta")});
    r.write(
        "ref.fasta",
        fs_err::read(suite().join("tests/ref.fasta")).unwrap(),
    )
    .touch(&["ref.fasta.fai"]);
    r.check(
        "initialworkdir-glob-fullpath.cwl",
        "initial_workdir_output_glob",
    );
}

#[test]
fn format_is_expanded_with_namespaces() {
    let mut r = Run::new();
    r.job = json!({"input": input_file("whale.txt")});
    // What `rev whale.txt > output.txt` writes.
    let whale = fs_err::read_to_string(suite().join("tests/whale.txt")).unwrap();
    let rev: String = whale
        .split_inclusive('\n')
        .map(|l| {
            let body = l.strip_suffix('\n').unwrap_or(l);
            let mut s: String = body.chars().rev().collect();
            if l.ends_with('\n') {
                s.push('\n');
            }
            s
        })
        .collect();
    r.write("output.txt", rev);
    r.check("formattest.cwl", "format_checking");
}

#[test]
fn output_eval_may_return_input_files_with_a_format() {
    let mut r = Run::new();
    r.job = json!({"record_input": {"f1": input_file("rec/A"),
                                    "f2": [input_file("rec/B"), input_file("rec/C")]}});
    r.check("record-out-format.cwl", "record_output_file_entry_format");
}

#[test]
fn a_symlink_out_of_the_outdir_fails_one_inside_is_kept() {
    let r = Run::new();
    let outside = r.dir.path().join("original.txt");
    fs_err::write(&outside, "Who's gonna drive you home\n").unwrap();
    fs_err::create_dir_all(r.outdir()).unwrap();
    std::os::unix::fs::symlink(&outside, r.outdir().join("symlink.txt")).unwrap();
    let e = r.fails("symlink-illegal.cwl");
    assert!(e.contains("outside the output directory"), "{e}");

    let r = Run::new();
    r.write("adir/original.txt", "Who's gonna drive you home\n");
    std::os::unix::fs::symlink("adir/original.txt", r.outdir().join("symlink.txt")).unwrap();
    let got = r.check("symlink-legal.cwl", "legal_symlink");
    assert_eq!(got["output_file"]["basename"], "symlink.txt");
}

#[test]
fn a_glob_outside_the_outdir_fails() {
    let e = Run::new().fails("glob-path-error.cwl");
    assert!(e.contains("/etc/passwd") && e.contains("outside"), "{e}");
}

#[test]
fn a_missing_required_file_fails_and_two_matches_for_one_file_fail() {
    let mut r = Run::new();
    r.job = json!({"file1": input_file("hello.txt")});
    let e = r.fails("optional-output.cwl");
    assert!(
        e.contains("`output_file`") && e.contains("no file matched"),
        "{e}"
    );
    r.touch(&["output.txt"]);
    let mut t = tool("optional-output.cwl");
    t["outputs"][0]["outputBinding"]["glob"] = json!(["output.txt", "output.txt"]);
    let e = r.collect_value(&t).unwrap_err().to_string();
    assert!(e.contains("2 paths matched"), "{e}");
}

/// A tool in the canonical shape with one output.
fn one_output(output: Value) -> Value {
    json!({"class": "CommandLineTool", "inputs": [], "outputs": [output],
           "baseCommand": ["true"], "requirements": [], "hints": []})
}

#[test]
fn load_contents_feeds_output_eval_and_is_capped() {
    let r = Run::new();
    r.write("n.txt", "16\n");
    let t = one_output(json!({"id": "n", "type": "string",
        "outputBinding": {"glob": "n.txt", "loadContents": true, "outputEval": "$(self[0].contents)"}}));
    assert_eq!(r.collect_value(&t).unwrap(), json!({"n": "16\n"}));
    let t = one_output(json!({"id": "n", "type": "int",
        "outputBinding": {"glob": "n.txt", "loadContents": true, "outputEval": "$(self[0].contents)"}}));
    let e = r.collect_value(&t).unwrap_err().to_string();
    assert!(e.contains("declared int"), "{e}");

    r.write("big.txt", vec![b'x'; LOAD_CONTENTS_LIMIT as usize + 1]);
    let t = one_output(json!({"id": "f", "type": "File",
        "outputBinding": {"glob": "big.txt", "loadContents": true}}));
    let e = r.collect_value(&t).unwrap_err().to_string();
    assert!(e.contains("64 KiB"), "{e}");
    r.write("big.txt", vec![b'x'; LOAD_CONTENTS_LIMIT as usize]);
    let got = r.collect_value(&t).unwrap();
    assert_eq!(
        got["f"]["contents"].as_str().unwrap().len(),
        LOAD_CONTENTS_LIMIT as usize
    );
}

#[test]
fn secondary_file_patterns_carets_and_required() {
    let r = Run::new();
    r.touch(&["x.bam", "x.bai", "x.bam.md5"]);
    let t = one_output(
        json!({"id": "b", "type": "File", "outputBinding": {"glob": "*.bam"},
        "secondaryFiles": ["^.bai", {"pattern": ".md5", "required": null}, ".md5?", "^^.none"]}),
    );
    let got = r.collect_value(&t).unwrap();
    let names: Vec<&str> = got["b"]["secondaryFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["basename"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["x.bai", "x.bam.md5"]);
    assert_eq!(got["b"]["secondaryFiles"][0]["size"], 0);
    let t = one_output(
        json!({"id": "b", "type": "File", "outputBinding": {"glob": "*.bam"},
        "secondaryFiles": [{"pattern": ".idx", "required": true}]}),
    );
    let e = r.collect_value(&t).unwrap_err().to_string();
    assert!(e.contains("x.bam.idx") && e.contains("missing"), "{e}");
}

#[test]
fn file_objects_have_every_field() {
    let r = Run::new();
    r.write("item #1.tar.gz", "Hello\n");
    let t = one_output(
        json!({"id": "f", "type": {"type": "array", "items": "File"},
        "outputBinding": {"glob": "*.gz"}}),
    );
    let got = r.collect_value(&t).unwrap();
    let f = &got["f"][0];
    assert_eq!(f["class"], "File");
    assert_eq!(f["basename"], "item #1.tar.gz");
    assert_eq!(f["nameroot"], "item #1.tar");
    assert_eq!(f["nameext"], ".gz");
    // `printf 'Hello\n' | sha1sum`
    assert_eq!(
        f["checksum"],
        "sha1$1d229271928d3f9e2bb0375bd6ce5db6c6d348d9"
    );
    assert_eq!(f["size"], 6);
    assert!(
        f["location"]
            .as_str()
            .unwrap()
            .ends_with("/out/item%20%231.tar.gz"),
        "{f}"
    );
    assert_eq!(
        fsobj::split_name(".bashrc"),
        (".bashrc".into(), String::new())
    );
    // Nothing matched: an empty array, an optional array null.
    let t = one_output(
        json!({"id": "f", "type": {"type": "array", "items": "File"},
        "outputBinding": {"glob": "*.none"}}),
    );
    assert_eq!(r.collect_value(&t).unwrap(), json!({"f": []}));
    let t = one_output(
        json!({"id": "f", "type": ["null", {"type": "array", "items": "File"}],
        "outputBinding": {"glob": "*.none"}}),
    );
    assert_eq!(r.collect_value(&t).unwrap(), json!({"f": null}));
}

#[test]
fn a_secondary_file_renamed_by_an_expression_is_linked_under_its_basename() {
    // As secondaryfiles/rename-outputs.cwl's expression does (command_output_file_expression).
    let mut r = Run::new();
    r.touch(&["secondary_file_test.txt", "secondary_file_test.accessory"]);
    r.job = json!({"sec": {"class": "File",
        "path": r.outdir().join("secondary_file_test.accessory").to_string_lossy(),
        "basename": "secondary_file_test.txt.accessory"}});
    let mut t = tool("secondaryfiles/rename-outputs.cwl");
    t["outputs"][0]["secondaryFiles"] = json!("$(inputs.sec)");
    let got = r.collect_value(&t).unwrap();
    compare(&expected("command_output_file_expression"), &got, "").unwrap();
    let sf = &got["output_file"]["secondaryFiles"][0];
    assert_eq!(sf["basename"], "secondary_file_test.txt.accessory");
    assert!(
        r.outdir()
            .join("secondary_file_test.txt.accessory")
            .is_file()
    );
}

#[test]
fn javascript_output_eval_on_loaded_contents() {
    let mut r = Run::new();
    r.job = json!({"file1": input_file("whale.txt")});
    r.stdout = Some("output.txt");
    // What `wc whale.txt > output.txt` writes.
    r.write("output.txt", "  16  194 1111 whale.txt\n");
    r.check("wc2-tool.cwl", "expression_outputEval");

    let mut r = Run::new();
    r.stdout = Some("a.txt");
    r.write("a.txt", "0\n");
    let got = r.check(
        "optional-numerical-output-0.cwl",
        "optional_numerical_output_returns_0_not_null",
    );
    assert_eq!(got["out"], json!(0));
}

#[test]
fn output_binding_load_listing_gives_output_eval_a_shallow_listing() {
    let r = Run::new();
    r.touch(&["file1", "file2", "file3"]);
    r.check("listing_shallow3.cwl", "listing_outputBinding_loadListing");
}

#[test]
fn a_secondary_file_expression_renaming_a_file() {
    let r = Run::new();
    // The InitialWorkDir entries of rename-outputs.cwl, and `ls`.
    r.touch(&["secondary_file_test.txt", "secondary_file_test.accessory"]);
    r.check(
        "secondaryfiles/rename-outputs.cwl",
        "command_output_file_expression",
    );
}
