#!/bin/sh
# scimcp's one-command installer for Linux and macOS (published with every release as
# scimcp-installer.sh):
#
#   curl -LsSf https://github.com/scimcp/scimcp/releases/latest/download/scimcp-installer.sh | sh
#   curl -LsSf …/scimcp-installer.sh | sh -s -- --adapter geochemistrypi
#
# It downloads this computer's signed release bundle (scimcp-<version>-<target>.zip) and its
# Sigstore signature into a temporary folder, takes scimcp-setup out of the bundle, and runs
# `scimcp-setup install --from <bundle>`: scimcp-setup verifies the signature against the
# release policy built into it before anything is unpacked, then installs into your own data
# folder (~/.local/share/scimcp on Linux, ~/Library/Application Support/scimcp on macOS),
# provisions each adapter's runtime and registers it in every AI client it finds. Nothing
# needs administrator rights; nothing goes into ~/.cargo/bin.
#
# Every argument is passed to `scimcp-setup install` (--adapter NAME|PATH, --client NAME,
# --find-links DIR, --python PATH, …). Settings from the environment:
#   SCIMCP_ADAPTER        adapters to install, separated by commas (like --adapter)
#   SCIMCP_VERSION        a version (1.2.3) instead of the newest release
#   SCIMCP_REPO           owner/name of the GitHub repository (default scimcp/scimcp)
#   SCIMCP_DOWNLOAD_URL   a folder URL holding the release files (a mirror)
set -eu

# The release this copy belongs to: set when a release publishes it, empty in the repository
# (then the newest release is used).
RELEASE_TAG=""

say() { printf 'scimcp-installer: %s\n' "$*" >&2; }
fail() {
  say "error: $*"
  exit 1
}

repo="${SCIMCP_REPO:-scimcp/scimcp}"

exe=""
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
  Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
  Darwin-arm64) target=aarch64-apple-darwin ;;
  Darwin-x86_64)
    # A terminal under Rosetta reports x86_64 on Apple silicon: prefer the native build.
    if [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
      target=aarch64-apple-darwin
    else
      target=x86_64-apple-darwin
    fi
    ;;
  MINGW* | MSYS* | CYGWIN*)
    target=x86_64-pc-windows-msvc
    exe=".exe"
    ;;
  *) fail "scimcp has no build for $(uname -s) $(uname -m); see https://github.com/$repo#install" ;;
esac

download() { # URL FILE
  case "$1" in
    https://*) secure="--proto =https --tlsv1.2" ;;
    *) secure="" ;;
  esac
  if command -v curl >/dev/null 2>&1; then
    # shellcheck disable=SC2086 # $secure is two options or none
    curl $secure --fail --silent --show-error --location --retry 3 --output "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget --quiet --tries=3 --output-document="$2" "$1"
  else
    fail "neither curl nor wget is installed; install one of them and run this again"
  fi
}

tag="$RELEASE_TAG"
if [ -n "${SCIMCP_VERSION:-}" ]; then
  tag="v${SCIMCP_VERSION#v}"
fi
if [ -z "$tag" ]; then
  [ -z "${SCIMCP_DOWNLOAD_URL:-}" ] || fail "SCIMCP_DOWNLOAD_URL needs SCIMCP_VERSION (which version is in that folder?)"
  command -v curl >/dev/null 2>&1 || fail "finding the newest release needs curl; set SCIMCP_VERSION"
  # GitHub redirects /releases/latest to /releases/tag/<tag>: no API call, no rate limit.
  latest=$(curl --proto '=https' --tlsv1.2 --fail --silent --show-error --location \
    --output /dev/null --write-out '%{url_effective}' "https://github.com/$repo/releases/latest") ||
    fail "cannot reach https://github.com/$repo/releases/latest"
  tag="${latest##*/}"
fi
version="${tag#v}"
case "$version" in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *) fail "'$tag' is not a release tag (vMAJOR.MINOR.PATCH)" ;;
esac
base="${SCIMCP_DOWNLOAD_URL:-https://github.com/$repo/releases/download/$tag}"
base="${base%/}"
bundle="scimcp-$version-$target.zip"

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t scimcp)
trap 'rm -rf "$tmp"' EXIT INT TERM

say "downloading scimcp $version for $target"
download "$base/$bundle" "$tmp/$bundle" || fail "cannot download $base/$bundle"
download "$base/$bundle.sigstore.json" "$tmp/$bundle.sigstore.json" ||
  fail "cannot download the signature $base/$bundle.sigstore.json; without it the bundle cannot be verified"

# Only scimcp-setup comes out of the bundle here; it verifies the bundle's signature before it
# unpacks anything else. Its files sit under one folder named like the zip (bundles from before
# this layout had them at the top): the first entry that exists is taken.
setup="$tmp/scimcp-setup$exe"
entry="bin/scimcp-setup$exe"
extract() { # ENTRY: its bytes on stdout, or a failure status when the bundle has no such entry
  if command -v unzip >/dev/null 2>&1; then
    unzip -p "$tmp/$bundle" "$1" 2>/dev/null
  elif command -v bsdtar >/dev/null 2>&1; then
    bsdtar -xOf "$tmp/$bundle" "$1" 2>/dev/null
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
      "$tmp/$bundle" "$1" 2>/dev/null
  else
    fail "cannot open the bundle: install unzip and run this again"
  fi
}
for candidate in "scimcp-$version-$target/$entry" "$entry"; do
  extract "$candidate" >"$setup" || true
  [ ! -s "$setup" ] || break
done
[ -s "$setup" ] || fail "$bundle has no $entry"
chmod +x "$setup"

# SCIMCP_ADAPTER=a,b becomes --adapter a --adapter b, before the given arguments.
if [ -n "${SCIMCP_ADAPTER:-}" ]; then
  adapters=$(printf '%s' "$SCIMCP_ADAPTER" | tr ',' ' ')
  for adapter in $adapters; do
    set -- --adapter "$adapter" "$@"
  done
fi

say "verifying and installing (scimcp-setup install)"
status=0
"$setup" install --from "$tmp/$bundle" "$@" || status=$?
if [ "$status" -ne 0 ]; then
  say "scimcp-setup install failed (exit status $status); the message above says why"
  exit "$status"
fi
root=$("$setup" status --json 2>/dev/null | sed -n 's/^  "data_root": "\(.*\)",$/\1/p')
say "done: scimcp $version is installed${root:+ in $root}"
say "check it any time with: \"${root:-<data folder>}/current/bin/scimcp-doctor$exe\""
