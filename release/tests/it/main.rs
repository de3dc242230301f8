//! The release tool's integration tests, one binary: bundles, the CLI, Sigstore conformance
//! and tampering, keyless signing against a fake Sigstore, and the preflight.
//!
//! Each module was once its own test binary; one binary links once, and nextest still runs
//! every test in its own process (filter a group with `-E 'test(/^module::/)'`).

mod support;

mod bundle;
mod cli;
mod conformance;
mod keyless;
mod preflight;
mod server_json;
mod tamper;
