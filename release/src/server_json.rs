//! `server.json`: the release's entry for the MCP Registry (the catalogue clients and
//! directories find servers in), written beside the bundles for each version.
//!
//! Format: the registry's `server.json` schema of 2025-12-11, vendored as
//! `release/schemas/server.schema.json` (byte for byte the published file; its README says
//! where from) and validated against it in `.ci/run` and in this file's tests. The entry
//! names:
//! - one MCPB package per target: the `.mcpb` the release attaches to its GitHub release
//!   (`identifier` is its download URL, `fileSha256` its SHA-256, which clients check before
//!   installing), launched over stdio, with the environment variables `scimcp serve` reads;
//! - one remote: a self-hosted `scimcp serve --transport http` (docs/REMOTE.md) at a URL the
//!   person gives, its bearer token a secret header.
//!
//! Publishing it is `mcp-publisher publish` (docs/RELEASING.md); the registry checks that the
//! name's namespace (`io.github.scimcp`) belongs to whoever publishes.

use serde_json::{Value, json};

/// The registry schema this file follows (its `$schema`; `mcp-publisher` refuses any other).
pub const SCHEMA_URL: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The server's name in the registry: reverse DNS of the GitHub organisation, one `/`.
pub const NAME: &str = "io.github.scimcp/scimcp";

/// At most 100 characters (the registry refuses longer).
pub const DESCRIPTION: &str =
    "Run scientific command-line programs from an AI client: validated, sandboxed, hashed results.";

/// The repository releases are published from.
const REPOSITORY: &str = "https://github.com/scimcp/scimcp";

/// One `.mcpb` of the release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpbAsset {
    /// The file name on the release (`scimcp-<version>-<target>.mcpb`).
    pub file: String,
    pub sha256: String,
}

/// The download URL of `file` on the GitHub release of `tag`.
pub fn asset_url(tag: &str, file: &str) -> String {
    format!("{REPOSITORY}/releases/download/{tag}/{file}")
}

/// What the MCPB package's server reads from its environment (`scimcp serve`'s flags).
fn environment() -> Value {
    json!([
        {
            "name": "SCIMCP_PYTHON",
            "description": "Python interpreter of the scientific runtime (scimcp-setup provisions one; without it the adapter's default is used)",
            "format": "filepath",
            "isRequired": false
        },
        {
            "name": "SCIMCP_SANDBOX",
            "description": "Kernel sandbox for each run's CLI: best-effort (default), required (refuse runs it cannot fully confine) or off",
            "choices": ["best-effort", "required", "off"],
            "default": "best-effort",
            "isRequired": false
        },
        {
            "name": "SCIMCP_HOME",
            "description": "Where scimcp keeps runs and installs (default: the platform data directory)",
            "format": "filepath",
            "isRequired": false
        },
        {
            "name": "SCIMCP_LOG",
            "description": "Log level on stderr (error, warn, info, debug)",
            "default": "info",
            "isRequired": false
        }
    ])
}

/// The `server.json` of `version`, released under `tag`, with its `.mcpb` files.
pub fn server_json(version: &str, tag: &str, mcpbs: &[McpbAsset]) -> Value {
    let packages: Vec<Value> = mcpbs
        .iter()
        .map(|m| {
            json!({
                "registryType": "mcpb",
                "identifier": asset_url(tag, &m.file),
                "version": version,
                "fileSha256": m.sha256,
                "transport": {"type": "stdio"},
                "environmentVariables": environment(),
            })
        })
        .collect();
    json!({
        "$schema": SCHEMA_URL,
        "name": NAME,
        "title": "scimcp",
        "description": DESCRIPTION,
        "version": version,
        "websiteUrl": REPOSITORY,
        "repository": {"url": REPOSITORY, "source": "github"},
        "packages": packages,
        "remotes": [{
            "type": "streamable-http",
            "url": "https://{host}/mcp",
            "variables": {
                "host": {
                    "description": "Host (and port) of your own `scimcp serve --transport http` (docs/REMOTE.md), e.g. lab-server.example.org:8443",
                    "isRequired": true
                }
            },
            "headers": [{
                "name": "Authorization",
                "description": "The bearer token `scimcp token add` printed for you",
                "value": "Bearer {token}",
                "isRequired": true,
                "isSecret": true,
                "variables": {
                    "token": {
                        "description": "Your scimcp access token",
                        "isRequired": true,
                        "isSecret": true
                    }
                }
            }]
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = include_str!("../schemas/server.schema.json");

    fn example() -> Value {
        server_json(
            "1.2.3",
            "v1.2.3",
            &[McpbAsset {
                file: "scimcp-1.2.3-x86_64-unknown-linux-gnu.mcpb".into(),
                sha256: "ab".repeat(32),
            }],
        )
    }

    fn validator() -> jsonschema::Validator {
        let schema: Value = serde_json::from_str(SCHEMA).unwrap();
        jsonschema::validator_for(&schema).unwrap()
    }

    #[test]
    fn the_vendored_schema_is_the_published_2025_12_11_file() {
        // The hash of https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json
        // (schemas/README.md): a changed copy is a different schema.
        assert_eq!(
            scimcp_core::hash::sha256_hex(SCHEMA.as_bytes()),
            "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
        );
        let schema: Value = serde_json::from_str(SCHEMA).unwrap();
        assert_eq!(schema["$id"], SCHEMA_URL);
    }

    #[test]
    fn the_entry_is_valid_against_the_registry_schema() {
        let entry = example();
        let errors: Vec<String> = validator()
            .iter_errors(&entry)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}\n{entry:#}");
        assert!(DESCRIPTION.chars().count() <= 100);
        let package = &entry["packages"][0];
        assert_eq!(
            package["identifier"],
            "https://github.com/scimcp/scimcp/releases/download/v1.2.3/scimcp-1.2.3-x86_64-unknown-linux-gnu.mcpb"
        );
        // The registry requires an MCPB URL to contain "mcp".
        assert!(package["identifier"].as_str().unwrap().contains("mcp"));
        assert_eq!(package["fileSha256"], "ab".repeat(32));
        let header = &entry["remotes"][0]["headers"][0];
        assert_eq!(header["name"], "Authorization");
        assert_eq!(header["isSecret"], true);
    }

    #[test]
    fn the_schema_check_catches_what_the_registry_refuses() {
        let v = validator();
        let mut long = example();
        long["description"] = json!("x".repeat(101));
        assert!(!v.is_valid(&long));
        let mut bad_hash = example();
        bad_hash["packages"][0]["fileSha256"] = json!("ABC");
        assert!(!v.is_valid(&bad_hash));
        let mut bad_name = example();
        bad_name["name"] = json!("scimcp");
        assert!(!v.is_valid(&bad_name));
    }
}
