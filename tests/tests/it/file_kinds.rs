//! Files that are not tables, through the real `scimcp serve` as an MCP client drives it: a
//! test adapter (coreutils' `cp`, no shell) whose workflows take PDBQT, FASTA, FITS and
//! VOTable files by name. `list_datasets` lists exactly the files some input accepts, with
//! their kinds; `inspect_dataset` gives each kind's facts and never reads one as CSV; a run's
//! FITS and PDBQT artifacts, read as resources, carry the same facts.

use std::path::{Path, PathBuf};

use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, ResourceContents};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{Value, json};

const MANIFEST: &str = r#"schema_version = 1
name = "kinds"
version = "0.1.0"
summary = "Copies scientific files with coreutils cp: a CLI that takes files of several kinds."

[runtime]
kind = "executable"
executable = "cp"

[[workflow]]
id = "dock"
summary = "Copy a receptor, sequences and an image into the output directory."
parameters = "params.json"
argv = ["{input.receptor}", "{input.sequences}", "{input.image}", "{output_dir}"]

[[workflow.input]]
id = "receptor"
summary = "Receptor, PDBQT"
formats = ["pdbqt"]

[[workflow.input]]
id = "sequences"
summary = "Sequences, FASTA"
formats = ["fasta", "fa"]

[[workflow.input]]
id = "image"
summary = "An image, FITS (given by media type)"
formats = ["image/fits"]

[[workflow.artifact]]
id = "image"
path = "image.fits"
media_type = "image/fits"

[[workflow.artifact]]
id = "receptor"
path = "receptor.pdbqt"
media_type = "chemical/x-pdbqt"

[[workflow]]
id = "catalog"
summary = "Copy a VOTable into the output directory."
parameters = "params.json"
argv = ["{input.table}", "{output_dir}"]

[[workflow.input]]
id = "table"
summary = "A VOTable"
formats = ["vot"]
"#;

const PARAMS: &str = r#"{"type": "object", "additionalProperties": false, "properties": {}}"#;

fn fixture(name: &str) -> Vec<u8> {
    fs_err::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/files")
            .join(name),
    )
    .unwrap()
}

/// One 80-byte FITS header card.
fn card(text: &str) -> Vec<u8> {
    format!("{text:<80}").into_bytes()
}

fn value(key: &str, v: &str) -> Vec<u8> {
    card(&format!("{key:<8}= {v:>20}"))
}

fn string(key: &str, v: &str) -> Vec<u8> {
    card(&format!("{key:<8}= '{v:<8}'"))
}

fn blocks(mut bytes: Vec<u8>, fill: u8) -> Vec<u8> {
    bytes.resize(bytes.len().div_ceil(2880) * 2880, fill);
    bytes
}

/// A FITS file in exact 2880-byte blocks: a 4×3 16-bit primary image and a two-row binary
/// table extension (RA, DEC).
fn fits_bytes() -> Vec<u8> {
    let header = |cards: Vec<Vec<u8>>| blocks(cards.concat(), b' ');
    let mut out = header(vec![
        value("SIMPLE", "T"),
        value("BITPIX", "16"),
        value("NAXIS", "2"),
        value("NAXIS1", "4"),
        value("NAXIS2", "3"),
        value("EXTEND", "T"),
        string("OBJECT", "M31"),
        string("TELESCOP", "TEST"),
        card("END"),
    ]);
    out.extend(blocks(vec![0u8; 24], 0));
    out.extend(header(vec![
        string("XTENSION", "BINTABLE"),
        value("BITPIX", "8"),
        value("NAXIS", "2"),
        value("NAXIS1", "12"),
        value("NAXIS2", "2"),
        value("PCOUNT", "0"),
        value("GCOUNT", "1"),
        value("TFIELDS", "2"),
        string("TTYPE1", "RA"),
        string("TFORM1", "E"),
        string("TTYPE2", "DEC"),
        string("TFORM2", "D"),
        string("EXTNAME", "CATALOG"),
        card("END"),
    ]));
    out.extend(blocks(vec![1u8; 24], 0));
    out
}

/// A server on the test adapter, started in a project directory that holds the files.
struct Server {
    _root: tempfile::TempDir,
    project: PathBuf,
    client: RunningService<RoleClient, ()>,
}

impl Server {
    async fn start() -> Server {
        let root = tempfile::Builder::new()
            .prefix("scimcp kinds ")
            .tempdir()
            .unwrap();
        let project = root.path().join("project");
        let home = root.path().join("home");
        let adapter = root.path().join("adapter");
        for d in [&project, &home, &adapter] {
            fs_err::create_dir_all(d).unwrap();
        }
        fs_err::write(adapter.join("kinds.toml"), MANIFEST).unwrap();
        fs_err::write(adapter.join("params.json"), PARAMS).unwrap();
        let mut cmd = tokio::process::Command::new(scimcp_e2e::sibling_binary("scimcp").unwrap());
        cmd.args(["serve", "--adapter"])
            .arg(adapter.join("kinds.toml"))
            .current_dir(&project)
            .env("SCIMCP_HOME", &home)
            .env("SCIMCP_LOG", "warn");
        let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
        Server {
            _root: root,
            project,
            client,
        }
    }

    fn file(&self, name: &str, bytes: &[u8]) {
        fs_err::write(self.project.join(name), bytes).unwrap();
    }

    /// A tool's structured answer, and whether it is an error.
    async fn call(&self, tool: &str, args: Value) -> (bool, Value) {
        let Value::Object(args) = args else {
            panic!("arguments are an object")
        };
        let out = self
            .client
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
            .await
            .unwrap();
        (
            out.is_error.unwrap_or(false),
            out.structured_content.unwrap_or(Value::Null),
        )
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        let (error, out) = self.call(tool, args).await;
        assert!(!error, "{tool}: {out:#}");
        out
    }

    async fn inspect(&self, name: &str) -> Value {
        self.ok("inspect_dataset", json!({"dataset": name})).await
    }
}

/// The texts of a resource's contents, parsed as JSON where they are.
fn contents(result: &rmcp::model::ReadResourceResult) -> Vec<Value> {
    result
        .contents
        .iter()
        .map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => {
                serde_json::from_str(text).unwrap_or(Value::String(text.clone()))
            }
            other => panic!("not text: {other:?}"),
        })
        .collect()
}

/// Every scientific file of the issue (and a few more) in the project directory.
fn write_files(s: &Server) {
    for name in [
        "receptor.pdbqt",
        "ligand.pdbqt",
        "proteins.fasta",
        "genes.fa",
        "reads.fastq",
        "table.vot",
    ] {
        s.file(name, &fixture(name));
    }
    s.file("image.fits", &fits_bytes());
    s.file("notes.csv", b"a,b\n1,2\n");
}

#[tokio::test]
async fn list_and_inspect_give_each_kind_its_facts_and_never_read_one_as_csv() {
    let s = Server::start().await;
    write_files(&s);
    fs_err::create_dir_all(s.project.join("deeper")).unwrap();
    s.file("deeper/hidden.fasta", b">x\nACGT\n");

    // Listed: exactly the files some input accepts (no workflow reads a table, and no
    // input takes FASTQ), each with its kind and who accepts it.
    let listed = s.ok("list_datasets", json!({})).await;
    let entries: Vec<(String, String, Vec<String>)> = listed["datasets"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let accepted = e["accepted_by"]
                .as_array()
                .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            (
                e["reference"].as_str().unwrap().to_string(),
                e["kind"].as_str().unwrap().to_string(),
                accepted,
            )
        })
        .collect();
    let expect = |r: &str, k: &str, by: &[&str]| {
        (
            r.to_string(),
            k.to_string(),
            by.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        entries,
        vec![
            expect("genes.fa", "sequences", &["dock.sequences"]),
            expect("image.fits", "fits", &["dock.image"]),
            expect("ligand.pdbqt", "structure", &["dock.receptor"]),
            expect("proteins.fasta", "sequences", &["dock.sequences"]),
            expect("receptor.pdbqt", "structure", &["dock.receptor"]),
            expect("table.vot", "file", &["catalog.table"]),
        ],
        "{listed:#}"
    );

    // PDBQT: a structure, with the box a docking search needs.
    let r = s.inspect("receptor.pdbqt").await;
    assert_eq!(
        (r["kind"].as_str(), r["format"].as_str()),
        (Some("structure"), Some("pdbqt"))
    );
    for table_field in ["row_count", "column_count", "columns", "sample_rows"] {
        assert!(r.get(table_field).is_none(), "{table_field}: {r:#}");
    }
    let st = &r["structure"];
    assert_eq!(st["atoms"], 11, "{r:#}");
    assert_eq!(st["hetatm"], 2);
    assert_eq!(st["chains"], json!(["A", "B"]));
    assert_eq!(st["elements"]["Zn"], 1);
    assert_eq!(st["bounding_box"]["center"], json!([15.5, 21.5, 30.0]));
    assert_eq!(st["bounding_box"]["size"], json!([11.0, 9.0, 8.0]));
    let sha = scimcp_core::hash::sha256_file(&s.project.join("receptor.pdbqt"))
        .unwrap()
        .0;
    assert_eq!(r["dataset"]["sha256"], sha.as_str());
    let l = s.inspect("ligand.pdbqt").await;
    assert_eq!(
        (
            l["structure"]["models"].as_u64(),
            l["structure"]["torsions"].as_u64()
        ),
        (Some(2), Some(1))
    );

    // FASTA: sequences, not a one-column CSV headed ">sp|P69905|HBA_HUMAN".
    let f = s.inspect("proteins.fasta").await;
    assert_eq!(f["kind"], "sequences", "{f:#}");
    assert_eq!(f["sequences"]["records"], 2);
    assert_eq!(f["sequences"]["alphabet"], "protein");
    assert_eq!(f["sequences"]["max_length"], 147);
    assert_eq!(f["sequences"]["first_ids"][0], "sp|P69905|HBA_HUMAN");
    let g = s.inspect("genes.fa").await;
    assert_eq!(g["sequences"]["alphabet"], "dna");
    // FASTQ is inspected though no input takes it.
    let q = s.inspect("reads.fastq").await;
    assert_eq!(q["sequences"]["quality"]["encoding"], "phred+33", "{q:#}");

    // FITS: every HDU, not "invalid utf-8 … pass a comma-separated UTF-8 file".
    let i = s.inspect("image.fits").await;
    assert_eq!(
        (i["kind"].as_str(), i["media_type"].as_str()),
        (Some("fits"), Some("application/fits"))
    );
    let hdus = i["fits"]["hdus"].as_array().unwrap();
    assert_eq!(i["fits"]["hdu_count"], 2, "{i:#}");
    assert_eq!(hdus[0]["type"], "primary");
    assert_eq!(hdus[0]["shape"], json!([4, 3]));
    assert_eq!(hdus[0]["bitpix"], 16);
    assert_eq!(hdus[0]["keys"]["OBJECT"], "M31");
    assert_eq!(hdus[1]["type"], "bintable");
    assert_eq!(hdus[1]["rows"], 2);
    assert_eq!(hdus[1]["columns"], json!(["RA", "DEC"]));
    assert_eq!(i["dataset"]["size_bytes"], 2880 * 4);

    // VOTable: a file, its first lines shown, not a CSV headed "<?xml …>".
    let v = s.inspect("table.vot").await;
    assert_eq!(
        (v["kind"].as_str(), v["format"].as_str()),
        (Some("file"), Some("votable"))
    );
    assert_eq!(v["file"]["is_text"], true);
    assert!(
        v["file"]["first_lines"][1]
            .as_str()
            .unwrap()
            .starts_with("<VOTABLE"),
        "{v:#}"
    );
    assert_eq!(v["file"]["votable"]["rows"], 2, "{v:#}");
    assert_eq!(v["file"]["votable"]["fields"][0]["name"], "ra");
    assert_eq!(v["file"]["votable"]["fields"][1]["unit"], "deg");

    // A table is still a table.
    let t = s.inspect("notes.csv").await;
    assert_eq!(
        (t["kind"].as_str(), t["row_count"].as_u64()),
        (Some("table"), Some(1))
    );
    assert_eq!(t["columns"]["items"][0]["name"], "a");

    // A file named FITS that is not: refused as FITS, naming the fix, with no CSV advice.
    s.file("junk.fits", &[0xA5u8; 4000]);
    let (error, e) = s
        .call("inspect_dataset", json!({"dataset": "junk.fits"}))
        .await;
    assert!(error, "{e:#}");
    let e = &e["error"];
    assert_eq!(e["code"], "dataset_unreadable", "{e:#}");
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("is not valid FITS"), "{message}");
    let text = e.to_string();
    assert!(!text.contains("comma-separated"), "{text}");
}

#[tokio::test]
async fn fits_and_pdbqt_artifacts_read_as_resources_carry_their_facts() {
    let s = Server::start().await;
    write_files(&s);
    let request = json!({"workflow": "dock", "inputs": {
        "receptor": "receptor.pdbqt", "sequences": "genes.fa", "image": "image.fits"}});
    let validation = s.ok("validate_analysis", request.clone()).await;
    assert_eq!(validation["ready"], true, "{validation:#}");
    let mut start = request;
    start["validation_id"] = validation["validation_id"].clone();
    start["confirm"] = json!(true);
    let started = s.ok("start_analysis", start).await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let mut result = Value::Null;
    for _ in 0..10 {
        let out = s
            .ok("get_run_result", json!({"run_id": run_id, "wait_s": 30}))
            .await;
        if out["terminal"] == true {
            result = out["result"].clone();
            break;
        }
    }
    assert_eq!(result["state"], "succeeded", "{result:#}");

    let read = |path: &str| {
        let uri = format!("scimcp://runs/{run_id}/artifacts/{path}");
        let client = s.client.peer().clone();
        async move {
            client
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
                .unwrap()
        }
    };
    // FITS is binary: described by size and hash, and its facts come beside.
    let fits = contents(&read("image.fits").await);
    assert_eq!(fits.len(), 2, "{fits:#?}");
    assert_eq!(fits[0]["inline"], false);
    assert_eq!(fits[1]["facts"]["kind"], "fits");
    assert_eq!(fits[1]["facts"]["fits"]["hdu_count"], 2);
    assert_eq!(
        fits[1]["facts"]["fits"]["hdus"][1]["columns"],
        json!(["RA", "DEC"])
    );
    // The same facts inspect_dataset gives for the input it was copied from.
    let inspected = s.inspect("image.fits").await;
    assert_eq!(fits[1]["facts"]["fits"], inspected["fits"]);

    let pdbqt = contents(&read("receptor.pdbqt").await);
    assert_eq!(pdbqt.len(), 2, "{pdbqt:#?}");
    assert_eq!(pdbqt[1]["facts"]["structure"]["atoms"], 11);
    assert_eq!(pdbqt[1]["path"], "receptor.pdbqt");
}
