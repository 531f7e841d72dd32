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


class _TestInterval:
    """One test's call phase: begin() before it, end(failed) after it (raises pytest.fail)."""

    def __init__(self, item):
        self.item = item
        self.limit_marker = item.get_closest_marker("limit_vram")
        self.leak_marker = item.get_closest_marker("no_vram_leak")
        self.limit = None
        self.interval = None

    def begin(self):
        if not vramtrace.loaded():
            if self.limit_marker or self.leak_marker:
                _native.warn_once("pytest-markers", "libvramtrace.so is not loaded: limit_vram and "
                                  "no_vram_leak are not checked (run pytest --vramtrace)")
            return
        if self.limit_marker is not None:
            if len(self.limit_marker.args) != 1:
                raise pytest.UsageError("limit_vram takes one size, e.g. limit_vram('512 MiB')")
            self.limit = _interval.parse_size(self.limit_marker.args[0])
        self.interval = _measure.Interval(self.item.nodeid).__enter__()

    def end(self, failed):
        if self.interval is None:
            return
        self.interval.__exit__(None, None, None)
        result = self.interval.result
        self.item.config._vramtrace_rows.append((self.item.nodeid, result))
        if failed or result is None:
            return
        problems = []
        if self.limit is not None:
            limit = self.limit
            for device, peak in sorted(result.peaks.items()):
                if peak > limit:
                    problems.append("device %d peaked at %s (%d bytes) during this test, over its "
                                    "limit_vram of %s (%d bytes); at that peak:"
                                    % (device, _interval.human(peak), peak, _interval.human(limit), limit))
                    problems += _measure.describe_peak(result, device)
        if self.leak_marker is not None:
            for device, rows in sorted(result.left.items()):
                left = sum(b for b, _, _ in rows)
                problems.append("device %d: this test left %s (%d bytes) of device memory it allocated:"
                                % (device, _interval.human(left), left))
                problems += _interval.site_lines(rows)
        if problems:
            pytest.fail("vramtrace: " + "\n".join(problems), pytrace=False)


def _new_style_call(item):
    # pluggy >= 1.1 (pytest 8, 9): the test's exception comes out of the yield, and ours may be
    # raised after it without pluggy's warning about old-style wrappers that raise.
    measure = _TestInterval(item)
    measure.begin()
    try:
        result = yield
    except BaseException:
        measure.end(failed=True)
        raise
    measure.end(failed=False)
    return result


def _old_style_call(item):
    # pluggy 1.0 (Debian 12's pytest 7.2): the outcome is sent in; an exception raised here fails
    # the test.
    measure = _TestInterval(item)
    measure.begin()
    outcome = yield
    measure.end(failed=outcome.excinfo is not None)


try:
    pytest_runtest_call = pytest.hookimpl(wrapper=True)(_new_style_call)
except TypeError:
    pytest_runtest_call = pytest.hookimpl(hookwrapper=True)(_old_style_call)


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
