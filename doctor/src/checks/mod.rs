//! The checks, one module per area, and running them concurrently.
//!
//! Every check only reads (the two exceptions create and remove a probe file under the data
//! root, which is what they measure). Independent checks run on their own threads; the
//! shared probe and manifest in [`Context`] are computed once, by whichever check asks first.

mod clients;
mod data_dirs;
mod handshake;
mod identity;
mod import;
mod layout;
mod native;
mod packages;
mod storage;

use std::time::Instant;

use scimcp_installer::clients::{Client, ClientContext};

use crate::check::CheckResult;
use crate::context::Context;

pub use storage::{DISK_FAIL_BYTES, DISK_WARN_BYTES};

/// One check to run.
#[derive(Debug, Clone)]
pub struct Check {
    pub id: String,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Layout,
    Interpreter,
    Packages,
    Import,
    Native,
    Identity,
    Client(&'static dyn Client),
    Handshake,
    Permissions,
    Disk,
    DataDirs,
    Encoding,
}

/// Every check for this installation, in report order. The client checks are one per
/// client that is detected on this computer or recorded in the receipt.
pub fn plan(ctx: &Context) -> Vec<Check> {
    let fixed = |id: &str, kind| Check {
        id: id.to_string(),
        kind,
    };
    let mut checks = vec![
        fixed("install.layout", Kind::Layout),
        fixed("runtime.interpreter", Kind::Interpreter),
        fixed("runtime.packages", Kind::Packages),
        fixed("runtime.import", Kind::Import),
        fixed("runtime.native", Kind::Native),
        fixed("runtime.identity", Kind::Identity),
    ];
    let cx = ClientContext {
        host: &ctx.host,
        layout: &ctx.layout,
        project: None,
    };
    let recorded = |id: &str| {
        ctx.state
            .as_ref()
            .ok()
            .and_then(Option::as_ref)
            .is_some_and(|s| s.clients.contains_key(id))
    };
    for client in scimcp_installer::clients::all() {
        if recorded(client.id()) || client.detect(cx) {
            checks.push(Check {
                id: format!("client.{}", client.id()),
                kind: Kind::Client(client),
            });
        }
    }
    checks.extend([
        fixed("server.handshake", Kind::Handshake),
        fixed("state.permissions", Kind::Permissions),
        fixed("state.disk", Kind::Disk),
        fixed("state.data_dirs", Kind::DataDirs),
        fixed("paths.encoding", Kind::Encoding),
    ]);
    checks
}

/// Run `checks` concurrently; results come back in the order of `checks`.
pub fn run(ctx: &Context, checks: &[Check]) -> Vec<CheckResult> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = checks
            .iter()
            .map(|check| scope.spawn(move || run_one(ctx, check)))
            .collect();
        handles
            .into_iter()
            .zip(checks)
            .map(|(h, check)| {
                h.join().unwrap_or_else(|_| {
                    CheckResult::fail(&check.id, "the check itself crashed (a doctor bug)")
                        .remedy("report this at https://github.com/scimcp/scimcp/issues")
                })
            })
            .collect()
    })
}

fn run_one(ctx: &Context, check: &Check) -> CheckResult {
    let start = Instant::now();
    let id = check.id.as_str();
    let slow_skipped = || {
        CheckResult::skipped(
            id,
            "skipped by --fast (it starts the runtime or the server)",
        )
    };
    let result = match &check.kind {
        Kind::Layout => layout::check(ctx, id),
        Kind::Interpreter => packages::interpreter(ctx, id),
        Kind::Packages => packages::pins(ctx, id),
        Kind::Import if ctx.options.fast => slow_skipped(),
        Kind::Import => import::check(ctx, id),
        Kind::Native => native::check(ctx, id),
        Kind::Identity => identity::check(ctx, id),
        Kind::Client(client) => clients::check(ctx, id, *client),
        Kind::Handshake if ctx.options.fast => slow_skipped(),
        Kind::Handshake => handshake::check(ctx, id),
        Kind::Permissions => storage::permissions(ctx, id),
        Kind::Disk => storage::disk(ctx, id),
        Kind::DataDirs => data_dirs::check(ctx, id),
        Kind::Encoding => storage::encoding(ctx, id),
    };
    result.timed(start.elapsed())
}
