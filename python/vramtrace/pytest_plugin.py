"""pytest plugin (entry point pytest11): device memory per test, limit_vram and no_vram_leak.

    pytest --vramtrace                     run under libvramtrace.so (re-executes pytest under
                                           `vramtrace run` when it is not loaded), per-test table
    @pytest.mark.limit_vram("512 MiB")     fail when a device's peak during the test exceeds it
    @pytest.mark.no_vram_leak              fail when the test leaves device memory it allocated

The test's call phase is measured (not its fixtures). The peak is the library's scoped peak
(vramtrace_scope_reset before, vramtrace_scope_stats after): the highest tracked bytes of each
device during the test, memory held from before included. What counts as memory is what the CUDA
runtime and driver hand out; for PyTorch see vramtrace/_measure.py (the cache is emptied before
the leak check). Without the library the markers are not checked, with one warning.
"""
import os
import sys
import warnings

import pytest

import vramtrace

from . import _interval, _measure, _native

_CHILD_ENV = "VRAMTRACE_PYTEST_REEXEC"


def pytest_addoption(parser):
    group = parser.getgroup("vramtrace", "GPU memory per test (vramtrace)")
    group.addoption("--vramtrace", action="store_true", default=False,
                    help="trace device memory per test: run under libvramtrace.so (re-executing "
                    "under 'vramtrace run' when it is not loaded) and print a per-test table")
    group.addoption("--vramtrace-output", default=None, metavar="PATH",
                    help="where the re-executed run writes its exit snapshot (default: "
                    "VRAMTRACE_OUTPUT, else vramtrace-pytest-%%p.json)")


def pytest_configure(config):
    config.addinivalue_line("markers", "limit_vram(size): fail when a device's peak during the test "
                            "exceeds size ('512 MiB', '2 GB', bytes)")
    config.addinivalue_line("markers", "no_vram_leak: fail when the test leaves device memory it allocated")
    if config.getoption("vramtrace") and not vramtrace.loaded():
        if os.environ.get(_CHILD_ENV):
            warnings.warn("vramtrace: re-executed under 'vramtrace run' but libvramtrace.so is still "
                          "not loaded; no device memory is measured")
        else:
            _reexec(config)
    config._vramtrace_rows = []


def _reexec(config):
    output = config.getoption("vramtrace_output") or os.environ.get("VRAMTRACE_OUTPUT") or \
        "vramtrace-pytest-%p.json"
    cli = _native.cli_path()
    env = dict(os.environ)
    env[_CHILD_ENV] = "1"
    sys.stdout.flush()
    sys.stderr.flush()
    args = [cli, "run", "--quiet", "--output", output, "--", sys.executable, "-m", "pytest"] + sys.argv[1:]
    os.execve(cli, args, env)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    limit_marker = item.get_closest_marker("limit_vram")
    leak_marker = item.get_closest_marker("no_vram_leak")
    if not vramtrace.loaded():
        if limit_marker or leak_marker:
            _native.warn_once("pytest-markers", "libvramtrace.so is not loaded: limit_vram and "
                              "no_vram_leak are not checked (run pytest --vramtrace)")
        yield
        return
    limit = None
    if limit_marker is not None:
        if len(limit_marker.args) != 1:
            raise pytest.UsageError("limit_vram takes one size, e.g. limit_vram('512 MiB')")
        limit = _interval.parse_size(limit_marker.args[0])
    with _measure.Interval(item.nodeid) as interval:
        outcome = yield
    result = interval.result
    item.config._vramtrace_rows.append((item.nodeid, result))
    if outcome.excinfo is not None or result is None:
        return
    problems = []
    if limit is not None:
        for device, peak in sorted(result.peaks.items()):
            if peak > limit:
                problems.append("device %d peaked at %s (%d bytes) during this test, over its "
                                "limit_vram of %s (%d bytes); at that peak:"
                                % (device, _interval.human(peak), peak, _interval.human(limit), limit))
                problems += _measure.describe_peak(result, device)
    if leak_marker is not None:
        for device, rows in sorted(result.left.items()):
            left = sum(b for b, _, _ in rows)
            problems.append("device %d: this test left %s (%d bytes) of device memory it allocated:"
                            % (device, _interval.human(left), left))
            problems += _interval.site_lines(rows)
    if problems:
        pytest.fail("vramtrace: " + "\n".join(problems), pytrace=False)


def pytest_terminal_summary(terminalreporter, config):
    rows = [(n, r) for n, r in getattr(config, "_vramtrace_rows", []) if r is not None]
    if not rows:
        return
    tr = terminalreporter
    tr.section("vramtrace: device memory per test")
    tr.write_line("%12s %12s  %-40s %s" % ("peak", "left live", "top call site at the peak", "test"))
    for nodeid, r in rows:
        tr.write_line("%12s %12s  %-40s %s" % (_interval.human(r.peak()), _interval.human(r.left_bytes()),
                                              r.top_site(), nodeid))
