#!/usr/bin/env bash
# The Python package end to end, as a user gets it: builds the wheel from the CMake build (target
# python_wheel: Debian's python3-build and python3-wheel, offline), installs it into a fresh venv
# with `pip install --no-index`, and runs, on the stand-in CUDA runtime:
#   - `python -m vramtrace run` on a Python program using the API (marks in the snapshot, a phase's
#     NVTX range on its allocation, stats and the scoped peak, dump);
#   - the API without the library: no-ops with one warning each;
#   - the helpers (test_helpers.py) and the pytest plugin through pytester (test_plugin.py);
#   - the IPython extension through IPython's API (test_ipython.py), under `vramtrace run`.
# The venv sees the system's site-packages for pytest and IPython (python3-pytest, python3-ipython).
# Usage: check_wheel.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
here=$src/tests/packaging
py=/usr/bin/python3
[[ -x $py ]] || py=$(command -v python3)
cudart=$build/standin/libcudart.so.13
. "$(dirname "${BASH_SOURCE[0]}")/../common/check_lines.sh"

for need in "build python3-build" "wheel python3-wheel" "venv python3-venv" "pytest python3-pytest" \
            "IPython python3-ipython" "ensurepip python3-venv"; do
    set -- $need
    if ! "$py" -c "import $1" 2>/dev/null; then fail "python module $1 missing: install the Debian package $2"; fi
done
((failures == 0)) || finish

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! cmake --build "$build" --target python_wheel >"$tmp/wheel.log" 2>&1; then
    cat "$tmp/wheel.log"; fail "the wheel does not build"; finish
fi
wheels=("$build"/dist/vramtrace-*.whl)
if [[ ${#wheels[@]} -eq 1 && -f ${wheels[0]} ]]; then pass "wheel built: $(basename "${wheels[0]}")"; else fail "no single wheel in $build/dist"; finish; fi

"$py" -m venv --system-site-packages "$tmp/venv" || { fail "python3 -m venv"; finish; }
vpy=$tmp/venv/bin/python
if "$vpy" -m pip install -q --no-index "${wheels[0]}" >"$tmp/pip.log" 2>&1; then pass "pip install --no-index"; else cat "$tmp/pip.log"; fail "pip install"; finish; fi

# The CLI finds the libraries the wheel bundles wherever the system lacks them (Ubuntu has another
# libsimdjson): its RUNPATH is the wheel's lib folder, whatever is installed on this machine.
cli=$("$vpy" -c 'import os, vramtrace; print(os.path.join(os.path.dirname(vramtrace.__file__), "bin", "vramtrace"))')
runpath=$(readelf -d "$cli" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[[ $runpath == '$ORIGIN/../lib' ]] && pass "the wheel's CLI has RUNPATH \$ORIGIN/../lib" || fail "the wheel's CLI has RUNPATH '$runpath'"
version=$("$tmp/venv/bin/vramtrace" --version | head -1)
[[ $version == "vramtrace $("$vpy" -c 'import vramtrace; print(vramtrace.__version__)')" ]] && pass "console script: $version" || fail "console script --version: '$version'"

# The API under `python -m vramtrace run script.py`.
cd "$tmp"
out=$("$vpy" -m vramtrace run --quiet --output "$tmp/run.json" "$here/standin_program.py" "$cudart" "$tmp/api.json" 2>"$tmp/run.err")
rc=$?
[[ $rc -eq 0 ]] && pass "python -m vramtrace run: exit 0" || { cat "$tmp/run.err"; fail "python -m vramtrace run: exit $rc"; }
grep -qx "loaded True" <<<"$out" && pass "vramtrace.loaded() under run" || fail "loaded: $out"
# 3 MiB (phase) live, 5 MiB allocated and freed: peak 8 MiB; after the reset 3 + 2 MiB.
grep -qx "stats current 3145728 peak 8388608 allocs 3" <<<"$out" && pass "stats(): current 3145728, peak 8388608, 3 allocations" || fail "stats: $out"
grep -qx "scope peak 5242880" <<<"$out" && pass "scope_stats(): 5242880 since scope_reset()" || fail "scope: $out"
"$py" - "$tmp/api.json" <<'PY' && pass "snapshot: both marks, the phase's range on its allocation" || fail "snapshot contents"
import json, sys
d = json.load(open(sys.argv[1]))
marks = [e["label"] for e in d["events"] if e["type"] == "mark"]
assert marks == ["before forward", "after forward"], marks
ranges = {r["id"]: r["names"] for r in d.get("nvtx_ranges", [])}
live = [(a["size"], ranges.get(a.get("range", 0))) for a in d["allocations"]]
assert live == [(3145728, ["forward"])], live
PY
[[ -s $tmp/run.json ]] && pass "exit snapshot written" || fail "no exit snapshot"

# Without the library: each call a no-op, one warning per function however often it is called.
"$vpy" -W always - <<'PY' && pass "API without the library: no-ops, one warning each" || fail "API without the library"
import warnings
import vramtrace
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    assert vramtrace.loaded() is False
    for _ in range(3):
        assert vramtrace.dump("x.json") is None
        assert vramtrace.stats() == {}
        vramtrace.mark("m")
        with vramtrace.phase("p"):
            pass
texts = [str(x.message) for x in w]
assert len(texts) == 4, texts
assert all("libvramtrace.so is not loaded" in t for t in texts), texts
PY

if "$vpy" -m pytest -q -p no:cacheprovider "$here/test_helpers.py" >"$tmp/helpers.log" 2>&1; then
    pass "helpers (sizes, run's script operand): $(tail -1 "$tmp/helpers.log")"
else
    cat "$tmp/helpers.log"; fail "helpers"
fi
if VT_STANDIN_CUDART=$cudart "$vpy" -m pytest -q -p no:cacheprovider "$here/test_plugin.py" >"$tmp/plugin.log" 2>&1; then
    pass "pytest plugin (pytester): $(tail -1 "$tmp/plugin.log")"
else
    cat "$tmp/plugin.log"; fail "pytest plugin"
fi
if VT_STANDIN_CUDART=$cudart "$vpy" -m vramtrace run --quiet --output "$tmp/ipython.json" -- "$vpy" -m pytest -q \
        -p no:cacheprovider "$here/test_ipython.py" >"$tmp/ipython.log" 2>&1; then
    pass "IPython extension: $(tail -1 "$tmp/ipython.log")"
else
    cat "$tmp/ipython.log"; fail "IPython extension"
fi
finish
