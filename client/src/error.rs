//! What can go wrong talking to a server over stdio. rmcp's errors are boxed: they are
//! large, and every call's `Result` would carry their size.

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
    Initialize(#[source] Box<rmcp::service::ClientInitializeError>),
    #[error("tools/list failed: {0}")]
    ListTools(#[source] Box<rmcp::ServiceError>),
    #[error("tool arguments must be a JSON object")]
    Arguments,
    #[error("calling {tool} failed at the protocol level: {source}")]
    Call {
        tool: String,
        #[source]
        source: Box<rmcp::ServiceError>,
    },
    #[error("tool returned an error: {0}")]
    ToolFailed(String),
    #[error("tool succeeded where an error was expected: {0}")]
    ToolSucceeded(String),
    #[error("closing the MCP session: {0}")]
    Close(#[source] tokio::task::JoinError),
}
