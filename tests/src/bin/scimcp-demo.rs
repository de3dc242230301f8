//! The quickstart: start `scimcp serve` on the embedded refsci adapter, run one regression
//! through MCP exactly as an AI client would, and print where the results and their hashes
//! are.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use scimcp_client::McpSession;
use serde_json::json;

fn main() -> ExitCode {
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(demo()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn demo() -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let python = scimcp_e2e::dev_python()?;
    let scimcp = scimcp_e2e::sibling_binary("scimcp")?;
    let home = scimcp_e2e::workspace_root().join(".scimcp-demo");
    fs_err::create_dir_all(&home)?;
    let envs = [("SCIMCP_HOME".to_string(), home.display().to_string())];
    let args: Vec<String> = ["serve", "--adapter", "refsci", "--python"]
        .iter()
        .map(|s| s.to_string())
        .chain([python.display().to_string()])
        .collect();
    writeln!(out, "starting: {} {}", scimcp.display(), args.join(" "))?;
    let session = McpSession::spawn(&scimcp, &args, &envs, &home).await?;
    let (name, version) = session.server_info().unwrap_or_default();
    writeln!(
        out,
        "connected over MCP stdio to {name} {version}; {} tools",
        session.list_tools().await?.len()
    )?;
    let request = json!({
        "workflow": "regression",
        "dataset": "builtin:diabetes",
        "parameters": {"target": "target", "model": "ridge", "seed": 7, "params": {"alpha": 0.5}},
    });
    let validation = session
        .call("validate_analysis", request.clone())
        .await?
        .ok()
        .context("validate_analysis")?;
    writeln!(
        out,
        "validated {} (plan {}), ready: {}",
        validation["validation_id"],
        &validation["plan_sha256"].as_str().unwrap_or("")[..12],
        validation["ready"]
    )?;
    let mut start = request.clone();
    start["validation_id"] = validation["validation_id"].clone();
    let started = session
        .call("start_analysis", start)
        .await?
        .ok()
        .context("start_analysis")?;
    let run_id = started["run_id"].as_str().unwrap_or_default().to_string();
    writeln!(out, "started {run_id}; waiting for the result…")?;
    let result = session
        .call("get_run_result", json!({"run_id": run_id, "wait_s": 300}))
        .await?
        .ok()
        .context("get_run_result")?;
    let r = &result["result"];
    writeln!(out, "run {run_id}: {}", result["state"])?;
    writeln!(out, "metrics: {}", r["reported"]["metrics"])?;
    writeln!(
        out,
        "output directory: {}",
        r["output_dir"].as_str().unwrap_or_default()
    )?;
    for a in r["artifacts"]["items"].as_array().into_iter().flatten() {
        writeln!(
            out,
            "  {}  {:>8} bytes  sha256 {}",
            a["path"].as_str().unwrap_or_default(),
            a["size_bytes"],
            a["sha256"].as_str().unwrap_or_default()
        )?;
    }
    writeln!(
        out,
        "run record: {}/result.json",
        r["run_dir"].as_str().unwrap_or_default()
    )?;
    session.close().await?;
    anyhow::ensure!(
        result["state"] == "succeeded",
        "the regression did not succeed: {result:#}"
    );
    Ok(())
}
