#!/usr/bin/env bash
# The test suite: provisions the development runtime, then runs every Rust test (unit and
# end-to-end across the built binaries) and refsci's own tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/dev-env.sh
if [ -x .venv/bin/python ]; then vpy=.venv/bin/python; else vpy=.venv/Scripts/python.exe; fi
# Integration tests drive the real binaries, which `cargo test` does not rebuild.
cargo build --workspace --bins
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast
else
  cargo test --workspace --no-fail-fast
fi
"$vpy" -m pytest -q refsci/tests
