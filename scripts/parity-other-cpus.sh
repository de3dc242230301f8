#!/usr/bin/env bash
# The parity evidence on other CPUs, without other machines: OpenBLAS chooses its kernels per
# CPU, and OPENBLAS_CORETYPE makes it choose another family's. Runs `scimcp-parity check` with
# both paths on each family in turn against the checked-in snapshots and prints, per family,
# how many scenarios held byte for byte, how many within tolerance, how many drifted, and the
# largest relative error among the tolerated floats. Needs the built binaries and .venv
# (scripts/test.sh makes both). Extra arguments go to every `check` (e.g. --quick).
set -euo pipefail
cd "$(dirname "$0")/.."
kernels=${KERNELS:-"Haswell Zen Sandybridge Prescott"}
out=target/parity-other-cpus
mkdir -p "$out"
status=0
for kernel in $kernels; do
  if ! target/debug/scimcp-parity check --env "OPENBLAS_CORETYPE=$kernel" \
      --json "$out/$kernel.json" "$@" > "$out/$kernel.txt"; then
    status=1
  fi
  python3 - "$out/$kernel.json" "$kernel" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
scenarios = report["scenarios"]
count = lambda state: sum(1 for s in scenarios if s["snapshot"] == state)
worst = max([s.get("max_rel_err") or 0.0 for s in scenarios] or [0.0])
print(f"{sys.argv[2]:<12} passed={report['passed']!s:<5} matched={count('matched'):>2} "
      f"within_tolerance={count('within_tolerance'):>2} drifted={count('drifted'):>2} "
      f"tolerated_floats={sum(s['tolerated_total'] for s in scenarios):>4} max_rel_err={worst:.2e}")
PY
done
exit "$status"
