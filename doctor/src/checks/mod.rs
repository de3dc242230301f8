//! The checks, one module per area, and running them concurrently.
//!
//! Every check only reads (the two exceptions create and remove a probe file under the data
//! root, which is what they measure). Independent checks run on their own threads; the
//! shared probe and manifest in [`Context`] are computed once, by whichever check asks first.

mod clients;
mod cluster;
mod data_dirs;
mod handshake;
mod history;
mod identity;
mod import;
mod layout;
mod native;
mod packages;
mod programs;
mod remote;
mod sandbox;
mod storage;

use std::time::Instant;

use scimcp_setup_model::clients::{Client, ClientContext};

use crate::check::CheckResult;
use crate::context::Context;

pub use history::FREE_WARN_PERCENT;
pub use storage::{DISK_FAIL_BYTES, DISK_WARN_BYTES};

/// One check to run.
#[derive(Debug, Clone)]
pub struct Check {
    pub id: String,
    /// The adapter it is about (`None` for the installation-wide checks).
    pub adapter: Option<String>,
    /// The remote server it is about (its name, or its URL when it is not registered).
    pub remote: Option<String>,
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
    Programs,
    Sandbox,
    Client(&'static dyn Client),
    Handshake,
    Cluster,
    /// A remote server's entry in a client, by the server's index in [`Context::remotes`].
    RemoteClient(&'static dyn Client, usize),
    /// The handshake with a remote server, by its index in [`Context::remotes`].
    RemoteHandshake(usize),
    Permissions,
    Disk,
    History,
    DataDirs,
    Encoding,
}

/// Every check for this installation, in report order: the layout; for each adapter its
/// runtime, one check per client that is detected on this computer or recorded for the
/// adapter in the receipt, and its server's handshake; the Slurm cluster when a Slurm
/// configuration is given; for each remote server its entry in every client it is
/// registered in and the handshake over HTTP; then the data directory. With `--remote`, only
/// that remote server's checks.
pub fn plan(ctx: &Context) -> Vec<Check> {
    let fixed = |id: &str, kind| Check {
        id: id.to_string(),
        adapter: None,
        remote: None,
        kind,
    };
    let mut remotes = Vec::new();
    for (i, target) in ctx.remotes.iter().enumerate() {
        let of = |id: &str, kind| Check {
            id: id.to_string(),
            adapter: None,
            remote: Some(target.label()),
            kind,
        };
        for client in scimcp_setup_model::clients::all() {
            if target.clients.iter().any(|c| c == client.id()) {
                remotes.push(of(
                    &format!("client.{}", client.id()),
                    Kind::RemoteClient(client, i),
                ));
            }
        }
        remotes.push(of("server.handshake", Kind::RemoteHandshake(i)));
    }
    if ctx.options.remote.is_some() {
        return remotes;
    }
    let mut checks = vec![fixed("install.layout", Kind::Layout)];
    let cx = ClientContext {
        host: &ctx.host,
        layout: &ctx.layout,
        project: None,
    };
    for adapter in ctx.adapter_names() {
        let of = |id: &str, kind| Check {
            id: id.to_string(),
            adapter: Some(adapter.clone()),
            remote: None,
            kind,
        };
        checks.extend([
            of("runtime.interpreter", Kind::Interpreter),
            of("runtime.packages", Kind::Packages),
            of("runtime.import", Kind::Import),
            of("runtime.native", Kind::Native),
            of("runtime.identity", Kind::Identity),
        ]);
        // Only for adapters that declare programs, so other reports keep their checks.
        if ctx.manifest(&adapter).is_ok_and(programs::applies) {
            checks.push(of("runtime.programs", Kind::Programs));
        }
        checks.push(of("runtime.sandbox", Kind::Sandbox));
        let recorded = |id: &str| {
            ctx.record(&adapter)
                .is_some_and(|a| a.clients.contains_key(id))
        };
        for client in scimcp_setup_model::clients::all() {
            if recorded(client.id()) || client.detect(cx) {
                checks.push(of(&format!("client.{}", client.id()), Kind::Client(client)));
            }
        }
        checks.push(of("server.handshake", Kind::Handshake));
    }
    // Only when the doctor is told the server runs on Slurm (see `cluster`).
    if ctx.options.slurm_config.is_some() {
        checks.push(cluster_check());
    }
    checks.extend(remotes);
    checks.extend([
        fixed("state.permissions", Kind::Permissions),
        fixed("state.disk", Kind::Disk),
        fixed("state.history", Kind::History),
        fixed("state.data_dirs", Kind::DataDirs),
        fixed("paths.encoding", Kind::Encoding),
    ]);
    checks
}

/// The id of the Slurm cluster's check.
pub const CLUSTER: &str = "cluster.slurm";

/// The Slurm cluster's check: planned with `--slurm-config`, and also when asked for by
/// name without it, so `--check cluster.slurm` says which flag it needs instead of claiming
/// there is no such check.
pub fn cluster_check() -> Check {
    Check {
        id: CLUSTER.to_string(),
        adapter: None,
        remote: None,
        kind: Kind::Cluster,
    }
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
                        .about(check.adapter.as_deref())
                        .about_remote(check.remote.as_deref())
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
    let adapter = check.adapter.as_deref().unwrap_or_default();
    let result = match &check.kind {
        Kind::Layout => layout::check(ctx, id),
        Kind::Interpreter => packages::interpreter(ctx, id, adapter),
        Kind::Packages => packages::pins(ctx, id, adapter),
        Kind::Import if ctx.options.fast => slow_skipped(),
        Kind::Import => import::check(ctx, id, adapter),
        Kind::Native => native::check(ctx, id, adapter),
        Kind::Identity => identity::check(ctx, id, adapter),
        Kind::Programs => programs::check(ctx, id, adapter),
        Kind::Sandbox => sandbox::check(ctx, id, adapter),
        Kind::Client(client) => clients::check(ctx, id, adapter, *client),
        Kind::Handshake if ctx.options.fast => slow_skipped(),
        Kind::Handshake => handshake::check(ctx, id, adapter),
        Kind::Cluster => cluster::check(ctx, id),
        Kind::RemoteClient(client, i) => remote::client(ctx, id, &ctx.remotes[*i], *client),
        Kind::RemoteHandshake(_) if ctx.options.fast => slow_skipped(),
        Kind::RemoteHandshake(i) => remote::handshake(ctx, id, &ctx.remotes[*i]),
        Kind::Permissions => storage::permissions(ctx, id),
        Kind::Disk => storage::disk(ctx, id),
        Kind::History => history::check(ctx, id),
        Kind::DataDirs => data_dirs::check(ctx, id),
        Kind::Encoding => storage::encoding(ctx, id),
    };
    result
        .about(check.adapter.as_deref())
        .about_remote(check.remote.as_deref())
        .timed(start.elapsed())
}
