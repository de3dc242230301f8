#!/usr/bin/env bash
# The test suite: provisions the development runtime, then runs every Rust test (unit and
# end-to-end across the built binaries) and refsci's own tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# The runtimes the tests drive are provisioned while the workspace and its test binaries build:
# provisioning mostly waits on package downloads and the build keeps both cores busy, so side by
# side the two take about as long as the longer alone. Provisioning's output goes to
# target/provision.log and is printed when both are done.
provision() {
  scripts/dev-env.sh
  # GeochemistryPi's runtime (CPython 3.9) for its end-to-end tests and parity scenarios. Without
  # a CPython 3.9 those tests skip with a notice, unless SCIMCP_REQUIRE_GEOCHEMISTRYPI is set
  # (.ci/run sets it).
  if ! scripts/geochemistrypi-env.sh; then
    if [ -n "${SCIMCP_REQUIRE_GEOCHEMISTRYPI:-}" ]; then exit 1; fi
    echo "test.sh: no GeochemistryPi runtime; its tests skip" >&2
  fi
  # AutoDock Vina and MAFFT, the CLIs of the shipped executable adapters (apt on Debian/Ubuntu).
  # Without them their tests skip with a notice, unless SCIMCP_REQUIRE_SCIENCE_CLIS is set
  # (.ci/run sets it).
  if ! scripts/science-clis.sh; then
    if [ -n "${SCIMCP_REQUIRE_SCIENCE_CLIS:-}" ]; then exit 1; fi
    echo "test.sh: no vina/mafft; their tests skip" >&2
  fi
  # The official MCP SDKs, the clients of the tasks and elicitation tests: Python
  # (target/sdk-venv) and TypeScript (target/sdk-ts, for 2025-11-25's tasks). Without them those
  # tests skip with a notice, unless SCIMCP_REQUIRE_SDK_HARNESS is set (.ci/run).
  if ! scripts/sdk-harness.sh; then
    if [ -n "${SCIMCP_REQUIRE_SDK_HARNESS:-}" ]; then exit 1; fi
    echo "test.sh: no MCP SDKs; the tasks tests skip" >&2
  fi
  # cwltool, the reference runner the community CWL tools' results are compared with
  # (target/cwl-venv; tests/tests/it/cwl_community.rs). Without it those tests skip with a
  # notice, unless SCIMCP_REQUIRE_SCIENCE_CLIS is set (.ci/run).
  if ! scripts/cwl-conformance.sh --setup-only; then
    if [ -n "${SCIMCP_REQUIRE_SCIENCE_CLIS:-}" ]; then exit 1; fi
    echo "test.sh: no cwltool; the community CWL comparisons skip" >&2
  fi
}
mkdir -p target
provision_log=target/provision.log
echo "test.sh: provisioning the runtimes in the background (log: $provision_log)" >&2
provision > "$provision_log" 2>&1 &
provision_pid=$!
# If the build fails, the provisioning (the subshell and the step it is in) is stopped with it.
trap 'pkill -TERM -P "$provision_pid" 2>/dev/null; kill "$provision_pid" 2>/dev/null || true' EXIT
# Integration tests drive the real binaries, which `cargo test` does not rebuild.
cargo build --workspace --bins
if cargo nextest --version >/dev/null 2>&1; then run_tests=(nextest run); else run_tests=(test); fi
cargo "${run_tests[@]}" --workspace --no-run
provision_status=0
wait "$provision_pid" || provision_status=$?
trap - EXIT
cat "$provision_log" >&2
if [ "$provision_status" -ne 0 ]; then
  echo "test.sh: provisioning the runtimes failed (exit $provision_status; its output is above and in $provision_log)" >&2
  exit 1
fi
if [ -x .venv/bin/python ]; then vpy=.venv/bin/python; else vpy=.venv/Scripts/python.exe; fi
cargo "${run_tests[@]}" --workspace --no-fail-fast
"$vpy" -m pytest -q refsci/tests
