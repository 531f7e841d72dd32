#!/usr/bin/env bash
# The HTML report of a PyTorch training loop traced on the GPU (issue 19, docs/exports.md "html"):
# python_frames/train_torch.py under vramtrace with its whole event history, exported as the
# interactive page; the page's data must hold the history as bands, name the script's Python lines,
# and put the 1 GiB tensor's line (the script prints it as "EXPECT file:line") first among the
# call sites at the peak. The GPU machine has no browser: the last line is the command that opens
# the snapshot in the browser tests' harness on the development machine (tests/browser/).
# Prints PASS/FAIL lines and a failure count.
# Usage: tests/gpu/run_viewer.sh BUILD_DIR OUT_DIR   (BUILD_DIR: a build, or .gpu-carry)
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-viewer}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

for mode in default async; do
  conf=""; [ $mode = async ] && conf="backend:cudaMallocAsync"
  snap="$OUT/torch_$mode.json" page="$OUT/torch_$mode.html"
  PYTORCH_CUDA_ALLOC_CONF=$conf VRAMTRACE_SUMMARY=0 VRAMTRACE_EVENTS=1000000 \
    "$B/bin/vramtrace" run --output "$snap" -- "$py" "$SRC/tests/gpu/python_frames/train_torch.py" \
    >"$OUT/torch_$mode.out" 2>"$OUT/torch_$mode.err"
  rc=$?
  [ $rc = 0 ] && pass "$mode: traced run exit status 0" || { fail "$mode: traced run exit status $rc"; tail -5 "$OUT/torch_$mode.err"; continue; }
  expect=$(sed -n 's/^EXPECT //p' "$OUT/torch_$mode.out")
  start=$(date +%s%N)
  "$B/bin/vramtrace" export -f html -o "$page" "$snap" 2>"$OUT/export_$mode.err"
  rc=$?
  end=$(date +%s%N)
  [ $rc = 0 ] && pass "$mode: export html in $(( (end - start) / 1000000 )) ms, $(stat -c %s "$page") B from $(stat -c %s "$snap") B" \
    || { fail "$mode: export status $rc"; cat "$OUT/export_$mode.err"; continue; }
  "$py" - "$page" "$expect" "$mode" <<'PY' || failures=$((failures + 1))
import json, os, re, sys
page, expect, mode = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(page, encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', text, re.S)
data = json.loads(m.group(1))
run = data["runs"][0]
S = run["strings"]
ok = True
def check(good, what):
    global ok
    ok &= good
    print(("PASS " if good else "FAIL ") + mode + ": " + what)
check(text.count("<script") == 2, "the page has its two scripts only")
check(run["history"]["from_events"] and not run["history"]["wrapped"],
      "the timeline comes from the whole history (%d events recorded)" % run["history"]["recorded"])
gpu = [d for d in run["devices"] if d["device"] >= 0]
check(bool(gpu) and len(gpu[0]["bands"]["t0"]) > 0, "cuda bands: %s" % [(d["label"], len(d["bands"]["t0"])) for d in gpu])
py_lines = sorted({"%s:%d" % (S[f[1]], f[2]) for f in run["frames"] if f[3] & 2 and S[f[1]].endswith("train_torch.py")})
check(len(py_lines) > 0, "Python lines of the script in the stacks: %s" % py_lines[:8])
f, line = expect.rsplit(":", 1)
top = gpu[0]["peak_sites"][0] if gpu and gpu[0].get("peak_sites") else None
site = S[run["stacks"][top[0]][0]] if top else "(none)"
check(top is not None and ("%s:%s" % (f, line)) in site,
      "the first call site at the peak is the 1 GiB tensor's line %s: %s, %d B" % (expect, site, top[1] if top else 0))
sys.exit(0 if ok else 1)
PY
  echo "BROWSER $mode: node tests/browser/viewer_test.cjs BUILD/bin/vramtrace /tmp/vt-viewer-$mode BUILD/npm/node_modules tests/cli/data 'python=OUT/torch_$mode.json@$expect'"
done
echo "$failures failure(s)"
[ $failures = 0 ]
