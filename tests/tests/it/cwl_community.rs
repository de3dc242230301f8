//! CWL tool descriptions written by their community, not by us (#33): three CommandLineTools
//! from common-workflow-library/bio-cwl-tools, vendored unchanged in
//! tests/fixtures/cwl-community/ (README there names the commit), each run on a tiny job of
//! ours by cwltool (`--no-container`, the reference runner) and by `scimcp cwl-run` (the job
//! through a real `scimcp serve` over MCP). The two output objects must agree: the same
//! output ids, and for every File the same basename, checksum, size, format and secondary
//! files, with the same bytes on disk. Each test also pins what the tool must have written,
//! so two runners that both write nothing cannot agree.
//!
//! Needs `samtools`, `mafft` and `grep` on PATH (scripts/science-clis.sh) and cwltool in
//! target/cwl-venv (`scripts/cwl-conformance.sh --setup-only`; or SCIMCP_CWLTOOL names a
//! cwltool). Without one of them a test prints why and passes, unless
//! `SCIMCP_REQUIRE_SCIENCE_CLIS=1`, which turns the missing program into a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value};

/// Should a missing prerequisite fail the test rather than skip it?
fn required() -> bool {
    std::env::var_os("SCIMCP_REQUIRE_SCIENCE_CLIS").is_some()
}

/// Print why a test does not run, or fail when the environment requires it to run.
fn skip(why: &str) {
    assert!(!required(), "SCIMCP_REQUIRE_SCIENCE_CLIS is set but {why}");
    #[allow(clippy::print_stderr)]
    {
        eprintln!("SKIPPED: {why}");
    }
}

fn on_path(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|d| d.join(program).is_file())
}

/// cwltool: SCIMCP_CWLTOOL, else the one scripts/cwl-conformance.sh installs.
fn cwltool() -> Option<PathBuf> {
    let tool = std::env::var_os("SCIMCP_CWLTOOL")
        .map(PathBuf::from)
        .unwrap_or_else(|| scimcp_e2e::workspace_root().join("target/cwl-venv/bin/cwltool"));
    tool.is_file().then_some(tool)
}

/// What one runner printed: its exit status, the output object, its stderr.
struct Ran {
    ok: bool,
    object: Value,
    stderr: String,
    outdir: PathBuf,
}

/// Run `program` with `args` on a fixture's tool and job, into its own outdir,
/// with its own temporary directory (both runners leave their scratch there).
fn run(program: &Path, args: &[&str], tool: &Path, job: &Path, root: &Path, name: &str) -> Ran {
    let outdir = root.join(format!("out-{name}"));
    let tmp = root.join(format!("tmp-{name}"));
    fs_err::create_dir_all(&outdir).unwrap();
    fs_err::create_dir_all(&tmp).unwrap();
    let out = Command::new(program)
        .args(args)
        .arg(format!("--outdir={}", outdir.display()))
        .arg(tool)
        .arg(job)
        .current_dir(root)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    Ran {
        ok: out.status.success(),
        object: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        outdir,
    }
}

/// The part of an output value two runners must agree on: of a File or Directory, its
/// class, basename, checksum, size, format, contents and (sorted by basename) secondary
/// files or listing. Where it is (`location`, `path`, `dirname`) names each runner's own
/// outdir, and `nameroot`/`nameext` are optional fields derived from the basename.
fn comparable(v: &Value) -> Value {
    const KEPT: [&str; 6] = [
        "class", "basename", "checksum", "size", "format", "contents",
    ];
    match v {
        Value::Object(o)
            if matches!(
                o.get("class").and_then(Value::as_str),
                Some("File" | "Directory")
            ) =>
        {
            let mut kept = Map::new();
            for (k, val) in o {
                if KEPT.contains(&k.as_str()) {
                    kept.insert(k.clone(), val.clone());
                } else if k == "secondaryFiles" || k == "listing" {
                    let mut items: Vec<Value> = val
                        .as_array()
                        .map(|a| a.iter().map(comparable).collect())
                        .unwrap_or_default();
                    items.sort_by(|a, b| a["basename"].as_str().cmp(&b["basename"].as_str()));
                    kept.insert(k.clone(), Value::Array(items));
                }
            }
            Value::Object(kept)
        }
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), comparable(v))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(comparable).collect()),
        other => other.clone(),
    }
}

/// A File's `path` and, when given, its `dirname` and `basename` agree (CWL: dirname + "/" +
/// basename == path), in every File of an output value.
fn consistent(v: &Value, runner: &str) {
    match v {
        Value::Object(o) => {
            if o.get("class").and_then(Value::as_str) == Some("File") {
                let path = Path::new(o["path"].as_str().unwrap_or_default());
                assert_eq!(
                    path.file_name().and_then(|n| n.to_str()),
                    o["basename"].as_str(),
                    "{runner}: basename is not the last part of path in {v:#}"
                );
                if let Some(dir) = o.get("dirname").and_then(Value::as_str) {
                    assert_eq!(
                        Some(Path::new(dir)),
                        path.parent(),
                        "{runner}: dirname is not the directory of path in {v:#}"
                    );
                }
            }
            o.values().for_each(|v| consistent(v, runner));
        }
        Value::Array(a) => a.iter().for_each(|v| consistent(v, runner)),
        _ => {}
    }
}

/// Every File in an output value (secondary files included), as (basename, path).
fn files(v: &Value, out: &mut Vec<(String, PathBuf)>) {
    match v {
        Value::Object(o) => {
            if o.get("class").and_then(Value::as_str) == Some("File") {
                let path = o.get("path").and_then(Value::as_str).unwrap_or_default();
                let base = o
                    .get("basename")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                out.push((base.to_string(), PathBuf::from(path)));
            }
            o.values().for_each(|v| files(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| files(v, out)),
        _ => {}
    }
}

/// Run one vendored tool on its job with both runners and compare; `expect` checks each
/// runner's output object and what the tool wrote.
fn same_as_cwltool(fixture: &str, tool: &str, programs: &[&str], expect: &dyn Fn(&Value)) {
    if let Some(p) = programs.iter().find(|p| !on_path(p)) {
        skip(&format!(
            "{p} is not on PATH (scripts/science-clis.sh installs it)"
        ));
        return;
    }
    let Some(cwltool) = cwltool() else {
        skip(
            "cwltool is not in target/cwl-venv (scripts/cwl-conformance.sh --setup-only) and SCIMCP_CWLTOOL is unset",
        );
        return;
    };
    let scimcp = scimcp_e2e::sibling_binary("scimcp").unwrap();
    let dir = scimcp_e2e::workspace_root()
        .join("tests/fixtures/cwl-community")
        .join(fixture);
    let tool = dir.join(tool);
    let job = dir.join("job.yml");
    let root = tempfile::tempdir().unwrap();

    let reference = run(
        &cwltool,
        &["--no-container", "--quiet"],
        &tool,
        &job,
        root.path(),
        "cwltool",
    );
    assert!(
        reference.ok,
        "cwltool failed on {fixture}:\n{}",
        reference.stderr
    );
    expect(&reference.object);

    let ours = run(
        &scimcp,
        &["cwl-run", "--quiet"],
        &tool,
        &job,
        root.path(),
        "scimcp",
    );
    assert!(
        ours.ok,
        "scimcp cwl-run failed on {fixture} (cwltool ran it):\n{}",
        ours.stderr
    );
    assert_eq!(
        comparable(&ours.object),
        comparable(&reference.object),
        "scimcp cwl-run's output object differs from cwltool's on {fixture}\nscimcp: {:#}\ncwltool: {:#}",
        ours.object,
        reference.object
    );
    expect(&ours.object);
    consistent(&reference.object, "cwltool");
    consistent(&ours.object, "scimcp");

    // Same checksums could still name other files: compare what is on disk, and that each
    // runner's files are in its own outdir.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    files(&ours.object, &mut a);
    files(&reference.object, &mut b);
    assert_eq!(a.len(), b.len());
    a.sort();
    b.sort();
    for ((name, ours_path), (_, ref_path)) in a.iter().zip(&b) {
        assert!(
            ours_path.starts_with(&ours.outdir),
            "{name}: {} is not in scimcp's outdir",
            ours_path.display()
        );
        assert!(
            ref_path.starts_with(&reference.outdir),
            "{name}: {} is not in cwltool's outdir",
            ref_path.display()
        );
        assert_eq!(
            fs_err::read(ours_path).unwrap(),
            fs_err::read(ref_path).unwrap(),
            "{fixture}: {name} differs between scimcp and cwltool"
        );
    }
}

/// The bytes of output `id` (a File) of an output object.
fn output_text(object: &Value, id: &str) -> String {
    let path = object[id]["path"]
        .as_str()
        .unwrap_or_else(|| panic!("no File output {id} in {object:#}"));
    fs_err::read_to_string(path).unwrap()
}

const EDAM_FASTA: &str = "http://edamontology.org/format_1929";

/// samtools_faidx.cwl: InitialWorkDirRequirement staging the input File, an argument that
/// is `$(inputs.sequences.basename)`, output globs built from it, an output `format` taken
/// from the input's, and a `.fai` secondary file.
#[test]
fn samtools_faidx_from_bio_cwl_tools_matches_cwltool() {
    same_as_cwltool(
        "samtools-faidx",
        "samtools_faidx.cwl",
        &["samtools"],
        &|o| {
            assert_eq!(o["sequences_index"]["basename"], "two-contigs.fasta.fai");
            assert_eq!(
                output_text(o, "sequences_index"),
                "contig_1\t71\t39\t46\t47\ncontig_2\t46\t122\t46\t47\n"
            );
            let with = &o["sequences_with_index"];
            assert_eq!(with["basename"], "two-contigs.fasta");
            assert_eq!(with["format"], EDAM_FASTA);
            assert_eq!(
                with["secondaryFiles"][0]["basename"],
                "two-contigs.fasta.fai"
            );
        },
    );
}

/// mafft.cwl: optional File and boolean inputs with prefixes, a boolean default, an argument
/// `$(runtime.cores)` after `--thread`, `stdout` named by `$(inputs.sequences.nameroot)` and
/// globbed by the same expression, a namespaced `format`.
#[test]
fn mafft_from_bio_cwl_tools_matches_cwltool() {
    same_as_cwltool("mafft", "mafft.cwl", &["mafft"], &|o| {
        assert_eq!(o["alignment"]["basename"], "four-peptides.alignment.fasta");
        assert_eq!(o["alignment"]["format"], EDAM_FASTA);
        let text = output_text(o, "alignment");
        let names: Vec<&str> = text.lines().filter(|l| l.starts_with('>')).collect();
        assert_eq!(names, [">seq_a", ">seq_b", ">seq_c", ">seq_d"]);
        // Aligned: gaps inserted, every sequence the same length.
        let seqs: Vec<String> = text
            .split('>')
            .skip(1)
            .map(|r| r.lines().skip(1).collect::<String>())
            .collect();
        assert!(seqs[0].contains('-'), "no gap in {text}");
        assert!(
            seqs.iter().all(|s| s.len() == seqs[0].len()),
            "unequal lengths in {text}"
        );
    });
}

/// grep.cwl: InlineJavascriptRequirement, a `stdout` name and an output `format` computed by
/// JavaScript conditionals, `successCodes: [0, 1]`, boolean/int/string prefixed inputs and a
/// File at position 100.
#[test]
fn grep_from_bio_cwl_tools_matches_cwltool() {
    same_as_cwltool("grep", "grep.cwl", &["grep"], &|o| {
        assert_eq!(o["result"]["basename"], "search_result.tsv");
        assert_eq!(o["result"]["format"], "http://edamontology.org/format_3475");
        assert_eq!(
            output_text(o, "result"),
            "2:S1\tSouthAfrica\t2020-03-01\n4:S3\tsouthafrica\t2020-04-11\n5:S4\tSouthAfrica\t2020-05-20\n"
        );
    });
}
