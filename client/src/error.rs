//! What can go wrong talking to a server over stdio.

/// A stdio session's failure, naming the step.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("MCP initialize failed: {0}")]
    Initialize(String),
    #[error("tools/list failed: {0}")]
    ListTools(String),
    #[error("tool arguments must be a JSON object")]
    Arguments,
    #[error("calling {tool} failed at the protocol level: {message}")]
    Call { tool: String, message: String },
    #[error("tool returned an error: {0}")]
    ToolFailed(String),
    #[error("tool succeeded where an error was expected: {0}")]
    ToolSucceeded(String),
    #[error("closing the MCP session: {0}")]
    Close(String),
}
