#!/usr/bin/env bash
# Fuzzes the CLI's input paths with libFuzzer for a fixed number of executions per target, like a
# benchmark run. Targets, built with clang (-fsanitize=fuzzer,address,undefined):
#
#   snapshot_reader  fuzz/snapshot_reader_fuzz.cpp: read_snapshot_stream (lib/snapshot/reader/snapshot_reader.cpp)
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
# The code under test, compiled once into one static archive (objs/) that every target links: the
# linker takes from it only what a target uses, as from CMake's static libraries. Its sources are
# found, not listed, so that a new or moved file needs no edit here:
#   - the CLI's code, what vramtrace_cli is made of (tools/CMakeLists.txt): every source under
#     tools/ but the two that hold a main(), main.cpp and settings_doc.cpp;
#   - the layers of lib/ that vramtrace_cli links and the CLI's code calls (lib/CMakeLists.txt: one
#     folder, one layer), whole: settings, snapshot (with the reader), live, report, symbolize; and from
#     dump/, the file writer alone (the rest of dump/ is the library's snapshot builder).
lib_dirs=(settings snapshot live report symbolize)
lib_files=(dump/atomic_file.cpp)
archive_sources=()
while IFS= read -r src; do archive_sources+=("$src"); done < <(find "$t" -name '*.cpp' ! -path "$t/main.cpp" ! -path "$t/settings_doc.cpp" | sort)
for d in "${lib_dirs[@]}"; do
  [ -d "$repo/lib/$d" ] || { echo "run_fuzz: no lib/$d"; exit 2; }
  while IFS= read -r src; do archive_sources+=("$src"); done < <(find "$repo/lib/$d" -name '*.cpp' | sort)
done
for f in "${lib_files[@]}"; do
  [ -f "$repo/lib/$f" ] || { echo "run_fuzz: no lib/$f"; exit 2; }
  archive_sources+=("$repo/lib/$f")
done

# The shipped frame rules, embedded as lib/CMakeLists.txt embeds them.
mkdir -p "$work/objs"
rules_cpp="$work/objs/frame_rules_text.cpp"
{ echo 'extern const char kShippedFrameRules[];'; printf 'const char kShippedFrameRules[] = R"vtrules('
  cat "$repo/lib/symbolize/frame_rules.txt"; echo ')vtrules";'; } >"$rules_cpp.new"
cmp -s "$rules_cpp.new" "$rules_cpp" && rm "$rules_cpp.new" || mv "$rules_cpp.new" "$rules_cpp"
archive_sources+=("$rules_cpp")
# The HTML viewer's JavaScript and CSS, embedded as tools/CMakeLists.txt embeds them.
assets_cpp="$work/objs/viewer_assets.cpp"
js=""
for part in viewer_base viewer_timeline viewer_composition viewer_flame viewer_cards viewer_page; do
  js="$js${js:+;}$t/export/html/$part.js"
done
cmake -DJS="$js" -DCSS="$t/export/html/viewer.css" -DOUT="$assets_cpp.new" \
  -P "$t/export/html/embed_assets.cmake" || { echo "run_fuzz: embedding the viewer's assets failed"; exit 2; }
cmp -s "$assets_cpp.new" "$assets_cpp" && rm "$assets_cpp.new" || mv "$assets_cpp.new" "$assets_cpp"
archive_sources+=("$assets_cpp")

flags=(-std=c++20 -gline-tables-only -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -DSPDLOG_FMT_EXTERNAL -DVRAMTRACE_VERSION='"fuzz"' -I"$repo/lib" -I"$t")
archive="$work/objs/libfuzz_sources.a"
# Compiles what changed (an object is rebuilt when any source or header under tools/ or lib/ is
# newer than it), as many at once as there are CPUs, and rewrites the archive from the current
# sources (an object whose source is not among them is left out).
build_archive() {
  local src rel obj objs=() jobs=0 failed=0 max
  max=$(nproc 2>/dev/null || echo 2)
  for src in "${archive_sources[@]}"; do
    rel=${src#"$repo"/}
    obj="$work/objs/${rel%.cpp}.o"
    objs+=("$obj")
    if [ ! -e "$obj" ] || [ -n "$(find "$t" "$repo/lib" -newer "$obj" \( -name '*.cpp' -o -name '*.h' \) -print -quit)" ]; then
      mkdir -p "$(dirname "$obj")"
      if [ $jobs -ge "$max" ]; then wait -n || failed=1; jobs=$((jobs - 1)); fi
      "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      jobs=$((jobs + 1))
    fi
  done
  while [ $jobs -gt 0 ]; do wait -n || failed=1; jobs=$((jobs - 1)); done
  [ $failed -eq 0 ] || { echo "run_fuzz: compiling the archive's sources failed"; exit 2; }
  if [ ! -e "$archive" ] || [ -n "$(find "${objs[@]}" -newer "$archive" -print -quit)" ] ||
     [ "$(cat "$archive.list" 2>/dev/null)" != "$(printf '%s\n' "${objs[@]}")" ]; then
    rm -f "$archive"
    # q, not r: r would replace a member by another of the same file name (lib/x/a.o, tools/y/a.o).
    "$ar" qcs "$archive" "${objs[@]}"
    printf '%s\n' "${objs[@]}" >"$archive.list"
  fi
}
ar="${AR:-}"
if [ -z "$ar" ]; then
  for a in ar llvm-ar llvm-ar-14; do command -v "$a" >/dev/null && { ar=$a; break; }; done
fi
[ -n "$ar" ] || { echo "run_fuzz: no ar (apt-get install binutils)"; exit 2; }
mkdir -p "$work/objs"
archive_built=0

status=0
for target in "${targets[@]}"; do
  defines=()
  corpus_name=$target
  case "$target" in
    snapshot_reader) libs=() ;;
    command_input) libs=(-lz -lfmt -lsimdjson -ldl) ;;
    export_chrome|export_folded|export_pprof|export_pickle|export_html)
      index=0
      for f in chrome folded pprof pickle html; do [ "export_$f" = "$target" ] && break; index=$((index + 1)); done
      defines=(-DVT_FUZZ_EXPORTER=$index); corpus_name=exporter; libs=(-lz -lfmt -lsimdjson -ldl) ;; # html: the diff key of call sites (tools/analysis) links the CLI's logging
    *) echo "run_fuzz: unknown target $target"; exit 2 ;;
  esac
  dir="$work/$target"
  mkdir -p "$dir/corpus"
  exe="$dir/${target}_fuzz"
  start=$(date +%s)
  if [ $archive_built -eq 0 ]; then
    build_archive
    archive_built=1
  fi
  # Relinked only when the archive or a source or header of fuzz/ is newer than the executable.
  if [ -x "$exe" ] && [ ! "$archive" -nt "$exe" ] &&
     [ -z "$(find "$repo/fuzz" -newer "$exe" \( -name '*.cpp' -o -name '*.h' \) -print -quit)" ]; then
    echo "== $target: up to date"
  else
    echo "== $target: building"
    if [ "$corpus_name" = exporter ]; then harness="$repo/fuzz/exporter_fuzz.cpp"; else harness="$repo/fuzz/${target}_fuzz.cpp"; fi
    "$cxx" "${flags[@]}" "${defines[@]}" "$harness" "$archive" "${libs[@]}" -o "$exe"
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
