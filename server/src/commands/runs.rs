//! `scimcp runs prune`: delete finished runs from the run history, with `--dry-run` showing
//! exactly what the real run deletes (the same plan, [`crate::runs::prune::plan`]).
//!
//! The runs directory is the one `scimcp serve` uses (`<data root>/runs`, shared by every
//! adapter), and it is safe to prune while servers run: see [`crate::runs::prune`].

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use scimcp_core::exit;
use scimcp_core::failure::Failure;
use scimcp_core::fs::size_text;

use crate::cli::{PruneArgs, PruneStateArg};
use crate::runs::prune::{self, Criteria, Kept, PruneOutcome, PrunePlan, RunEntry};
use crate::runs::state::RunState;

/// Why `runs prune` did nothing.
#[derive(Debug, thiserror::Error)]
enum PruneCommandError {
    #[error("--older-than: {0}")]
    Duration(#[from] prune::DurationError),
    #[error(
        "say what to delete: give --older-than DURATION, --keep-newest N or --state STATE \
         (without one, every finished run would go)"
    )]
    NoCriteria,
    #[error("--adapter {arg}: {source}")]
    Adapter {
        arg: String,
        #[source]
        source: scimcp_core::ManifestErrors,
    },
    #[error(transparent)]
    NoHome(#[from] scimcp_core::dirs::NoHome),
    #[error(transparent)]
    Plan(#[from] prune::PruneError),
}

impl From<PruneStateArg> for RunState {
    fn from(s: PruneStateArg) -> RunState {
        match s {
            PruneStateArg::Succeeded => RunState::Succeeded,
            PruneStateArg::PartialFailure => RunState::PartialFailure,
            PruneStateArg::Failed => RunState::Failed,
            PruneStateArg::Cancelled => RunState::Cancelled,
        }
    }
}

pub(crate) fn prune(args: PruneArgs) -> ExitCode {
    match prune_inner(&args) {
        Ok(code) => code,
        Err(e) => {
            Failure::new(&e).print(args.json);
            exit::code(exit::FAILURE)
        }
    }
}

fn prune_inner(args: &PruneArgs) -> Result<ExitCode, PruneCommandError> {
    let criteria = Criteria {
        older_than: args
            .older_than
            .as_deref()
            .map(prune::parse_duration)
            .transpose()?,
        keep_newest: args.keep_newest,
        states: args.states.iter().copied().map(RunState::from).collect(),
        adapter: args.adapter.as_deref().map(adapter_name).transpose()?,
    };
    if criteria.is_empty() {
        return Err(PruneCommandError::NoCriteria);
    }
    let data_root = match &args.data_root {
        Some(root) => root.clone(),
        None => scimcp_core::dirs::data_root()?,
    };
    let runs_dir = data_root.join("runs");
    let plan = prune::plan(
        &runs_dir,
        &data_root.join("campaigns"),
        &criteria,
        jiff::Timestamp::now(),
    )?;
    let mut out = std::io::stdout().lock();
    if args.dry_run {
        print_plan(&mut out, &plan, args.json);
        return Ok(exit::code(exit::SUCCESS));
    }
    let mut gone = Vec::new();
    let outcome = prune::execute(&plan, |run_id| gone.push(run_id.to_string()));
    forget(&runs_dir, &gone);
    print_outcome(&mut out, &plan, &outcome, args.json);
    Ok(exit::code(exit::verdict(outcome.failed.is_empty())))
}

/// The run index drops the deleted runs, once for all of them (one lock, one flush). It would
/// notice by itself at its next open (it never trusts an entry whose directory is gone);
/// telling it keeps it exact at once, so a failure here is only a warning.
fn forget(runs_dir: &Path, run_ids: &[String]) {
    if run_ids.is_empty() {
        return;
    }
    let ids: Vec<&str> = run_ids.iter().map(String::as_str).collect();
    if let Err(e) = crate::runs::index::forget_many(runs_dir, &ids) {
        let _ = writeln!(
            std::io::stderr(),
            "warning: the run index was not told of the deleted runs ({e}); it finds out at its next open"
        );
    }
}

/// `--adapter`: a name as runs record it, or a manifest (path or embedded name) whose name is
/// taken. A bare name that is no embedded adapter still selects its runs: an adapter that is
/// gone may have left runs behind.
fn adapter_name(arg: &str) -> Result<String, PruneCommandError> {
    let is_path = arg.contains(['/', '\\']) || arg.ends_with(".toml");
    match scimcp_core::manifest::resolve(arg) {
        Ok(adapter) => Ok(adapter.manifest.name.clone()),
        Err(source) if is_path => Err(PruneCommandError::Adapter {
            arg: arg.to_string(),
            source,
        }),
        Err(_) => Ok(arg.to_string()),
    }
}

fn print_plan(out: &mut impl Write, plan: &PrunePlan, json: bool) {
    if json {
        let report = serde_json::json!({
            "schema_version": 1,
            "dry_run": true,
            "runs_dir": plan.runs_dir,
            "scanned": plan.scanned,
            "delete": plan.delete,
            "kept": plan.kept,
            "tombstones": plan.tombstones,
            "unreadable": plan.unreadable,
            "warnings": plan.warnings,
            "total_bytes": plan.total_bytes(),
        });
        let _ = writeln!(out, "{report:#}");
        return;
    }
    let _ = writeln!(
        out,
        "Dry run: would delete {} of {} runs in {}, freeing {}.",
        plan.delete.len(),
        plan.scanned,
        plan.runs_dir.display(),
        size_text(plan.total_bytes())
    );
    runs_table(out, &plan.delete);
    tombstones(out, &plan.tombstones, "would finish");
    kept_table(out, &plan.kept);
    notes(out, &plan.unreadable, &plan.warnings);
    if !plan.delete.is_empty() || !plan.tombstones.is_empty() {
        let _ = writeln!(
            out,
            "Run the same command without --dry-run to delete them."
        );
    }
}

fn print_outcome(out: &mut impl Write, plan: &PrunePlan, outcome: &PruneOutcome, json: bool) {
    if json {
        let report = serde_json::json!({
            "schema_version": 1,
            "dry_run": false,
            "runs_dir": plan.runs_dir,
            "scanned": plan.scanned,
            "deleted": outcome.deleted,
            "kept": plan.kept.iter().chain(&outcome.kept).collect::<Vec<_>>(),
            "tombstones": outcome.tombstones,
            "failed": outcome.failed,
            "unreadable": plan.unreadable,
            "warnings": plan.warnings,
            "total_bytes": outcome.total_bytes(),
        });
        let _ = writeln!(out, "{report:#}");
        return;
    }
    let _ = writeln!(
        out,
        "Deleted {} of {} runs in {}, freeing {}.",
        outcome.deleted.len(),
        plan.scanned,
        plan.runs_dir.display(),
        size_text(outcome.total_bytes())
    );
    runs_table(out, &outcome.deleted);
    tombstones(out, &outcome.tombstones, "finished");
    let kept: Vec<Kept> = plan.kept.iter().chain(&outcome.kept).cloned().collect();
    kept_table(out, &kept);
    for f in &outcome.failed {
        let _ = writeln!(out, "Not deleted: {}: {}", f.name, f.error);
    }
    notes(out, &plan.unreadable, &plan.warnings);
}

fn runs_table(out: &mut impl Write, runs: &[RunEntry]) {
    for r in runs {
        let _ = writeln!(
            out,
            "  {}  {:<15} {:<12} {:<20} ended {:<27} {}",
            r.run_id,
            state_word(r.state),
            r.adapter,
            r.workflow,
            r.ended_at.as_deref().unwrap_or("-"),
            size_text(r.bytes)
        );
    }
}

fn tombstones(out: &mut impl Write, tombstones: &[prune::Tombstone], verb: &str) {
    if tombstones.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "{} {} deletion(s) an earlier prune left unfinished:",
        capitalized(verb),
        tombstones.len()
    );
    for t in tombstones {
        let _ = writeln!(out, "  {}  {}", t.name, size_text(t.bytes));
    }
}

fn kept_table(out: &mut impl Write, kept: &[Kept]) {
    if kept.is_empty() {
        return;
    }
    let _ = writeln!(out, "Kept {} matching run(s):", kept.len());
    for k in kept {
        let _ = writeln!(
            out,
            "  {}  {:<15} {}",
            k.run.run_id,
            state_word(k.run.state),
            k.why
        );
    }
}

fn notes(out: &mut impl Write, unreadable: &[String], warnings: &[String]) {
    if !unreadable.is_empty() {
        let _ = writeln!(
            out,
            "Left alone: {} run director(ies) without a readable status (being created, or damaged): {}",
            unreadable.len(),
            unreadable.join(", ")
        );
    }
    for w in warnings {
        let _ = writeln!(out, "Warning: {w}");
    }
}

fn state_word(state: RunState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
