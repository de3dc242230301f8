#!/usr/bin/env bash
# The official MCP SDKs for the end-to-end tests that use them as the client:
# - Python (tests/tests/it/tasks.rs driving tests/sdk/driver.py): a venv at target/sdk-venv
#   with tests/sdk/requirements.txt (mcp 2.3.0 and everything it pulls in, pinned) installed;
# - TypeScript (tests/tests/it/tasks_2025.rs driving tests/sdk-ts/driver.mjs):
#   target/sdk-ts/node_modules from tests/sdk-ts/package-lock.json (@modelcontextprotocol/sdk
#   1.32.2 and its dependencies, pinned) by `npm ci`.
# Idempotent: a venv whose installed set matches the pins, and node_modules installed from
# the same lock, are left alone.
#
#   sdk-harness.sh            create or update target/sdk-venv and target/sdk-ts
#   sdk-harness.sh --check    install nothing; exit 1 when an SDK is missing
set -euo pipefail
cd "$(dirname "$0")/.."

prog=sdk-harness
die() { echo "$prog: error: $*" >&2; exit 1; }
venv=target/sdk-venv
req=tests/sdk/requirements.txt

ts=target/sdk-ts
ts_lock=tests/sdk-ts/package-lock.json
ts_sdk=$ts/node_modules/@modelcontextprotocol/sdk/package.json

if [ "${1:-}" = --check ]; then
  "$venv/bin/python" -c 'import mcp' 2>/dev/null || die "no MCP SDK in $venv: run scripts/sdk-harness.sh"
  [ -f "$ts_sdk" ] || die "no MCP TypeScript SDK in $ts: run scripts/sdk-harness.sh"
  exit 0
fi
[ -z "${1:-}" ] || die "unknown argument $1 (use --check or nothing)"

python=${SCIMCP_SDK_BASE_PYTHON:-python3}
command -v "$python" >/dev/null || die "no $python on PATH (the SDK needs Python 3.10 or newer; set SCIMCP_SDK_BASE_PYTHON)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
  || die "$python is older than 3.10, which mcp 2.3.0 needs (set SCIMCP_SDK_BASE_PYTHON)"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
wanted=$(grep -v '^#' "$req" | sort)
have=$("$venv/bin/python" -m pip freeze 2>/dev/null | sort)
if [ "$wanted" != "$have" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("sdk-harness: mcp", m.version("mcp"))' >&2

command -v npm >/dev/null || die "no npm on PATH (the TypeScript SDK's harness needs Node.js 20 or newer with npm)"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 20 ? 1 : 0)' \
  || die "node $(node --version) is older than 20, which @modelcontextprotocol/sdk 1.32.2 needs"
mkdir -p "$ts"
# npm ci installs exactly the lock; the copy of the lock inside says what is installed.
if ! cmp -s "$ts_lock" "$ts/package-lock.json" || [ ! -f "$ts_sdk" ]; then
  cp tests/sdk-ts/package.json "$ts_lock" "$ts/"
  (cd "$ts" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) \
    || { rm -f "$ts/package-lock.json"; die "npm ci failed in $ts (it needs the npm registry)"; }
fi
node -e 'console.error("sdk-harness: @modelcontextprotocol/sdk", require(process.argv[1]).version)' "$PWD/$ts_sdk"
