#!/usr/bin/env bash
# After a release is published: the release as the world sees it, on every OS. From GitHub
# itself, install this computer's bundle by its https:// address (scimcp-setup downloads it
# and its .sigstore.json and verifies them against the built-in release policy before
# unpacking), check with the doctor, then run `upgrade`, which lists the repository's
# releases through GitHub's API and must find this release to be the newest, and uninstall.
# No unsigned override, no local build.
#
#   scripts/published-release-smoke.sh OWNER/NAME TAG
# GH_TOKEN (the workflow's token) keeps GitHub's API rate limit out of the way.
set -euo pipefail
repo=$1
tag=$2
version=${tag#v}
case "$version" in
  *-*) echo "published-release-smoke: $tag is a pre-release; installers only take stable releases, nothing to check"; exit 0 ;;
esac
exe=""
case "$(uname -s)" in MINGW*|MSYS*|CYGWIN*) exe=".exe" ;; esac
target=$("$(dirname "$0")/host-target.sh")
url="https://github.com/$repo/releases/download/$tag/scimcp-$version-$target.zip"

root="${RUNNER_TEMP:-$(mktemp -d)}/published release/Données"
mkdir -p "$root/home"
export HOME="$root/home" USERPROFILE="$root/home" SCIMCP_HOME="$root/home/scimcp data"
unset SCIMCP_PYTHON

echo "== the installer from the published bundle ($url)"
curl --fail --silent --show-error --location --retry 3 -o "$root/bundle.zip" "$url"
installer="$root/scimcp-setup$exe"
# The pattern matches bin/ under the bundle's one folder (or at the top of an older bundle).
unzip -p "$root/bundle.zip" "*bin/scimcp-setup$exe" > "$installer" && chmod +x "$installer"

echo "== install from the release address (downloaded and verified by scimcp-setup)"
"$installer" install --from "$url" --client generic --yes
python3 - "$SCIMCP_HOME/state.json" "$version" <<'PY'
import json, sys
state = json.load(open(sys.argv[1], encoding="utf-8"))
version = sys.argv[2]
record = state["versions"][version]
assert state["active"] == version, state["active"]
assert record["signature"]["status"] == "verified", record["signature"]
print("verified:", record["signature"]["detail"])
PY

echo "== doctor"
"$SCIMCP_HOME/current/bin/scimcp-doctor$exe" --json > "$root/doctor.json" || { cat "$root/doctor.json"; exit 1; }

echo "== upgrade: GitHub's release list must show $version as the newest"
"$installer" upgrade --client generic | tee "$root/upgrade.txt"
grep -q "already at $version" "$root/upgrade.txt"

echo "== uninstall"
"$installer" uninstall --yes
echo "published release smoke passed for $tag on $target"
