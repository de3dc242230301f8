//! A job's `cwl:requirements` through the engine: applied over the tool's own, recorded in
//! the plan, and refused as the tool's would be.

use std::path::{Path, PathBuf};

use scimcp_core::manifest::CommandEngine;
use serde_json::{Map, Value, json};

fn suite(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/cwl/tests")
        .join(name)
}

fn params(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn a_jobs_requirements_override_the_tools_and_show_in_the_plan() {
    // env-tool4.cwl sets TEST_ENV=conflict_original; env-job3.yaml's requirement wins.
    let (adapter, engine) = scimcp_cwl::engine::load_engine(
        &suite("env-tool4.cwl"),
        scimcp_cwl::EngineOptions::default(),
    )
    .unwrap();
    let schema = &adapter.manifest.workflows[0].parameters_schema;
    assert_eq!(
        schema["properties"]["cwl_requirements"]["type"], "array",
        "{schema:#}"
    );

    let plain = engine
        .command(&params(json!({"in": "hello"})), &[])
        .unwrap();
    assert_eq!(plain.env["TEST_ENV"], "conflict_original");
    assert!(plain.job.get("requirements").is_none(), "{:#}", plain.job);

    let job_file = scimcp_cwl::job::read_job(Some(&suite("env-job3.yaml"))).unwrap();
    let request = scimcp_cwl::runner::request(&engine, &job_file, &suite(""));
    let p = params(request.request["parameters"].clone());
    assert!(p.contains_key("cwl_requirements"), "{p:?}");
    let c = engine.command(&p, &[]).unwrap();
    assert_eq!(c.env["TEST_ENV"], "hello test env");
    assert_eq!(
        c.job["requirements"][0]["class"], "EnvVarRequirement",
        "{:#}",
        c.job
    );
    // Resources a job asks for are the runtime the command sees.
    let cores = params(json!({"in": "x", "cwl_requirements": [
        {"class": "ResourceRequirement", "coresMin": 3}]}));
    let c = engine.command(&cores, &[]).unwrap();
    assert_eq!(c.job["runtime"]["cores"], 3, "{:#}", c.job);
}

#[test]
fn a_requirement_the_server_refuses_in_a_tool_is_refused_in_a_job_naming_the_field() {
    let (_, engine) = scimcp_cwl::engine::load_engine(
        &suite("env-tool3.cwl"),
        scimcp_cwl::EngineOptions::default(),
    )
    .unwrap();
    let docker = params(json!({"in": "x", "cwl_requirements": [
        {"class": "DockerRequirement", "dockerPull": "alpine"}]}));
    for e in [
        engine.stage(&docker).unwrap_err(),
        engine.command(&docker, &[]).unwrap_err(),
    ] {
        assert_eq!(e.field.as_deref(), Some("parameters.cwl_requirements[0]"));
        assert!(
            e.message.contains("cwl:requirements[0]") && e.message.contains("containers"),
            "{}",
            e.message
        );
    }
}

#[test]
fn a_jobs_container_runs_from_path_under_no_container_and_the_plan_says_so() {
    let (_, engine) = scimcp_cwl::engine::load_engine(
        &suite("env-tool3.cwl"),
        scimcp_cwl::EngineOptions {
            no_container: true,
            ..scimcp_cwl::EngineOptions::default()
        },
    )
    .unwrap();
    let docker = params(json!({"in": "x", "cwl_requirements": [
        {"class": "DockerRequirement", "dockerPull": "alpine"}]}));
    engine.stage(&docker).unwrap();
    let c = engine.command(&docker, &[]).unwrap();
    assert!(
        c.notes.len() == 1
            && c.notes[0].starts_with("cwl:requirements[0].DockerRequirement")
            && c.notes[0].contains("`alpine`")
            && c.notes[0].contains("--cwl-no-container"),
        "{:?}",
        c.notes
    );
    assert_eq!(c.job["requirements"][0]["class"], "DockerRequirement");
    // A job without one says nothing.
    let plain = params(json!({"in": "x"}));
    assert!(engine.command(&plain, &[]).unwrap().notes.is_empty());
}

#[test]
fn a_jobs_work_dir_places_only_the_jobs_own_staged_files() {
    let (_, engine) = scimcp_cwl::engine::load_engine(
        &suite("env-tool3.cwl"),
        scimcp_cwl::EngineOptions::default(),
    )
    .unwrap();
    // A text entry is fine; a host file the job names itself is no staged input.
    let text = params(json!({"in": "x", "cwl_requirements": [
        {"class": "InitialWorkDirRequirement", "listing": [{"entryname": "a.txt", "entry": "hi"}]}]}));
    let c = engine.command(&text, &[]).unwrap();
    assert!(
        c.files
            .iter()
            .any(|(p, t)| p.ends_with("a.txt") && t == "hi"),
        "{:?}",
        c.files
    );
    let host = params(json!({"in": "x", "cwl_requirements": [
        {"class": "InlineJavascriptRequirement"},
        {"class": "InitialWorkDirRequirement", "listing": [
            {"entryname": "p", "entry": "${ return {class: 'File', path: '/etc/hostname'}; }"}]}]}));
    let e = engine.command(&host, &[]).unwrap_err();
    assert!(e.message.contains("/etc/hostname"), "{}", e.message);
    assert_eq!(e.field.as_deref(), Some("parameters.cwl_requirements"));
}
