#!/usr/bin/env python3
"""Vendor the CWL v1.2 conformance tests tagged command_line_tool into tests/cwl/.

Run once per update, against a checkout of common-workflow-language/cwl-v1.2:
    python3 scripts/cwl-vendor.py CHECKOUT COMMIT
It writes tests/cwl/command_line_tool.yaml (the 195 tests, each with its id, doc, tags,
tool, job, output and should_fail as upstream has them, tool/job relative to tests/cwl/),
copies the files those tools and jobs use (found by following the file names their text
mentions, to a fixed point), and the suite's LICENSE.txt. Nothing is fetched at lane time.
"""
import os
import re
import shutil
import sys

import yaml

src, commit = sys.argv[1], sys.argv[2]
dest = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cwl")
dest = os.path.normpath(dest)


def rebase(v, base):
    """`$include`/`$import` inside a test (an expected output) made relative to the top."""
    if isinstance(v, dict):
        return {k: (os.path.relpath(os.path.join(base, x), src) if k in ("$include", "$import")
                    and isinstance(x, str) else rebase(x, base)) for k, x in v.items()}
    if isinstance(v, list):
        return [rebase(x, base) for x in v]
    return v


def load_index(path):
    with open(path) as f:
        items = yaml.safe_load(f)
    out = []
    base = os.path.dirname(path)
    for item in items:
        if "$import" in item:
            out.extend(load_index(os.path.join(base, item["$import"])))
            continue
        for key in ("tool", "job"):
            if item.get(key):
                item[key] = os.path.relpath(os.path.join(base, item[key]), src)
        out.append(rebase(item, base))
    return out


tests = [t for t in load_index(os.path.join(src, "conformance_tests.yaml"))
         if "command_line_tool" in t.get("tags", [])]
every = {}
for root, _, files in os.walk(os.path.join(src, "tests")):
    for name in files:
        rel = os.path.relpath(os.path.join(root, name), src)
        every[rel] = name
needed = set()


def includes(v):
    if isinstance(v, dict):
        for k, x in v.items():
            if k in ("$include", "$import") and isinstance(x, str):
                yield x
            else:
                yield from includes(x)
    elif isinstance(v, list):
        for x in v:
            yield from includes(x)


for t in tests:
    needed.update(includes(t))
    for key in ("tool", "job"):
        if t.get(key):
            needed.add(t[key].split("#")[0])
# Follow names mentioned in each needed file (paths relative to it, or bare names beside it).
frontier = list(needed)
while frontier:
    rel = frontier.pop()
    path = os.path.join(src, rel)
    if not os.path.isfile(path):
        continue
    try:
        text = open(path, encoding="utf-8").read()
    except UnicodeDecodeError:
        continue
    here = os.path.dirname(rel)
    for token in set(re.findall(r"[A-Za-z0-9_.#%\-/]+", text)):
        for cand in (os.path.normpath(os.path.join(here, token)), token):
            cand = cand.replace("%23", "#")
            if cand in every and cand not in needed:
                needed.add(cand)
                frontier.append(cand)
            # A directory named in a job: take all of it.
            full = os.path.join(src, cand)
            if os.path.isdir(full) and cand.startswith("tests/") and cand != "tests":
                for r, _, fs in os.walk(full):
                    for n in fs:
                        sub = os.path.relpath(os.path.join(r, n), src)
                        if sub not in needed:
                            needed.add(sub)
                            frontier.append(sub)

# Files no text names literally: found by a secondaryFiles pattern (`.fai`, `.sec`) or
# through an escape in a location (`%3A`, `%23`) that the token scan above cannot follow.
for extra in ("tests/A:Gln2Cys", "tests/octothorpe/item #1.txt", "tests/ref.fasta.fai",
              "tests/ref2.fasta.fai", "tests/sfa-1.txt.sec", "tests/sfa-2.txt.sec"):
    if os.path.isfile(os.path.join(src, extra)):
        needed.add(extra)

if os.path.isdir(os.path.join(dest, "tests")):
    shutil.rmtree(os.path.join(dest, "tests"))
for rel in sorted(needed):
    s = os.path.join(src, rel)
    if os.path.isfile(s):
        d = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copy2(s, d)
shutil.copy2(os.path.join(src, "LICENSE.txt"), os.path.join(dest, "LICENSE.txt"))
with open(os.path.join(dest, "command_line_tool.yaml"), "w") as f:
    f.write("# The command_line_tool-tagged tests of common-workflow-language/cwl-v1.2 at %s,\n" % commit)
    f.write("# flattened from conformance_tests.yaml and its imports by scripts/cwl-vendor.py.\n")
    yaml.safe_dump(tests, f, sort_keys=False, allow_unicode=True, width=100)
print("%d tests, %d files" % (len(tests), len(needed)))
