# The package's pure-Python helpers, as installed from the wheel (check_wheel.sh): limit_vram's
# sizes and how `python -m vramtrace run` turns a script operand into PYTHON script.py.
import sys

import pytest

from vramtrace import _interval
from vramtrace.__main__ import _python_program


@pytest.mark.parametrize("text, size", [
    ("512 MiB", 536870912), ("24 MB", 24000000), ("1.5GiB", 1610612736), ("4096", 4096),
    ("1 KiB", 1024), ("2 GB", 2000000000), (" 8 mib ", 8388608), (65536, 65536), ("3 B", 3)])
def test_parse_size(text, size):
    assert _interval.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "MiB", "12 parsecs", "-1 MiB", "1e9"])
def test_parse_size_refuses(text):
    with pytest.raises(ValueError):
        _interval.parse_size(text)


def test_human():
    assert [_interval.human(n) for n in (0, 1023, 1024, 3 << 20, 5 << 30)] == \
        ["0 B", "1023 B", "1.0 KiB", "3.0 MiB", "5.0 GiB"]


@pytest.mark.parametrize("args, want", [
    (["train.py", "--lr", "1"], ["--", "PY", "train.py", "--lr", "1"]),
    (["--quiet", "-o", "out.json", "train.py"], ["--quiet", "-o", "out.json", "--", "PY", "train.py"]),
    (["--output=x.json", "-m", "pytest", "-q"], ["--output=x.json", "--", "PY", "-m", "pytest", "-q"]),
    (["--", "train.py"], ["--", "PY", "train.py"]),
    (["--", "./a.out", "x.py"], ["--", "./a.out", "x.py"]),
    (["./a.out"], ["./a.out"]),
    (["--backend", "cupti", "t.py"], ["--backend", "cupti", "--", "PY", "t.py"]),
])
def test_python_program(args, want):
    assert _python_program(args) == [sys.executable if a == "PY" else a for a in want]
