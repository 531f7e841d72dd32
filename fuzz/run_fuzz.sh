#!/usr/bin/env bash
# Fuzzes the CLI's input paths with libFuzzer for a fixed number of executions per target, like a
# benchmark run. Targets, built with clang (-fsanitize=fuzzer,address,undefined):
#
#   snapshot_reader  fuzz/snapshot_reader_fuzz.cpp: read_snapshot_stream (tools/snapshot_reader.cpp)
#   command_input    fuzz/command_input_fuzz.cpp: what summary, export (every format), diff and
#                    merge do with what the reader accepted (the first input byte picks the command)
#   export_chrome, export_folded, export_pprof, export_pickle, export_html
#                    fuzz/exporter_fuzz.cpp: one exporter on snapshots built from the input bytes
#                    (deep stacks, thousands of inlined frames, any device ordinal), every output
#                    checked (the pickle by a restricted unpickler in the harness)
#
# For each target: replays every input kept in fuzz/regressions/TARGET/, then fuzzes RUNS
# executions from the seeds in fuzz/corpus/TARGET/. A crash fails the script and leaves the input in
# the work directory (crash-*, leak-*, timeout-*); after fixing the bug, copy it to
# fuzz/regressions/TARGET/: run_fuzz.sh and CTest (fuzz/CMakeLists.txt) replay it from then on.
#
#   fuzz/run_fuzz.sh [RUNS [TARGET...]]     (default 200000 executions, every target)
#
# Environment: CLANGXX (default clang++, then clang++-14), VRAMTRACE_FUZZ_DIR (work directory,
# default <repo>/build-fuzz), FUZZ_SECONDS (a time cap per target as well, default 600).
# clang-14 with Debian's libstdc++ 12 cannot compile C++20 <ranges>; the sources built here must
# stay free of it.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-200000}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(snapshot_reader command_input export_chrome export_folded export_pprof
  export_pickle export_html)
work="${VRAMTRACE_FUZZ_DIR:-$repo/build-fuzz}"
seconds="${FUZZ_SECONDS:-600}"
cxx="${CLANGXX:-}"
if [ -z "$cxx" ]; then
  for c in clang++ clang++-14; do command -v "$c" >/dev/null && { cxx=$c; break; }; done
fi
[ -n "$cxx" ] || { echo "run_fuzz: no clang++ (apt-get install clang)"; exit 2; }

t="$repo/tools"
# The layers of lib/ that the CLI shares (docs/design.md, "Layers").
s="$repo/lib/snapshot" r="$repo/lib/report" y="$repo/lib/symbolize"
reader_sources=("$t/snapshot_reader.cpp" "$t/snapshot_files.cpp" "$t/snapshot_references.cpp" "$s/report_model.cpp"
  "$r/text_safety.cpp")
# What the commands link, less main.cpp and the cmd_*.cpp argument handling.
command_sources=("${reader_sources[@]}" "$t/call_sites.cpp" "$t/diff_core.cpp" "$t/merge_core.cpp" "$t/merge_write.cpp" "$t/merge_text.cpp"
  "$t/text_table.cpp" "$t/snapshot_input.cpp" "$t/offline_symbolize.cpp" "$t/cli_common.cpp"
  "$r/summary_format.cpp" "$s/snapshot_writer.cpp" "$y/module_map.cpp" "$y/symbolizer.cpp" "$y/elf_symbols.cpp"
  "$y/debug_files.cpp" "$y/libdw_index.cpp" "$y/call_site.cpp"
  "$t"/export/*.cpp)

# The exporter targets share their objects, compiled once (export_objs/).
export_sources=("$t"/export/*.cpp "$s/report_model.cpp" "$r/summary_format.cpp" "$r/text_safety.cpp")
flags=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -DSPDLOG_FMT_EXTERNAL -DVRAMTRACE_VERSION='"fuzz"' -I"$repo/lib" -I"$t")
export_objects() {
  local objdir="$work/export_objs" src obj
  mkdir -p "$objdir"
  export_objs=()
  for src in "${export_sources[@]}"; do
    obj="$objdir/$(basename "$src" .cpp).o"
    if [ ! -e "$obj" ] || [ -n "$(find "$src" "$t/export" "$s" "$r" -newer "$obj" \( -name '*.cpp' -o -name '*.h' \) -print -quit)" ]; then
      "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
    fi
    export_objs+=("$obj")
  done
}

status=0
for target in "${targets[@]}"; do
  defines=()
  corpus_name=$target
  case "$target" in
    snapshot_reader) sources=("${reader_sources[@]}"); libs=() ;;
    command_input) sources=("${command_sources[@]}"); libs=(-lz -lfmt -ldl) ;;
    export_chrome|export_folded|export_pprof|export_pickle|export_html)
      index=0
      for f in chrome folded pprof pickle html; do [ "export_$f" = "$target" ] && break; index=$((index + 1)); done
      defines=(-DVT_FUZZ_EXPORTER=$index); corpus_name=exporter; libs=(-lz) ;;
    *) echo "run_fuzz: unknown target $target"; exit 2 ;;
  esac
  dir="$work/$target"
  mkdir -p "$dir/corpus"
  exe="$dir/${target}_fuzz"
  start=$(date +%s)
  # Rebuilt only when a source or header it may use is newer than the executable.
  if [ -x "$exe" ] && [ -z "$(find "$repo/fuzz" "$t" "$repo/lib" -newer "$exe" \( -name '*.cpp' -o -name '*.h' \) -print -quit)" ]; then
    echo "== $target: up to date"
  else
  echo "== $target: building"
  if [ "$corpus_name" = exporter ]; then
    export_objects
    "$cxx" "${flags[@]}" "${defines[@]}" "$repo/fuzz/exporter_fuzz.cpp" "${export_objs[@]}" "${libs[@]}" -o "$exe"
  else
    "$cxx" "${flags[@]}" "$repo/fuzz/${target}_fuzz.cpp" "${sources[@]}" "${libs[@]}" -o "$exe"
  fi
  fi
  built=$(date +%s)

  one=0
  regressions=("$repo/fuzz/regressions/$corpus_name"/*)
  if [ -e "${regressions[0]}" ]; then
    echo "== $target: replaying ${#regressions[@]} regression inputs"
    "$exe" -runs=1 "${regressions[@]}" || one=$?
  fi
  if [ $one -eq 0 ]; then
    echo "== $target: fuzzing, $runs executions (cap ${seconds} s)"
    # New corpus entries go to $dir/corpus; the seeds in the repository are read only.
    (cd "$dir" && "$exe" -runs="$runs" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
       -rss_limit_mb=2048 -print_final_stats=1 "$dir/corpus" "$repo/fuzz/corpus/$corpus_name") || one=$?
  fi
  end=$(date +%s)
  echo "run_fuzz: $target: build $((built - start)) s, fuzz $((end - built)) s, exit status $one"
  if [ $one -ne 0 ]; then
    echo "run_fuzz: the crashing input is $dir/crash-* (or leak-*/timeout-*)"
    status=$one
  fi
done
exit $status
