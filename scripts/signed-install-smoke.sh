#!/usr/bin/env bash
# A user's path through a signed release, for the release workflow on every OS:
# verify every downloaded file against the pinned identity, install from the signed bundle
# under a home whose path has spaces and non-ASCII letters, check with the doctor, run one
# analysis through the installed MCP server, repair, uninstall, and prove the run data
# survived. There is no unsigned override anywhere in this script.
#
#   scripts/signed-install-smoke.sh SIGNED_DIR TAG
set -euo pipefail
signed=$1
tag=$2
bin=target/release
exe=""
case "$(uname -s)" in MINGW*|MSYS*|CYGWIN*) exe=".exe" ;; esac

echo "== verify every file against the release policy ($tag)"
"$bin/scimcp-release$exe" verify --tag "$tag" "$signed"/*.zip "$signed/RELEASE.json"

target=$("$(dirname "$0")/host-target.sh")
bundle=$(ls "$signed"/scimcp-*-"$target".zip)

root="$RUNNER_TEMP/Jürgen Müller/Données de test"
mkdir -p "$root/home"
export HOME="$root/home" USERPROFILE="$root/home" SCIMCP_HOME="$root/home/scimcp data"
unset SCIMCP_PYTHON

echo "== install from the signed bundle"
installer="$SCIMCP_HOME/../setup$exe"
# The pattern matches bin/ under the bundle's one folder (or at the top of an older bundle).
unzip -p "$bundle" "*bin/scimcp-setup$exe" > "$installer" && chmod +x "$installer"
"$installer" install --from "$bundle" --client generic --yes

echo "== doctor"
"$SCIMCP_HOME/current/bin/scimcp-doctor$exe" --json > "$root/doctor.json" || { cat "$root/doctor.json"; exit 1; }

echo "== one analysis through the installed MCP server"
server="$SCIMCP_HOME/current/bin/scimcp$exe"
runtime_python=$(python -c 'import json,sys; print(json.load(open(sys.argv[1], encoding="utf-8"))["runtimes"]["refsci"]["interpreter"])' "$SCIMCP_HOME/state.json")
"$bin/scimcp-parity$exe" check --scenario 'regression_ridge*' --scimcp "$server" --python "$runtime_python" --json "$root/parity.json"

echo "== repair, then uninstall; run data survives"
mkdir -p "$SCIMCP_HOME/runs/run-marker"
echo "keep me" > "$SCIMCP_HOME/runs/run-marker/result.json"
"$installer" repair --client generic --yes
"$installer" uninstall --yes
test "$(cat "$SCIMCP_HOME/runs/run-marker/result.json")" = "keep me"
echo "signed install smoke passed on $target"
