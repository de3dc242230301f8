//! Amazon Q Developer CLI: the global `~/.aws/amazonq/mcp.json`, `mcpServers`. Newer builds
//! keep servers in agent files, and the default agent includes this file
//! (`useLegacyMcpJson`), so it is the one location every build reads.

use std::path::PathBuf;

use super::client::{
    Client, ClientContext, ConfigFile, RemoteEntry, seen, unless_token, url_headers,
};
use crate::entry::Entry;
use crate::remote_server::RemoteServer;

pub struct AmazonQ;

fn dir(cx: ClientContext<'_>) -> PathBuf {
    cx.host.home.join(".aws").join("amazonq")
}

impl Client for AmazonQ {
    fn id(&self) -> &'static str {
        "amazon-q"
    }
    fn name(&self) -> &'static str {
        "Amazon Q Developer CLI"
    }
    fn file(&self, cx: ClientContext<'_>, _name: &str) -> Option<ConfigFile> {
        Some(ConfigFile::mcp_servers(dir(cx).join("mcp.json")))
    }
    fn detect(&self, cx: ClientContext<'_>) -> bool {
        seen(cx, &[dir(cx)], &["q"])
    }

    /// `{"type": "http", "url"}`; the file has no documented interpolation, so with a token
    /// the entry is added by hand.
    fn remote_entry(&self, name: &str, remote: &RemoteServer) -> RemoteEntry {
        unless_token(self.name(), "mcpServers", name, remote, |r| {
            url_headers(vec![("type", Entry::str("http"))], "url", r, |v| v.into())
        })
    }
}
