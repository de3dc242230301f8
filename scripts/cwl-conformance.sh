#!/usr/bin/env bash
# The CWL conformance lane (#33): the CWL v1.2 conformance tests tagged command_line_tool
# (vendored in tests/cwl/, nothing fetched at run time but the pinned PyPI packages), run by
# cwltest against `scimcp cwl-run` (every test through a real `scimcp serve` over MCP stdio),
# and by cwltool on the same tests in the same run for comparison. It prints both counts and
# the time per test, and compares scimcp's failures with tests/cwl/expected-failures.txt:
# it fails on a failure that is not listed, and on a listed test that passes.
#
# Usage: scripts/cwl-conformance.sh [--no-cwltool] [--update-expected] [--setup-only]
#   --setup-only installs the pinned cwltest and cwltool in target/cwl-venv and stops (the
#   cwltool tests/tests/it/cwl_community.rs compares scimcp with).
#   --update-expected rewrites tests/cwl/expected-failures.txt from this run, each test with
#   the first line scimcp cwl-run printed about it (review the diff before committing).
# Env: SCIMCP_BIN (default target/debug/scimcp), CWL_JOBS (parallel tests, default 2),
#   CWL_WORK (the work directory, default target/cwl-conformance).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
run_cwltool=1
update=0
setup_only=0
for arg in "$@"; do
  case $arg in
    --no-cwltool) run_cwltool=0 ;;
    --update-expected) update=1 ;;
    --setup-only) setup_only=1 ;;
    *) echo "usage: $0 [--no-cwltool] [--update-expected] [--setup-only]" >&2; exit 2 ;;
  esac
done
venv=target/cwl-venv
pins=(cwltest==2.7.20260814150058 cwltool==3.3.20260925135507 PyYAML==6.0.3)
if ! "$venv/bin/python" -c 'import cwltest, cwltool, yaml' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "${pins[@]}"
fi
if [ "$setup_only" = 1 ]; then
  echo "cwltool and cwltest are in $venv: $("$venv/bin/cwltool" --version 2>&1 | tail -1)"
  exit 0
fi
export SCIMCP_BIN=${SCIMCP_BIN:-$root/target/debug/scimcp}
[ -x "$SCIMCP_BIN" ] || cargo build --quiet -p scimcp-server --bin scimcp
jobs=${CWL_JOBS:-2}
work=${CWL_WORK:-$root/target/cwl-conformance}
rm -rf "$work"
mkdir -p "$work/tmp"
# Every test leaves its outdir behind (cwltest's mkdtemp): keep them under target/.
export TMPDIR=$work/tmp

suite() { # name tool [args after --]
  local name=$1 tool=$2
  shift 2
  local start end
  start=$(date +%s.%N)
  (cd tests/cwl && "$root/$venv/bin/cwltest" --test command_line_tool.yaml --tool "$tool" \
     -j "$jobs" --timeout 120 --junit-xml "$work/$name.xml" --badgedir "$work/badges-$name" \
     ${1:+-- "$@"}) > "$work/$name.log" 2>&1 || true
  end=$(date +%s.%N)
  echo "$start $end" > "$work/$name.time"
  grep -E '^[0-9]+ tests passed' "$work/$name.log" | tail -1 || echo "cwltest did not finish: see $work/$name.log"
}

echo "== CWL v1.2 command_line_tool conformance (195 tests, $jobs at a time)"
echo "-- scimcp cwl-run (through MCP):"
# The lane is the operator here: it allows ShellCommandRequirement tools and serves tools that
# require a container from PATH, as cwltool --no-container does below (both shown in each plan).
suite scimcp "$root/scripts/scimcp-cwl-runner-wrapper" --allow-shell --no-container
if [ "$run_cwltool" = 1 ]; then
  echo "-- cwltool --no-container --relax-path-checks (reference, same tests, same run):"
  suite cwltool "$root/$venv/bin/cwltool" --no-container --relax-path-checks
fi

"$venv/bin/python" - "$work" tests/cwl/command_line_tool.yaml tests/cwl/expected-failures.txt "$run_cwltool" "$update" <<'PY'
import sys, os, re, yaml
import xml.etree.ElementTree as ET
work, index, expected_path = sys.argv[1], sys.argv[2], sys.argv[3]
with_cwltool, update = sys.argv[4] == "1", sys.argv[5] == "1"
tests = yaml.safe_load(open(index))
required = {t["id"] for t in tests if "required" in t.get("tags", [])}

def results(name):
    """id -> passed/failed/unsupported, from cwltest's badge lists (the JUnit file misses
    should_fail tests that wrongly exit 0)."""
    out = {}
    md = os.path.join(work, "badges-" + name, "command_line_tool.md")
    if not os.path.exists(md):
        return out
    state = None
    for line in open(md):
        h = re.match(r"#+\s*List of (\w+) tests", line)
        if h:
            state = h.group(1)
            continue
        m = re.match(r"\s*-\s*\[?([A-Za-z0-9_\-.]+)\]?", line)
        if m and state:
            out[m.group(1)] = state
    return out

def seconds(name):
    a, b = open(os.path.join(work, name + ".time")).read().split()
    return float(b) - float(a)

s = results("scimcp")
if len(s) != len(tests):
    print(f"error: cwltest reported {len(s)} of {len(tests)} tests for scimcp; see {work}/scimcp.log")
    sys.exit(1)
passed = {i for i, st in s.items() if st == "passed"}
t = seconds("scimcp")
print(f"scimcp:  required command_line_tool passed {len(passed & required)}/{len(required)}, "
      f"all command_line_tool passed {len(passed)}/{len(tests)} "
      f"({sum(1 for v in s.values() if v == 'unsupported')} unsupported), "
      f"{t:.1f} s, {1000 * t / len(tests):.0f} ms per test")
if with_cwltool:
    c = results("cwltool")
    cp = {i for i, st in c.items() if st == "passed"}
    ct = seconds("cwltool")
    print(f"cwltool: required command_line_tool passed {len(cp & required)}/{len(required)}, "
          f"all command_line_tool passed {len(cp)}/{len(tests)}, "
          f"{ct:.1f} s, {1000 * ct / len(tests):.0f} ms per test")

if update:
    why = {}
    for tc in ET.parse(os.path.join(work, "scimcp.xml")).iter("testcase"):
        err = tc.findtext("system-err") or ""
        line = next((l for l in err.splitlines() if l.startswith("scimcp cwl-run: ")), "")
        line = line.replace("scimcp cwl-run: ", "").replace(os.getcwd() + "/tests/cwl/", "")
        why[tc.get("file")] = line[:300] or "runs, but its output differs from the expected one"
    with open(expected_path, "w") as f:
        f.write("# CWL v1.2 command_line_tool conformance tests scimcp cwl-run does not pass, one a line:\n")
        f.write("# the test id, then why (what the runner said). scripts/cwl-conformance.sh fails on a\n")
        f.write("# failure not listed here and on a listed test that passes.\n")
        for tid in sorted(set(s) - passed):
            tag = " [required]" if tid in required else ""
            f.write(f"{tid} {s[tid]}{tag}: {why.get(tid, '')}\n")
expected = {}
for line in open(expected_path):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    tid, _, why = line.partition(" ")
    expected[tid] = why.strip()
bad = False
for tid in sorted(set(s) - passed):
    if tid not in expected:
        print(f"UNEXPECTED FAILURE: {tid} ({s[tid]}); fix it or list it in {expected_path} with why")
        bad = True
for tid in sorted(expected):
    if tid in passed:
        print(f"NOW PASSES: {tid}; remove it from {expected_path}")
        bad = True
    elif tid not in s:
        print(f"UNKNOWN TEST in {expected_path}: {tid}")
        bad = True
if bad:
    sys.exit(1)
print(f"every failure is listed ({len(expected)} in {expected_path})")
PY
