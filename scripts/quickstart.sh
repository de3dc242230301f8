#!/usr/bin/env bash
# The main job on a fresh clone: build scimcp, provision the refsci runtime, start the MCP
# server on the embedded refsci adapter, run one regression through MCP, and print where
# the results and their hashes are. State goes to .scimcp-demo/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/dev-env.sh
cargo build --quiet --workspace --bins
exec target/debug/scimcp-demo
