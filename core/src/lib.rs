//! Contracts every scimcp part shares: the adapter manifest (parse, validate, canonical form
//! and hash), atomic file writes, streaming SHA-256, platform directories, the suite's
//! version identity, and how every binary fails ([`exit`] statuses, the [`failure`] printer).
//!
//! This crate must stay synchronous and free of MCP, networking and process spawning: the
//! installer, doctor, release tooling and server all link it, and none of them should pay for
//! what another one needs.

pub mod dirs;
pub mod exit;
pub mod failure;
pub mod fs;
pub mod hash;
pub mod history;
pub mod install_state;
pub mod limits;
pub mod lock;
pub mod manifest;
pub mod pins;
pub mod program_identity;
pub mod run_env;
pub mod runtime_probe;
pub mod version;

pub use limits::Limits;
pub use manifest::{
    Adapter, AdapterOrigin, ArtifactSpec, InputFileSpec, Manifest, ManifestError, ManifestErrors,
    OptionFormat, OptionSpec, Runtime, RuntimeKind, Template, TemplatePart, Workflow,
};
