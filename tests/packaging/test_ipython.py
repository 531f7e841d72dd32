# The IPython extension through IPython's own API, in a process that runs under the library
# (check_wheel.sh starts this pytest with `python -m vramtrace run`). VT_STANDIN_CUDART names the
# stand-in runtime the cell allocates on.
import os

import pytest
import vramtrace
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

CELL = '''import ctypes, os
rt = ctypes.CDLL(os.environ["VT_STANDIN_CUDART"], mode=ctypes.RTLD_GLOBAL)
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
p = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(p), 7 << 20) == 0
rt.cudaFree(p)
'''


@pytest.fixture(scope="module")
def shell():
    assert vramtrace.loaded(), "run this file under 'vramtrace run' (check_wheel.sh does)"
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "vramtrace")
    return sh


def test_cell_magic_reports_peak_and_call_site(shell):
    with capture_output() as captured:
        shell.run_cell("%%vramtrace\n" + CELL)
    assert len(captured.outputs) == 1, captured.stdout
    data = captured.outputs[0].data
    text = data["text/plain"]
    assert "device 0: peak 7.0 MiB (7340032 bytes), left live 0 B" in text, text
    # The call site is the cell's line 6 (IPython names cells <ipython-input-...> or a temp file).
    assert ":6 (<module>)  (1 allocation)" in text, text
    html = data["text/html"]
    assert html.startswith("<pre>vramtrace: this cell&#x27;s peak per device"), html[:200]
    assert "<iframe srcdoc=" in html


def test_cell_results_and_names_stay(shell):
    shell.run_cell("%%vramtrace\nanswer = 6 * 7\n")
    assert shell.user_ns["answer"] == 42
