#!/usr/bin/env bash
# Record which functions of the release `scimcp` run while it starts and answers its first
# `tools/list`, and write their symbol names to server/startup-order.txt. A release build on
# x86-64 Linux hands that file to the linker (server/build.rs), which places those functions
# next to each other: the kernel then maps a little over a megabyte of code to start the server
# instead of touching most of the binary's 11 MB (it maps 64 KiB around each page it faults).
#
# Rerun it after a dependency update or a change to what the server does at start
# (`scimcp-bench` reports how many listed functions the binary still has):
#
#   cargo build --release -p scimcp-server && scripts/startup-order.sh
#
# Needs valgrind (callgrind) and the refsci venv (.venv, scripts/dev-env.sh).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
exe=$(realpath -m "${SCIMCP_BIN:-$repo/target/release/scimcp}")
out=${1:-$repo/server/startup-order.txt}
python=$repo/.venv/bin/python
command -v valgrind >/dev/null || { echo "startup-order: valgrind is not installed (apt install valgrind)" >&2; exit 2; }
[[ -x $exe ]] || { echo "startup-order: no release binary at $exe: run cargo build --release -p scimcp-server" >&2; exit 2; }
[[ -x $python ]] || { echo "startup-order: no refsci venv at $python: run scripts/dev-env.sh" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
profile=$scratch/callgrind.out

# The same start as the benchmark's cold start: an empty data root, the refsci adapter.
coproc SERVER {
    cd "$scratch" && SCIMCP_HOME=$scratch/home SCIMCP_LOG=warn exec valgrind --tool=callgrind \
        --demangle=no --compress-strings=no --compress-pos=no --dump-line=no \
        --callgrind-out-file="$profile" "$exe" serve --adapter refsci --python "$python" 2>"$scratch/stderr"
}
ask() {
    printf '%s\n' "$1" >&"${SERVER[1]}"
    local answer
    IFS= read -r -t 120 answer <&"${SERVER[0]}" || { echo "startup-order: no answer to $1" >&2; cat "$scratch/stderr" >&2; exit 1; }
    # A profile of an error path would order the wrong functions.
    case $answer in
        *'"result"'*) ;;
        *) echo "startup-order: the server answered $1 with: $answer" >&2; exit 1 ;;
    esac
}
ask '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"startup-order","version":"0"}}}'
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"${SERVER[1]}"
ask '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}'
# What an idle server still runs after its first answers (the run index's background load).
sleep 3
pid=$SERVER_PID
eval "exec ${SERVER[1]}>&-"
wait "$pid" || true

# callgrind names every function it saw once per object (`ob=`); keep those of the binary, in
# the order they were first written, without callgrind's recursion suffixes ('2) and without
# what it names by address.
awk -v exe="$exe" '
    /^ob=/ { ob = substr($0, 4); next }
    /^fn=/ && ob == exe {
        name = substr($0, 4); sub(/'\''[0-9]+$/, "", name)
        # callgrind names code without a symbol by its address or "(below main)"
        if (name ~ /^0x/ || name ~ /[ ()]/) next
        if (!(name in seen)) { seen[name] = 1; print name }
    }' "$profile" > "$out.tmp"
count=$(wc -l < "$out.tmp")
(( count > 100 )) || { echo "startup-order: only $count functions recorded; keeping $out" >&2; exit 1; }
mv "$out.tmp" "$out"
echo "startup-order: $count functions written to $out" >&2
