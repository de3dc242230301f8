#!/usr/bin/env bash
# The real-client lane: Claude Code, Gemini CLI and Codex CLI, pinned in
# tests/real-clients/package-lock.json and installed from the npm registry into
# target/real-clients/npm (re-runs reuse it), each registered by scimcp-setup in a fresh fake
# home and driven in one-shot mode against a fake model API on 127.0.0.1
# (tests/real-clients/fakemodel.py): stdio, --remote against `scimcp serve --transport http`
# with a token, a wrong token, and an analysis end to end from an installed release bundle.
# No API key and no network beyond the package registries (npm; PyPI for the bundle's runtime,
# through pip's cache).
#
#   scripts/real-clients.sh [--only REGEX]   (REGEX picks check groups, e.g. 'gemini remote')
#
# Needs target/debug/{scimcp,scimcp-setup,scimcp-release} (scripts/test.sh builds them), npm,
# and a CPython 3.10-3.13 for the bundle's runtime (.venv's base interpreter, python3, or
# SCIMCP_LANE_PYTHON). Prints `PASS name` / `FAIL name: why` per check and ends with
# `N passed, M failed`; exits non-zero on any failure. A failed run keeps its fake homes and
# each session's recorded requests (session-N.json) under target/real-clients/.
set -euo pipefail
cd "$(dirname "$0")/.."
SCIMCP_LANE_START=$(date +%s)
export SCIMCP_LANE_START

bin="$PWD/target/debug"
for b in scimcp scimcp-setup scimcp-release; do
  [ -x "$bin/$b" ] || { echo "real-clients: $bin/$b is missing; run cargo build --workspace --bins first" >&2; exit 1; }
done

# The clients, installed once per lock file: a stamp beside node_modules holds the lock it
# was installed from, so a changed pin reinstalls and an unchanged one costs nothing.
npm_dir="$PWD/target/real-clients/npm"
mkdir -p "$npm_dir"
if ! cmp -s tests/real-clients/package-lock.json "$npm_dir/.installed-from" \
  || [ ! -x "$npm_dir/node_modules/.bin/claude" ]; then
  cp tests/real-clients/package.json tests/real-clients/package-lock.json "$npm_dir/"
  rm -f "$npm_dir/.installed-from"
  echo "real-clients: npm ci (Claude Code, Gemini CLI, Codex CLI, pinned) into $npm_dir"
  (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp tests/real-clients/package-lock.json "$npm_dir/.installed-from"
fi
clients_bin="$npm_dir/node_modules/.bin"
echo "real-clients: $("$clients_bin/claude" --version 2>/dev/null), Gemini CLI $("$clients_bin/gemini" --version 2>/dev/null), $("$clients_bin/codex" --version 2>/dev/null) on node $(node --version)"

# The interpreter the bundle's runtime is built from. The fake homes hide pyenv's shims
# (they look for ~/.pyenv), so the real path is resolved here.
python="${SCIMCP_LANE_PYTHON:-}"
if [ -z "$python" ] && [ -x .venv/bin/python ]; then
  python=$(.venv/bin/python -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
fi
if [ -z "$python" ]; then
  python=$(python3 -c 'import sys; print(sys.executable)')
fi

# pip's cache for the bundle's runtime: the machine's (warm from scripts/dev-env.sh), not the
# fake home's empty one.
PIP_CACHE_DIR="${PIP_CACHE_DIR:-$(python3 -m pip cache dir 2>/dev/null || echo "$HOME/.cache/pip")}"
export PIP_CACHE_DIR

# A failed run's folder is kept for its post-mortem until the next run (each holds copies of
# the debug binaries, about 1 GB).
rm -rf "$PWD"/target/real-clients/run.*
work=$(mktemp -d "$PWD/target/real-clients/run.XXXXXX")
status=0
# Every client run inside is bounded (120 s, the analysis 300 s); this bounds the whole lane.
timeout 1200 python3 tests/real-clients/run.py --bin-dir "$bin" --clients-bin "$clients_bin" \
  --work "$work" --repo "$PWD" --python "$python" "$@" || status=$?
if [ "$status" -eq 0 ]; then
  rm -rf "$work"
else
  # The harness prints the summary last; when it died before that, say so here.
  if [ "$status" -ne 1 ]; then
    echo "FAIL real-clients: the harness ended with status $status (a timeout is 124); kept in $work"
    echo "0 passed, 1 failed"
  fi
fi
exit "$status"
