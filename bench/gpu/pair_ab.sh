#!/usr/bin/env bash
# Issue 20's one-thread figure, inside the process: bench/gpu/pair_ab.cu (the library's hooks against
# libcuda's own code, alternated blocks in one process) run ROUNDS times (default 10) untraced and
# under each library given, alternated, each process on the CPUs PIN (default 2,3).
# Usage: bench/gpu/pair_ab.sh OUT_DIR NAME=LIB.so [NAME=LIB.so ...]
#   (PAIRS per block, default 20000; BLOCKS, default 40; FRAMES, default 32)
# Prints the RESULT lines (also in OUT_DIR/pair_ab.txt) and, per variant, the median over processes
# of the in-process difference (linked - direct, ns per pair) with its min-max.
set -u
OUT=${1:?usage: pair_ab.sh OUT_DIR NAME=LIB.so...}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-/tmp/vramtrace-pair-ab}
mkdir -p "$OUT" "$WORK"
RES=$OUT/pair_ab.txt
: >"$RES"
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$WORK/snap-%p.json"
nvcc -O2 -std=c++17 "$HERE/pair_ab.cu" -o "$WORK/pair_ab" -lcuda || exit 1
for round in $(seq "${ROUNDS:-10}"); do
  for spec in untraced= "$@"; do
    name=${spec%%=*} lib=${spec#*=}
    line=$(env ${lib:+LD_PRELOAD=$lib} taskset -c "${PIN:-2,3}" "$WORK/pair_ab" "${PAIRS:-20000}" \
      "${BLOCKS:-40}" "${FRAMES:-32}" 2>>"$OUT/stderr.txt" | grep '^RESULT')
    echo "variant=$name round=$round ${line#RESULT }" | tee -a "$RES"
    rm -f "$WORK"/snap-*.json
  done
done
python3 - "$RES" <<'PY'
import collections, re, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    kv = dict(re.findall(r"(\w+)=(\S+)", line))
    if "diff_ns" in kv:
        rows[kv["variant"]].append(kv)
untraced = {r["round"]: float(r["linked_ns"]) for r in rows.get("untraced", [])}
print("variant | in-process diff, ns per pair: median (min-max) over processes | linked | direct | "
      "direct / untraced process | recorded == expected")
for name, rs in rows.items():
    d = [float(r["diff_ns"]) for r in rs]
    lk = [float(r["linked_ns"]) for r in rs]
    di = [float(r["direct_ns"]) for r in rs]
    rel = [float(r["direct_ns"]) / untraced[r["round"]] for r in rs if r["round"] in untraced]
    ok = all(r["recorded"] == r["expected_recorded"] for r in rs)
    print("%s | %.0f (%.0f..%.0f) | %.0f | %.0f | %.3f | %s" % (name, statistics.median(d), min(d), max(d),
          statistics.median(lk), statistics.median(di), statistics.median(rel) if rel else 0, ok))
PY
