//! The Slurm executor against a real single-node Slurm (`scripts/slurm-cluster.sh start`):
//! a refsci analysis submitted through MCP runs as a batch job and gives the local run's
//! artifacts byte for byte; `cancel_run` is `scancel`; a job over its time limit reads
//! `failed` (`timeout`); a server killed while its job runs, restarted, reports the job's
//! result; `scimcp-doctor --slurm-config` reports the cluster, its partitions and limits.
//!
//! Without a cluster these tests print `SKIPPED: …` and pass, unless `SCIMCP_REQUIRE_SLURM=1`
//! (set by `.ci/run`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use scimcp_e2e::harness::{Harness, Options, fixture_adapter};
use scimcp_e2e::slurm;
use serde_json::{Value, json};

/// A server on the Slurm executor, and the directory of its `--slurm-config` (which a
/// restart reads again).
async fn slurm_server(adapter: Option<String>) -> (Harness, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let h = Harness::start_opts(Options {
        adapter: adapter.unwrap_or_else(|| "refsci".into()),
        extra_args: slurm::serve_args(dir.path()),
        ..Options::default()
    })
    .await
    .unwrap();
    (h, dir)
}

fn ridge(sleep_s: Option<f64>) -> Value {
    let mut parameters = json!({"target": "target", "model": "ridge", "seed": 3, "test_size": 0.2, "params": {"alpha": 0.5}});
    if let Some(s) = sleep_s {
        parameters["sleep_s"] = json!(s);
    }
    json!({"workflow": "regression", "dataset": "data/diabetes.csv", "parameters": parameters})
}

fn artifacts(result: &Value) -> BTreeMap<String, String> {
    result["result"]["artifacts"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_string(),
                a["sha256"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Poll `get_run_status` until `done` says so (or panic after `limit`).
async fn wait_status(
    h: &Harness,
    run_id: &str,
    limit: Duration,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let s = h.ok("get_run_status", json!({"run_id": run_id})).await;
        if done(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "gave up waiting; last status {s:#}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn a_refsci_analysis_runs_as_a_slurm_job_with_the_local_runs_artifacts() {
    if !slurm::cluster_up() {
        return;
    }
    let (on_slurm, _config) = slurm_server(None).await;
    let local = Harness::start().await.unwrap();
    let env = on_slurm.ok("get_environment", json!({})).await;
    assert_eq!(env["executor"]["kind"], "slurm", "{env:#}");
    assert_eq!(env["executor"]["cluster"]["reachable"], true, "{env:#}");
    assert!(
        !env["executor"]["cluster"]["partitions"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{env:#}"
    );

    let started = on_slurm.ok("start_analysis", ridge(None)).await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let result = on_slurm
        .ok("get_run_result", json!({"run_id": run_id, "wait_s": 120}))
        .await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    // The job's CLI ran in the sandbox, and the run records what applied, as a local run's.
    let sandbox = &result["result"]["sandbox"];
    assert!(sandbox["protections"].is_array(), "{result:#}");
    let status = on_slurm
        .ok("get_run_status", json!({"run_id": run_id}))
        .await;
    let job_id = status["job"]["job_id"].as_str().unwrap().to_string();
    assert_eq!(status["job"]["executor"], "slurm");
    assert_eq!(status["job"]["state"], "COMPLETED", "{status:#}");
    // Slurm itself says the job ran and completed.
    let seen = slurm::squeue(&["-h", "-t", "all", "-j", &job_id, "-o", "%T %j"]);
    assert_eq!(seen.trim(), format!("COMPLETED scimcp-{run_id}"));
    // The run directory is a local run's: same records, plus the job's.
    let dir = on_slurm.runs_dir().join(&run_id);
    for f in [
        "request.json",
        "validation.json",
        "plan.json",
        "status.json",
        "result.json",
        "manifest.json",
        "stdout.log",
        "stderr.log",
        "slurm-job.json",
        "slurm-job.sh",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing in {}", dir.display());
    }
    let manifest: Value =
        serde_json::from_slice(&fs_err::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(&manifest["sandbox"], sandbox, "{manifest:#}");
    let log = on_slurm
        .ok("get_run_log", json!({"run_id": run_id, "stream": "stdout"}))
        .await;
    assert!(log["total_bytes"].as_u64().unwrap() > 0, "{log:#}");

    let local_started = local.ok("start_analysis", ridge(None)).await;
    let local_result = local
        .ok(
            "get_run_result",
            json!({"run_id": local_started["run_id"], "wait_s": 120}),
        )
        .await;
    assert_eq!(local_result["state"], "succeeded");
    assert_eq!(started["plan_sha256"], local_started["plan_sha256"]);
    let (a, b) = (artifacts(&result), artifacts(&local_result));
    assert_eq!(a.len(), 3, "{a:?}");
    assert_eq!(
        a, b,
        "the Slurm run's artifacts differ from the local run's"
    );
    assert_eq!(
        result["result"]["reported"], local_result["result"]["reported"],
        "reported metrics differ"
    );
}

#[tokio::test]
async fn cancel_run_scancels_the_job() {
    if !slurm::cluster_up() {
        return;
    }
    let (h, _config) = slurm_server(None).await;
    let started = h.ok("start_analysis", ridge(Some(300.0))).await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let running = wait_status(&h, &run_id, Duration::from_secs(60), |s| {
        s["state"] == "running" && s["job"]["state"] == "RUNNING"
    })
    .await;
    let job_id = running["job"]["job_id"].as_str().unwrap().to_string();
    assert_eq!(
        slurm::squeue(&["-h", "-j", &job_id, "-o", "%T"]).trim(),
        "RUNNING"
    );
    let cancelled = h.ok("cancel_run", json!({"run_id": run_id})).await;
    assert_eq!(cancelled["state"], "cancelled", "{cancelled:#}");
    assert_eq!(cancelled["changed"], true);
    // Gone from the queue: plain squeue lists only pending and running jobs.
    assert_eq!(slurm::squeue(&["-h", "-j", &job_id, "-o", "%T"]).trim(), "");
    assert_eq!(
        slurm::squeue(&["-h", "-t", "all", "-j", &job_id, "-o", "%T"]).trim(),
        "CANCELLED"
    );
    let result = h
        .ok("get_run_result", json!({"run_id": run_id, "wait_s": 10}))
        .await;
    assert_eq!(result["state"], "cancelled");
    assert_eq!(result["result"]["reason"], "cancelled");
    assert!(
        result["result"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("Slurm ended job {job_id}")),
        "{result:#}"
    );
}

#[tokio::test]
async fn a_job_over_its_time_limit_reads_failed_timeout() {
    if !slurm::cluster_up() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Slurm's smallest time limit is one minute; it checks limits about every 30 s.
    let manifest = fixture_adapter(dir.path(), "run_timeout_s = 60").unwrap();
    let (h, _config) = slurm_server(Some(manifest.display().to_string())).await;
    let started = h
        .ok(
            "start_analysis",
            json!({"workflow": "misbehave", "dataset": "data/iris.csv", "parameters": {"sleep_s": 600}}),
        )
        .await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let result = h
        .ok("get_run_result", json!({"run_id": run_id, "wait_s": 180}))
        .await;
    assert_eq!(result["state"], "failed", "{result:#}");
    assert_eq!(result["result"]["reason"], "timeout", "{result:#}");
    let message = result["result"]["message"].as_str().unwrap();
    assert!(message.contains("time limit of 1 min"), "{message}");
    assert!(message.contains("DUE TO TIME LIMIT"), "{message}");
    let status = h.ok("get_run_status", json!({"run_id": run_id})).await;
    assert_eq!(status["job"]["state"], "TIMEOUT", "{status:#}");
}

#[cfg(unix)]
#[tokio::test]
async fn a_server_killed_while_its_job_runs_reports_the_result_after_a_restart() {
    if !slurm::cluster_up() {
        return;
    }
    let (mut h, _config) = slurm_server(None).await;
    let started = h.ok("start_analysis", ridge(Some(6.0))).await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let running = wait_status(&h, &run_id, Duration::from_secs(60), |s| {
        s["state"] == "running"
    })
    .await;
    let job_id = running["job"]["job_id"].as_str().unwrap().to_string();
    let server = h.session.pid().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(server).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    // The job ends while no server is up.
    let deadline = Instant::now() + Duration::from_secs(90);
    while slurm::squeue(&["-h", "-t", "all", "-j", &job_id, "-o", "%T"]).trim() != "COMPLETED" {
        assert!(Instant::now() < deadline, "the job never completed");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let dir = h.runs_dir().join(&run_id);
    assert!(!dir.join("result.json").exists());
    h.restart().await.unwrap();
    let result = h
        .ok("get_run_result", json!({"run_id": run_id, "wait_s": 60}))
        .await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let files = artifacts(&result);
    for f in [
        "metrics.json",
        "model.json",
        "predictions.csv",
        "worker.pid",
    ] {
        assert!(files.contains_key(f), "{f} not indexed: {files:?}");
    }
    assert!(result["result"]["reported"]["metrics"]["r2"].is_number());
    assert!(
        !dir.join("receipt.json").exists(),
        "the run was recovered as interrupted"
    );
    let status = h.ok("get_run_status", json!({"run_id": run_id})).await;
    assert_eq!(status["job"]["state"], "COMPLETED");
    assert_ne!(status["server_pid"], json!(server));
}

/// `scimcp-doctor --slurm-config FILE --check cluster.slurm --json` with `config` as FILE and
/// `env` added; the check's JSON.
fn doctor_cluster(config: &str, env: &[(&str, &str)]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slurm.toml");
    fs_err::write(&path, config).unwrap();
    let doctor = scimcp_e2e::sibling_binary("scimcp-doctor").unwrap();
    let out = std::process::Command::new(doctor)
        .args(["--check", "cluster.slurm", "--json", "--slurm-config"])
        .arg(&path)
        // No installation: the doctor checks the embedded refsci adapter's workflows.
        .env("SCIMCP_HOME", dir.path().join("data"))
        .env("HOME", dir.path())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let check = report["checks"][0].clone();
    assert_eq!(check["id"], "cluster.slurm", "{report:#}");
    // DESIGN.md's doctor codes: 0 ok, 1 warnings only, 2 failures.
    let want_exit = match check["status"].as_str().unwrap() {
        "ok" | "skipped" => 0,
        "warn" => 1,
        _ => 2,
    };
    assert_eq!(out.status.code(), Some(want_exit), "{report:#}");
    check
}

#[test]
fn the_doctor_reports_the_cluster_its_partitions_and_limits() {
    if !slurm::cluster_up() {
        return;
    }
    // The default partition (debug, at most an hour) takes refsci's 30-minute jobs.
    let ok = doctor_cluster("", &[]);
    assert_eq!(ok["status"], "ok", "{ok:#}");
    let finding = ok["finding"].as_str().unwrap();
    assert!(finding.contains("the controller answered in"), "{finding}");
    assert!(
        finding.contains("partition debug (the default): up, 1 node"),
        "{finding}"
    );
    assert!(finding.contains("at most 1:00:00"), "{finding}");
    assert!(finding.ends_with("all 8 workflows fit"), "{finding}");
    let details: Vec<&str> = ok["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(
        details
            .iter()
            .any(|d| d.starts_with("partition short: up") && d.contains("at most 5:00")),
        "{details:?}"
    );
    assert!(
        details.iter().any(|d| d.starts_with("sacct ")),
        "{details:?}"
    );

    // `short` allows 5 minutes: every refsci workflow (run timeout 30 min) is over it.
    let short = doctor_cluster("partition = \"short\"\n", &[]);
    assert_eq!(short["status"], "warn", "{short:#}");
    assert!(
        short["finding"]
            .as_str()
            .unwrap()
            .contains("asks for 30 min, more than partition short allows (5:00)"),
        "{short:#}"
    );
    assert!(
        short["remedy"]
            .as_str()
            .unwrap()
            .contains("[workflow.resources]")
    );

    let unknown = doctor_cluster("partition = \"nosuch\"\n", &[]);
    assert_eq!(unknown["status"], "fail", "{unknown:#}");
    assert_eq!(
        unknown["finding"],
        "partition \"nosuch\" is not one of the cluster's partitions (debug, short)"
    );

    // The server's own rules: a directive it would refuse fails here too.
    let refused = doctor_cluster("directives = [\"--output=/tmp/x\"]\n", &[]);
    assert_eq!(refused["status"], "fail", "{refused:#}");
    assert!(
        refused["finding"]
            .as_str()
            .unwrap()
            .contains("'output' is not an allowed sbatch option"),
        "{refused:#}"
    );

    // A controller that cannot be reached (sinfo retries a missing configuration for a
    // minute): the configured command time limit ends the wait.
    let started = Instant::now();
    let unreachable = doctor_cluster(
        "command_timeout_s = 2\n",
        &[("SLURM_CONF", "/nonexistent/slurm.conf")],
    );
    assert_eq!(unreachable["status"], "fail", "{unreachable:#}");
    assert!(
        unreachable["finding"]
            .as_str()
            .unwrap()
            .starts_with("the Slurm controller did not answer"),
        "{unreachable:#}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// A CWL tool that reads a staged file on stdin, runs in its own output directory and writes
/// stdout to the file it names: the engine's plan, not the template one.
const CWL_COUNT_TOOL: &str = r#"
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

/// The CWL tool's run (its `count.txt` and output object) on a server started with `extra`.
async fn cwl_count_run(root: &std::path::Path, extra: Vec<String>) -> (String, Value) {
    let (home, cwd) = (root.join("home"), root.join("project"));
    let data = cwd.join("data");
    for d in [&home, &data] {
        fs_err::create_dir_all(d).unwrap();
    }
    let tool = root.join("count.cwl");
    fs_err::write(&tool, CWL_COUNT_TOOL).unwrap();
    let text = data.join("three.txt");
    fs_err::write(&text, "a\nb\nc\n").unwrap();
    let mut args = vec![
        "serve".to_string(),
        "--adapter".into(),
        tool.display().to_string(),
        "--data-dir".into(),
        data.display().to_string(),
    ];
    args.extend(extra);
    let session = scimcp_client::McpSession::spawn(
        &scimcp_e2e::sibling_binary("scimcp").unwrap(),
        &args,
        &[
            ("HOME".to_string(), home.display().to_string()),
            (
                "SCIMCP_HOME".to_string(),
                root.join("data-root").display().to_string(),
            ),
            ("SCIMCP_LOG".to_string(), "warn".to_string()),
        ],
        &cwd,
    )
    .await
    .unwrap();
    let request = json!({
        "workflow": "run",
        "parameters": {"text": {"class": "File", "path": text.display().to_string()}},
    });
    let (_, result) =
        scimcp_e2e::harness::run_on(&session, request, Duration::from_secs(120)).await;
    assert_eq!(result["state"], "succeeded", "{result:#}");
    let work = std::path::Path::new(result["run_dir"].as_str().unwrap()).join("work");
    let count = fs_err::read_to_string(work.join("out/count.txt")).unwrap();
    let outputs: Value =
        serde_json::from_slice(&fs_err::read(work.join(".scimcp/outputs.json")).unwrap()).unwrap();
    (count, outputs)
}

/// `__job` on the compute node starts an engine's CLI where a local run does (the tool's
/// output directory) with the staged stdin: the Slurm run's file and output object equal
/// the local run's.
#[tokio::test]
async fn a_cwl_tool_runs_as_a_slurm_job_like_a_local_run() {
    if !slurm::cluster_up() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let (local_root, slurm_root) = (root.path().join("local"), root.path().join("slurm"));
    let local = cwl_count_run(&local_root, Vec::new()).await;
    let on_slurm = cwl_count_run(&slurm_root, slurm::serve_args(&root.path().join("cfg"))).await;
    assert_eq!(local.0.trim(), "3");
    assert_eq!(on_slurm.0, local.0);
    assert_eq!(
        on_slurm.1["count"]["checksum"],
        local.1["count"]["checksum"]
    );
    assert_eq!(
        on_slurm.1["count"]["basename"], "count.txt",
        "{:#}",
        on_slurm.1
    );
}
