#!/usr/bin/env python3
"""Loads `vramtrace export --format pickle` files the safe way, and fails on anything else.

    restricted_unpickle.py FILE|DIR...    (a directory: every *.pickle file in it, recursively)

Each file must hold only the opcodes of PyTorch's memory_viz JavaScript unpickler (the writer's
whitelist, tools/export/pickle_writer.h), load with an Unpickler that refuses every global (so no
REDUCE, BUILD, INST, OBJ or NEWOBJ can call anything), end at its STOP with no byte after it, and
hold only dicts, lists, str, int, float, bool, None and 2-tuples of ints (segment_pool_id). Prints
"restricted_unpickle: N files, no failure" or the first failure, and exits 1 on a failure.
Also a module: load_restricted(raw) returns the object.
"""
import io
import os
import pickle
import pickletools
import sys

VIEWER_OPCODES = {"PROTO", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "APPENDS", "BININT", "BININT1",
                  "BININT2", "LONG1", "SHORT_BINUNICODE", "BINUNICODE", "NEWTRUE", "NEWFALSE", "NONE", "TUPLE2",
                  "STOP", "MEMOIZE", "BINGET", "LONG_BINGET"}


class RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name} refused")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent id refused")


def check_types(obj, path="top"):
    stack = [(obj, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            for k, v in value.items():
                if not isinstance(k, str):
                    raise ValueError(f"{where}: key {k!r} is not a str")
                stack.append((v, f"{where}.{k}"))
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(value))
        elif isinstance(value, tuple):
            if len(value) != 2 or not all(type(v) is int for v in value):
                raise ValueError(f"{where}: tuple {value!r} is not a pair of ints")
        elif value is None or type(value) in (str, int, float, bool):
            pass
        else:
            raise ValueError(f"{where}: {type(value).__name__} is not plain data")


def load_restricted(raw):
    stop = None
    for op, _, pos in pickletools.genops(raw):
        if op.name not in VIEWER_OPCODES:
            raise ValueError(f"opcode {op.name} at byte {pos} is not in the whitelist")
        if op.name == "STOP":
            stop = pos
    if stop != len(raw) - 1:
        raise ValueError(f"bytes after STOP (at {stop} of {len(raw)})")
    f = io.BytesIO(raw)
    obj = RestrictedUnpickler(f).load()
    if f.tell() != len(raw):
        raise ValueError("the unpickler stopped before the end")
    check_types(obj)
    return obj


def main(argv):
    files = []
    for arg in argv:
        if os.path.isdir(arg):
            for root, _, names in os.walk(arg):
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".pickle")]
        else:
            files.append(arg)
    if not files:
        print("restricted_unpickle: no pickle files given")
        return 1
    for path in files:
        try:
            with open(path, "rb") as f:
                load_restricted(f.read())
        except Exception as e:  # noqa: BLE001 - any failure is the test's failure
            print(f"restricted_unpickle: {path}: {type(e).__name__}: {e}")
            return 1
    print(f"restricted_unpickle: {len(files)} files, no failure")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
