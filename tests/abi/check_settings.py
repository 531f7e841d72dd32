#!/usr/bin/env python3
"""Every VRAMTRACE_* variable goes through lib/settings/settings.def.

Fails (exit 1, one line per offence) when
  - a getenv or secure_getenv call in lib/ or tools/ outside lib/settings/ names a VRAMTRACE_
    variable, or takes a name that is not a string literal (except process_identity.cpp's list of
    launcher rank variables);
  - a file of lib/, tools/, include/, docs/ or README.md names a VRAMTRACE_ variable that is not a
    row of the table (names of the C API's constants and macros are not variables: they are
    listed below);
  - no code in lib/ or tools/ reads a row's field (`.FIELD`, `Id::FIELD`): a setting nobody reads.
  - with a CLI given: `vramtrace run --help` misses a user setting, or lists one of the internal
    or tests-only ones.
Usage: check_settings.py REPO_ROOT [VRAMTRACE_CLI]
"""
import os
import re
import subprocess
import sys

root = sys.argv[1]
errors = []
table_path = os.path.join(root, "lib", "settings", "settings.def")
table = open(table_path).read()
rows = re.findall(r'^VT_SETTING\(\w+, (\w+), "(VRAMTRACE_\w+)"', table, re.M)
audience = dict(re.findall(r'^VT_SETTING\(\w+, \w+, "(VRAMTRACE_\w+)".*, (user|internal|tests),$', table, re.M))
if len(audience) != len(rows):
    errors.append("lib/settings/settings.def: a row whose AUDIENCE is not user, internal or tests")
names = {name for _, name in rows}
fields = {field for field, _ in rows}
# Identifiers of the C API and the build that share the prefix and are not environment variables.
not_variables = {"VRAMTRACE_VERSION", "VRAMTRACE_OK", "VRAMTRACE_ERROR_NOT_LOADED", "VRAMTRACE_ERROR_DISABLED",
                 "VRAMTRACE_ERROR_INVALID", "VRAMTRACE_ERROR_IO", "VRAMTRACE_BUILDING_LIBRARY", "VRAMTRACE_VRAMTRACE_H",
                 "VRAMTRACE_SNAPSHOT_SINK_CALLBACKS", "VRAMTRACE_SINK_IGNORE", "VRAMTRACE_SINK_FORWARD",
                 "VRAMTRACE_MARK_LABEL_MAX", "VRAMTRACE_HOST_DEVICE", "VRAMTRACE_ERROR_", "VRAMTRACE_API",
                 "VRAMTRACE_EXPORT", "VRAMTRACE_1", "VRAMTRACE_COMMIT", "VRAMTRACE_CUDA_HEADERS", "VRAMTRACE_BUILD_TYPE",
                 # the test suite's own variables (tests/sanitizers, fuzz), read by scripts, not the library
                 "VRAMTRACE_TSAN_BUILD_DIR", "VRAMTRACE_ASAN_BUILD_DIR", "VRAMTRACE_FUZZ_DIR"}

getenv_re = re.compile(r"\b(?:secure_)?getenv\s*\(\s*([^)]*)\)")
name_re = re.compile(r"\bVRAMTRACE_[A-Z0-9_]*[A-Z0-9]\b")
used = set()


def walk(*parts):
    top = os.path.join(root, *parts)
    if os.path.isfile(top):
        yield top
        return
    for dirpath, _, files in os.walk(top):
        for f in sorted(files):
            yield os.path.join(dirpath, f)


for top in ("lib", "tools", "include", "docs", "README.md"):
    for path in walk(top):
        rel = os.path.relpath(path, root)
        if not rel.endswith((".cpp", ".h", ".c", ".def", ".md", ".in", ".js", ".txt", ".cmake")):
            continue
        if rel == "lib/settings/settings.def":
            continue
        text = open(path, errors="replace").read()
        if rel.startswith(("lib/", "tools/")) and not rel.startswith("lib/settings/"):
            for m in getenv_re.finditer(text):
                arg = m.group(1).strip()
                line = text.count("\n", 0, m.start()) + 1
                if "VRAMTRACE_" in arg:
                    errors.append(f"{rel}:{line}: getenv of {arg}: read it through settings/settings.h")
                elif not arg.startswith('"') and rel != "lib/core/process_identity.cpp":
                    errors.append(f"{rel}:{line}: getenv({arg}): a name that is not a literal cannot be checked")
        for m in name_re.finditer(text):
            name = m.group(0)
            if name in not_variables or name.startswith(("VRAMTRACE_BUILD_", "VRAMTRACE_BENCH_")):  # CMake options
                continue
            if name not in names:
                line = text.count("\n", 0, m.start()) + 1
                errors.append(f"{rel}:{line}: {name} is not a setting of lib/settings/settings.def")
        if rel.startswith(("lib/", "tools/")) and not rel.startswith("lib/settings/"):
            for field, name in rows:
                if re.search(r"(\.|->|Id::)" + field + r"(_explicit|_bytes|_fraction)?\b", text):
                    used.add(name)

for name in sorted(names - used):
    errors.append(f"lib/settings/settings.def: {name} is named nowhere else: no code reads it")

if len(sys.argv) > 2:
    helptext = subprocess.run([sys.argv[2], "run", "--help"], capture_output=True, text=True).stdout
    listed = set(re.findall(r"^  (VRAMTRACE_\w+)", helptext, re.M))
    for name, who in sorted(audience.items()):
        if (who == "user") != (name in listed):
            errors.append(f"vramtrace run --help: {name} ({who}) is {'listed' if name in listed else 'missing'}")

for e in errors:
    print(e)
sys.exit(1 if errors else 0)
