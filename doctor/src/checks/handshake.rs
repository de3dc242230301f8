//! `server.handshake`, once per adapter: start the adapter's registered command exactly as a
//! client would (the recorded command and arguments, this process's environment, so
//! `SCIMCP_HOME` is inherited), and complete a real MCP `initialize`, `tools/list` and
//! `get_capabilities`.

use std::time::Instant;

use scimcp_client::{ClientError, McpSession};

use crate::check::CheckResult;
use crate::context::Context;

/// Lines of the server's stderr shown when the handshake fails.
const STDERR_LINES: usize = 8;

/// Why `tools/list` or `get_capabilities` failed once the session was up.
#[derive(Debug, thiserror::Error)]
enum StepError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("tools/list has no get_capabilities (it lists {listed})")]
    NoCapabilities { listed: String },
}

pub fn check(ctx: &Context, id: &str, adapter: &str) -> CheckResult {
    let record = match ctx.installed_adapter(id, adapter) {
        Ok(r) => r,
        Err(result) => return *result,
    };
    let Some(server) = record.server.clone() else {
        return CheckResult::fail(
            id,
            format!("state.json records no server command for {adapter}"),
        )
        .remedy("scimcp-setup repair")
        .fixable();
    };
    let fix = |r: CheckResult| r.remedy("scimcp-setup repair").fixable();
    if !server.command.is_file() {
        return fix(CheckResult::fail(
            id,
            format!(
                "the registered command {} does not exist",
                server.command.display()
            ),
        ));
    }
    // Clients start servers from a directory of their own choosing; the home directory is
    // the usual one, and it never lies inside the data root.
    let cwd = if ctx.host.home.is_dir() {
        ctx.host.home.clone()
    } else {
        std::env::temp_dir()
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return CheckResult::fail(id, format!("cannot start an async runtime: {e}")).remedy(
                "raise this user's limit on threads and open files (ulimit -n, ulimit -u)",
            );
        }
    };
    let limit = ctx.options.handshake_timeout;
    let start = Instant::now();
    let command = server.command.clone();
    let args = server.args.clone();
    let outcome = runtime.block_on(async move {
        let session = match tokio::time::timeout(
            limit,
            McpSession::spawn(&command, &args, &[], &cwd),
        )
        .await
        {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Err((e.to_string(), startup_stderr(&command, &args, &cwd))),
            Err(_) => {
                return Err((
                    format!("initialize did not complete within {} s", limit.as_secs()),
                    String::new(),
                ));
            }
        };
        let steps = async {
            let tools = session.list_tools().await?;
            let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
            if !names.iter().any(|n| n == "get_capabilities") {
                return Err(StepError::NoCapabilities {
                    listed: names.join(", "),
                });
            }
            let caps = session
                .call("get_capabilities", serde_json::json!({}))
                .await?;
            caps.ok()?;
            Ok::<_, StepError>(names.len())
        };
        let result = tokio::time::timeout(limit.saturating_sub(start.elapsed()), steps).await;
        let stderr = session.stderr();
        let info = session.server_info();
        let _ = session.close().await;
        match result {
            Ok(Ok(n)) => Ok((n, info)),
            Ok(Err(e)) => Err((e.to_string(), stderr)),
            Err(_) => Err((
                format!(
                    "tools/list and get_capabilities did not answer within {} s",
                    limit.as_secs()
                ),
                stderr,
            )),
        }
    });
    let took = start.elapsed();
    match outcome {
        Ok((tools, info)) => {
            let who =
                info.map_or_else(String::new, |(name, version)| format!("{name} {version}: "));
            CheckResult::ok(
                id,
                format!(
                    "{who}initialize, tools/list ({tools} tools) and get_capabilities in {} ms",
                    took.as_millis()
                ),
            )
        }
        Err((error, stderr)) => {
            let details: Vec<String> = stderr
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(STDERR_LINES)
                .map(|l| format!("stderr: {l}"))
                .collect();
            fix(CheckResult::fail(
                id,
                format!(
                    "{} {} failed after {} ms: {error}",
                    server.command.display(),
                    server.args.join(" "),
                    took.as_millis()
                ),
            )
            .details(details))
        }
    }
}

/// The server's stderr when it would not even complete `initialize` (the session, and the
/// stderr it collected, never came to be): start it once more with stdin closed, which makes
/// a healthy server exit at once and a broken one print why it cannot start.
fn startup_stderr(command: &std::path::Path, args: &[String], cwd: &std::path::Path) -> String {
    let mut cmd = std::process::Command::new(command);
    cmd.args(args).current_dir(cwd);
    scimcp_process::run(
        scimcp_process::Step::new("the server's start", cmd)
            .timeout(std::time::Duration::from_secs(10)),
    )
    .map(|c| c.stderr)
    .unwrap_or_default()
}
