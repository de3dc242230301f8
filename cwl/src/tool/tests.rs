use super::*;

fn load_text(name: &str, text: &str) -> Result<CwlTool, CwlError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    fs_err::write(&p, text).unwrap();
    load(&p, LoadOptions::default())
}

const CAT: &str = r#"
cwlVersion: v1.2
class: CommandLineTool
doc: "Print the contents of a file to stdout using 'cat' running in a docker container."
hints:
  DockerRequirement:
    dockerPull: debian:stable-slim
inputs:
  file1:
    type: File
    inputBinding: {position: 1}
  numbering:
    type: boolean?
    inputBinding:
      position: 0
      prefix: -n
  lines:
    type: int
    default: 3
    inputBinding: {prefix: --lines=, separate: false, position: 2}
  mode:
    type: string?
    inputBinding: {prefix: --mode, position: 3}
arguments: ["-v", {valueFrom: $(runtime.outdir)/x, position: 5}]
baseCommand: cat
stdout: output.txt
outputs:
  output_txt:
    type: File
    outputBinding:
      glob: output.txt
"#;

#[test]
fn a_tool_becomes_one_workflow_with_its_command_line_in_cwl_order() {
    let tool = load_text("cat1-testcli.cwl", CAT).unwrap();
    let m = &tool.adapter.manifest;
    assert_eq!(m.name, "cwl-cat1-testcli");
    assert_eq!(m.runtime.executable.as_deref(), Some("cat"));
    let wf = &m.workflows[0];
    assert_eq!(
        wf.argv,
        vec![
            "-v",
            "{numbering|map:true=-n,false=}",
            "{input.file1}",
            "--lines={lines}",
            "{options}",
            "{work_dir}/x"
        ]
    );
    assert_eq!(wf.options.len(), 1);
    assert_eq!(wf.options[0].flag, "--mode");
    assert_eq!(wf.inputs[0].id, "file1");
    assert_eq!(
        wf.artifacts[0].base,
        scimcp_core::manifest::ArtifactBase::Stdout
    );
    assert_eq!(wf.parameters_schema["properties"]["lines"]["default"], 3);
    assert_eq!(
        wf.parameters_schema["properties"]["numbering"]["default"],
        false
    );
    // The ignored hint is on record, with its line.
    let note = &tool.adapter.warnings[0];
    assert!(note.message.contains("DockerRequirement"), "{note}");
    assert_eq!(note.line, Some(6));
    assert!(!tool.adapter.sha256().is_empty());
}

#[test]
fn refusals_name_the_field_and_line() {
    let docker = CAT.replace(
        "hints:\n  DockerRequirement",
        "requirements:\n  DockerRequirement",
    );
    let e = load_text("t.cwl", &docker).unwrap_err();
    let text = e.to_string();
    assert!(e.is_unsupported());
    assert!(
        text.contains("t.cwl:6") && text.contains("requirements.DockerRequirement"),
        "{text}"
    );

    let js = CAT.replace("$(runtime.outdir)/x", "$(inputs.lines * 2)");
    let text = load_text("t.cwl", &js).unwrap_err().to_string();
    assert!(
        text.contains("arguments[1]") && text.contains("JavaScript"),
        "{text}"
    );

    let e = load_text(
        "t.cwl",
        &CAT.replace("class: CommandLineTool", "class: Workflow"),
    )
    .unwrap_err();
    assert!(e.is_unsupported() && e.to_string().contains(":3:"), "{e}");

    let e = load_text(
        "t.cwl",
        &CAT.replace("baseCommand: cat", "baseCommand: cat\nbogus: 1"),
    )
    .unwrap_err();
    assert!(
        !e.is_unsupported() && e.to_string().contains("bogus"),
        "{e}"
    );
}

#[test]
fn a_changed_binding_changes_the_adapter_hash() {
    let a = load_text("t.cwl", CAT).unwrap();
    let b = load_text("t.cwl", &CAT.replace("prefix: -n", "prefix: -b")).unwrap();
    assert_ne!(a.adapter.sha256(), b.adapter.sha256());
}

#[test]
fn a_tool_without_file_inputs_reads_no_dataset() {
    let echo = r#"
cwlVersion: v1.0
class: CommandLineTool
inputs:
  msg: {type: string, inputBinding: {position: 1}}
baseCommand: echo
stdout: out.txt
outputs:
  out: stdout
"#;
    let tool = load_text("echo.cwl", echo).unwrap();
    let wf = &tool.adapter.manifest.workflows[0];
    assert_eq!(wf.reads_dataset, Some(false));
    assert_eq!(wf.argv, vec!["{msg}"]);
    assert_eq!(tool.outputs[0].artifact, "out");
    // The first tool has a File input, so the flag stays out of its canonical form.
    let cat = load_text("cat.cwl", CAT).unwrap();
    assert_eq!(cat.adapter.manifest.workflows[0].reads_dataset, None);
}
