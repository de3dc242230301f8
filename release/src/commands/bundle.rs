//! `scimcp-release bundle`.

use std::io::Write as _;

use super::error::CommandError;
use crate::bundle::{self, BinarySource, BundleOptions, host_target};
use crate::cli::BundleArgs;

pub(crate) fn run(args: &BundleArgs) -> Result<(), CommandError> {
    let targets = if args.targets.is_empty() {
        vec![host_target()]
    } else {
        args.targets.clone()
    };
    let mut out = std::io::stdout().lock();
    if args.manifest_only {
        for target in &targets {
            let path = bundle::write_manifest(&args.out, target)?;
            writeln!(out, "wrote {}", path.display())?;
        }
        return Ok(());
    }
    let binaries = match (&args.from_dist, &args.bin_dir) {
        (Some(dist), _) => BinarySource::Dist(dist.clone()),
        (None, Some(dir)) => BinarySource::Dir(dir.clone()),
        (None, None) => {
            let exe = std::env::current_exe().map_err(CommandError::NoExe)?;
            BinarySource::Dir(
                exe.parent()
                    .map(std::path::Path::to_path_buf)
                    .unwrap_or_default(),
            )
        }
    };
    let opts = BundleOptions {
        repo_root: args.repo.clone(),
        binaries,
        targets,
        out_dir: args.out.clone(),
        epoch: bundle::source_date_epoch(&args.repo)?,
        git_commit: bundle::git_commit(&args.repo),
        tag: args.tag.clone(),
    };
    let index = bundle::build(&opts)?;
    for b in &index.bundles {
        writeln!(
            out,
            "{}  {} bytes  sha256 {}",
            args.out.join(&b.file).display(),
            b.size,
            b.sha256
        )?;
    }
    writeln!(out, "{}", args.out.join("RELEASE.json").display())?;
    writeln!(out, "{}", args.out.join("server.json").display())?;
    Ok(())
}
