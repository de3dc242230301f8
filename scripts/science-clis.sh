#!/usr/bin/env bash
# The scientific CLIs the shipped executable adapters wrap: AutoDock Vina (`vina`,
# adapters/vina.toml) and MAFFT (`mafft`, adapters/mafft.toml), for their end-to-end tests and
# parity scenarios, and samtools, the real CLI the sandbox's end-to-end test runs
# (tests/fixtures/samtools, test-only). Installs what is missing with the system's package manager:
#   Debian/Ubuntu: apt-get install autodock-vina mafft samtools (as root, or through password-less sudo)
# Elsewhere it says what to install and exits 1. Idempotent: with both programs on PATH it
# prints their versions and does nothing else.
#
#   science-clis.sh            install what is missing, print `vina` and `mafft` versions
#   science-clis.sh --check    install nothing; exit 1 when one is missing
set -euo pipefail

prog=science-clis
die() { echo "$prog: error: $*" >&2; exit 1; }
say() { echo "$prog: $*" >&2; }

check_only=0
case ${1:-} in
  --check) check_only=1 ;;
  "") ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument $1 (use --check or nothing)" ;;
esac

# The Debian package of a program (a function, not an associative array: macOS's bash 3.2
# has none, and this script must get as far as saying what to install there).
debian_package() {
  case $1 in
    vina) echo autodock-vina ;;
    mafft) echo mafft ;;
    samtools) echo samtools ;;
  esac
}

missing_programs() {
  local p
  for p in vina mafft samtools; do
    command -v "$p" >/dev/null 2>&1 || echo "$p"
  done
}

report() {
  # vina prints its version on stdout, mafft on stderr.
  say "vina: $(vina --version 2>&1 | head -n 1) ($(command -v vina))"
  say "mafft: $(mafft --version 2>&1 | head -n 1) ($(command -v mafft))"
  say "samtools: $(samtools --version 2>&1 | head -n 1) ($(command -v samtools))"
}

missing=()
while IFS= read -r p; do missing+=("$p"); done < <(missing_programs)
if [ ${#missing[@]} -eq 0 ]; then
  report
  exit 0
fi
[ "$check_only" = 0 ] || die "not on PATH: ${missing[*]}"

if ! command -v apt-get >/dev/null 2>&1; then
  say "not on PATH: ${missing[*]}; this is not a Debian/Ubuntu system, so install them yourself:"
  say "  macOS (Homebrew): brew install mafft samtools; AutoDock Vina: conda install -c conda-forge vina"
  say "  conda anywhere: conda install -c conda-forge vina && conda install -c bioconda mafft"
  exit 1
fi

packages=()
for p in "${missing[@]}"; do packages+=("$(debian_package "$p")"); done
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "installing ${packages[*]} needs root: run as root (there is no sudo) or apt-get install ${packages[*]}"
  sudo -n true >/dev/null 2>&1 || die "installing ${packages[*]} needs root: run as root, give $(id -un) password-less sudo, or sudo apt-get install ${packages[*]}"
  as_root=(sudo -n)
fi
say "installing ${packages[*]} (apt)"
log=$(mktemp)
if ! { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
       "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  die "apt-get install ${packages[*]} failed"
fi
rm -f "$log"
still=$(missing_programs | tr '\n' ' ')
[ -z "$still" ] || die "installed ${packages[*]}, but still not on PATH: $still"
report
