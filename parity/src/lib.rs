//! `scimcp-parity`: proves that an analysis run through the MCP server gives the same
//! artifacts as the same analysis typed directly at the scientific CLI, and gates every tag
//! on it.
//!
//! For each scenario (`parity/scenarios/*.toml`, see [`scenario`](crate::scenario)) the gate
//! runs the literal command line a scientist would type, then the same analysis through the
//! real `scimcp` binary as an MCP client over stdio ([`scimcp_client::McpSession`]). Two
//! comparisons follow, kept apart: the two paths of this run must agree byte for byte
//! (state, exit code, every artifact's SHA-256, the metrics); and this run must still give
//! the evidence recorded in the insta snapshot in `parity/snapshots/` — which may have been
//! taken on another CPU, so floats there compare within the scenario's tolerance and
//! everything else exactly. It also refuses when a workflow of any adapter in `adapters/`
//! has no scenario: a capability without parity evidence is not done.
//!
//! This crate never calls the server's planner: the direct side of each scenario is
//! written out literally, so a planner bug cannot hide by producing the same wrong command
//! on both sides.
//!
//! Test hook: when `SCIMCP_PARITY_PERTURB=<scenario>` is set, the gate flips one byte of
//! the direct side's first artifact of that scenario before comparing, so tests can prove
//! that one changed byte fails the gate. It is for tests only and announces itself in the
//! output.

mod cli;
mod compare;
mod content;
mod diff;
mod direct;
mod error;
mod evidence;
mod gate;
mod machine;
mod mcp;
mod process;
mod report;
mod scenario;
mod snapshot;
mod tolerance;

pub use cli::PERTURB_ENV;
pub use error::Error;
pub use report::REPORT_SCHEMA_VERSION;

use std::process::ExitCode;

/// Entry point of the `scimcp-parity` binary: 0 passed, 1 the gate refused or could not run
/// (missing scenarios, a failed runtime probe…), 2 bad arguments ([`scimcp_core::exit`]). `--json FILE` writes the report to a file, so a
/// failure is always printed as text on stderr.
pub fn main() -> ExitCode {
    use scimcp_core::{exit, failure::Failure};
    let (mode, args) = cli::parse();
    let outcome = cli::Settings::resolve(mode, args).and_then(|settings| gate::run(&settings));
    match outcome {
        Ok(passed) => exit::code(exit::verdict(passed)),
        Err(e) => {
            Failure::with_hint_of(&e).print(false);
            exit::code(exit::FAILURE)
        }
    }
}
