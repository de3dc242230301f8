//! `scimcp-release preflight`: exit 0 when every selected step passed, 1 when one failed or
//! the preflight could not run, 2 for an unknown `--only`/`--skip` step, an argument error
//! ([`scimcp_core::exit`]).

use super::error::CommandError;
use crate::cli::PreflightArgs;
use crate::preflight::{PreflightOptions, run as run_preflight};

/// Whether every selected step passed.
pub(crate) fn run(args: &PreflightArgs) -> Result<bool, CommandError> {
    let bin_dir = args.bin_dir.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(std::path::Path::to_path_buf))
            .unwrap_or_default()
    });
    // Steps run their commands inside the repository, so relative paths given on the
    // command line must be made absolute here.
    let absolute = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let bin_dir = absolute(&bin_dir);
    let opts = PreflightOptions {
        repo: absolute(&args.repo),
        tag: args.tag.clone(),
        quick: args.quick,
        only: args.only.clone(),
        skip: args.skip.clone(),
        bin_dir,
        python: args.python.as_deref().map(absolute),
        adapter_python: args
            .adapter_python
            .iter()
            .map(|pair| match pair.split_once('=') {
                Some((name, path)) => {
                    format!("{name}={}", absolute(std::path::Path::new(path)).display())
                }
                None => pair.clone(),
            })
            .collect(),
        report_dir: args.report_dir.as_deref().map(absolute),
        keep_workdir: args.keep_workdir,
    };
    let mut out = std::io::stdout().lock();
    Ok(run_preflight(&opts, &mut out)?.passed)
}
