//! The MCP clients scimcp registers with: one module per client, all behind [`Client`].
//!
//! A client says where its configuration lives on a given [`Host`](crate::host::Host)
//! (paths for Linux, macOS and Windows, from notes/clients.md), what the scimcp entry looks
//! like in its dialect — for a local adapter's command, and for a remote server over
//! Streamable HTTP — and whether it looks installed. The registrar does the editing; clients
//! never touch files themselves. The trait and the helpers the clients share live in
//! client.rs, below them; this file lists the clients and re-exports the rest.
//!
//! A remote entry carries the bearer token only as a reference the client resolves when it
//! connects (an environment variable, or VS Code's password prompt). A client with no
//! documented way to do that gets no entry with a token: [`RemoteEntry::Manual`] says what
//! to add by hand, because scimcp-setup never writes a secret into a file.

mod amazon_q;
mod claude_cli;
mod claude_code;
mod claude_desktop;
mod client;
mod cline;
mod codex;
mod continue_dev;
mod copilot;
mod cursor;
mod gemini;
mod generic;
mod goose;
mod jetbrains;
mod kiro;
mod lm_studio;
mod opencode;
mod qwen;
mod roo_code;
mod vscode;
mod windsurf;
mod zed;

pub use claude_cli::{ClaudeCli, CliError};
pub use client::{
    Client, ClientContext, ConfigFile, ListItem, RemoteEntry, TOOL_TIMEOUT_MS, TOOL_TIMEOUT_S,
    command_args, dollar_brace, env_colon, path_text, recorded_project, timed_args, typed_stdio,
    unless_token, url_headers, with,
};

/// Every client, in the order `clients` lists them.
pub fn all() -> Vec<&'static dyn Client> {
    vec![
        &claude_desktop::ClaudeDesktop,
        &claude_code::ClaudeCode,
        &claude_code::ClaudeCodeProject,
        &cursor::Cursor,
        &cursor::CursorProject,
        &vscode::VsCode,
        &vscode::VsCodeWorkspace,
        &windsurf::Windsurf,
        &zed::Zed,
        &codex::Codex,
        &gemini::Gemini,
        &qwen::Qwen,
        &copilot::Copilot,
        &cline::Cline,
        &roo_code::RooCode,
        &continue_dev::Continue,
        &goose::Goose,
        &lm_studio::LmStudio,
        &kiro::Kiro,
        &opencode::OpenCode,
        &amazon_q::AmazonQ,
        &jetbrains::JetBrains,
        &generic::Generic,
    ]
}

/// The client with this id.
pub fn by_id(id: &str) -> Option<&'static dyn Client> {
    all().into_iter().find(|c| c.id() == id)
}
