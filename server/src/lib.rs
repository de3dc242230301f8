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

pub mod auth;
pub mod campaigns;
mod cli;
mod commands;
mod context;
pub mod datasets;
pub mod envelope;
mod grants;
pub mod guard;
pub mod http;
pub mod inputs;
pub mod paging;
pub mod plan;
mod plan_argv;
mod plan_compile;
mod plan_error;
mod plan_steps;
pub mod programs;
pub mod request;
pub mod resources;
pub mod runs;
pub mod runtime;
mod server;
mod shutdown;
mod stdio;
pub mod tools;
mod validate;
mod workflow_reads;

use std::process::ExitCode;

pub use server::{ConfirmMode, ScimcpServer, ServerContext, ServerSettings};

/// Entry point of the `scimcp` binary.
pub fn main() -> ExitCode {
    commands::run()
}
