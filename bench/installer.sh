#!/usr/bin/env bash
# Installer benchmark (not a test): how long `scimcp-setup install` takes to register scimcp in
# every supported client of a fresh home, and how long a repeat install takes when there is
# nothing to do. Client registration only (--skip-runtime): provisioning is pip's time, not
# ours. Prints a Markdown table for docs/BENCHMARKS.md.
#
#   bench/installer.sh [RUNS]        (default 15 runs of each; release build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
cargo build --quiet --release -p scimcp-installer
setup="$PWD/target/release/scimcp-setup"

work=$(mktemp -d "${TMPDIR:-/tmp}/scimcp bench Jürgen XXXXXX")
trap 'rm -rf "$work"' EXIT

# A small bundle: a stand-in server binary and the shipped adapter manifest.
bundle="$work/scimcp-0.1.0"
mkdir -p "$bundle/bin" "$bundle/adapters" "$bundle/refsci"
printf '#!/bin/sh\necho scimcp\n' > "$bundle/bin/scimcp"
chmod +x "$bundle/bin/scimcp"
cp adapters/refsci.toml "$bundle/adapters/"

clients=()
for id in $("$setup" clients --json | python3 -c 'import json,sys; print(" ".join(c["id"] for c in json.load(sys.stdin)["clients"]))'); do
  clients+=(--client "$id")
done

# Every client's file already exists with a comment and another server.
seed() {
  local home=$1
  for f in .cursor/mcp.json .gemini/settings.json .codeium/windsurf/mcp_config.json .lmstudio/mcp.json \
           .kiro/settings/mcp.json .aws/amazonq/mcp.json .config/Claude/claude_desktop_config.json .claude.json \
           .cline/data/settings/cline_mcp_settings.json; do
    mkdir -p "$(dirname "$home/$f")"
    printf '{\n  // mine\n  "mcpServers": { "other": { "command": "x" } }\n}\n' > "$home/$f"
  done
  mkdir -p "$home/.config/Code/User" "$home/.config/zed" "$home/.codex" "$home/.config/goose" "$home/.continue"
  printf '{\n  // mine\n  "servers": { "other": { "command": "x" } }\n}\n' > "$home/.config/Code/User/mcp.json"
  printf '{\n  // mine\n  "context_servers": { "other": { "command": "x" } }\n}\n' > "$home/.config/zed/settings.json"
  printf '# mine\n[mcp_servers.other]\ncommand = "x"\n' > "$home/.codex/config.toml"
  printf '# mine\nextensions:\n  other:\n    cmd: x\n' > "$home/.config/goose/config.yaml"
}

now() { date +%s%N; }
stats() { sort -n | awk '{a[NR]=$1} END {printf "%.1f | %.1f | %.1f", a[int((NR+1)/2)]/1e6, a[1]/1e6, a[NR]/1e6}'; }

first=(); repeat=()
for i in $(seq "$runs"); do
  home="$work/home $i"; data="$work/Données $i"
  seed "$home"
  mkdir -p "$home/projet"
  t0=$(now)
  HOME="$home" SCIMCP_HOME="$data" PATH=/usr/bin:/bin "$setup" --project "$home/projet" "${clients[@]}" install --skip-runtime --from "$bundle" >"$work/out.txt" || { cat "$work/out.txt"; exit 1; }
  t1=$(now)
  HOME="$home" SCIMCP_HOME="$data" PATH=/usr/bin:/bin "$setup" --project "$home/projet" "${clients[@]}" install --skip-runtime --from "$bundle" >"$work/out.txt" || { cat "$work/out.txt"; exit 1; }
  t2=$(now)
  first+=($((t1 - t0))); repeat+=($((t2 - t1)))
done
n=$("$setup" clients | tail -n +2 | wc -l)
echo "| step ($n clients, $runs runs, $(nproc) cores) | median ms | min ms | max ms |"
echo "|---|---|---|---|"
echo "| first install: register in every client | $(printf '%s\n' "${first[@]}" | stats) |"
echo "| repeat install: nothing to do (no byte written) | $(printf '%s\n' "${repeat[@]}" | stats) |"
