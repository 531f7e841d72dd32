#!/usr/bin/env python3
"""The snapshot format's member names: spelled once, in lib/snapshot/snapshot_fields.h.

Fails (exit 1, one line per offence) when
  - snapshot_fields.h has an entry this script cannot read, a constant named otherwise than its
    member, or a member twice in one object;
  - a .cpp or .h under lib/ or tools/ other than snapshot_fields.h spells a member name as a string
    literal in a place where it names a member (see KEY_PLACES below), outside ALLOWED;
  - docs/snapshot-format.md (its field tables and its example) or docs/cli.md (the tables of the
    merged snapshot) names a member that the table lacks, or the table has a member that neither
    document names.
tools/export/ is not scanned: the exporters' keys are those of other formats (Chrome trace, pprof,
pickle, HTML). Nor are tools/tests/: the tests spell the format out to check what the writers write.
Usage: check_snapshot_names.py REPO_ROOT
"""
import json
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIELDS = os.path.join("lib", "snapshot", "snapshot_fields.h")
errors = []

# ---- the table ----------------------------------------------------------------------------------
entry_re = re.compile(r'^inline constexpr Field (\w+)\{"([a-z_][a-z0-9_]*)", Json::(\w+), (kRequired|kOptional)\};$')
table = {}  # object -> {name: (type, optional)}
json_types = set()
group = None
with open(os.path.join(root, FIELDS)) as f:
    text = f.read()
m = re.search(r"enum class Json\b[^{]*\{([^}]*)\}", text)
if m:
    json_types = {t.strip() for t in m.group(1).split(",") if t.strip()}
for n, line in enumerate(text.splitlines(), 1):
    line = line.strip()
    where = f"{FIELDS}:{n}"
    ns = re.match(r"^namespace (\w+) \{$", line)
    if ns:
        group = ns.group(1)
        if group in table:
            errors.append(f"{where}: namespace {group} twice")
        table[group] = {}
        continue
    if re.match(r"^\} // namespace (\w+)$", line) and group:
        group = None
        continue
    if not line.startswith("inline constexpr Field "):
        continue
    e = entry_re.match(line)
    if e is None or group is None:
        errors.append(f"{where}: not of the form `inline constexpr Field name{{\"name\", Json::type, kRequired}};`"
                      " (or kOptional) inside an object's namespace")
        continue
    ident, name, jtype, presence = e.groups()
    if ident != name:
        errors.append(f'{where}: the constant {ident} names the member "{name}"')
    if jtype not in json_types:
        errors.append(f"{where}: Json::{jtype} is not a type of the table")
    if name in table[group]:
        errors.append(f"{where}: {group}.{name} twice")
    table[group][name] = (jtype, presence == "kOptional")
if "top" not in table or len(table) < 10:
    errors.append(f"{FIELDS}: no table read (namespace top and the objects' namespaces)")
all_names = {name for members in table.values() for name in members}


def records_of(obj, name):
    """The namespace that describes the records of obj.name, if any: the namespace named after the
    member, for a top-level member or a nested one whose name is not also a top-level member's
    (stacks[].frames are indices, not the records of frames)."""
    if table.get(obj, {}).get(name, ("",))[0] not in ("array", "object") or name not in table:
        return None
    return name if obj == "top" or name not in table["top"] else None


for g in table:
    if g != "top" and not any(records_of(obj, g) == g for obj in table):
        errors.append(f"{FIELDS}: namespace {g} describes the records of no object or array member")

# ---- literals in key places ---------------------------------------------------------------------
# Where a string literal equal to a member name names a member:
#   json      inside a literal, as JSON text: `"\"pid\": "`
#   argument  an argument of a call: key("pid"), write_array(out, "devices", ...), idx("frames", i)
#   pair      the first of a braced pair: {"pid", &ProcessInfo::pid}, nlohmann's {"frames", 1}
#   subscript j["pid"]
#   list      an element of a braced list that initialises a variable: names = {"format", ...}
#   init      the whole initialiser of a variable: where = "process";
# Not counted: comparisons (kind == "device"), returned values, literals inside longer text.
KEY_PLACES = ("json", "argument", "pair", "subscript", "list", "init")

# True non-member uses, each (file name, places, names or "*", why). By file name, not path: the
# CLI's files may move between folders of tools/.
ALLOWED = [
    ("diff_core.cpp", {"pair", "subscript"}, "*",
     "the vramtrace-diff document's own keys (docs/cli.md, 'JSON output (--json)'): another format"),
    ("prometheus_text.cpp", {"argument"}, {"pid", "host", "rank", "device", "uuid", "function", "category"},
     "the Prometheus textfile's label names: another format"),
    ("public_api.cpp", {"argument"}, {"api"}, 'dump_snapshot(path, "api", ...): the value of process.reason'),
    ("reporter.cpp", {"argument"}, {"signal"},
     'dump_snapshot(path, "signal", ...) and the file name\'s tag: the value of process.reason'),
    ("termination_signals.cpp", {"argument"}, {"signal"}, 'dlvsym(RTLD_NEXT, "signal", ...): the libc function'),
    ("summary_format.cpp", {"argument"}, {"allocations", "stack"}, "words of the summary text"),
    ("live_reading.cpp", {"argument"}, "*", "the live protocol's reading (docs/live.md): another format"),
    ("top_model.cpp", set(KEY_PLACES), "*", "the live reading and `top --once --json` (docs/live.md): another format"),
    ("cmd_top.cpp", set(KEY_PLACES), "*", "`top --once --json`'s process list (docs/live.md): another format"),
    ("cmd_top_tui.cpp", {"argument", "pair"}, {"pid", "rank", "device", "category"}, "column headings of the terminal UI"),
    ("view_serve.cpp", {"argument"}, {"host"}, "the HTTP request's Host header (`view --serve`): another format"),
    ("live_server.cpp", {"json"}, {"format"}, "the live protocol's short answers (docs/live.md): another format"),
]

token_re = re.compile(
    r"""(?P<comment>//[^\n]*|/\*.*?\*/)
      | (?P<raw>\bR"(?P<delim>[^(\s]{0,16})\((?P<rawbody>.*?)\)(?P=delim)")
      | (?P<str>(?:\bu8|\bu|\bU|\bL)?"(?P<body>(?:[^"\\\n]|\\.)*)")
      | (?P<chr>'(?:[^'\\\n]|\\.)*')
      | (?P<word>[A-Za-z_]\w*)
      | (?P<num>\.?\d[\w.']*)
      | (?P<punct>::|->|==|!=|<=|>=|&&|\|\||<<|>>|[^\s\w])
    """,
    re.S | re.X,
)


def unescape(body):
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def scan(path):
    with open(path, errors="replace") as f:
        src = f.read()
    tokens = []  # (kind, text or content, line)
    for m in token_re.finditer(src):
        if m.group("comment"):
            continue
        line = src.count("\n", 0, m.start()) + 1
        if m.group("raw") is not None:
            tokens.append(("str", m.group("rawbody"), line))
        elif m.group("str") is not None:
            tokens.append(("str", unescape(m.group("body")), line))
        elif m.group("chr") is not None:
            tokens.append(("chr", m.group("chr"), line))
        elif m.group("word") is not None:
            tokens.append(("word", m.group("word"), line))
        elif m.group("num") is not None:
            tokens.append(("num", m.group("num"), line))
        else:
            tokens.append(("punct", m.group("punct"), line))
    stack = []  # (bracket, index of the token before it)
    found = []
    for i, (kind, value, line) in enumerate(tokens):
        if kind == "punct" and value in "([{":
            stack.append((value, i - 1))
            continue
        if kind == "punct" and value in ")]}":
            if stack:
                stack.pop()
            continue
        if kind != "str":
            continue
        for name in re.findall(r'"([a-z_][a-z0-9_]*)"\s*:', value):
            if name in all_names:
                found.append((line, name, "json"))
        if value not in all_names:
            continue
        prev = tokens[i - 1][1] if i > 0 and tokens[i - 1][0] == "punct" else None
        nxt = tokens[i + 1][1] if i + 1 < len(tokens) and tokens[i + 1][0] == "punct" else None
        after = tokens[i + 2][0] if i + 2 < len(tokens) else None
        inner, opener_prev = stack[-1] if stack else (None, -1)
        before_opener = tokens[opener_prev][1] if opener_prev >= 0 else None
        place = None
        if inner == "(" and prev in ("(", ",") and nxt in (")", ","):
            place = "argument"
        elif inner == "{" and prev == "{" and nxt == "," and after != "str":
            place = "pair"
        elif inner == "[" and prev == "[" and nxt == "]":
            place = "subscript"
        elif inner == "{" and prev in ("{", ",") and nxt in (",", "}") and before_opener == "=":
            place = "list"
        elif prev == "=" and nxt == ";":
            place = "init"
        if place:
            found.append((line, value, place))
    return found


def allowed(path, name, place):
    base = os.path.basename(path)
    return any(base == f and place in places and (names == "*" or name in names) for f, places, names, _ in ALLOWED)


for top_dir in ("lib", "tools"):
    for dirpath, dirnames, files in os.walk(os.path.join(root, top_dir)):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir.replace(os.sep, "/") in ("tools/export", "tools/tests"):
            dirnames[:] = []
            continue
        dirnames.sort()
        for name in sorted(files):
            if not name.endswith((".cpp", ".h")):
                continue
            rel = os.path.join(rel_dir, name)
            if rel == FIELDS:
                continue
            for line, member, place in scan(os.path.join(root, rel)):
                if not allowed(rel, member, place):
                    errors.append(f'{rel}:{line}: "{member}" spelled out ({place}); use the constant of {FIELDS}')

# ---- the documents ------------------------------------------------------------------------------
documented = {g: set() for g in table}


def resolve(path, where):
    """A doc path (`devices[].uuid`, `peaks[].sites[]`, `oom_count`) -> (object, member)."""
    parts = [p[:-2] if p.endswith("[]") else p for p in path.split(".")]
    obj = "top"
    for i, p in enumerate(parts):
        if p not in table.get(obj, {}):
            errors.append(f"{where}: `{path}`: {obj if obj != 'top' else 'the document'} has no member {p}")
            return None
        if i + 1 < len(parts):
            obj = p
    return obj, parts[-1]


member_token = re.compile(r"^[a-z_][a-z0-9_]*(\[\])?(\.[a-z_][a-z0-9_]*(\[\])?)*$")


def outside_parens(cell):
    depth, out = 0, []
    for ch in cell:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        out.append(ch if depth == 0 else " ")
    return "".join(out)


def check_rows(doc, rows, fixed_group=None):
    for n, first, meaning in rows:
        where = f"{doc}:{n}"
        prefix, row_groups = None, []
        for tok in re.findall(r"`([^`]+)`", first):
            if not member_token.match(tok):
                errors.append(f"{where}: `{tok}` in the field column is not a member path")
                continue
            if fixed_group:
                obj, name = fixed_group, tok.rstrip("[]")
                if name not in table.get(obj, {}):
                    errors.append(f"{where}: `{tok}`: {obj} has no member {name}")
                    continue
            else:
                path = tok if "." in tok or prefix is None else prefix + "." + tok
                if "." in tok:
                    prefix = tok.rsplit(".", 1)[0]
                resolved = resolve(path, where)
                if resolved is None:
                    continue
                obj, name = resolved
            documented[obj].add(name)
            sub = records_of(obj, name)
            if sub:
                row_groups.append((obj, sub))
        # The members named in the meaning of a row that describes records: anywhere for the table
        # against the documents; outside parentheses, where the text lists them, each must exist.
        # A name there that is no member of the records may still be one of the object that holds
        # them or of the document (a cross reference: "`module` indexes `modules`").
        for parent, sub in row_groups:
            for tok in re.findall(r"`([a-z_][a-z0-9_]*)\b", meaning):
                if tok in table[sub]:
                    documented[sub].add(tok)
            for m in re.finditer(r"`([a-z_][a-z0-9_]*)(\[\])?`(?![A-Za-z])", outside_parens(meaning)):
                tok = m.group(1)
                if not any(tok in table[g] for g in (sub, parent, "top")):
                    errors.append(f"{where}: `{tok}` is listed for the records of {sub} but is not a member of them")
        for tok in re.findall(r"`([^`]+)`", meaning):
            if "." in tok and member_token.match(tok):
                resolve(tok, where)


def table_rows(doc_text, select):
    """(line, first cell, rest) of the rows of the markdown tables whose header `select` accepts."""
    rows, header, lines = [], None, doc_text.splitlines()
    for n, line in enumerate(lines, 1):
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set(line.replace("|", "").strip()) <= set("- "):
            continue
        if select(header):
            rows.append((n, cells[0], " | ".join(cells[1:])))
    return rows


fmt_doc = os.path.join("docs", "snapshot-format.md")
with open(os.path.join(root, fmt_doc)) as f:
    fmt_text = f.read()
check_rows(fmt_doc, table_rows(fmt_text, lambda h: h[0] == "field"))

# The example: every member it holds is in the table, in the right object.
m = re.search(r"```json\n(.*?)```", fmt_text, re.S)
if m is None:
    errors.append(f"{fmt_doc}: no ```json example")
else:
    def walk(value, obj):
        if isinstance(value, list):
            for item in value:
                walk(item, obj)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key not in table.get(obj, {}):
                    errors.append(f"{fmt_doc}: the example's {obj}.{key} is not in the table")
                    continue
                documented[obj].add(key)
                sub = records_of(obj, key)
                if sub:
                    walk(item, sub)
    try:
        walk(json.loads(m.group(1)), "top")
    except ValueError as e:
        errors.append(f"{fmt_doc}: the example is not JSON ({e})")

# The merged snapshot's members (docs/cli.md): the member table, and one table per record kind
# whose header names it (`merged_processes[]`, `imbalance[]`).
MERGE_GROUPS = ("merged_", "imbalance")
cli_doc = os.path.join("docs", "cli.md")
with open(os.path.join(root, cli_doc)) as f:
    cli_text = f.read()
for n, first, _ in table_rows(cli_text, lambda h: h[0] == "member"):
    for tok in re.findall(r"`([a-z_]+)`", first):
        if tok.startswith(MERGE_GROUPS):
            if tok in table["top"]:
                documented["top"].add(tok)
            else:
                errors.append(f"{cli_doc}:{n}: `{tok}` is not a top-level member of the table")
for g in [g for g in table if g.startswith(MERGE_GROUPS)]:
    rows = table_rows(cli_text, lambda h, g=g: h[0] == f"`{g}[]`")
    if not rows:
        errors.append(f"{cli_doc}: no table of `{g}[]`")
    check_rows(cli_doc, rows, fixed_group=g)

for g, members in table.items():
    for name in members:
        if name not in documented[g]:
            errors.append(f"{FIELDS}: {g}.{name} is in neither {fmt_doc} nor {cli_doc}")

for e in errors:
    print(e)
sys.exit(1 if errors else 0)
