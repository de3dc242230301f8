//! `scimcp serve`: resolve settings, then serve MCP over stdio until the client hangs up, or
//! over Streamable HTTP on a loopback address until SIGINT/SIGTERM.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use rmcp::ServiceExt;
use tracing_subscriber::EnvFilter;

use crate::cli::{ServeArgs, Transport};
use crate::server::{ScimcpServer, ServerContext, ServerSettings};

pub(crate) fn run(args: ServeArgs) -> ExitCode {
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(serve(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            ExitCode::from(1)
        }
    }
}

/// Logs go to stderr only: stdout carries MCP frames.
fn init_logging() {
    let filter = EnvFilter::try_from_env("SCIMCP_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .try_init();
}

/// How long a stopping server waits for its live runs to end and record themselves.
const STOP_WAIT: Duration = Duration::from_secs(15);

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    if args.transport == Transport::Http {
        // Refused before any state is opened: a wrong address changes nothing.
        crate::http::loopback_address(&args.listen)?;
    }
    let settings = ServerSettings::resolve(&args.adapter, args.python, args.data_dirs, &args.env)
        .context("cannot start the scimcp server")?;
    let context = ServerContext::open(settings).await?;
    let server = ScimcpServer::new(context.clone());
    let served = match args.transport {
        Transport::Http => crate::http::serve(server, &args.listen).await,
        Transport::Stdio => serve_stdio(server).await,
    };
    // Whatever ended the session, live runs end with the server, recorded as interrupted.
    context.runs.shutdown(STOP_WAIT).await;
    served
}

/// Until the client closes stdin, or SIGINT/SIGTERM.
async fn serve_stdio(server: ScimcpServer) -> anyhow::Result<()> {
    let (transport, writer) = crate::stdio::transport();
    let running = server
        .serve(transport)
        .await
        .context("MCP initialization over stdio failed")?;
    let ended = tokio::select! {
        ended = running.waiting() => ended.map(|_| ()).context("MCP session ended with an error"),
        () = crate::shutdown::signal() => {
            tracing::info!("stopping on a signal");
            Ok(())
        }
    };
    // The last answers (an error for a final malformed line) reach the client before exit.
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    ended
}
