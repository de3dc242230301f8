//! `scimcp-client`: the MCP client the suite's own tools speak to a scimcp server with — the
//! parity gate and the doctor's handshake drive `scimcp serve` as a child over stdio
//! ([`McpSession`]), and the doctor checks a lab's shared server over Streamable HTTP
//! ([`http::Session`]).
//!
//! It is a client only: it never serves, never reads the suite's state and never decides what
//! an answer means (a check or a gate does that with what it returns).

mod error;
pub mod http;
mod stdio;

pub use error::ClientError;
pub use stdio::{McpSession, ToolOutcome};
