//! The scimcp MCP runtime: serves one adapter's workflows to MCP clients over stdio or
//! Streamable HTTP (on a loopback address, or on a network with bearer tokens, TLS and
//! plan-then-confirm).
//!
//! A request is validated strictly against the adapter manifest before any process exists,
//! compiled into a deterministic plan with a hash, and run as an isolated child process (own
//! process group, cleared environment plus an allowlist, its own working directory, bounded
//! logs). Each run has a durable directory under the data root; its result is published once.
//!
//! This crate must never write anything but MCP frames to stdout, never import or link the
//! science (the scientific CLI always runs in a child process), and never start a shell.

// A ToolError is the payload of a failed tool call, built at most once per call; boxing it
// would only add an allocation to every error path.
#![allow(clippy::result_large_err)]

mod adapter_source;
mod auth;
mod campaigns;
mod cli;
mod commands;
mod context;
mod datasets;
mod envelope;
mod grants;
mod guard;
mod http;
mod inputs;
mod paging;
mod plan;
mod plan_argv;
mod plan_compile;
mod plan_engine;
mod plan_error;
mod plan_steps;
mod programs;
mod request;
mod resources;
mod result_images;
mod runs;
mod runtime;
mod sandbox_policy;
mod server;
mod shutdown;
mod stdio;
mod tasks;
mod tools;
mod ui;
mod validate;
mod workflow_reads;

use std::process::ExitCode;

// The crate's whole public surface. Every module is private, so nothing outside is reachable
// except what is named here, each with the outside user it is for; a new user adds a line.
/// The server's start-up: `scimcp-bench` times settings resolution and the context's open
/// in-process.
pub use context::{ServerContext, ServerSettings};
/// A dataset resolved to a file under a data root: `scimcp-bench` times its copy and re-hash.
pub use datasets::{DatasetSource, ResolvedDataset};
/// The run guard's command line: `scimcp-bench` times `scimcp __guard` around a trivial CLI.
pub use guard::wrap as guard_wrap;
/// Artifact indexing at a run's end: `scimcp-bench` times it on a finished run's output.
pub use runs::artifacts::collect as collect_artifacts;
/// The command an executor starts a plan's program with (own process group, cleared
/// environment): `scimcp-bench` runs a plan directly the same way, to compare.
pub use runs::child::isolated_std_command;
/// A run's id check and its `status.json`: `scimcp-bench` watches a runs directory with them.
pub use runs::{is_run_id, state::RunStatus};
/// The tool names in catalog order: the e2e tests compare `tools/list` with them.
pub use tools::TOOL_NAMES;
/// The `tools/list` catalog: `scimcp-bench` measures its size and build time.
pub use tools::catalog as tool_catalog;

/// Entry point of the `scimcp` binary.
pub fn main() -> ExitCode {
    commands::run()
}
