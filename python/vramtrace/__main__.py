"""`python -m vramtrace` and the `vramtrace` console script: the bundled CLI, unchanged.

One convenience on top: `run script.py ARGS` (or `run -m module ARGS`) runs the script with this
interpreter, as `run -- PYTHON script.py ARGS`; everything else goes to the CLI as given.
"""
import os
import sys

from . import _native

# Options of `vramtrace run` that take a value (vramtrace run --help), so the operand after them is
# not taken for the program.
_RUN_VALUE_OPTIONS = ("--output", "-o", "--backend", "--log")


def _python_program(args):
    """args after 'run': the same with PYTHON inserted before a script.py or -m operand."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            rest = args[i + 1:]
            if rest and (rest[0].endswith(".py") or rest[0] == "-m"):
                return args[:i + 1] + [sys.executable] + rest
            return args
        if a in _RUN_VALUE_OPTIONS:
            i += 2
            continue
        if a.startswith("-") and a != "-m":
            i += 1
            continue
        if a.endswith(".py") or a == "-m":
            return args[:i] + ["--", sys.executable] + args[i:]
        return args
    return args


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "run":
        args = ["run"] + _python_program(args[1:])
    cli = _native.cli_path()
    if not os.access(cli, os.X_OK):
        _native.stderr("the bundled CLI %s is missing or not executable" % cli)
        return 1
    os.execv(cli, [cli] + args)


if __name__ == "__main__":
    sys.exit(main())
