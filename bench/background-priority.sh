#!/usr/bin/env bash
# How much two busy background jobs slow a CPU-bound foreground step, when they are started
# the way .ci/run's `bg_start` starts them (job control, nice 19) and the way it did before
# (`setsid nice -n 19`, a new session and so a new scheduler autogroup on Linux). Prints the
# foreground's wall time alone and beside each kind of background pair.
#
#   bench/background-priority.sh
set -euo pipefail
spin() { local i=0; while [ "$i" -lt 700000 ]; do i=$((i + 1)); done; }
timed() {
  local t0 t1
  t0=$(date +%s%N)
  spin
  t1=$(date +%s%N)
  printf '%-44s %6d ms\n' "$1" $(((t1 - t0) / 1000000))
}
hogs=()
stop_hogs() {
  local pid
  for pid in "${hogs[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  hogs=()
  sleep 0.2
}
trap stop_hogs EXIT
timed "alone"
for _ in 1 2; do
  set -m
  nice -n 19 sh -c 'while :; do :; done' < /dev/null > /dev/null 2>&1 &
  set +m
  hogs+=("$!")
done
sleep 0.5
timed "beside 2 hogs, job control + nice 19"
stop_hogs
for _ in 1 2; do
  setsid nice -n 19 sh -c 'while :; do :; done' < /dev/null > /dev/null 2>&1 &
  hogs+=("$!")
done
sleep 0.5
timed "beside 2 hogs, setsid + nice 19"
stop_hogs
