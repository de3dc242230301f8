#!/usr/bin/env bash
# Print the Rust target triple release bundles are named for on this computer
# (scimcp-<version>-<target>.zip).
set -euo pipefail
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) echo x86_64-unknown-linux-gnu ;;
  Linux-aarch64) echo aarch64-unknown-linux-gnu ;;
  Darwin-arm64) echo aarch64-apple-darwin ;;
  Darwin-x86_64) echo x86_64-apple-darwin ;;
  MINGW*|MSYS*|CYGWIN*) echo x86_64-pc-windows-msvc ;;
  *) echo "host-target: no release bundle is built for $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac
