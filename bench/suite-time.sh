#!/usr/bin/env bash
# The whole test suite's wall time for one or more checkouts, back to back on one machine
# (issue #20's before/after): in each, core/src/lib.rs is touched so every workspace crate
# rebuilds and every test binary relinks, then `cargo nextest run --workspace` runs it all.
#
#   bench/suite-time.sh /path/to/before-checkout /path/to/after-checkout
#
# Each checkout needs its .venv and .venv-geochemistrypi (scripts/dev-env.sh,
# scripts/geochemistrypi-env.sh) and a built target/ (the first build is not what is timed).
set -u
for dir in "$@"; do
  cd "$dir" || exit 1
  touch core/src/lib.rs
  t0=$(date +%s.%N)
  cargo build --workspace --bins --tests >/dev/null 2>&1
  t1=$(date +%s.%N)
  SCIMCP_REQUIRE_GEOCHEMISTRYPI=1 cargo nextest run --workspace --no-fail-fast \
    > "/tmp/suite-$(basename "$dir").log" 2>&1
  rc=$?
  t2=$(date +%s.%N)
  bins=$(find target/debug/deps -maxdepth 1 -type f -executable -newer core/src/lib.rs | wc -l)
  log="/tmp/suite-$(basename "$dir").log"
  build_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", b-a}')
  run_s=$(awk -v a="$t1" -v b="$t2" 'BEGIN{printf "%.0f", b-a}')
  summary=$(grep -E '^\s+Summary' "$log" | tail -1)
  echo "$dir $(git rev-parse --short HEAD): build+link $build_s s, run $run_s s (rc $rc), test binaries relinked $bins; $summary"
done
