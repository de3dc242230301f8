//! An MCP client session with a `scimcp serve` child process over stdio: the same path
//! Claude Desktop, Cursor or any other client takes.
//!
//! The server is a [`scimcp_process::Child`], as every child the suite starts: its own
//! process group, piped streams, its group ended when the session is dropped without
//! [`McpSession::close`], and [`TERMINATE_GRACE`] between SIGTERM and SIGKILL when a closed
//! server does not exit on end of input. rmcp gets only the (stdout, stdin) pair.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use scimcp_process::{Child, ChildCommand, TERMINATE_GRACE};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::ClientError;

/// What a tool call answered.
#[derive(Debug, Clone)]
pub struct ToolOutcome {
    /// `isError` of the result.
    pub is_error: bool,
    /// The structured content (`null` when there was none).
    pub structured: Value,
    /// All text content blocks joined by newlines.
    pub text: String,
    /// Bytes of the whole result as it crossed the wire (JSON).
    pub wire_bytes: usize,
}

impl ToolOutcome {
    /// The structured content of a successful call, or an error that shows the envelope.
    pub fn ok(self) -> Result<Value, ClientError> {
        if self.is_error {
            return Err(ClientError::ToolFailed(self.text));
        }
        Ok(self.structured)
    }

    /// The error envelope of a failed call, or an error when the call succeeded.
    pub fn err(self) -> Result<Value, ClientError> {
        if !self.is_error {
            return Err(ClientError::ToolSucceeded(self.text));
        }
        Ok(self.structured["error"].clone())
    }
}

/// How long a closed server gets to exit on end of input before it is terminated: the MCP
/// stdio shutdown's first wait (rmcp's child transport waits as long).
const EXIT_ON_EOF: Duration = Duration::from_secs(3);

/// A live MCP session with a server child process.
pub struct McpSession {
    service: RunningService<RoleClient, ()>,
    // Held for the session's life: dropping it ends the server's group.
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    pid: Option<u32>,
}

impl std::fmt::Debug for McpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSession")
            .field("pid", &self.pid)
            .finish()
    }
}

impl McpSession {
    /// Start `program args…` in `cwd` with extra environment `envs`, and complete the MCP
    /// initialize handshake. The server's stderr is collected for [`McpSession::stderr`].
    pub async fn spawn(
        program: &Path,
        args: &[String],
        envs: &[(String, String)],
        cwd: &Path,
    ) -> Result<McpSession, ClientError> {
        let mut cmd = std::process::Command::new(program);
        cmd.args(args).current_dir(cwd);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child =
            ChildCommand::new(cmd)
                .piped()
                .spawn()
                .map_err(|source| ClientError::Spawn {
                    program: program.display().to_string(),
                    source,
                })?;
        let pid = Some(child.pid());
        let (Some(stdout), Some(stdin)) = (child.take_stdout(), child.take_stdin()) else {
            return Err(ClientError::Spawn {
                program: program.display().to_string(),
                source: std::io::Error::other(
                    "the server was started without piped stdin and stdout",
                ),
            });
        };
        let buffer = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut stderr) = child.take_stderr() {
            let sink = Arc::clone(&buffer);
            tokio::spawn(async move {
                let mut chunk = vec![0u8; 8192];
                while let Ok(n) = stderr.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    sink.lock()
                        .expect("stderr lock")
                        .extend_from_slice(&chunk[..n]);
                }
            });
        }
        let service =
            ().serve((stdout, stdin))
                .await
                .map_err(|e| ClientError::Initialize(Box::new(e)))?;
        Ok(McpSession {
            service,
            child,
            stderr: buffer,
            pid,
        })
    }

    /// The server process id.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().expect("stderr lock")).into_owned()
    }

    /// The server's name and version from the handshake.
    pub fn server_info(&self) -> Option<(String, String)> {
        let info = self.service.peer_info()?;
        let server = info.server_info.as_ref()?;
        Some((server.name.clone(), server.version.clone()))
    }

    /// `tools/list`, every page.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.service
            .list_all_tools()
            .await
            .map_err(|e| ClientError::ListTools(Box::new(e)))
    }

    /// `tools/call` with a JSON object of arguments.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<ToolOutcome, ClientError> {
        let Value::Object(args) = arguments else {
            return Err(ClientError::Arguments);
        };
        let result = self
            .service
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
            .await
            .map_err(|e| ClientError::Call {
                tool: tool.to_string(),
                source: Box::new(e),
            })?;
        let wire_bytes = serde_json::to_vec(&result).map(|b| b.len()).unwrap_or(0);
        let text = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(ToolOutcome {
            is_error: result.is_error.unwrap_or(false),
            structured: result.structured_content.unwrap_or(Value::Null),
            text,
            wire_bytes,
        })
    }

    /// Close the session: end the server's input and wait for it to exit, as the MCP stdio
    /// shutdown does; a server still running after [`EXIT_ON_EOF`] is terminated (its group,
    /// [`TERMINATE_GRACE`]).
    pub async fn close(self) -> Result<(), ClientError> {
        let McpSession {
            service, mut child, ..
        } = self;
        // Cancelling drops the transport, which closes the server's stdin.
        let closed = service.cancel().await.map_err(ClientError::Close);
        // A wait that fails (the status unreadable) is ended the same way as a slow exit:
        // the server must not outlive its session.
        match tokio::time::timeout(EXIT_ON_EOF, child.wait()).await {
            // What the server left in its group (nothing, normally) goes with it.
            Ok(Ok(_)) => child.end_group(),
            Ok(Err(_)) | Err(_) => {
                child.terminate(TERMINATE_GRACE).await;
            }
        }
        closed?;
        Ok(())
    }
}
