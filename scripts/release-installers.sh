#!/usr/bin/env bash
# Write the one-command installers a release publishes, with the release's tag built in:
#
#   scripts/release-installers.sh vX.Y.Z OUT_DIR
#
# OUT_DIR/scimcp-installer.sh and OUT_DIR/scimcp-installer.ps1 are scripts/install.sh and
# scripts/install.ps1 with RELEASE_TAG set, so `curl …/download/vX.Y.Z/scimcp-installer.sh | sh`
# installs exactly vX.Y.Z (and `…/latest/download/…` the newest release). The release's
# bundle-sign job runs this; the installer tests run it against a fake release.
set -euo pipefail
tag=${1:?usage: release-installers.sh vX.Y.Z OUT_DIR}
out=${2:?usage: release-installers.sh vX.Y.Z OUT_DIR}
if ! [[ $tag =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
  echo "release-installers: '$tag' is not a release tag (vMAJOR.MINOR.PATCH)" >&2
  exit 1
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
set_tag() { # SOURCE PATTERN REPLACEMENT DEST
  grep -q "$2" "$1" || { echo "release-installers: $1 has no line $2" >&2; exit 1; }
  sed "s|$2|$3|" "$1" >"$4"
}
set_tag "$here/install.sh" '^RELEASE_TAG=""$' "RELEASE_TAG=\"$tag\"" "$out/scimcp-installer.sh"
# shellcheck disable=SC2016 # a literal PowerShell $ReleaseTag, not a shell expansion
set_tag "$here/install.ps1" '^\$ReleaseTag = ""$' "\$ReleaseTag = \"$tag\"" "$out/scimcp-installer.ps1"
chmod +x "$out/scimcp-installer.sh"
echo "release-installers: $out/scimcp-installer.sh and $out/scimcp-installer.ps1 install $tag"
