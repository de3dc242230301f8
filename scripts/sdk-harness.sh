#!/usr/bin/env bash
# The official MCP Python SDK for the end-to-end tests that use it as the client
# (tests/tests/it/tasks.rs driving tests/sdk/driver.py): a venv at target/sdk-venv with
# tests/sdk/requirements.txt (mcp 2.3.0 and everything it pulls in, pinned) installed.
# Idempotent: an existing venv whose installed set matches the pins is left alone.
#
#   sdk-harness.sh            create or update target/sdk-venv
#   sdk-harness.sh --check    install nothing; exit 1 when the SDK is missing
set -euo pipefail
cd "$(dirname "$0")/.."

prog=sdk-harness
die() { echo "$prog: error: $*" >&2; exit 1; }
venv=target/sdk-venv
req=tests/sdk/requirements.txt

if [ "${1:-}" = --check ]; then
  "$venv/bin/python" -c 'import mcp' 2>/dev/null || die "no MCP SDK in $venv: run scripts/sdk-harness.sh"
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
