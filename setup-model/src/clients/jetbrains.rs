//! JetBrains AI Assistant: configured only in the IDE (Settings › Tools › AI Assistant ›
//! Model Context Protocol), with no documented file, so scimcp prints what to paste.

use scimcp_core::install_state::ServerCommand;

use super::client::{Client, ClientContext, ConfigFile, RemoteEntry, command_args};
use crate::remote_server::RemoteServer;

pub struct JetBrains;

impl Client for JetBrains {
    fn id(&self) -> &'static str {
        "jetbrains"
    }
    fn name(&self) -> &'static str {
        "JetBrains AI Assistant"
    }
    fn file(&self, _cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        None
    }
    fn detect(&self, _cx: ClientContext<'_>) -> bool {
        false
    }
    fn manual_steps(&self, name: &str, server: &ServerCommand) -> Option<String> {
        let json = serde_json::json!({ "mcpServers": { name: command_args(server).to_json() } });
        Some(format!(
            "In the IDE open Settings > Tools > AI Assistant > Model Context Protocol (MCP), \
             click Add, choose \"As JSON\" and paste:\n{}",
            serde_json::to_string_pretty(&json).expect("JSON")
        ))
    }
    fn selected_by_default(&self) -> bool {
        false
    }

    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        let header = match remote.token_env {
            Some(_) => ", header Authorization: Bearer <your token>",
            None => "",
        };
        RemoteEntry::Manual(format!(
            "In the IDE open Settings > Tools > AI Assistant > Model Context Protocol (MCP), \
             click Add and add a Streamable HTTP server: URL {}{header}",
            remote.url
        ))
    }
}
