//! `manifest.json`: the MCP Bundle manifest, so Claude Desktop and the `mcpb` tool accept
//! the bundle. Manifest version 0.3 (the current documented one); strict keys only, since
//! `mcpb validate` rejects anything unknown. It sits at the top of the bundle's one folder:
//! `mcpb pack` of the unpacked folder makes the `.mcpb` Claude Desktop installs (the release
//! zip, whose entries are under that folder, is not itself an `.mcpb`).

use serde_json::{Value, json};

/// The MCPB manifest version written.
pub const MANIFEST_VERSION: &str = "0.3";

/// MCPB's platform name for a Rust target triple.
pub fn platform_of(target: &str) -> Option<&'static str> {
    if target.contains("linux") {
        Some("linux")
    } else if target.contains("apple-darwin") {
        Some("darwin")
    } else if target.contains("windows") {
        Some("win32")
    } else {
        None
    }
}

/// The manifest for one target: `server.type = "binary"`, the entry point under `bin/`,
/// `mcp_config` launching it with `${__dirname}`, and the server's real tools.
pub fn manifest(version: &str, target: &str, adapter: &str, tools: &[(String, String)]) -> Value {
    let exe = if target.contains("windows") {
        "scimcp.exe"
    } else {
        "scimcp"
    };
    let platform = platform_of(target).unwrap_or("linux");
    json!({
        "manifest_version": MANIFEST_VERSION,
        "name": format!("scimcp-{adapter}"),
        "display_name": format!("scimcp ({adapter})"),
        "version": version,
        "description": "Run a scientific command-line program from your AI client: validated requests, isolated runs, hashed results.",
        "long_description": "scimcp serves a scientific CLI over MCP. Every request is validated against the adapter manifest before any process starts; each analysis runs isolated in its own directory and returns bounded, structured results with the SHA-256 of every artifact. Set the Python interpreter of the scientific runtime below, or install with scimcp-setup, which provisions it.",
        "author": { "name": "scimcp developers", "url": "https://github.com/scimcp/scimcp" },
        "repository": { "type": "git", "url": "https://github.com/scimcp/scimcp" },
        "homepage": "https://github.com/scimcp/scimcp",
        "license": "MIT",
        "keywords": ["science", "scikit-learn", "analysis", "mcp"],
        "server": {
            "type": "binary",
            "entry_point": format!("bin/{exe}"),
            "mcp_config": {
                "command": format!("${{__dirname}}/bin/{exe}"),
                "args": ["serve", "--adapter", adapter],
                "env": { "SCIMCP_PYTHON": "${user_config.python}" }
            }
        },
        "tools": tools.iter().map(|(name, description)| json!({"name": name, "description": description})).collect::<Vec<_>>(),
        "compatibility": { "platforms": [platform] },
        "user_config": {
            "python": {
                "type": "file",
                "title": "Python interpreter",
                "description": "Interpreter of the scientific runtime (with the adapter's package and pinned requirements installed). Leave empty when scimcp-setup provisioned the runtime.",
                "required": false
            }
        }
    })
}
