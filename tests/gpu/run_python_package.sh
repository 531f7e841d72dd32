#!/usr/bin/env bash
# The Python package on a GPU (issue 36, docs/python.md): the wheel installed in a venv that sees
# the system's torch (--system-site-packages), then `pytest --vramtrace` on a file of PyTorch tests
# (python_package/test_torch_limits.py): the test over its limit_vram fails naming its line, the
# one under it passes, the one that keeps a tensor fails no_vram_leak naming its line; and
# `python -m vramtrace run` on a script that uses the API with torch. PASS/FAIL lines, a count.
# Usage: tests/gpu/run_python_package.sh CARRY OUT_DIR
#   CARRY: .gpu-carry from prepare_carry.sh with the wheel copied into CARRY/dist/ (see README.md).
set -u
C=$(cd "${1:-.gpu-carry}" && pwd)
OUT=${2:-/tmp/vramtrace-python-package}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
D="$SRC/tests/gpu/python_package"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check_lines.sh"

wheel=$(ls "$C"/dist/vramtrace-*.whl 2>/dev/null | head -1)
[ -f "$wheel" ] || { fail "no wheel in $C/dist (cmake --build build --target python_wheel; cp -r build/dist $C/)"; finish; }
"$py" -c "import torch; assert torch.cuda.is_available()" || { fail "torch with CUDA is not importable by $py"; finish; }
"$py" -c "import pytest" 2>/dev/null || { fail "pytest is not importable by $py (the venv takes it from the system)"; finish; }

venv=$OUT/venv
rm -rf "$venv"
if "$py" -m venv --system-site-packages "$venv" >"$OUT/venv.log" 2>&1; then
    "$venv/bin/python" -m pip install -q --no-index "$wheel" >"$OUT/pip.log" 2>&1 && pass "venv + pip install --no-index $(basename "$wheel")" \
        || { cat "$OUT/pip.log"; fail "pip install"; finish; }
else
    # No ensurepip (python3-venv) here: a venv without pip, the wheel unpacked into it (a wheel is
    # a zip of site-packages, its entry points included).
    "$py" -m venv --system-site-packages --without-pip "$venv" || { cat "$OUT/venv.log"; fail "venv"; finish; }
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    "$venv/bin/python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$site"
    chmod +x "$site/vramtrace/bin/vramtrace"
    pass "venv without pip (no ensurepip): wheel unpacked into it"
fi
# When PYTHON is itself a venv's interpreter (torch installed in that venv), --system-site-packages
# reaches only the base interpreter's packages: a .pth file adds PYTHON's own site-packages.
if ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
    vsite=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    "$py" -c 'import site, sys; print("\n".join(p for p in site.getsitepackages() if p))' >"$vsite/vramtrace-outer-site.pth"
    echo "INFO torch is in $py's own environment: added $(tr '\n' ' ' <"$vsite/vramtrace-outer-site.pth") through a .pth file"
fi
"$venv/bin/python" -c "import torch, pytest" || { fail "the venv does not see torch and pytest"; finish; }
pkg=$("$venv/bin/python" -c 'import os, vramtrace; print(os.path.dirname(vramtrace.__file__))')
# The wheel brings the CLI's libfmt and libsimdjson; everything else it needs is on the system.
if "$pkg/bin/vramtrace" --version >"$OUT/version.out" 2>&1; then
    pass "the wheel's CLI runs here: $(head -1 "$OUT/version.out")"
else
    cat "$OUT/version.out"; ldd "$pkg/bin/vramtrace" | grep "not found"; fail "the wheel's CLI does not run here"; finish
fi

cd "$OUT"
"$venv/bin/python" -m pytest --vramtrace --vramtrace-output "$OUT/pytest-session.json" -p no:cacheprovider -rA \
    "$D/test_torch_limits.py" >"$OUT/pytest.out" 2>&1
rc=$?
cp "$OUT/pytest.out" "$OUT/pytest.log"
line() { grep -n "# @$1" "$D/test_torch_limits.py" | cut -d: -f1; }
out=$(cat "$OUT/pytest.out")
grep -q "2 failed, 1 passed" <<<"$out" && [ $rc -eq 1 ] && pass "pytest: 2 failed, 1 passed (exit 1)" || { tail -40 "$OUT/pytest.out"; fail "pytest outcome (exit $rc)"; }
grep -q "PASSED .*test_torch_limits.py::test_under_limit" <<<"$out" && pass "test_under_limit passed" || fail "test_under_limit did not pass"
grep -q "device 0 peaked at 512.0 MiB (536870912 bytes) during this test, over its limit_vram of 256.0 MiB (268435456 bytes)" <<<"$out" \
    && pass "test_over_limit: peak 536870912 over 268435456" || fail "test_over_limit: no exact peak line"
grep -qE "512\.0 MiB  \S*test_torch_limits\.py:$(line over) \(test_over_limit\)" <<<"$out" \
    && pass "test_over_limit names its line test_torch_limits.py:$(line over)" || fail "test_over_limit does not name line $(line over)"
grep -q "device 0: this test left 32.0 MiB (33554432 bytes) of device memory it allocated" <<<"$out" \
    && pass "test_keeps_a_tensor: 33554432 bytes left" || fail "test_keeps_a_tensor: no exact leak line"
grep -qE "32\.0 MiB  \S*test_torch_limits\.py:$(line leak) \(test_keeps_a_tensor\)" <<<"$out" \
    && pass "test_keeps_a_tensor names its line test_torch_limits.py:$(line leak)" || fail "test_keeps_a_tensor does not name line $(line leak)"
sed -n '/vramtrace: device memory per test/,/short test summary/p' "$OUT/pytest.out" | sed 's/^/INFO /'

# The API with torch under python -m vramtrace run: a phase labels the tensor's segment.
cat >"$OUT/api_torch.py" <<'PY'
import sys, torch, vramtrace
assert vramtrace.loaded()
with vramtrace.phase("forward"):
    x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
vramtrace.mark("after forward")
print("stats", vramtrace.stats()[0]["current_bytes"], torch.cuda.memory_reserved())
vramtrace.dump(sys.argv[1])
PY
"$venv/bin/python" -m vramtrace run --quiet --output "$OUT/api_run.json" "$OUT/api_torch.py" "$OUT/api.json" >"$OUT/api.out" 2>&1
rc=$?
[ $rc -eq 0 ] && pass "python -m vramtrace run api_torch.py: exit 0" || { cat "$OUT/api.out"; fail "api run: exit $rc"; }
read -r _ tracked reserved < <(grep '^stats' "$OUT/api.out")
[ -n "${tracked:-}" ] && [ "$tracked" = "$reserved" ] && pass "stats()[0] current_bytes == memory_reserved() ($tracked)" || fail "stats '$tracked' vs reserved '$reserved'"
"$venv/bin/python" - "$OUT/api.json" <<'PY' && pass "snapshot: mark kept, the 64 MiB segment in range 'forward'" || fail "api snapshot"
import json, sys
d = json.load(open(sys.argv[1]))
assert "after forward" in [e.get("label") for e in d["events"] if e["type"] == "mark"]
names = {r["id"]: r["names"] for r in d.get("nvtx_ranges", [])}
assert any(a["size"] == 64 << 20 and names.get(a.get("range")) == ["forward"] for a in d["allocations"]), \
    [(a["size"], names.get(a.get("range"))) for a in d["allocations"]]
PY
finish
