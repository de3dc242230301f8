#!/usr/bin/env bash
# The one command for issue #19's benchmarks: builds the release binaries, provisions the
# development runtime (.venv, scripts/dev-env.sh) and the peers' environment (bench/.venv:
# the Python MCP SDK and sigstore-python), runs every measurement interleaved with its peer,
# prints the tables, and writes bench/results.json and the generated block of
# docs/BENCHMARKS.md. Not part of CI.
#
#   bench/run.sh                     everything (about 5 minutes of measurements)
#   bench/run.sh --quick             a smoke run (fewer rounds; writes target/bench only)
#   bench/run.sh --only calls,runs   some groups: startup, calls, runs, stall, hashing,
#                                    bundle, verify, installer, doctor, history (100,000
#                                    runs), campaigns (1,000 items and the raised limit),
#                                    http-many (64 token holders, 60 s; 15 s with --quick)
set -euo pipefail
cd "$(dirname "$0")/.."

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

quick=false
for arg in "$@"; do
  if [ "$arg" = "--quick" ]; then quick=true; fi
done
extra=()
if $quick; then extra+=(--no-write); fi

t=$(now)
echo "bench: building the release binaries" >&2
cargo build --release --locked --bins -p scimcp-server -p scimcp-installer -p scimcp-doctor \
  -p scimcp-release -p scimcp-parity -p scimcp-bench
build_s=$(since "$t")

t=$(now)
scripts/dev-env.sh
venv=bench/.venv
stamp="$venv/.scimcp-stamp"
want=$(sha256sum bench/peers/requirements.txt | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bench: installing the peers into $venv" >&2
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r bench/peers/requirements.txt
  echo "$want" > "$stamp"
fi
provision_s=$(since "$t")

exec target/release/scimcp-bench run --repo . --build-s "$build_s" --provision-s "$provision_s" \
  "${extra[@]}" "$@"
