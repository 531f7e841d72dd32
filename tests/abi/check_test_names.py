#!/usr/bin/env python3
"""Every Catch2 test case reaches ctest under its own name.

catch_discover_tests hands each name to CMake as one list item, so a ';' splits it: ctest then
asks the test program for a name that matches nothing, and Catch2 reports success with no test
run. Fails (exit 1, one line each) on a TEST_CASE name under tests/ with a ';' in it.
Usage: check_test_names.py REPO_ROOT
"""
import os
import re
import sys

root = sys.argv[1]
errors = []
for dirpath, _, files in os.walk(os.path.join(root, "tests")):
    for f in sorted(files):
        if not f.endswith(".cpp"):
            continue
        path = os.path.join(dirpath, f)
        text = open(path, errors="replace").read()
        for m in re.finditer(r'TEST_CASE\(\s*((?:"[^"]*"\s*)+)', text):
            name = "".join(re.findall(r'"([^"]*)"', m.group(1)))
            if ";" in name:
                line = text.count("\n", 0, m.start()) + 1
                errors.append(f"{os.path.relpath(path, root)}:{line}: test name with ';' never runs under ctest: {name}")
for e in errors:
    print(e)
sys.exit(1 if errors else 0)
