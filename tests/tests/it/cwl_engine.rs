//! A CWL CommandLineTool served by the real `scimcp serve --adapter tool.cwl` and driven over
//! MCP as any client would (#33): the job's values are the parameters, each File in them is
//! staged like a named input (confined, hashed, copied), the plan shows the exact command
//! line CWL's binding rules give (never a shell), stdin comes from a staged file, stdout goes
//! to the file the tool names, and the run's output object (with `outputEval` over the
//! globbed files) is an artifact, as is each output file.

use std::path::{Path, PathBuf};

use scimcp_client::McpSession;
use serde_json::{Value, json};

/// `sort` with a boolean flag, an array joined by `itemSeparator`, a File argument, a
/// second File fed on stdin to nothing (the flag decides), stdout to a named file, and
/// outputs by glob and by outputEval.
const SORT_TOOL: &str = r#"
cwlVersion: v1.2
class: CommandLineTool
label: sort lines of a text file
baseCommand: [sort]
inputs:
  reverse:
    type: boolean
    default: false
    inputBinding: {prefix: -r, position: 1}
  keys:
    type: string[]?
    inputBinding: {prefix: -k, itemSeparator: ",", position: 2}
  text:
    type: File
    inputBinding: {position: 3}
stdout: $(inputs.text.nameroot).sorted.txt
outputs:
  sorted:
    type: stdout
  size:
    type: int
    outputBinding:
      glob: "*.sorted.txt"
      outputEval: $(self[0].size)
"#;

/// `wc -l` reading the File on stdin.
const COUNT_TOOL: &str = r#"
cwlVersion: v1.2
class: CommandLineTool
baseCommand: [wc, -l]
stdin: $(inputs.text.path)
inputs:
  text: File
stdout: count.txt
outputs:
  count:
    type: File
    outputBinding: {glob: count.txt}
"#;

struct Server {
    _root: tempfile::TempDir,
    data: PathBuf,
    outside: PathBuf,
    session: McpSession,
}

impl Server {
    async fn start(tool: &str) -> Server {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let cwd = root.path().join("project");
        let data = cwd.join("data");
        let outside = root.path().join("outside");
        for d in [&home, &data, &outside] {
            fs_err::create_dir_all(d).unwrap();
        }
        let tool_path = root.path().join("tool.cwl");
        fs_err::write(&tool_path, tool).unwrap();
        let session = McpSession::spawn(
            &scimcp_e2e::sibling_binary("scimcp").unwrap(),
            &[
                "serve".to_string(),
                "--adapter".into(),
                tool_path.display().to_string(),
                "--data-dir".into(),
                data.display().to_string(),
            ],
            &[
                ("HOME".to_string(), home.display().to_string()),
                (
                    "SCIMCP_HOME".to_string(),
                    root.path().join("data-root").display().to_string(),
                ),
                ("SCIMCP_LOG".to_string(), "warn".to_string()),
            ],
            &cwd,
        )
        .await
        .unwrap();
        Server {
            _root: root,
            data,
            outside,
            session,
        }
    }

    /// How many run directories the server has made.
    fn runs_started(&self) -> usize {
        fs_err::read_dir(self._root.path().join("data-root/runs"))
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("run-"))
                    .count()
            })
            .unwrap_or(0)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.data.join(name);
        fs_err::write(&p, text).unwrap();
        p.display().to_string()
    }
}

fn file(path: &str) -> Value {
    json!({"class": "File", "path": path})
}

fn artifact<'a>(result: &'a Value, path: &str) -> &'a Value {
    result["artifacts"]
        .as_array()
        .or_else(|| result["artifacts"]["items"].as_array())
        .unwrap_or_else(|| panic!("no artifacts in {result:#}"))
        .iter()
        .find(|a| a["path"] == path)
        .unwrap_or_else(|| panic!("no artifact {path} in {result:#}"))
}

#[tokio::test]
async fn a_cwl_tool_plans_its_exact_command_and_reports_its_outputs() {
    let s = Server::start(SORT_TOOL).await;
    let text = s.write("fruit.txt", "pear\napple\nfig\n");
    let request = json!({
        "workflow": "run",
        "parameters": {"reverse": true, "keys": ["1", "2"], "text": file(&text)},
    });
    let validation =
        scimcp_e2e::harness::ok_on(&s.session, "validate_analysis", request.clone()).await;
    let plan = &validation["plan"];
    assert!(
        plan["program"].as_str().unwrap().ends_with("/sort"),
        "{plan:#}"
    );
    // CWL's binding order, the itemSeparator join, and the staged copy (not the client's path).
    assert_eq!(
        plan["args"],
        json!(["-r", "-k", "1,2", "{work_dir}/inputs/f1/fruit.txt"]),
        "{plan:#}"
    );
    let staged = &plan["inputs"][0]["files"][0];
    assert_eq!(staged["reference"], text, "{plan:#}");
    assert_eq!(
        staged["sha256"],
        scimcp_core::hash::sha256_hex(b"pear\napple\nfig\n"),
        "{plan:#}"
    );
    assert_eq!(
        plan["engine"]["stdout_file"], "fruit.sorted.txt",
        "{plan:#}"
    );

    let (_, result) =
        scimcp_e2e::harness::run_on(&s.session, request, std::time::Duration::from_secs(60)).await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let work = Path::new(result["run_dir"].as_str().unwrap()).join("work");
    let out = work.join("out");
    assert_eq!(
        fs_err::read_to_string(out.join("fruit.sorted.txt")).unwrap(),
        "pear\nfig\napple\n"
    );
    let sorted = artifact(&result, "out/fruit.sorted.txt");
    assert_eq!(
        sorted["sha256"],
        scimcp_core::hash::sha256_hex(b"pear\nfig\napple\n"),
        "{result:#}"
    );
    let outputs: Value =
        serde_json::from_slice(&fs_err::read(work.join(".scimcp/outputs.json")).unwrap()).unwrap();
    assert_eq!(outputs["size"], 15, "{outputs:#}");
    assert_eq!(
        outputs["sorted"]["basename"], "fruit.sorted.txt",
        "{outputs:#}"
    );
    assert_eq!(
        outputs["sorted"]["checksum"], "sha1$503dd461ce0114d8ebba6878e812ee551385d741",
        "{outputs:#}"
    );
    artifact(&result, ".scimcp/outputs.json");
}

#[tokio::test]
async fn a_cwl_tool_reads_a_staged_file_on_stdin() {
    let s = Server::start(COUNT_TOOL).await;
    let text = s.write("three.txt", "a\nb\nc\n");
    let request = json!({"workflow": "run", "parameters": {"text": file(&text)}});
    let (validation, result) =
        scimcp_e2e::harness::run_on(&s.session, request, std::time::Duration::from_secs(60)).await;
    assert_eq!(validation["plan"]["args"], json!(["-l"]), "{validation:#}");
    assert_eq!(
        validation["plan"]["engine"]["stdin_file"], "{work_dir}/inputs/f1/three.txt",
        "{validation:#}"
    );
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let work = Path::new(result["run_dir"].as_str().unwrap()).join("work");
    let out = work.join("out");
    assert_eq!(
        fs_err::read_to_string(out.join("count.txt"))
            .unwrap()
            .trim(),
        "3"
    );
}

#[tokio::test]
async fn a_file_outside_the_data_directories_is_refused_before_any_run() {
    let s = Server::start(COUNT_TOOL).await;
    let secret = s.outside.join("secret.txt");
    fs_err::write(&secret, "x\n").unwrap();
    let request = json!({
        "workflow": "run",
        "parameters": {"text": file(&secret.display().to_string())},
    });
    let e = scimcp_e2e::harness::err_on(&s.session, "validate_analysis", request).await;
    let text = e.to_string();
    assert!(text.contains("f1") || text.contains("outside"), "{e:#}");
    assert_eq!(s.runs_started(), 0);
}

/// A tool whose InitialWorkDir makes a File of a string the client sends: the path is the
/// client's, not a staged file, so nothing of it may reach the run.
const STRING_TO_FILE_TOOL: &str = r#"
cwlVersion: v1.2
class: CommandLineTool
requirements:
  InlineJavascriptRequirement: {}
  InitialWorkDirRequirement:
    listing:
      - entryname: copied.txt
        entry: "$({class: 'File', location: 'file://' + inputs.src})"
inputs:
  src: string
baseCommand: cat
arguments: [copied.txt]
stdout: out.txt
outputs:
  out: stdout
"#;

#[tokio::test]
async fn a_host_file_an_expression_names_is_never_copied_into_the_run() {
    let s = Server::start(STRING_TO_FILE_TOOL).await;
    let secret = s.outside.join("secret.txt");
    fs_err::write(&secret, "do not read\n").unwrap();
    // Inside the data directories too: only files staged from File inputs are placed.
    let inside = s.write("inside.txt", "also not staged\n");
    for src in [secret.display().to_string(), inside] {
        let request = json!({"workflow": "run", "parameters": {"src": src}});
        let e = scimcp_e2e::harness::err_on(&s.session, "validate_analysis", request).await;
        let text = e.to_string();
        assert!(
            text.contains("outside the run's working directory") && text.contains(&src),
            "{e:#}"
        );
    }
    assert_eq!(s.runs_started(), 0);
}

/// io-file-or-files.cwl's shape: no baseCommand, JavaScript builds the whole command and
/// chooses `cat` or `echo` by the job.
const CHOOSING_TOOL: &str = r#"
cwlVersion: v1.2
class: CommandLineTool
requirements:
  InlineJavascriptRequirement: {}
inputs:
  text: File?
baseCommand: []
arguments:
  - valueFrom: |
      ${ return inputs.text === null ? ['echo', 'no_inputs'] : ['cat', inputs.text.path]; }
stdout: out.txt
outputs:
  out:
    type: File
    outputBinding: {glob: out.txt}
"#;

#[tokio::test]
async fn a_program_the_expression_chooses_is_resolved_and_hashed_and_the_plan_names_it() {
    let s = Server::start(CHOOSING_TOOL).await;
    let text = s.write("two.txt", "a\nb\n");
    let request = json!({"workflow": "run", "parameters": {"text": file(&text)}});
    let (validation, result) =
        scimcp_e2e::harness::run_on(&s.session, request, std::time::Duration::from_secs(60)).await;
    let plan = &validation["plan"];
    let program = plan["program"].as_str().unwrap();
    assert!(program.ends_with("/cat"), "{plan:#}");
    // The identity the plan hashes is the program it starts, not the manifest's first one.
    assert_eq!(
        plan["programs"].as_array().map(Vec::len),
        Some(1),
        "{plan:#}"
    );
    assert_eq!(plan["programs"][0]["executable"], program, "{plan:#}");
    assert_eq!(
        plan["programs"][0]["sha256"],
        scimcp_core::hash::sha256_hex(&fs_err::read(program).unwrap()),
        "{plan:#}"
    );
    assert_eq!(
        plan["args"],
        json!(["{work_dir}/inputs/f1/two.txt"]),
        "{plan:#}"
    );
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let out = Path::new(result["run_dir"].as_str().unwrap()).join("work/out/out.txt");
    assert_eq!(fs_err::read_to_string(out).unwrap(), "a\nb\n");

    let request = json!({"workflow": "run", "parameters": {}});
    let validation = scimcp_e2e::harness::ok_on(&s.session, "validate_analysis", request).await;
    let plan = &validation["plan"];
    assert!(
        plan["program"].as_str().unwrap().ends_with("/echo"),
        "{plan:#}"
    );
    assert_eq!(
        plan["programs"][0]["executable"], plan["program"],
        "{plan:#}"
    );
    assert_eq!(plan["args"], json!(["no_inputs"]), "{plan:#}");
}
