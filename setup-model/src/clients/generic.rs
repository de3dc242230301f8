//! The generic fallback: `<data root>/clients/mcp.json` in the Claude Desktop shape, for
//! any other MCP client (point it at this file, or copy the entry from it). Always selected.

use super::client::{Client, ClientContext, ConfigFile, RemoteEntry, dollar_brace, url_headers};
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct Generic;

impl Client for Generic {
    fn id(&self) -> &'static str {
        "generic"
    }
    fn name(&self) -> &'static str {
        "Other clients (mcp.json)"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(
            cx.layout.clients_dir().join("mcp.json"),
        ))
    }
    fn detect(&self, _cx: ClientContext<'_>) -> bool {
        true
    }

    /// The Claude Code shape (`type: http`, `${VAR}` in the header): a template to copy into
    /// any other client, with the token's variable where the token goes.
    fn remote_entry(&self, _name: &str, remote: &RemoteServer) -> RemoteEntry {
        RemoteEntry::entry(url_headers(
            vec![("type", Entry::str("http"))],
            "url",
            remote,
            dollar_brace,
        ))
    }
}
