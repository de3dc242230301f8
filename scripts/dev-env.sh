#!/usr/bin/env bash
# Create or refresh .venv: the development scientific runtime (refsci with its exact pins,
# plus pytest). Uses uv when it is on PATH, python -m venv + pip otherwise. Idempotent: a
# stamp of the requirement files skips the install when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
venv=.venv
if [ -x "$venv/bin/python" ]; then
  vpy="$venv/bin/python"
elif [ -x "$venv/Scripts/python.exe" ]; then
  vpy="$venv/Scripts/python.exe"
else
  echo "dev-env: creating $venv with $($python --version 2>&1)" >&2
  if command -v uv >/dev/null 2>&1; then
    uv venv --quiet --python "$python" "$venv"
  else
    "$python" -m venv "$venv"
  fi
  if [ -x "$venv/bin/python" ]; then vpy="$venv/bin/python"; else vpy="$venv/Scripts/python.exe"; fi
fi

stamp="$venv/.scimcp-stamp"
want=$(cat refsci/requirements.txt refsci/requirements-test.txt refsci/pyproject.toml | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "dev-env: installing refsci and its pinned requirements into $venv" >&2
if command -v uv >/dev/null 2>&1; then
  uv pip install --quiet --python "$vpy" -r refsci/requirements.txt -r refsci/requirements-test.txt -e refsci
else
  "$vpy" -m pip install --quiet --disable-pip-version-check -r refsci/requirements.txt -r refsci/requirements-test.txt -e refsci
fi
"$vpy" -m refsci --version >/dev/null
echo "$want" > "$stamp"
echo "dev-env: ready ($vpy)" >&2
