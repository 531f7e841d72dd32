#!/usr/bin/env python3
"""The include graph of lib/ and tools/ against the layer order.

The order is read from lib/CMakeLists.txt (the vramtrace_layer calls between the markers
`vramtrace-layers-begin` and `-end`, bottom first, then start/ on top), so the build and this
check cannot disagree. Fails (exit 1, one line per offence) when
  - a lib/ file includes a header of a layer that its layer does not USE, directly or through the
    layers it uses (an include up the order, or sideways to a layer it does not declare);
  - an include climbs out of its folder with "../";
  - a folder of lib/ is not a layer, or a layer has a folder inside it (snapshot/reader, the CLI's
    streaming reader, is the one exception: it uses only lib/snapshot, and no layer includes it);
  - tools/ includes a lib/ layer the CLI does not link (only settings, snapshot, report, symbolize,
    dump, tracking and live are shared with it; the hooks, triggers and the tracker live in the host process);
  - docs/design.md's layer picture names the layers in another order.
Usage: check_layers.py REPO_ROOT
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
lib = os.path.join(root, "lib")
errors = []

cmake = open(os.path.join(lib, "CMakeLists.txt")).read()
block = cmake.split("# vramtrace-layers-begin", 1)[1].split("# vramtrace-layers-end", 1)[0]
uses = {}
order = []
for m in re.finditer(r"^vramtrace_layer\((\w+)(?:\s+USES\s+([\w ]+))?\)", block, re.M):
    layer, used = m.group(1), (m.group(2) or "").split()
    for u in used:
        if u not in uses:
            errors.append(f"lib/CMakeLists.txt: {layer} uses {u}, which is not a layer below it")
    uses[layer] = used
    order.append(layer)
uses["start"] = list(order)  # the shared library over every layer
order.append("start")
if len(order) < 3:
    errors.append("lib/CMakeLists.txt: no layer list between the markers")


def reachable(layer):
    seen, todo = {layer}, [layer]
    while todo:
        for u in uses.get(todo.pop(), []):
            if u not in seen:
                seen.add(u)
                todo.append(u)
    return seen


include_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def includes(path):
    with open(path, errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = include_re.match(line)
            if m:
                yield n, m.group(1)


for folder in sorted(os.listdir(lib)):
    path = os.path.join(lib, folder)
    if not os.path.isdir(path):
        continue
    if folder not in uses:
        errors.append(f"lib/{folder}/: a folder that is not a layer in lib/CMakeLists.txt")
        continue
    allowed = reachable(folder)
    for dirpath, _, names in os.walk(path):
        sub = os.path.relpath(dirpath, lib)
        in_reader = sub == "snapshot/reader"
        if sub != folder and not in_reader:
            errors.append(f"lib/{sub}/: a folder inside a layer; only snapshot/reader (the CLI's reader) is one")
            continue
        for name in sorted(names):
            if not name.endswith((".cpp", ".h", ".c", ".S", ".def")):
                continue
            for n, inc in includes(os.path.join(dirpath, name)):
                where = f"lib/{sub}/{name}:{n}"
                if inc.startswith("../") or "/../" in inc:
                    errors.append(f'{where}: "{inc}" climbs out of its folder')
                    continue
                if inc.startswith("snapshot/reader/") and not in_reader:
                    errors.append(f'{where}: "{inc}": the snapshot reader is the CLI\'s, not the library\'s')
                    continue
                top = inc.split("/", 1)[0] if "/" in inc else folder
                if in_reader and top != "snapshot":
                    errors.append(f'{where}: "{inc}": the snapshot reader uses only lib/snapshot')
                elif top in uses and top not in allowed:
                    errors.append(f'{where}: "{inc}": {folder} does not use {top}')

cli_layers = {"settings", "snapshot", "report", "symbolize", "dump", "tracking", "live"}
for dirpath, _, files in os.walk(os.path.join(root, "tools")):
    for name in sorted(files):
        if not name.endswith((".cpp", ".h")):
            continue
        full = os.path.join(dirpath, name)
        for n, inc in includes(full):
            top = inc.split("/", 1)[0]
            if "/" in inc and top in uses and top not in cli_layers:
                errors.append(f'{os.path.relpath(full, root)}:{n}: "{inc}": the CLI does not link {top}')

design = open(os.path.join(root, "docs", "design.md")).read()
m = re.search(r"<!-- layers -->\n```\n(.*?)```", design, re.S)
if m is None:
    errors.append("docs/design.md: no layer picture (a ``` block after <!-- layers -->)")
else:
    named = [w for w in re.findall(r"\b([a-z]+)/", m.group(1)) if w in uses]
    top_down = list(dict.fromkeys(named))
    if top_down != list(reversed(order)):
        errors.append(f"docs/design.md: layer picture reads {top_down}, lib/CMakeLists.txt {list(reversed(order))}")

for e in errors:
    print(e)
sys.exit(1 if errors else 0)
