//! Driven by the vendored conformance tools and jobs (tests/cwl/tests), each asserting what
//! the conformance test (tests/cwl/command_line_tool.yaml) or CWL's Process.yml requires.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{files, fill, relocate, staged_parent};
use crate::CwlError;
use crate::expr::Expressions;

fn suite(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/cwl/tests")
        .join(name)
}

fn namespaces(tool: &Value) -> BTreeMap<String, String> {
    tool.get("$namespaces")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

fn exprs_for(tool: &Value) -> Expressions {
    let js = tool["requirements"].as_array().is_some_and(|r| {
        r.iter()
            .any(|r| r["class"] == "InlineJavascriptRequirement")
    });
    Expressions::new(js, Vec::new())
}

/// A filled job and the staging directory it wrote literals into.
struct Filled {
    job: Result<Value, CwlError>,
    staging: tempfile::TempDir,
}

impl Filled {
    fn ok(&self) -> &Value {
        match &self.job {
            Ok(v) => v,
            Err(e) => panic!("fill failed: {e}"),
        }
    }

    fn err(&self) -> String {
        match &self.job {
            Ok(v) => panic!("fill should have failed, gave {v:#}"),
            Err(e) => e.to_string(),
        }
    }
}

fn fill_with(tool: &Value, job: &Map<String, Value>, job_base: &Path, tool_dir: &Path) -> Filled {
    let staging = tempfile::tempdir().unwrap();
    let job = fill(
        tool,
        job,
        job_base,
        tool_dir,
        staging.path(),
        &namespaces(tool),
        &exprs_for(tool),
    );
    Filled { job, staging }
}

/// A vendored tool with a vendored job (or none), as `cwl-run` would fill it.
fn run(tool_file: &str, job_file: Option<&str>) -> Filled {
    let tool_path = suite(tool_file);
    let tool = crate::norm::load(&tool_path).unwrap();
    let job_path = job_file.map(suite);
    let job = crate::job::read_job(job_path.as_deref()).unwrap();
    let job_base = job_path
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| suite(""));
    fill_with(&tool, &job, &job_base, tool_path.parent().unwrap())
}

/// An inline tool (normalized) with an inline job, data relative to the suite directory.
fn run_inline(tool: Value, job: Value) -> Filled {
    let tool = crate::norm::normalize(&tool).unwrap();
    let job = job.as_object().cloned().unwrap_or_default();
    fill_with(&tool, &job, &suite(""), &suite(""))
}

fn tool_with(inputs: Value) -> Value {
    json!({"cwlVersion": "v1.2", "class": "CommandLineTool", "baseCommand": "true",
           "inputs": inputs, "outputs": []})
}

fn abs(name: &str) -> String {
    suite(name)
        .components()
        .fold(PathBuf::new(), |mut p, c| {
            match c {
                std::path::Component::ParentDir => {
                    p.pop();
                }
                other => p.push(other),
            }
            p
        })
        .display()
        .to_string()
}

#[test]
fn a_file_gets_every_derived_field() {
    let f = run("cat-tool.cwl", Some("cat-job.json"));
    let file = &f.ok()["file1"];
    let path = abs("hello.txt");
    assert_eq!(file["class"], "File");
    assert_eq!(file["path"], path.as_str());
    assert_eq!(file["location"], format!("file://{path}"));
    assert_eq!(file["basename"], "hello.txt");
    assert_eq!(file["nameroot"], "hello");
    assert_eq!(file["nameext"], ".txt");
    assert_eq!(file["dirname"], abs(""));
    assert_eq!(file["size"], 13);
    assert!(file.get("contents").is_none(), "no loadContents: {file}");
    assert_eq!(
        files(f.ok()),
        vec![("/file1".to_string(), PathBuf::from(&path))]
    );
}

#[test]
fn a_hash_mark_in_a_location_is_percent_encoded_and_decoded() {
    // filename_with_hash_mark: `octothorpe/item %231.txt` is the file `item #1.txt`.
    let dir = tempfile::tempdir().unwrap();
    fs_err::create_dir(dir.path().join("octothorpe")).unwrap();
    fs_err::write(dir.path().join("octothorpe/item #1.txt"), "1\n2\n3\n4\n").unwrap();
    let tool = crate::norm::load(&suite("cat-tool.cwl")).unwrap();
    let job = crate::job::read_job(Some(&suite("octo.yml"))).unwrap();
    let f = fill_with(&tool, &job, dir.path(), &suite(""));
    let file = &f.ok()["file1"];
    assert_eq!(file["basename"], "item #1.txt");
    assert_eq!(file["nameroot"], "item #1");
    assert_eq!(file["size"], 8);
    let loc = file["location"].as_str().unwrap();
    assert!(loc.ends_with("/octothorpe/item%20%231.txt"), "{loc}");
    assert_eq!(
        crate::values::location_path(loc, Path::new("/")),
        PathBuf::from(file["path"].as_str().unwrap())
    );

    // colon_in_paths: `A%3AGln2Cys` is `A:Gln2Cys`, a relative name and not a URI scheme.
    fs_err::write(dir.path().join("A:Gln2Cys"), "x").unwrap();
    let job = json!({"f": {"class": "File", "location": "A%3AGln2Cys"}});
    let tool = crate::norm::normalize(&tool_with(json!({"f": "File"}))).unwrap();
    let f = fill_with(&tool, job.as_object().unwrap(), dir.path(), dir.path());
    assert_eq!(f.ok()["f"]["basename"], "A:Gln2Cys");
    assert!(
        f.ok()["f"]["location"]
            .as_str()
            .unwrap()
            .ends_with("/A%3AGln2Cys")
    );
}

#[test]
fn missing_files_and_other_schemes_are_refused_naming_the_input() {
    let f = run_inline(
        tool_with(json!({"f": "File"})),
        json!({"f": {"class": "File", "location": "no-such-file.txt"}}),
    );
    let e = f.err();
    assert!(
        e.contains("input `f`") && e.contains("no-such-file.txt"),
        "{e}"
    );
    let f = run_inline(
        tool_with(json!({"f": "File"})),
        json!({"f": {"class": "File", "location": "https://example.com/x.txt"}}),
    );
    assert!(f.err().contains("only file:// locations"), "{}", f.err());
    let f = run_inline(
        tool_with(json!({"f": "File"})),
        json!({"f": {"class": "Directory", "location": "testdir"}}),
    );
    assert!(
        f.err().contains("expected File, got a Directory object"),
        "{}",
        f.err()
    );
    let f = run_inline(
        tool_with(json!({"d": "Directory"})),
        json!({"d": {"class": "Directory", "location": "whale.txt"}}),
    );
    assert!(f.err().contains("is not a directory"), "{}", f.err());
}

#[test]
fn a_default_is_relative_to_the_tool_and_only_read_when_used() {
    // default_path_notfound_warning: the job's value wins, the default is not looked at.
    let f = run("default_path.cwl", Some("default_path_job.yml"));
    assert_eq!(f.ok()["file1"]["path"], abs("hello.txt"));
    let tool = crate::norm::load(&suite("default_path.cwl")).unwrap();
    let job = json!({"file1": {"class": "File", "path": "hello.txt"}});
    let nowhere = tempfile::tempdir().unwrap();
    // The default names a file that does not exist next to this "tool directory"; unused, so fine.
    let f = fill_with(&tool, job.as_object().unwrap(), &suite(""), nowhere.path());
    assert_eq!(f.ok()["file1"]["basename"], "hello.txt");
    // Used and missing: an error.
    let f = fill_with(&tool, &Map::new(), &suite(""), nowhere.path());
    assert!(
        f.err().contains("input `file1`") && f.err().contains("whale.txt"),
        "{}",
        f.err()
    );
}

#[test]
fn a_record_default_is_checked_and_its_file_completed() {
    // record_with_default
    let f = run("paramref_arguments_roundtrip.cwl", Some("empty.json"));
    let r = &f.ok()["a_record"];
    assert_eq!(r["first"], "y");
    assert_eq!(r["second"], 23);
    assert_eq!(r["third"], 2.3);
    assert_eq!(r["fourth"], 4242424242_i64);
    assert_eq!(r["sixth"]["path"], abs("whale.txt"));
    assert_eq!(r["sixth"]["size"], 1111);
    assert_eq!(
        files(f.ok()),
        vec![(
            "/a_record/sixth".to_string(),
            PathBuf::from(abs("whale.txt"))
        )]
    );
}

#[test]
fn any_takes_anything_but_null() {
    // clt_any_input_with_*_provided
    let f = run("io-any-1.cwl", Some("io-any-record.json"));
    assert_eq!(f.ok()["bar"], json!({"moo": 1, "cow": 5}));
    let f = run("io-any-1.cwl", Some("io-any-array.json"));
    assert_eq!(f.ok()["bar"], json!([1, "moocow"]));
    let f = run("io-any-1.cwl", Some("io-any-file.json"));
    assert_eq!(f.ok()["bar"]["size"], 1111);
    assert_eq!(files(f.ok()).len(), 1);
    // any_without_defaults_specified_fails / _unspecified_fails
    for job in ["null-expression-echo-job.json", "null-expression1-job.json"] {
        let f = run("echo-tool.cwl", Some(job));
        let e = f.err();
        assert!(e.contains("input `in`") && e.contains("Any"), "{job}: {e}");
    }
    // any_input_param_graph_no_default: a $graph document's Any with a value.
    let f = run_inline(
        tool_with(json!({"in": "Any"})),
        json!({"in": "hello test env"}),
    );
    assert_eq!(f.ok()["in"], "hello test env");
}

#[test]
fn types_are_checked_with_unions_enums_numbers_and_nested_arrays() {
    let tool = tool_with(json!({
        "i": "int", "l": "long", "f": "float", "d": "double?", "s": "string",
        "b": "boolean", "e": {"type": "enum", "symbols": ["#e/a", "b"]},
        "u": [ "File", {"type": "array", "items": "File"}, "string"],
        "nested": {"type": "array", "items": {"type": "array", "items": "string"}},
    }));
    let good = json!({"i": 3, "l": 4242424242_i64, "f": 1230000, "s": "x", "b": false,
        "e": "a", "u": "plain", "nested": [["a"], [], ["b", "c"]]});
    let f = run_inline(tool.clone(), good.clone());
    let j = f.ok();
    // An int given for a float stays an int (it prints as 1230000, not 1230000.0).
    assert!(j["f"].is_i64(), "{}", j["f"]);
    assert_eq!(j["d"], Value::Null);
    assert_eq!(j["u"], "plain");
    assert_eq!(j["nested"], json!([["a"], [], ["b", "c"]]));

    let bad = |key: &str, value: Value| {
        let mut job = good.clone();
        job[key] = value;
        run_inline(tool.clone(), job).err()
    };
    let e = bad("i", json!(2.5));
    assert!(
        e.contains("input `i`") && e.contains("expected int, got the number 2.5"),
        "{e}"
    );
    let e = bad("i", json!(4242424242_i64));
    assert!(e.contains("expected int"), "{e}");
    let e = bad("s", json!(5));
    assert!(
        e.contains("input `s`: expected string, got the integer 5"),
        "{e}"
    );
    // A symbol given as the full IRI the document wrote is the same symbol.
    let mut job = good.clone();
    job["e"] = json!("#e/a");
    assert_eq!(run_inline(tool.clone(), job).ok()["e"], "a");
    let e = bad("e", json!("c"));
    assert!(e.contains("one of a, b"), "{e}");
    let e = bad("nested", json!([["a"], [1]]));
    assert!(
        e.contains("input `nested[1][0]`: expected string, got the integer 1"),
        "{e}"
    );
    let e = bad("u", json!(7));
    assert!(e.contains("File or an array of File or string"), "{e}");
    let mut job = good.clone();
    job.as_object_mut().unwrap().remove("b");
    let e = run_inline(tool.clone(), job).err();
    assert!(
        e.contains("input `b`: has no value and no default; the tool requires boolean"),
        "{e}"
    );

    // The union's first member that fits is taken (a single File, then a list of them).
    let f = run(
        "io-file-or-files.cwl",
        Some("job-input-array-few-files.json"),
    );
    assert!(f.ok()["input"].is_array());
    let f = run("io-file-or-files.cwl", Some("job-input-one-file.json"));
    assert_eq!(f.ok()["input"]["class"], "File");
    let f = run("io-file-or-files.cwl", Some("job-input-null.json"));
    assert_eq!(f.ok()["input"], Value::Null);

    // anonymous_enum_in_array and nested_types (SchemaDefRequirement records).
    let f = run(
        "anon_enum_inside_array.cwl",
        Some("anon_enum_inside_array.yml"),
    );
    assert_eq!(f.ok()["first"], json!({"species": "mus_musculus"}));
    assert_eq!(f.ok()["second"], "homo_sapiens");
    let f = run("nested_types.cwl", Some("nested_types.yaml"));
    assert_eq!(f.ok()["my_person"]["name"]["last"], "Bar");
    assert_eq!(f.ok()["my_person"]["age"], 42);
}

#[test]
fn a_record_field_of_the_wrong_type_is_named() {
    let tool = tool_with(json!({"r": {"type": "record", "fields": {"a": "int", "b": "File[]"}}}));
    let f = run_inline(
        tool.clone(),
        json!({"r": {"a": 1, "b": [{"class": "File", "location": "whale.txt"}, {"class": "File", "location": "nope"}]}}),
    );
    assert!(f.err().contains("input `r.b[1]`"), "{}", f.err());
    let f = run_inline(tool.clone(), json!({"r": {"b": []}}));
    assert!(
        f.err()
            .contains("input `r.a`: has no value and no default; the tool requires int"),
        "{}",
        f.err()
    );
    let f = run_inline(tool, json!({"r": "text"}));
    assert!(
        f.err()
            .contains("input `r`: expected a record with fields a, b, got the string"),
        "{}",
        f.err()
    );
}

#[test]
fn file_literals_are_written_under_staging() {
    // input_file_literal
    let f = run("cat3-tool.cwl", Some("file-literal.yml"));
    let file = &f.ok()["file1"];
    let path = PathBuf::from(file["path"].as_str().unwrap());
    assert!(path.starts_with(f.staging.path()), "{}", path.display());
    assert_eq!(fs_err::read_to_string(&path).unwrap(), "Hello file literal");
    assert_eq!(file["size"], 18);
    assert!(file["location"].as_str().unwrap().starts_with("file:///"));
    // Two literals with the same basename do not collide.
    let tool = tool_with(json!({"a": "File", "b": "File"}));
    let f = run_inline(
        tool,
        json!({"a": {"class": "File", "basename": "x.txt", "contents": "A"},
               "b": {"class": "File", "basename": "x.txt", "contents": "B"}}),
    );
    let (a, b) = (&f.ok()["a"]["path"], &f.ok()["b"]["path"]);
    assert_ne!(a, b);
    assert_eq!(fs_err::read_to_string(b.as_str().unwrap()).unwrap(), "B");
    assert_eq!(f.ok()["a"]["basename"], "x.txt");
}

#[test]
fn directory_literals_are_written_and_their_real_entries_listed_for_staging() {
    // stdin_from_directory_literal_with_literal_file
    let f = run(
        "cat-from-dir.cwl",
        Some("cat-from-dir-with-literal-file.yaml"),
    );
    let dir = &f.ok()["dir1"];
    assert_eq!(dir["basename"], "cwl");
    let dir_path = PathBuf::from(dir["path"].as_str().unwrap());
    assert!(dir_path.starts_with(f.staging.path()));
    let lit = &dir["listing"][0];
    assert_eq!(
        lit["path"],
        dir_path.join("literal.txt").display().to_string()
    );
    assert_eq!(
        fs_err::read_to_string(dir_path.join("literal.txt")).unwrap(),
        "I'm a File literal; howdy!"
    );
    // Its literal entry is inside it: staged with it, not listed on its own.
    assert_eq!(files(f.ok()), vec![("/dir1".to_string(), dir_path.clone())]);

    // stdin_from_directory_literal_with_local_file: the real file is not copied by fill; it
    // is listed so the server confines it and stages it into the directory.
    let f = run("cat-from-dir.cwl", Some("cat-from-dir-job.yaml"));
    let mut job = f.ok().clone();
    let dir_path = PathBuf::from(job["dir1"]["path"].as_str().unwrap());
    assert!(!dir_path.join("hello.txt").exists());
    let listed = files(&job);
    assert_eq!(
        listed,
        vec![
            ("/dir1".to_string(), dir_path.clone()),
            (
                "/dir1/listing/0".to_string(),
                PathBuf::from(abs("hello.txt"))
            ),
        ]
    );
    assert_eq!(staged_parent(&job, "/dir1"), None);
    // The server stages the directory somewhere, then the entry into it.
    relocate(job.pointer_mut("/dir1").unwrap(), Path::new("/stage/1/cwl"));
    assert_eq!(
        staged_parent(&job, "/dir1/listing/0"),
        Some(PathBuf::from("/stage/1/cwl"))
    );
    assert_eq!(job["dir1"]["listing"][0]["path"], "/stage/1/cwl/hello.txt");

    // directory_literal_with_literal_file_in_subdir_nostdin
    let f = run(
        "cat4-from-dir.cwl",
        Some("cat-from-dir-with-literal-file-in-subdir.yaml"),
    );
    let sub = &f.ok()["dir1"]["listing"][0];
    assert_eq!(sub["class"], "Directory");
    let inner = PathBuf::from(sub["listing"][0]["path"].as_str().unwrap());
    assert!(
        inner.starts_with(sub["path"].as_str().unwrap()) && inner.exists(),
        "{sub}"
    );
    assert_eq!(files(f.ok()).len(), 1);
}

#[test]
fn listings_follow_load_listing() {
    // listing_default_none, listing_requirement_shallow, listing_loadListing_deep, ...
    let f = run("listing_none1.cwl", Some("listing-job.yml"));
    assert!(f.ok()["d"].get("listing").is_none());
    for tool in ["listing_none2.cwl", "listing_none3.cwl"] {
        let f = run(tool, Some("listing-job.yml"));
        assert!(f.ok()["d"].get("listing").is_none(), "{tool}");
    }
    for tool in ["listing_shallow1.cwl", "listing_shallow2.cwl"] {
        let f = run(tool, Some("listing-job.yml"));
        let l = &f.ok()["d"]["listing"];
        assert_eq!(l.as_array().map(Vec::len), Some(1), "{tool}");
        assert_eq!(l[0]["basename"], "tmp2");
        assert!(l[0].get("listing").is_none(), "{tool}");
    }
    for tool in ["listing_deep1.cwl", "listing_deep2.cwl"] {
        let f = run(tool, Some("listing-job.yml"));
        let l = &f.ok()["d"]["listing"];
        assert_eq!(l[0]["listing"][0]["basename"], "tmp3", "{tool}");
        assert_eq!(l[0]["listing"][0]["class"], "Directory");
    }
    // A v1.0 document lists deeply by default (CWL v1.0 had no loadListing).
    let mut tool = tool_with(json!({"d": "Directory"}));
    tool["cwlVersion"] = json!("v1.0");
    let f = run_inline(
        tool,
        json!({"d": {"class": "Directory", "location": "testdir"}}),
    );
    let l = &f.ok()["d"]["listing"];
    let names: Vec<&str> = l
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["basename"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(l[0]["class"], "File");
    assert_eq!(l[2]["listing"][0]["basename"], "d");
    // Entries of an ordinary directory are staged with it.
    assert_eq!(files(f.ok()).len(), 1);

    #[cfg(unix)]
    {
        // A symlink to an ancestor ends in an error, not an endless listing.
        let dir = tempfile::tempdir().unwrap();
        fs_err::create_dir(dir.path().join("top")).unwrap();
        std::os::unix::fs::symlink("..", dir.path().join("top/up")).unwrap();
        let mut tool = tool_with(json!({"d": "Directory"}));
        tool["cwlVersion"] = json!("v1.0");
        let tool = crate::norm::normalize(&tool).unwrap();
        let job = json!({"d": {"class": "Directory", "location": "top"}});
        let f = fill_with(&tool, job.as_object().unwrap(), dir.path(), dir.path());
        assert!(
            f.err().contains("nests deeper than 64 levels"),
            "{}",
            f.err()
        );
    }
}

#[test]
fn load_contents_reads_small_files_and_refuses_large_ones() {
    // loadcontents_limit: a 262 KiB file.
    let f = run(
        "loadContents/loadContents-limit.cwl",
        Some("loadContents/input.yml"),
    );
    let e = f.err();
    assert!(
        e.contains("input `filelist`") && e.contains("loadContents over 64 KiB"),
        "{e}"
    );
    let tool = tool_with(json!({
        "a": {"type": "File", "loadContents": true},
        "b": {"type": "File[]", "inputBinding": {"loadContents": true}},
    }));
    let f = run_inline(
        tool,
        json!({"a": {"class": "File", "location": "hello.txt"},
               "b": [{"class": "File", "location": "whale.txt"}]}),
    );
    assert_eq!(
        f.ok()["a"]["contents"],
        fs_err::read_to_string(suite("hello.txt")).unwrap()
    );
    assert_eq!(
        f.ok()["b"][0]["contents"].as_str().map(str::len),
        Some(1111)
    );
}

#[test]
fn secondary_files_are_found_by_pattern_and_staged_next_to_their_primary() {
    // stage-array.cwl: `^.tar` on hello.txt is hello.tar.
    let f = run("stage-array.cwl", Some("stage-array-job.json"));
    let mut job = f.ok().clone();
    let sf = &job["input_list"][0]["secondaryFiles"];
    assert_eq!(sf.as_array().map(Vec::len), Some(1));
    assert_eq!(sf[0]["basename"], "hello.tar");
    assert_eq!(sf[0]["size"], 10240);
    assert_eq!(job["optional_file"], Value::Null);
    let listed: Vec<String> = files(&job).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        listed,
        [
            "/input_file",
            "/input_list/0",
            "/input_list/0/secondaryFiles/0"
        ]
    );
    relocate(
        job.pointer_mut("/input_list/0").unwrap(),
        Path::new("/stage/7/hello.txt"),
    );
    assert_eq!(
        staged_parent(&job, "/input_list/0/secondaryFiles/0"),
        Some(PathBuf::from("/stage/7"))
    );

    // secondary_files_in_unnamed_records / _named_records
    for tool in [
        "record-in-secondaryFiles.cwl",
        "record-sd-secondaryFiles.cwl",
    ] {
        let f = run(tool, Some("record-secondaryFiles-job.yml"));
        let r = &f.ok()["record_input"];
        assert_eq!(r["f1"]["secondaryFiles"][0]["basename"], "A.s2", "{tool}");
        assert_eq!(r["f2"][0]["secondaryFiles"][0]["basename"], "B.s3");
        assert_eq!(r["f2"][1]["secondaryFiles"][0]["path"], abs("rec/C.s3"));
        assert_eq!(files(f.ok()).len(), 6);
    }

    // directory_secondaryfiles: the job's own secondary files, a Directory renamed.
    let f = run("dir4.cwl", Some("dir4-job.yml"));
    let sf = &f.ok()["inf"]["secondaryFiles"];
    assert_eq!(sf[1]["class"], "Directory");
    assert_eq!(sf[1]["basename"], "xtestdir");
    assert_eq!(sf[1]["path"], abs("testdir"));
    let listed = files(f.ok());
    assert_eq!(
        listed[2],
        (
            "/inf/secondaryFiles/1".to_string(),
            PathBuf::from(abs("testdir"))
        )
    );
}

#[test]
fn a_missing_required_secondary_file_fails_and_an_optional_one_does_not() {
    let f = run_inline(
        tool_with(
            json!({"f": {"type": "File", "secondaryFiles": [".s2", ".nope?", {"pattern": "^.gone", "required": false}]}}),
        ),
        json!({"f": {"class": "File", "location": "rec/A"}}),
    );
    let sf = &f.ok()["f"]["secondaryFiles"];
    assert_eq!(sf.as_array().map(Vec::len), Some(1), "{sf}");
    let f = run_inline(
        tool_with(
            json!({"f": {"type": "File", "secondaryFiles": {"pattern": ".fai", "required": true}}}),
        ),
        json!({"f": {"class": "File", "location": "whale.txt"}}),
    );
    let e = f.err();
    assert!(
        e.contains("input `f`") && e.contains("whale.txt.fai") && e.contains("requires"),
        "{e}"
    );
    // `^` drops one extension per caret, and nothing when there is none.
    let dir = tempfile::tempdir().unwrap();
    for name in ["x.bam", "x.bai", "x.bam.bai", "noext", "noext.idx"] {
        fs_err::write(dir.path().join(name), "").unwrap();
    }
    let tool = crate::norm::normalize(&tool_with(json!({
        "a": {"type": "File", "secondaryFiles": ["^.bai", ".bai"]},
        "b": {"type": "File", "secondaryFiles": "^^.idx"},
    })))
    .unwrap();
    let job = json!({"a": {"class": "File", "location": "x.bam"}, "b": {"class": "File", "location": "noext"}});
    let f = fill_with(&tool, job.as_object().unwrap(), dir.path(), dir.path());
    let names = |v: &Value| -> Vec<String> {
        v["secondaryFiles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["basename"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&f.ok()["a"]), ["x.bai", "x.bam.bai"]);
    assert_eq!(names(&f.ok()["b"]), ["noext.idx"]);
}

#[test]
fn formats_are_expanded_and_checked() {
    // format_checking
    let f = run("formattest.cwl", Some("formattest-job.json"));
    assert_eq!(
        f.ok()["input"]["format"],
        "http://edamontology.org/format_2330"
    );
    // format_checking_subclass / _equivalentclass: with $schemas a different format is
    // accepted (the ontology is not reasoned over).
    for tool in ["formattest2.cwl", "formattest3.cwl"] {
        let f = run(tool, Some("formattest2-job.json"));
        assert_eq!(
            f.ok()["input"]["format"],
            "http://edamontology.org/format_1929",
            "{tool}"
        );
    }
    // input_records_file_entry_with_format and its three should_fail variants.
    let f = run("record-in-format.cwl", Some("record-format-job.yml"));
    assert_eq!(
        f.ok()["record_input"]["f2"][1]["format"],
        "http://example.com/format2"
    );
    for (job, at) in [
        ("record-format-job2.yml", "input `regular_input`"),
        ("record-format-job3.yml", "input `record_input.f1`"),
        ("record-format-job4.yml", "input `record_input.f2[1]`"),
    ] {
        let f = run("record-in-format.cwl", Some(job));
        let e = f.err();
        assert!(
            e.contains(at) && e.contains("http://example.com/formatZ"),
            "{job}: {e}"
        );
    }
    // Without $schemas, a formattest job whose file has another format fails.
    let tool = crate::norm::load(&suite("formattest.cwl")).unwrap();
    let job =
        json!({"input": {"class": "File", "location": "whale.txt", "format": "edam:format_1929"}});
    let f = fill_with(&tool, job.as_object().unwrap(), &suite(""), &suite(""));
    assert!(
        f.err()
            .contains("accepts only http://edamontology.org/format_2330"),
        "{}",
        f.err()
    );
}

#[test]
fn relocate_moves_every_path_field() {
    let f = run("cat-tool.cwl", Some("cat-job.json"));
    let mut file = f.ok()["file1"].clone();
    relocate(&mut file, Path::new("/stage/a b/hello.txt"));
    assert_eq!(file["path"], "/stage/a b/hello.txt");
    assert_eq!(file["location"], "file:///stage/a%20b/hello.txt");
    assert_eq!(file["dirname"], "/stage/a b");
    assert_eq!(file["basename"], "hello.txt");
    assert_eq!(file["size"], 13);
    // A deep listing moves below the directory.
    let mut tool = tool_with(json!({"d": "Directory"}));
    tool["cwlVersion"] = json!("v1.0");
    let f = run_inline(
        tool,
        json!({"d": {"class": "Directory", "location": "testdir"}}),
    );
    let mut d = f.ok()["d"].clone();
    relocate(&mut d, Path::new("/s/t"));
    assert_eq!(d["listing"][2]["listing"][0]["path"], "/s/t/c/d");
    assert_eq!(d["listing"][0]["dirname"], "/s/t");
}

#[test]
fn names_split_as_cwl_says() {
    use super::fsobj::split_ext;
    assert_eq!(split_ext("a.tar.gz"), ("a.tar", ".gz"));
    assert_eq!(split_ext(".cshrc"), (".cshrc", ""));
    assert_eq!(split_ext("noext"), ("noext", ""));
    assert_eq!(split_ext("..a.b"), ("..a", ".b"));
}

#[test]
fn secondary_file_expressions_see_self_and_inputs() {
    // command_input_file_expression: an expression gives another input's File, renamed.
    let f = run(
        "secondaryfiles/rename-inputs.cwl",
        Some("secondaryfiles/rename-inputs.yml"),
    );
    let sf = &f.ok()["inputWithSecondary"]["secondaryFiles"];
    assert_eq!(sf.as_array().map(Vec::len), Some(1), "{sf}");
    assert_eq!(sf[0]["basename"], "secondary_file_test.accessory");
    assert_eq!(
        sf[0]["path"],
        abs("secondaryfiles/secondary_file_test.txt.accessory")
    );
    assert_eq!(
        files(f.ok())
            .iter()
            .filter(|(p, _)| p == "/inputWithSecondary/secondaryFiles/0")
            .count(),
        1
    );

    // filesarray_secondaryfiles(2): `.fai` required, `.crai` and `.bai?` optional, an
    // expression giving null, and `.dat`/`.dat2` required only when inputs.require_dat.
    let dir = tempfile::tempdir().unwrap();
    for name in ["ref.fasta", "ref.fasta.fai", "ref2.fasta", "ref2.fasta.fai"] {
        fs_err::write(dir.path().join(name), "").unwrap();
    }
    let tool = crate::norm::load(&suite("docker-array-secondaryfiles.cwl")).unwrap();
    let job = crate::job::read_job(Some(&suite("docker-array-secondaryfiles-job.json"))).unwrap();
    let f = fill_with(&tool, &job, dir.path(), dir.path());
    let names: Vec<&str> = f.ok()["fasta_path"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["secondaryFiles"].as_array().unwrap())
        .map(|s| s["basename"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ref.fasta.fai", "ref2.fasta.fai"]);
    let job = crate::job::read_job(Some(&suite("docker-array-secondaryfiles-job2.json"))).unwrap();
    let f = fill_with(&tool, &job, dir.path(), dir.path());
    let e = f.err();
    assert!(
        e.contains("input `fasta_path[0]`") && e.contains(".dat"),
        "{e}"
    );
}

#[test]
fn an_expression_format_is_evaluated() {
    let tool = tool_with(json!({
        "want": "string",
        "f": {"type": "File", "format": "$(inputs.want)"},
    }));
    let ok = run_inline(
        tool.clone(),
        json!({"want": "http://example.com/a", "f": {"class": "File", "location": "whale.txt", "format": "http://example.com/a"}}),
    );
    assert_eq!(ok.ok()["f"]["format"], "http://example.com/a");
    let bad = run_inline(
        tool,
        json!({"want": "http://example.com/b", "f": {"class": "File", "location": "whale.txt", "format": "http://example.com/a"}}),
    );
    assert!(
        bad.err().contains("accepts only http://example.com/b"),
        "{}",
        bad.err()
    );
}

/// The should_fail tests that fail because of their inputs, and why.
const FAILS_HERE: &[(&str, &str)] = &[
    ("any_without_defaults_unspecified_fails", "input `in`"),
    ("any_without_defaults_specified_fails", "input `in`"),
    (
        "input_records_file_entry_with_format_and_bad_regular_input_file_format",
        "formatZ",
    ),
    (
        "input_records_file_entry_with_format_and_bad_entry_file_format",
        "formatZ",
    ),
    (
        "input_records_file_entry_with_format_and_bad_entry_array_file_format",
        "formatZ",
    ),
    ("loadcontents_limit", "loadContents over 64 KiB"),
    ("filesarray_secondaryfiles2", "fasta_path[0]"),
];

#[test]
fn every_conformance_job_fills_or_fails_as_the_suite_expects() {
    let index = fs_err::read_to_string(suite("../command_line_tool.yaml")).unwrap();
    let tests = crate::doc::parse_yaml(&index).unwrap();
    let mut filled = 0;
    for t in tests.as_array().unwrap() {
        let id = t["id"].as_str().unwrap();
        let Some(tool) = t["tool"].as_str() else {
            continue;
        };
        let tool_path = suite(&format!("../{tool}"));
        // Workflows and documents norm refuses are not this module's.
        let Ok(tool) = crate::norm::load(&tool_path) else {
            continue;
        };
        let job_path = t["job"].as_str().map(|j| suite(&format!("../{j}")));
        let job = crate::job::read_job(job_path.as_deref()).unwrap();
        let base = job_path
            .as_deref()
            .and_then(Path::parent)
            .map_or_else(|| suite(""), Path::to_path_buf);
        let f = fill_with(&tool, &job, &base, tool_path.parent().unwrap());
        let expected = FAILS_HERE
            .iter()
            .find(|(t, _)| *t == id)
            .map(|(_, why)| *why);
        let should_fail = t["should_fail"] == true;
        match (&f.job, expected) {
            (Ok(_), None) => filled += 1,
            (Err(e), Some(why)) => assert!(e.to_string().contains(why), "{id}: {e}"),
            (Ok(_), Some(why)) => panic!("{id} filled, but should fail with {why}"),
            // Other should_fail tests fail later (the command line, the run, the outputs),
            // or here for a reason that is not theirs (a v1.2 field in a v1.0 document,
            // with no job at all, fails here on its missing input).
            (Err(_), None) if should_fail => {}
            (Err(e), None) => panic!("{id}: {e}"),
        }
    }
    assert!(filled > 150, "only {filled} jobs filled");
}
