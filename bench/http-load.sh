#!/usr/bin/env bash
# Load test of the HTTP transport, loopback only: N concurrent MCP clients (default 50), each
# running one short refsci analysis to the end through `scimcp serve --transport http`.
# Asserts that every run succeeds, none is lost and the server's peak RSS stays bounded;
# prints per-call latencies and writes the figures to target/http-load.json
# (docs/BENCHMARKS.md, "HTTP transport under load").
#
#   bench/http-load.sh            # 50 clients
#   bench/http-load.sh 100        # another number of clients
set -euo pipefail
cd "$(dirname "$0")/.."
clients="${1:-50}"
scripts/dev-env.sh
cargo build --workspace --bins
SCIMCP_LOAD_CLIENTS="$clients" cargo nextest run -p scimcp-e2e --test http_load \
  --run-ignored ignored-only --no-capture
echo "figures: target/http-load.json" >&2
