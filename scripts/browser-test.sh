#!/usr/bin/env bash
# The MCP App run viewer in a real headless Chromium (tests/browser/viewer.test.mjs): a real
# `scimcp serve` (refsci, this repository's .venv) runs a forecast and a small campaign through
# the official MCP TypeScript SDK; our test host renders the viewer HTML the server serves in a
# sandboxed iframe and plays the host side of MCP Apps. Screenshots and structure summaries go
# to target/browser/.
#
# Needs: target/debug/scimcp (cargo build --workspace --bins), node >= 20 with npm, the .venv
# (scripts/dev-env.sh), and Debian's chromium, which this script installs with apt when it is
# missing (as root, or through password-less sudo). The npm packages (pinned by
# tests/browser/package-lock.json) are installed once per lock file under target/browser/npm.
#
#   scripts/browser-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
prog=browser-test
die() { echo "$prog: error: $*" >&2; exit 1; }
say() { echo "$prog: $*" >&2; }
started=$(date +%s)

bin="$PWD/target/debug/scimcp"
[ -x "$bin" ] || die "$bin is missing; run cargo build --workspace --bins first"
python="${SCIMCP_PYTHON:-$PWD/.venv/bin/python}"
[ -x "$python" ] || die "no Python with refsci at $python; run scripts/dev-env.sh (or set SCIMCP_PYTHON)"
command -v node >/dev/null 2>&1 || die "node is not on PATH (node >= 20 is needed)"
command -v npm >/dev/null 2>&1 || die "npm is not on PATH"

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  command -v apt-get >/dev/null 2>&1 || die "$chromium is missing and this is not a Debian/Ubuntu system: install Chromium and set CHROMIUM to its path"
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "installing chromium needs root: run as root (there is no sudo) or apt-get install chromium"
    sudo -n true >/dev/null 2>&1 || die "installing chromium needs root: run as root, give $(id -un) password-less sudo, or sudo apt-get install chromium"
    as_root=(sudo -n)
  fi
  say "installing chromium (apt)"
  log=$(mktemp)
  if ! { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
         "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    die "apt-get install chromium failed"
  fi
  rm -f "$log"
  [ -x "$chromium" ] || die "installed chromium, but $chromium is still missing (set CHROMIUM to its path)"
fi
say "$("$chromium" --version 2>/dev/null | head -n 1), node $(node --version)"

# The test's packages, installed once per lock file (a stamp holds the lock they came from).
npm_dir="$PWD/target/browser/npm"
npm_cache="$PWD/target/browser/npm-cache"
mkdir -p "$npm_dir"
if ! cmp -s tests/browser/package-lock.json "$npm_dir/.installed-from" \
  || [ ! -d "$npm_dir/node_modules/playwright-core" ]; then
  cp tests/browser/package.json tests/browser/package-lock.json "$npm_dir/"
  rm -f "$npm_dir/.installed-from"
  say "npm ci (playwright-core, @modelcontextprotocol/sdk; pinned) into $npm_dir"
  (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error --cache "$npm_cache")
  cp tests/browser/package-lock.json "$npm_dir/.installed-from"
fi
# The test runs from beside its packages (Node resolves imports from the script's directory).
cp tests/browser/viewer.test.mjs tests/browser/host.html tests/browser/host.js "$npm_dir/"

out="$PWD/target/browser"
rm -f "$out"/*.png "$out"/*.json
status=0
SCIMCP_BIN="$bin" SCIMCP_PYTHON="$python" BROWSER_OUT="$out" CHROMIUM="$chromium" \
  timeout 300 node "$npm_dir/viewer.test.mjs" || status=$?
say "$( [ "$status" = 0 ] && echo passed || echo "FAILED (exit $status)" ) in $(( $(date +%s) - started ))s (screenshots: target/browser/run-viewer.png, campaign-viewer.png)"
exit "$status"
