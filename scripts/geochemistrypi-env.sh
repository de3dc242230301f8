#!/usr/bin/env bash
# Create or refresh .venv-geochemistrypi: the GeochemistryPi 0.8.2 runtime the parity gate and
# the GeochemistryPi tests use, with the exact pins of adapters/geochemistrypi.toml installed
# from wheels only (GeochemistryPi declares CPython 3.9 only). Idempotent: a stamp of the
# manifest's runtime section skips the install when nothing changed. The interpreter: $PYTHON39,
# else pyenv's newest 3.9, else python3.9 on PATH, else `uv python find 3.9`.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-geochemistrypi
find_python() {
  if [ -n "${PYTHON39:-}" ]; then echo "$PYTHON39"; return; fi
  if command -v pyenv >/dev/null 2>&1; then
    local root best="" n=-1 d m
    root=$(pyenv root)
    for d in "$root"/versions/3.9.*; do
      m=${d##*/3.9.}
      case $m in ''|*[!0-9]*) continue ;; esac
      if [ "$m" -gt "$n" ] && [ -x "$d/bin/python3.9" ]; then n=$m; best=$d; fi
    done
    if [ -n "$best" ]; then echo "$best/bin/python3.9"; return; fi
  fi
  if command -v python3.9 >/dev/null 2>&1; then command -v python3.9; return; fi
  if command -v uv >/dev/null 2>&1 && uv python find 3.9 >/dev/null 2>&1; then uv python find 3.9; return; fi
  echo "geochemistrypi-env: no CPython 3.9 found; install one (pyenv install 3.9, uv python install 3.9) or set PYTHON39" >&2
  exit 1
}

# The pins, read from the manifest with the interpreter that runs this script's Python (3.11+
# has tomllib).
host_python=${HOST_PYTHON:-python3}
requirements=$("$host_python" - <<'PY'
import tomllib
with open("adapters/geochemistrypi.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["runtime"]["requirements"]))
PY
)
want=$(printf '%s\n' "$requirements" | sha256sum | cut -d' ' -f1)
stamp="$venv/.scimcp-stamp"
vpy() { if [ -x "$venv/Scripts/python.exe" ]; then echo "$venv/Scripts/python.exe"; else echo "$venv/bin/python"; fi; }
if [ -x "$(vpy)" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
python39=$(find_python)
echo "geochemistrypi-env: creating $venv with $("$python39" --version 2>&1) ($python39)" >&2
rm -rf "$venv"
"$python39" -m venv "$venv"
reqfile=$(mktemp)
trap 'rm -f "$reqfile"' EXIT
printf '%s\n' "$requirements" > "$reqfile"
started=$(date +%s)
"$(vpy)" -m pip install --quiet --disable-pip-version-check --no-input \
  --only-binary :all: -r "$reqfile"
"$(vpy)" -c "import geochemistrypi.data_mining.cli_pipeline" >/dev/null
echo "$want" > "$stamp"
echo "geochemistrypi-env: ready ($(vpy)) in $(( $(date +%s) - started ))s" >&2
