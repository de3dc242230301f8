//! `scimcp-release`: builds deterministic MCP bundles, signs release artifacts and verifies
//! their Sigstore bundles offline, and runs the release preflight a tag needs.
//!
//! The verifier ([`verify`]) is complete offline: it must never reach the network, never
//! trust material a bundle brings along (roots, TSA certificates), and never accept a bundle
//! without saying which checks passed; every refusal names the check that failed. Key-pair
//! signing ([`sign`]) serves air-gapped maintainers and tests. `bundle`, `preflight` and
//! keyless signing are not implemented yet and say so.

mod cli;
mod commands;
pub mod sign;
pub mod verify;

use std::process::ExitCode;

/// Entry point of the `scimcp-release` binary.
pub fn main() -> ExitCode {
    cli::run()
}
