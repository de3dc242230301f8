//! `state.data_dirs`: every data folder the registered commands name (`--data-dir`) exists
//! and is a folder. The server refuses to start without them, and it reads datasets only
//! from them (and the adapter's built-ins), never from wherever a client happens to start it.

use std::path::PathBuf;

use crate::check::{CheckResult, Status, shell_quote};
use crate::context::Context;

pub fn check(ctx: &Context, id: &str) -> CheckResult {
    if let Err(skipped) = ctx.installed(id) {
        return *skipped;
    }
    if ctx.adapter_names().is_empty() {
        return CheckResult::skipped(
            id,
            "no adapter is installed here (remote servers keep their data folders themselves)",
        );
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut without = false;
    for adapter in ctx.adapter_names() {
        let args = ctx.server(&adapter).args;
        let named: Vec<PathBuf> = args
            .iter()
            .zip(args.iter().skip(1))
            .filter(|(flag, _)| *flag == "--data-dir")
            .map(|(_, dir)| PathBuf::from(dir))
            .collect();
        without |= named.is_empty();
        for dir in named {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    if without {
        return CheckResult::warn(
            id,
            "the registered command names no data folder (an older scimcp-setup registered it): \
             the server then offers only the adapter's built-in datasets",
        )
        .remedy("scimcp-setup repair")
        .fixable();
    }
    let mut problems = Vec::new();
    let mut missing = Vec::new();
    let mut not_folders = Vec::new();
    for dir in &dirs {
        match fs_err::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) => {
                problems.push((
                    Status::Fail,
                    format!(
                        "the data folder {} is {}, not a folder: the server will not start",
                        dir.display(),
                        scimcp_core::fs::kind_of(meta.file_type())
                    ),
                ));
                not_folders.push(dir);
            }
            Err(_) => {
                problems.push((
                    Status::Fail,
                    format!(
                        "the data folder {} does not exist: the server will not start",
                        dir.display()
                    ),
                ));
                missing.push(dir);
            }
        }
    }
    let list = dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let result = CheckResult::from_problems(
        id,
        format!("datasets come from {list} (and the adapter's built-ins)"),
        problems,
    );
    if let Some(first) = not_folders.first() {
        return result.remedy(format!(
            "move {} aside (or choose another folder with scimcp-setup install --data-dir DIR), \
             then run scimcp-setup repair",
            shell_quote(&first.display().to_string())
        ));
    }
    if missing.is_empty() {
        return result;
    }
    result.remedy("scimcp-setup repair").fixable()
}
