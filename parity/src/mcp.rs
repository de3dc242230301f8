//! The MCP side: the same analysis through the real `scimcp` binary, driven over stdio by
//! [`McpSession`] exactly as an AI client drives it — `validate_analysis`, `start_analysis`,
//! `get_run_result` (and, for the cancelled scenario, `get_run_log`, `get_run_status` and
//! `cancel_run`). Each scenario gets its own server process, start directory and
//! `SCIMCP_HOME`, so no run can see another's state.
//!
//! The evidence takes each artifact's SHA-256 from the server's own result (`artifacts[]`),
//! and separately checks that index against the bytes under `result.output_dir`: a server
//! that reported hashes of files it did not leave behind would otherwise pass.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::error::SideError;
use crate::evidence::{self, Artifact, Evidence};
use crate::scenario::Scenario;
use scimcp_client::McpSession;

/// Where and how to start the server.
#[derive(Debug, Clone)]
pub struct McpPaths {
    pub scimcp: PathBuf,
    pub python: PathBuf,
    /// The adapter manifest file under test.
    pub manifest: PathBuf,
    /// `SCIMCP_HOME` of this server.
    pub home: PathBuf,
    /// The server's start directory (its `data/` holds the exported datasets).
    pub start: PathBuf,
    /// The gate's `--env` variables, passed to the server as `--env` for every run.
    pub extra_env: std::collections::BTreeMap<String, String>,
}

/// What the MCP side produced.
#[derive(Debug)]
pub struct McpRun {
    /// `get_run_result`'s `result` (the view of the run's published `result.json`).
    pub result: Value,
    /// Every page of `result.artifacts`, joined.
    pub artifacts: Vec<Value>,
    /// From `validate_analysis` to the terminal result.
    pub wall: Duration,
    /// From spawning the server to closing the session.
    pub session_wall: Duration,
    /// For the cancelled scenario: no process of the run's group was alive afterwards.
    pub tree_ended: Option<bool>,
    /// `get_environment`'s answer: the runtime the evidence came from.
    pub environment: Value,
    /// The variables the server's plan set for the run.
    pub plan_env: std::collections::BTreeMap<String, String>,
}

/// Run the scenario through a fresh `scimcp serve`.
pub async fn run(scenario: &Scenario, paths: &McpPaths) -> Result<McpRun, SideError> {
    fs_err::create_dir_all(&paths.home)?;
    fs_err::create_dir_all(&paths.start)?;
    let session_started = Instant::now();
    let mut args = vec![
        "serve".to_string(),
        "--adapter".to_string(),
        paths.manifest.display().to_string(),
        "--python".to_string(),
        paths.python.display().to_string(),
    ];
    for (name, value) in &paths.extra_env {
        args.push("--env".to_string());
        args.push(format!("{name}={value}"));
    }
    let envs = vec![
        ("SCIMCP_HOME".to_string(), paths.home.display().to_string()),
        ("SCIMCP_LOG".to_string(), "warn".to_string()),
    ];
    let session = McpSession::spawn(&paths.scimcp, &args, &envs, &paths.start)
        .await
        .map_err(|source| SideError::StartServer {
            program: paths.scimcp.clone(),
            source,
        })?;
    let outcome = drive_session(scenario, &session).await;
    let stderr = session.stderr();
    let _ = session.close().await;
    let session_wall = session_started.elapsed();
    let (driven, environment) = outcome.map_err(|e| {
        let tail: Vec<&str> = stderr.lines().rev().take(10).collect();
        if tail.is_empty() {
            e
        } else {
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            SideError::WithServerStderr {
                tail: tail.join("\n"),
                source: Box::new(e),
            }
        }
    })?;
    Ok(McpRun {
        result: driven.result,
        artifacts: driven.artifacts,
        wall: driven.wall,
        session_wall,
        tree_ended: driven.tree_ended,
        environment,
        plan_env: driven.plan_env,
    })
}

async fn call(session: &McpSession, tool: &str, args: Value) -> Result<Value, SideError> {
    session
        .call(tool, args)
        .await?
        .ok()
        .map_err(|source| SideError::ToolFailed {
            tool: tool.to_string(),
            source,
        })
}

/// What [`drive`] hands back.
struct Driven {
    /// The result view.
    result: Value,
    /// Every artifact, from every page.
    artifacts: Vec<Value>,
    wall: Duration,
    /// For the cancelled scenario: whether the run's process group was gone.
    tree_ended: Option<bool>,
    plan_env: std::collections::BTreeMap<String, String>,
}

/// Drive the session: the runtime's identity first (outside the timed part), then the run.
async fn drive_session(
    scenario: &Scenario,
    session: &McpSession,
) -> Result<(Driven, Value), SideError> {
    let environment = call(session, "get_environment", json!({})).await?;
    Ok((drive(scenario, session).await?, environment))
}

async fn drive(scenario: &Scenario, session: &McpSession) -> Result<Driven, SideError> {
    let timeout = Duration::from_secs(scenario.timeout_s);
    let request = scenario.request();
    let started = Instant::now();
    let validation = call(session, "validate_analysis", request.clone()).await?;
    let plan_env = validation["plan"]["env"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    if validation["ready"] != json!(true) {
        return Err(SideError::NotReady {
            blockers: validation["blockers"].clone(),
        });
    }
    let mut start = request;
    start["validation_id"] = validation["validation_id"].clone();
    let started_run = call(session, "start_analysis", start).await?;
    let run_id = started_run["run_id"]
        .as_str()
        .ok_or(SideError::NoRunId)?
        .to_string();

    let mut tree_ended = None;
    if let Some(cancel) = &scenario.cancel {
        // Wait for the same marker the direct side waits for, through the client-visible log.
        loop {
            let log = call(
                session,
                "get_run_log",
                json!({"run_id": run_id, "stream": "stdout"}),
            )
            .await?;
            if log["text"]
                .as_str()
                .is_some_and(|t| t.contains(&cancel.when_stdout_contains))
            {
                break;
            }
            let status = call(session, "get_run_status", json!({"run_id": run_id})).await?;
            if status["state"] != json!("running") && status["state"] != json!("queued") {
                return Err(SideError::EndedBeforeMarker {
                    state: status["state"].clone(),
                    marker: cancel.when_stdout_contains.clone(),
                });
            }
            if started.elapsed() > timeout {
                return Err(SideError::MarkerNeverShown {
                    marker: cancel.when_stdout_contains.clone(),
                    timeout_s: scenario.timeout_s,
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let status = call(session, "get_run_status", json!({"run_id": run_id})).await?;
        let pgid = status["pid"].as_u64().and_then(|p| u32::try_from(p).ok());
        tokio::time::sleep(Duration::from_secs_f64(cancel.after_s)).await;
        let cancelled = call(session, "cancel_run", json!({"run_id": run_id})).await?;
        if cancelled["changed"] != json!(true) {
            return Err(SideError::CancelChangedNothing { answer: cancelled });
        }
        // The server records the CLI's pid as its process group id.
        tree_ended = Some(match pgid {
            Some(pgid) => crate::process::wait_group_gone(pgid).await,
            None => return Err(SideError::NoPid { status }),
        });
    }

    loop {
        let out = call(
            session,
            "get_run_result",
            json!({"run_id": run_id, "wait_s": 60}),
        )
        .await?;
        if out["terminal"] == json!(true) {
            let result = out["result"].clone();
            if result.is_null() {
                return Err(SideError::NoResult { answer: out });
            }
            let artifacts = all_artifacts(session, &run_id, &result).await?;
            return Ok(Driven {
                result,
                artifacts,
                wall: started.elapsed(),
                tree_ended,
                plan_env,
            });
        }
        if started.elapsed() > timeout {
            let _ = call(session, "cancel_run", json!({"run_id": run_id})).await;
            return Err(SideError::McpTimedOut {
                timeout_s: scenario.timeout_s,
            });
        }
    }
}

/// Every artifact of a terminal result: the first page came with it; fetch the rest page by
/// page, and hold the server to its promise that every page belongs to one sequence.
async fn all_artifacts(
    session: &McpSession,
    run_id: &str,
    result: &Value,
) -> Result<Vec<Value>, SideError> {
    let mut page = result["artifacts"].clone();
    let sequence = page["sequence_sha256"].clone();
    let mut items = Vec::new();
    loop {
        let Some(batch) = page["items"].as_array() else {
            return Err(SideError::NotAPage { page });
        };
        items.extend(batch.iter().cloned());
        if page["sequence_sha256"] != sequence {
            return Err(SideError::MixedSequences {
                run_id: run_id.to_string(),
            });
        }
        let Some(next) = page["next_offset"].as_u64() else {
            break;
        };
        let out = call(
            session,
            "get_run_result",
            json!({"run_id": run_id, "wait_s": 0, "artifact_offset": next}),
        )
        .await?;
        page = out["result"]["artifacts"].clone();
    }
    if let Some(total) = result["artifacts"]["total"].as_u64()
        && total != items.len() as u64
    {
        return Err(SideError::ArtifactCount {
            total,
            held: items.len(),
        });
    }
    Ok(items)
}

/// The MCP run's evidence, plus any disagreement between the server's artifact index and
/// the files under its output directory.
pub fn evidence(
    scenario: &Scenario,
    run: &McpRun,
    adapter: &str,
    work_globs: &[globset::GlobMatcher],
    reads_text: bool,
) -> Result<(Evidence, Vec<String>), SideError> {
    let r = &run.result;
    let state = r["state"]
        .as_str()
        .ok_or(SideError::ResultField { field: "state" })?
        .to_string();
    let output_dir = PathBuf::from(r["output_dir"].as_str().ok_or(SideError::ResultField {
        field: "output_dir",
    })?);
    let reported = &run.artifacts;
    // The working directory holds the output directory (`work/output`).
    let work_dir = output_dir
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let places = evidence::ArtifactPlaces {
        output: &output_dir,
        work: (!work_globs.is_empty()).then_some((work_dir.as_path(), work_globs)),
    };
    let (on_disk, metrics) = evidence::collect_artifacts(scenario, &places)?;
    let mut index_problems = Vec::new();
    let mut artifacts = Vec::new();
    for a in reported {
        let path = a["path"]
            .as_str()
            .ok_or(SideError::ArtifactField { field: "path" })?;
        let sha = a["sha256"]
            .as_str()
            .ok_or(SideError::ArtifactField { field: "sha256" })?;
        let disk = on_disk.iter().find(|d| d.path == path);
        match disk {
            None => index_problems.push(format!(
                "the result lists artifact {path}, but {} has no such file",
                output_dir.display()
            )),
            Some(d) if !d.normalized && d.sha256 != sha => index_problems.push(format!(
                "the result reports sha256 {sha} for {path}, but the file's bytes hash to {}",
                d.sha256
            )),
            Some(d) if d.normalized => {
                let base = if a["base"] == "work" {
                    &work_dir
                } else {
                    &output_dir
                };
                let raw = scimcp_core::hash::sha256_file(&base.join(path))?.0;
                if raw != sha {
                    index_problems.push(format!(
                        "the result reports sha256 {sha} for {path}, but the file's bytes hash to {raw}"
                    ));
                }
            }
            Some(_) => {}
        }
        artifacts.push(match disk {
            // A normalized artifact is compared by its normalized text, like the direct side.
            Some(d) if d.normalized => d.clone(),
            // The server's own hash, with the content read from the file it indexed.
            Some(d) => Artifact {
                sha256: sha.to_string(),
                ..d.clone()
            },
            None => Artifact {
                path: path.to_string(),
                sha256: sha.to_string(),
                normalized: false,
                content: crate::content::Content::default(),
            },
        });
    }
    for d in &on_disk {
        if !artifacts.iter().any(|a| a.path == d.path) {
            index_problems.push(format!(
                "{} holds {}, which the result's artifacts list leaves out",
                output_dir.display(),
                d.path
            ));
        }
    }
    if r["skipped"]["total"].as_u64().is_some_and(|t| t > 0) {
        index_problems.push(format!(
            "the server left files out of the index: {}",
            r["skipped"]["items"]
        ));
    }
    artifacts.sort_by(|a, b| a.path.cmp(&b.path));
    let stderr_tail = r["stderr_tail"].as_str().unwrap_or("");
    let exit_code = r["exit_code"].as_i64().and_then(|c| i32::try_from(c).ok());
    let signal = r["signal"].as_i64().and_then(|c| i32::try_from(c).ok());
    Ok((
        Evidence {
            format: crate::evidence::EVIDENCE_FORMAT,
            recorded_on: None,
            adapter: adapter.to_string(),
            workflow: r["workflow"].as_str().unwrap_or_default().to_string(),
            error_line: (state != "succeeded")
                .then(|| evidence::error_line(scenario, stderr_tail))
                .flatten(),
            state,
            exit_code,
            signal,
            process_tree_ended: run.tree_ended,
            artifacts,
            metrics,
            reported: reads_text
                .then(|| r.get("reported").cloned())
                .flatten()
                .filter(|v| !v.is_null()),
        },
        index_problems,
    ))
}
