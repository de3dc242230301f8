//! `scimcp-doctor`: runs every check that decides whether an installation can run an
//! analysis (layout; for every installed adapter its runtime, packages, imports, identity,
//! clients and handshake; for every registered remote server its client entries and a
//! handshake over HTTP; with `--slurm-config`, the Slurm cluster; the data directory), each
//! with a stable id, the adapter or remote server it is about, a finding and a concrete remedy.
//!
//! It never modifies anything unless `--fix` is given; then it runs the installer's repair
//! (the library behind `scimcp-setup repair`) and checks again. The checks read the same
//! receipt (`state.json`) and the same runtime probe as the installer and the server, so the
//! three agree on what "healthy" means. See docs/DOCTOR.md for every check and the JSON
//! report.

mod check;
mod checks;
mod cli;
mod context;
mod fix;
mod probe;
mod report;
mod unavailable;

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use scimcp_core::exit;
use scimcp_core::failure::{Failure, Hint};

pub use check::{CheckResult, Status};
pub use checks::{DISK_FAIL_BYTES, DISK_WARN_BYTES, FREE_WARN_PERCENT};
pub use context::{Context, Options};
pub use report::{REPORT_SCHEMA_VERSION, Report};

use cli::Cli;

/// Why the doctor could not run at all (as opposed to a failing check).
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    #[error(transparent)]
    NoHome(#[from] scimcp_core::dirs::NoHome),
    #[error(transparent)]
    NoHomeDir(#[from] scimcp_setup_model::host::NoHomeDir),
    #[error("there is no check {id:?}")]
    UnknownCheck { id: String, known: String },
    #[error(transparent)]
    Remote(#[from] scimcp_setup_model::remote_server::RemoteServerError),
}

impl Hint for DoctorError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            DoctorError::NoHome(e) => e.hint(),
            DoctorError::NoHomeDir(e) => e.hint(),
            DoctorError::UnknownCheck { known, .. } => {
                Some(format!("the checks here are: {known} (`scimcp-doctor --list`)").into())
            }
            DoctorError::Remote(e) => e.hint(),
        }
    }
}

/// The context for this process: the real host and the data root (`SCIMCP_HOME` or the
/// platform data directory).
pub fn context_for_process(options: Options) -> Result<Context, DoctorError> {
    let host = scimcp_setup_model::host::Host::from_process()?;
    let root = scimcp_core::dirs::data_root()?;
    let root = std::path::absolute(&root).unwrap_or(root);
    let layout = scimcp_setup_model::layout::Layout::new(&root, host.platform);
    Ok(Context::new(host, layout, options))
}

/// Run the checks (all, or the one named `only`) and build the report.
pub fn diagnose(ctx: &Context, only: Option<&str>) -> Result<Report, DoctorError> {
    let start = Instant::now();
    let mut plan = checks::plan(ctx);
    if let Some(id) = only {
        plan.retain(|c| c.id == id);
        if plan.is_empty() && id == checks::CLUSTER {
            plan.push(checks::cluster_check());
        }
        if plan.is_empty() {
            return Err(DoctorError::UnknownCheck {
                id: id.to_string(),
                known: checks::plan(ctx)
                    .iter()
                    .map(|c| c.id.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    let results = checks::run(ctx, &plan);
    let mut report = Report::new(
        ctx.root().to_path_buf(),
        ctx.adapter_names(),
        results,
        start.elapsed(),
    );
    report.remotes = ctx.remotes.iter().map(|r| r.label()).collect();
    Ok(report)
}

/// `--fix`: repair what `before` found fixable, then diagnose again in a fresh context (the
/// receipt and the runtime may have changed).
pub fn fix_and_recheck(
    ctx: &Context,
    before: &Report,
    only: Option<&str>,
    python: Option<PathBuf>,
) -> Result<Report, DoctorError> {
    let record = fix::repair(ctx, &before.checks, python);
    let fresh = Context::new(ctx.host.clone(), ctx.layout.clone(), ctx.options.clone());
    let mut after = diagnose(&fresh, only)?;
    after.fix = Some(record);
    Ok(after)
}

/// Colour only on a terminal, and never with `NO_COLOR` set (https://no-color.org).
fn use_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn run(cli: &Cli) -> Result<u8, DoctorError> {
    let options = Options {
        import_timeout: Duration::from_secs(cli.import_timeout),
        handshake_timeout: Duration::from_secs(cli.handshake_timeout),
        fast: cli.fast,
        adapters: cli.adapters.clone(),
        slurm_config: cli.slurm_config.clone(),
        remote: cli.remote.clone(),
        token_env: cli.token_env.clone(),
        no_token: cli.no_token,
        ca_cert: cli.ca_cert.clone(),
    };
    let ctx = context_for_process(options)?;
    if ctx.options.remote.is_some() {
        // Refuse an invalid --remote (an unregistered name, a URL with a password, …) here,
        // with the installer's own message, rather than check nothing.
        let state = ctx.state.as_ref().ok().and_then(Option::as_ref);
        context::remote_targets(state, &ctx.options)?;
    }
    if cli.list {
        let mut ids: Vec<String> = Vec::new();
        for c in checks::plan(&ctx) {
            if !ids.contains(&c.id) {
                ids.push(c.id);
            }
        }
        print_stdout(&format!("{}\n", ids.join("\n")));
        return Ok(exit::SUCCESS);
    }
    let mut report = diagnose(&ctx, cli.check.as_deref())?;
    if cli.fix {
        report = fix_and_recheck(&ctx, &report, cli.check.as_deref(), cli.python.clone())?;
    }
    if cli.json {
        print_stdout(&report.to_json());
    } else {
        print_stdout(&report.to_text(use_color()));
    }
    Ok(report.exit_code)
}

/// Entry point of the `scimcp-doctor` binary: 0 every check passed (or was skipped), 1
/// warnings only, 2 a check failed or the doctor itself failed (an unknown `--check` id, an
/// argument problem): `DESIGN.md`'s doctor section, see [`scimcp_core::exit`].
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => exit::code(code),
        Err(e) => {
            Failure::with_hint_of(&e).print(cli.json);
            exit::code(exit::ERROR)
        }
    }
}
