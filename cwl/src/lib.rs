//! `scimcp-cwl`: the CWL v1.2 front end. A `CommandLineTool` document (YAML or JSON; v1.0 and
//! v1.1 documents too) becomes the same in-memory [`scimcp_core::manifest::Adapter`] a TOML
//! manifest gives — generated as manifest TOML plus a parameter schema and loaded through
//! core's own checks — so its runs are planned, validated, hashed and started without a shell
//! like every other adapter's. It also turns a CWL job object into the MCP request for that
//! adapter ([`job`]) and a finished run's artifacts into the CWL output object ([`outputs`]),
//! which `scimcp cwl-run` needs.
//!
//! It must not run anything, talk MCP, or accept what it cannot map faithfully: a CWL field it
//! does not support is refused with the field and its line ([`CwlError::Unsupported`]), never
//! dropped. Hints it ignores (e.g. `DockerRequirement` under `hints`) become warnings the
//! adapter carries, so `scimcp adapter check` shows them.

pub mod collect;
pub mod command;
pub mod expr;
mod doc;
pub mod engine;
mod engine_manifest;
mod error;
pub mod inputs;
pub mod job;
pub mod norm;
pub mod outputs;
mod refs;
pub mod runner;
mod tool;
mod types;
mod values;

pub use engine::EngineOptions;
pub use error::CwlError;
pub use tool::{CwlTool, InputBinding, InputMapping, LoadOptions, OutputMapping, load};
pub use types::CwlType;

/// The exit status a `cwl-runner` uses for "this tool needs a feature the runner lacks"
/// (cwltest counts it as unsupported, not failed, for tests that are not `required`).
pub const UNSUPPORTED_FEATURE_EXIT: u8 = 33;

/// True when `path` names a CWL document by its extension (what `serve --adapter` and
/// `adapter check` dispatch on).
pub fn is_cwl_path(path: &str) -> bool {
    path.ends_with(".cwl")
}
