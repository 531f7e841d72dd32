#!/usr/bin/env bash
# Fuzzes the snapshot reader (tools/snapshot_reader.cpp, read_snapshot_stream) with libFuzzer for a
# fixed number of executions, like a benchmark run: builds fuzz/snapshot_reader_fuzz.cpp with clang
# (-fsanitize=fuzzer,address,undefined), replays every saved regression input, then fuzzes from the
# seed corpus. A crash fails the script and leaves the input in the work directory; copy it to
# fuzz/regressions/snapshot_reader/ (it is then replayed on every run).
#
#   fuzz/run_fuzz.sh [RUNS]           (default 200000 executions)
#
# Environment: CLANGXX (default clang++, then clang++-14), VRAMTRACE_FUZZ_DIR (work directory,
# default <repo>/build-fuzz), FUZZ_SECONDS (a time cap as well, default 600).
# clang-14 with Debian's libstdc++ 12 cannot compile C++20 <ranges>; the sources built here must
# stay free of it.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-200000}"
work="${VRAMTRACE_FUZZ_DIR:-$repo/build-fuzz}"
seconds="${FUZZ_SECONDS:-600}"
cxx="${CLANGXX:-}"
if [ -z "$cxx" ]; then
  for c in clang++ clang++-14; do command -v "$c" >/dev/null && { cxx=$c; break; }; done
fi
[ -n "$cxx" ] || { echo "run_fuzz: no clang++ (apt-get install clang)"; exit 2; }
mkdir -p "$work/corpus"

exe="$work/snapshot_reader_fuzz"
sources=("$repo/fuzz/snapshot_reader_fuzz.cpp" "$repo/tools/snapshot_reader.cpp" "$repo/lib/reporting/report_model.cpp")
start=$(date +%s)
"$cxx" -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$repo/lib" -I"$repo/tools" "${sources[@]}" -o "$exe"
built=$(date +%s)

status=0
regressions=("$repo"/fuzz/regressions/snapshot_reader/*)
if [ -e "${regressions[0]}" ]; then
  echo "== replaying ${#regressions[@]} regression inputs"
  "$exe" -runs=1 "${regressions[@]}" || status=$?
fi
if [ $status -eq 0 ]; then
  echo "== fuzzing: $runs executions (cap ${seconds} s)"
  # New corpus entries go to $work/corpus; the seeds in the repository are read only.
  (cd "$work" && "$exe" -runs="$runs" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
     -rss_limit_mb=2048 -print_final_stats=1 "$work/corpus" "$repo/fuzz/corpus/snapshot_reader") || status=$?
fi
end=$(date +%s)
echo "run_fuzz: build $((built - start)) s, fuzz $((end - built)) s, exit status $status"
[ $status -eq 0 ] || echo "run_fuzz: the crashing input is $work/crash-* (or leak-*/timeout-*)"
exit $status
