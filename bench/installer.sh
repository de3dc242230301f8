#!/usr/bin/env bash
# The installer's benchmark alone: first install in all 21 client targets and the no-op
# re-run (bench/run.sh --only installer; the figures go to target/bench/results-partial.json).
set -euo pipefail
exec "$(dirname "$0")/run.sh" --only installer "$@"
