//! `scimcp serve`: resolve settings, then serve MCP over stdio until the client hangs up, or
//! over Streamable HTTP until SIGINT/SIGTERM (on a loopback address, or on a network with
//! bearer tokens).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use rmcp::ServiceExt;
use scimcp_core::exit;
use scimcp_core::failure::Failure;
use tracing_subscriber::EnvFilter;

use crate::cli::{ConfirmArg, ExecutorArg, ServeArgs, Transport};
use crate::context::{ConfirmMode, ServerContext, ServerSettings};
use crate::http::{HttpArgs, HttpConfig, TokenLimits};
use crate::server::ScimcpServer;

pub(crate) fn run(args: ServeArgs) -> ExitCode {
    // An HTTP server parses the tool catalog (a millisecond) on its own thread from the first
    // instant, so it is ready before the first session's handshake rather than competing
    // with it; `tools/list` waits for it if it is not. A stdio session answers `tools/list`
    // from the catalog's text (tools/listing.rs) and parses it only if something needs it.
    if args.transport == Transport::Http {
        let _ = std::thread::Builder::new()
            .name("catalog".into())
            .spawn(crate::tools::catalog);
    }
    init_logging();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // tokio's own variable, when set, still decides (tokio reads it when no count is given).
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(worker_threads(args.transport));
    }
    let served = builder
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .and_then(|runtime| {
            let served = runtime.block_on(serve(args));
            // The blocking read of a stdio client's input never returns while the client
            // keeps it open (a client that stops its server with SIGTERM): dropping the
            // runtime would wait for it for ever. Records are written before `serve` returns.
            runtime.shutdown_timeout(Duration::from_secs(5));
            served
        });
    match served {
        Ok(()) => exit::code(exit::SUCCESS),
        Err(e) => {
            // stdout carries MCP frames: the failure goes to stderr, never as JSON.
            Failure::new(e.as_ref()).print(false);
            exit::code(exit::FAILURE)
        }
    }
}

/// Async worker threads. Blocking work (dataset copies, hashing, record writes, artifact
/// indexing) runs on tokio's separate blocking pool, so the workers only parse, dispatch and
/// answer: a stdio server has one client and needs two at most, an HTTP server no more than
/// eight. tokio's default, one per core, costs every idle server on a many-core machine a
/// thread stack and a malloc arena per core for nothing.
fn worker_threads(transport: Transport) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    match transport {
        Transport::Stdio => cores.min(2),
        Transport::Http => cores.min(8),
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
    // The HTTP settings are checked before any state is opened: a refused address, a missing
    // token or an unreadable certificate changes nothing.
    let http = match args.transport {
        Transport::Http => Some(http_config(&args)?),
        Transport::Stdio => {
            warn_unused_http_flags(&args);
            None
        }
    };
    let executor = executor(&args)?;
    crate::sandbox_policy::set_mode(args.sandbox.into());
    let mut settings = ServerSettings::resolve_choice(
        crate::adapter_source::AdapterChoice {
            name: &args.adapter,
            cwl_allow_shell: args.cwl_allow_shell,
            cwl_no_container: args.cwl_no_container,
        },
        args.python,
        args.data_dirs,
        &args.env,
    )
    .context("cannot start the scimcp server")?;
    crate::runs::quota::install(
        crate::runs::quota::QuotaConfig {
            max_history_bytes: args.max_history_bytes,
            min_free_bytes: args.min_free_bytes,
        },
        settings.data_root.join("runs"),
    );
    settings.executor = executor;
    settings.client_timeout_s = args.client_timeout_s;
    let remote = http.as_ref().is_some_and(HttpConfig::is_remote);
    settings.confirm = match args.confirm {
        Some(ConfirmArg::Required) => ConfirmMode::Required,
        Some(ConfirmArg::Optional) if remote => {
            tracing::warn!(
                "--confirm optional on a server reachable from the network: a client may start                  and cancel runs without showing the person the plan first"
            );
            ConfirmMode::Optional
        }
        Some(ConfirmArg::Optional) => ConfirmMode::Optional,
        None if remote => ConfirmMode::Required,
        None => ConfirmMode::Optional,
    };
    tracing::info!(
        "plan-then-confirm: {} (start_analysis and cancel_run {})",
        settings.confirm.word(),
        match settings.confirm {
            ConfirmMode::Required => "act only with confirm: true",
            ConfirmMode::Optional => "act at once unless confirm is false",
        }
    );
    let context = ServerContext::open(settings).await?;
    // Campaigns a stopped server left unfinished go on, as their scientist expects.
    crate::campaigns::resume::spawn(&context);
    let server = ScimcpServer::new(context.clone());
    let served = match http {
        Some(config) => crate::http::serve(server, config)
            .await
            .map_err(anyhow::Error::from),
        None => serve_stdio(server).await,
    };
    // Whatever ended the session, live runs end with the server, recorded as interrupted.
    context.runs.shutdown(STOP_WAIT).await;
    served
}

/// `--executor` and `--slurm-config`, checked before any state is opened.
fn executor(args: &ServeArgs) -> anyhow::Result<crate::runs::executor::Executor> {
    use crate::runs::executor::Executor;
    use crate::runs::slurm::{SlurmConfig, SlurmExecutor};
    match args.executor {
        ExecutorArg::Local => {
            if args.slurm_config.is_some() {
                tracing::warn!("--slurm-config applies to --executor slurm only; ignored");
            }
            Ok(Executor::Local)
        }
        ExecutorArg::Slurm => {
            let config = match &args.slurm_config {
                Some(path) => SlurmConfig::load(path)
                    .with_context(|| format!("invalid --slurm-config {}", path.display()))?,
                None => SlurmConfig::default(),
            };
            tracing::info!(
                partition = config
                    .partition
                    .as_deref()
                    .unwrap_or("(the cluster's default)"),
                "runs execute as Slurm batch jobs"
            );
            Ok(Executor::Slurm(SlurmExecutor::new(config)?))
        }
    }
}

fn http_config(args: &ServeArgs) -> anyhow::Result<HttpConfig> {
    if !(args.token_rate.is_finite() && args.token_rate > 0.0) {
        anyhow::bail!(
            "--token-rate {} is not a positive number of requests per second",
            args.token_rate
        );
    }
    if args.token_concurrency == 0 {
        anyhow::bail!("--token-concurrency must be at least 1");
    }
    let config = HttpConfig::resolve(HttpArgs {
        listen: args.listen.clone(),
        tls_cert: args.tls_cert.clone(),
        tls_key: args.tls_key.clone(),
        token_file: args.token_file.clone(),
        data_root: scimcp_core::dirs::data_root()?,
        env_token: std::env::var(crate::auth::TOKEN_ENV).ok(),
        require_token: args.require_token,
        allow_plain_http: args.allow_plain_http,
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        limits: Some(TokenLimits {
            requests_per_s: args.token_rate,
            burst: (args.token_rate * 5.0).max(1.0),
            max_in_flight: args.token_concurrency,
        }),
    })?;
    Ok(config)
}

/// HTTP-only flags given to a stdio server do nothing: say so rather than ignore them.
fn warn_unused_http_flags(args: &ServeArgs) {
    let given = [
        ("--token-file", args.token_file.is_some()),
        ("--require-token", args.require_token),
        ("--tls-cert", args.tls_cert.is_some()),
        ("--allow-plain-http", args.allow_plain_http),
        ("--allowed-host", !args.allowed_hosts.is_empty()),
        ("--allowed-origin", !args.allowed_origins.is_empty()),
    ];
    for (flag, set) in given {
        if set {
            tracing::warn!("{flag} applies to --transport http only; ignored over stdio");
        }
    }
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
