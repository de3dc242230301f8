//! `scimcp-cwl`: the CWL v1.2 front end. A `CommandLineTool` document (YAML or JSON; v1.0 and
//! v1.1 documents and `$graph` files too) becomes an [`scimcp_core::manifest::Adapter`] with a
//! command engine ([`engine`]): the generated manifest (loaded through core's own checks) says
//! what the server offers, and for each request the engine fills the job by CWL's rules
//! ([`inputs`]), builds the exact command line ([`command`], with [`expr`] for parameter
//! references and JavaScript), and after the run reads the output object ([`collect`]).
//! [`runner`] is what `scimcp cwl-run` needs around it (a job as a request, the output object
//! copied into an output directory).
//!
//! It must not start a process, talk MCP, or read a job's file the server will not confine
//! and stage; nor accept what it cannot serve faithfully: a CWL field it does not support is
//! refused with the field and its line ([`CwlError::Unsupported`]), never dropped. Hints it
//! ignores (e.g. `DockerRequirement` under `hints`) become warnings the adapter carries, so
//! `scimcp adapter check` shows them.

pub mod collect;
pub mod command;
mod doc;
pub mod engine;
mod engine_manifest;
mod error;
pub mod expr;
pub mod inputs;
pub mod job;
pub mod job_requirements;
pub mod norm;
pub mod output_json;
mod program;
pub mod runner;
mod values;

pub use engine::EngineOptions;
pub use error::CwlError;

/// The exit status a `cwl-runner` uses for "this tool needs a feature the runner lacks"
/// (cwltest counts it as unsupported, not failed, for tests that are not `required`).
pub const UNSUPPORTED_FEATURE_EXIT: u8 = 33;

/// True when `path` names a CWL document by its extension (what `serve --adapter` and
/// `adapter check` dispatch on).
pub fn is_cwl_path(path: &str) -> bool {
    path.ends_with(".cwl")
}
