//! `scimcp-release`: builds deterministic MCP bundles, signs release artifacts and verifies
//! their Sigstore bundles offline, and runs the release preflight a tag needs.
//!
//! The verifier ([`verify`]) is complete offline: it must never reach the network, never
//! trust material a bundle brings along (roots, TSA certificates), and never accept a bundle
//! without saying which checks passed; every refusal names the check that failed. Releases are
//! signed keylessly in CI ([`keyless`]: Fulcio and Rekor, the workflow's OIDC identity) and
//! verified against the signer [`ReleasePolicy`] (`release.toml`) pins for the tag; key-pair
//! signing ([`sign`]) serves air-gapped maintainers and tests. [`bundle`] builds the
//! deterministic MCP bundles and [`preflight`] runs every gate a tag needs.

pub mod bundle;
mod cli;
mod commands;
pub mod keyless;
pub mod preflight;
pub mod release_policy;
pub mod sign;
pub mod verify;

pub use release_policy::ReleasePolicy;

use std::process::ExitCode;

/// Entry point of the `scimcp-release` binary.
pub fn main() -> ExitCode {
    cli::run()
}
