# The pytest plugin through pytester, each inner run in a subprocess started with --vramtrace, which
# re-executes it under `vramtrace run` (the library is not in this process). VT_STANDIN_CUDART names
# the stand-in runtime the inner tests allocate on.
import os
import re

import pytest

pytest_plugins = ["pytester"]

INNER = '''
import ctypes, os
import pytest
MiB = 1 << 20
rt = ctypes.CDLL(os.environ["VT_STANDIN_CUDART"], mode=ctypes.RTLD_GLOBAL)
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
kept = []

@pytest.mark.limit_vram("8 MiB")
def test_over_limit():
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), 12 * MiB) == 0  # @over
    rt.cudaFree(p)

@pytest.mark.limit_vram("8 MiB")
def test_under_limit():
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), 6 * MiB) == 0  # @under
    rt.cudaFree(p)

@pytest.mark.no_vram_leak
def test_leaks():
    kept.append(ctypes.c_void_p())
    assert rt.cudaMalloc(ctypes.byref(kept[-1]), 3 * MiB) == 0  # @leak

@pytest.mark.no_vram_leak
def test_frees_what_it_allocates():
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), 1 * MiB) == 0  # @frees
    rt.cudaFree(p)
'''


def line_of(marker):
    # pytester writes the source stripped of its leading newline
    for n, line in enumerate(INNER.strip().splitlines(), 1):
        if "# @" + marker in line:
            return n
    raise AssertionError(marker)


@pytest.fixture
def inner_run(pytester):
    pytester.makepyfile(test_inner=INNER)
    return pytester.runpytest_subprocess("--vramtrace", "-p", "no:cacheprovider", "-rA")


def test_outcomes(inner_run):
    inner_run.assert_outcomes(passed=2, failed=2)
    out = inner_run.stdout.str()
    assert re.search(r"PASSED test_inner.py::test_under_limit", out), out
    assert re.search(r"PASSED test_inner.py::test_frees_what_it_allocates", out), out


def test_over_limit_names_call_site(inner_run):
    out = inner_run.stdout.str()
    assert "device 0 peaked at 12.0 MiB (12582912 bytes) during this test, over its limit_vram " \
           "of 8.0 MiB (8388608 bytes)" in out, out
    assert re.search(r"12\.0 MiB  \S*test_inner\.py:%d \(test_over_limit\)  \(1 allocation\)"
                     % line_of("over"), out), out


def test_leak_names_call_site(inner_run):
    out = inner_run.stdout.str()
    assert "device 0: this test left 3.0 MiB (3145728 bytes) of device memory it allocated:" in out, out
    assert re.search(r"3\.0 MiB  \S*test_inner\.py:%d \(test_leaks\)" % line_of("leak"), out), out


def test_per_test_table(inner_run):
    out = inner_run.stdout.str()
    assert "vramtrace: device memory per test" in out, out
    rows = [("12.0 MiB", "0 B", "over", "test_over_limit"), ("6.0 MiB", "0 B", "under", "test_under_limit"),
            ("3.0 MiB", "3.0 MiB", "leak", "test_leaks"),
            # 3 MiB held from before (test_leaks') and its own 1 MiB
            ("4.0 MiB", "0 B", "frees", "test_frees_what_it_allocates")]
    for peak, left, marker, name in rows:
        assert re.search(r"%s\s+%s\s+\S*test_inner\.py:%d \(%s\)\s+test_inner\.py::%s\n"
                         % (re.escape(peak), re.escape(left), line_of(marker), name, name), out), out


def test_markers_without_library_warn(pytester):
    # Without --vramtrace and without the library the markers are not checked, and say so.
    pytester.makepyfile(test_plain='''
import pytest
@pytest.mark.limit_vram("1 B")
def test_a():
    pass
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "always")
    result.assert_outcomes(passed=1)
    assert "limit_vram and no_vram_leak are not checked" in result.stdout.str()
