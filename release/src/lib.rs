//! `scimcp-release`: builds deterministic MCP bundles, signs release artifacts and verifies
//! their Sigstore bundles offline, and runs the release preflight a tag needs.
//!
//! The offline verifier, the trusted root and the release policy live in `scimcp-verify`
//! (re-exported here as [`verify`] and [`release_policy`]), so the installer can link them
//! without the bundler, the signer or the preflight. Releases are
//! signed keylessly in CI ([`keyless`]: Fulcio and Rekor, the workflow's OIDC identity) and
//! verified against the signer [`ReleasePolicy`] (`release.toml`) pins for the tag; key-pair
//! signing ([`sign`]) serves air-gapped maintainers and tests. [`bundle`] builds the
//! deterministic MCP bundles and [`preflight`] runs every gate a tag needs.
//!
//! It must not link the server or the installer: it drives the suite only through its
//! binaries, and every program it runs (git, cargo, npx, those binaries) goes through
//! `scimcp-process` with the time limit of its kind (`child.rs`). Its library returns typed
//! errors; only the binary's edge (`commands/`) turns them into an exit status and a hint.

pub mod bundle;
mod child;
mod cli;
mod commands;
pub mod keyless;
pub mod preflight;
pub mod server_json;
pub mod sign;

/// The verifier lives in its own crate so the installer links it without the rest of this one.
pub use scimcp_verify as verify;
pub use scimcp_verify::ReleasePolicy;
pub use scimcp_verify::release_policy;

use std::process::ExitCode;

/// Entry point of the `scimcp-release` binary.
pub fn main() -> ExitCode {
    commands::main()
}
