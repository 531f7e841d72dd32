#!/bin/sh
# The HTML report at scale (docs/performance.md, "The HTML report"): for 10k, 100k and 1M events,
# and 1M events with a wide live set, writes a training-loop snapshot (gen_timeline_snapshot.py),
# times `vramtrace export --format
# html`, states the file sizes, and measures the first render in chromium (viewer_render.cjs).
#   bench/run_viewer.sh BUILD_DIR [OUT_DIR]     (BUILD_DIR/npm holds playwright-core)
set -eu
build=$1
out=${2:-$build/viewer-bench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
pages=""
# The last row: 1M events with up to 40 000 allocations live at once (each column walks them).
for n in 10000 100000 1000000 wide; do
    if [ $n = wide ]; then
        python3 "$here/gen_timeline_snapshot.py" "$out/s$n.json" --events 1000000 --params 20000 --per-step 20000 >/dev/null
    else
        python3 "$here/gen_timeline_snapshot.py" "$out/s$n.json" --events $n >/dev/null
    fi
    start=$(date +%s%N)
    "$build/bin/vramtrace" export -f html -o "$out/s$n.html" "$out/s$n.json"
    end=$(date +%s%N)
    echo "$n events: snapshot $(stat -c %s "$out/s$n.json") B, export $(( (end - start) / 1000000 )) ms, page $(stat -c %s "$out/s$n.html") B"
    pages="$pages $out/s$n.html"
done
# shellcheck disable=SC2086
node "$here/viewer_render.cjs" "$build/npm/node_modules" $pages
