#!/usr/bin/env bash
# The benchmark suite's driver and summarizer (bench/run, bench/summarize.py), without timing
# anything: the help, the dry runs of the real table of cases (how many commands, in which order),
# and a run of tests/bench/cases.txt, whose stand-in benchmark prints figures known in advance.
# Usage: tests/bench/suite_test.sh    Prints PASS/FAIL lines; exits 1 on any failure.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { # NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "PASS $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

"$SRC/bench/run" --help >"$T/help" 2>&1
check "help exits 0" test $? = 0
check "help lines within 100 columns" test "$(awk 'length($0) > 100' "$T/help" | wc -l)" = 0
check "help names the suites" grep -qF "{cpu,gpu}" "$T/help"

V=(--lib a=/nonexistent/a.so --base b=/nonexistent/b.so --rounds 2 --build "$T/build" --out "$T/dry")
"$SRC/bench/run" cpu --dry-run "${V[@]}" >"$T/cpu"
# clock build + clock 1 + capture 2 + hook 8 cases x 3 variants x 2 rounds + tracking 1 + dump 2
# variants + summary 1 + symbolize 1 + two callgrind counts x 2 variants + python frames 2 x 3 x 2
check "cpu dry run: 73 commands" test "$(wc -l <"$T/cpu")" = 73
check "cpu dry run: rounds rotate the variants" test \
  "$(grep '^hook_fp_32 ' "$T/cpu" | cut -d: -f1 | tr '\n' ,)" = \
  "hook_fp_32 [untraced] round 1,hook_fp_32 [a] round 1,hook_fp_32 [b] round 1,hook_fp_32 [a] round 2,hook_fp_32 [b] round 2,hook_fp_32 [untraced] round 2,"
check "cpu dry run: preload and depth of a traced hook run" grep -qxF \
  "hook_nofp_64 [b] round 1: VRAMTRACE_STACK_DEPTH=64 LD_PRELOAD=/nonexistent/b.so $T/build/bin/bench_hook_pair_nofp --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 --benchmark_format=json --benchmark_filter=/frames:64/" "$T/cpu"
check "cpu dry run: the callgrind count gets the variant as an argument, not preloaded" grep -qxF \
  "pair_instructions [a] round 1: WORK=$T/dry/work/count_pair bash $SRC/bench/count_pair_instructions.sh $T/build a=/nonexistent/a.so" "$T/cpu"
"$SRC/bench/run" gpu --dry-run "${V[@]}" >"$T/gpu"
# 4 builds + clock 1 + pairs 4 x 3 x 2 + pair_ab 3 x 2 + threads 5 x 3 x 2 + PyTorch 4 x 3 x 2 +
# recorder 4 x 2
check "gpu dry run: 97 commands" test "$(wc -l <"$T/gpu")" = 97
check "gpu dry run: --only keeps the setup steps" test \
  "$("$SRC/bench/run" gpu --dry-run "${V[@]}" --only '^threads_8$' | cut -d: -f1 | tr '\n' ,)" = \
  "build_alloc_pairs_static [setup] round 1,build_alloc_pairs_shared [setup] round 1,build_clock_cost [setup] round 1,build_pair_ab [setup] round 1,threads_8 [untraced] round 1,threads_8 [a] round 1,threads_8 [b] round 1,threads_8 [a] round 2,threads_8 [b] round 2,threads_8 [untraced] round 2,"

# A real run of the stand-in cases: ab (3 rounds, 3 variants), args, one that fails and one whose
# program is missing.
(cd "$T" && "$SRC/bench/run" cpu --cases "$SRC/tests/bench/cases.txt" --out "$T/out" \
  --lib a=/nonexistent/a.so,FAKE_NS=200 --base b=/nonexistent/b.so,FAKE_NS=150 >"$T/tables" 2>"$T/err")
check "a failed case makes the suite exit 1" test $? = 1
python3 - "$T/out/results.json" >"$T/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["cases"]["fake_one"]["figures"]
# Counter order: round 1 untraced a b (1 2 3), round 2 a b untraced (4 5 6), round 3 b untraced a.
for v in ("untraced", "a", "b"):
    x = f[v]["ns_per_pair"]
    print(v, x["values"], x["median"], x["min"], x["max"], f[v]["preloaded"]["values"])
print("args", {v: d["cases"]["pair_instructions"]["figures"][v]["frames=12|instructions_per_pair"]["values"]
               for v in ("a", "b")})
print("failures", [(x["case"], x["variant"], x["why"]) for x in d["failures"]])
print("notes", d["cases"]["fake_one"]["notes"])
PY
cat >"$T/want" <<'EOF2'
untraced [101.0, 106.0, 108.0] 106.0 101.0 108.0 [0.0, 0.0, 0.0]
a [202.0, 204.0, 209.0] 204.0 202.0 209.0 [1.0, 1.0, 1.0]
b [153.0, 155.0, 157.0] 155.0 153.0 157.0 [1.0, 1.0, 1.0]
args {'a': [2200.0], 'b': [2150.0]}
failures [('broken', 'untraced', 'exit status 3'), ('missing', 'untraced', 'exit status 127')]
notes ['check: fake walk agrees']
EOF2
check "results.json: each round's figure under its variant, median, min, max" diff "$T/want" "$T/json"
check "tables: the A/B row with the difference to the base" grep -qxF \
  "| fake_one | ns_per_pair | 106.0 (101.0-108.0) | 204.0 (202.0-209.0) | 155.0 (153.0-157.0) | a: -49.0 yes |" "$T/tables"
check "tables: instructions against the base" grep -qxF \
  "| a | 700 | +50 | - | - | - | - | - | - |" "$T/tables"
check "tables: the failure is listed" grep -qF "FAILED broken [untraced] round 1: exit status 3 no figures" "$T/tables"
check "tables.md holds what was printed" cmp -s "$T/tables" "$T/out/tables.md"
echo "== $fails failure(s)"
[ "$fails" = 0 ]
