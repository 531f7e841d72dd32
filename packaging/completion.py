#!/usr/bin/env python3
"""Writes bash, zsh and fish completion for vramtrace from the CLI's own --help output.

The help texts are the CLI's option tables (one per command), so completion cannot drift from
them: each option line ("  -o, --output PATH   ...", "  --at exit|peak   ...") gives the option,
its short form and its value; a value written as a|b|c, or a metavariable that the help shows as
"--option a|b|c" elsewhere ("export --format chrome|folded|..."), completes to those words; PATH,
FILE, SNAPSHOT, OLD, BASE and NEW complete to file names (snapshots: *.json), PID to process ids.
Usage: completion.py VRAMTRACE_BINARY OUTPUT_DIR
"""
import os
import re
import subprocess
import sys

FILE_VALUES = {"PATH", "FILE", "SNAPSHOT", "OLD", "BASE", "NEW", "MERGED", "DIR"}
OPTION_LINE = re.compile(r"^ {2,4}(?:(-[A-Za-z]), )?(--[a-z][a-z0-9-]*)(?:[ =]([^\s]+))?(?:\s{2,}|$)")
CHOICES = re.compile(r"(--[a-z][a-z0-9-]*)[ =]([a-z0-9_-]+(?:\|[a-z0-9_-]+)+)")


def help_text(binary, *args):
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def read_commands(binary):
    top = help_text(binary, "--help")
    section = top.split("commands:", 1)[1].split("\n\n", 1)[0]
    names = [m.group(1) for m in re.finditer(r"^  ([a-z]+)\b", section, re.M) if m.group(1) != "help"]
    known = dict(CHOICES.findall(top))
    commands = {}
    for name in names:
        text = help_text(binary, "help", name)
        choices = dict(known)
        choices.update(CHOICES.findall(text))
        options = []
        for line in text.splitlines():
            m = OPTION_LINE.match(line)
            if not m:
                continue
            short, long_, value = m.groups()
            kind = None
            if value:
                if "|" in value:
                    kind = ("words", value.split("|"))
                elif long_ in choices:
                    kind = ("words", choices[long_].split("|"))
                elif value in FILE_VALUES:
                    kind = ("json" if value in ("SNAPSHOT", "OLD", "BASE", "NEW") else "file", None)
                elif value == "PID":
                    kind = ("pid", None)
                else:
                    kind = ("any", None)
            options.append((short, long_, kind))
        commands[name] = options
    return commands


# How each shell completes an option's value, by the kind read_commands() gives it ({words}: the
# allowed words, space-separated); "value": any other value.
VALUE_COMPLETION = {
    "bash": {
        "words": "COMPREPLY=($(compgen -W \"{words}\" -- \"$cur\"))",
        "json": "COMPREPLY=($(compgen -f -X '!*.json' -- \"$cur\") $(compgen -d -- \"$cur\"))",
        "file": "COMPREPLY=($(compgen -f -- \"$cur\"))",
        "pid": "COMPREPLY=($(compgen -W \"$(ls /proc | grep -E '^[0-9]+$')\" -- \"$cur\"))",
        "value": "COMPREPLY=()",
    },
    "zsh": {
        "words": ":value:({words})",
        "json": ':snapshot:_files -g "*.json"',
        "file": ":file:_files",
        "pid": ":pid:_pids",
        "value": ":value: ",
    },
    # -x: a value that is not a file name; -r -F: a file name
    "fish": {
        "words": " -x -a '{words}'",
        "json": " -r -F",
        "file": " -r -F",
        "pid": " -x -a '(__fish_complete_pids)'",
        "value": " -x",
    },
}


def value_completion(shell, kind):
    rows = VALUE_COMPLETION[shell]
    template = rows.get(kind[0], rows["value"])
    return template.replace("{words}", " ".join(kind[1]) if kind[0] == "words" else "")


def bash(commands):
    out = ["# bash completion for vramtrace, generated from its --help (packaging/completion.py)",
           "_vramtrace() {",
           "    local cur prev cmd i",
           "    cur=${COMP_WORDS[COMP_CWORD]}",
           "    prev=${COMP_WORDS[COMP_CWORD-1]}",
           "    cmd=",
           "    for ((i = 1; i < COMP_CWORD; i++)); do",
           "        if [[ ${COMP_WORDS[i]} == -- ]]; then",
           "            COMPREPLY=($(compgen -c -- \"$cur\")); return",
           "        fi",
           "        if [[ -z $cmd && ${COMP_WORDS[i]} != -* ]]; then cmd=${COMP_WORDS[i]}; fi",
           "    done",
           "    if [[ -z $cmd ]]; then",
           "        COMPREPLY=($(compgen -W \"%s help --help --version\" -- \"$cur\")); return" % " ".join(commands),
           "    fi",
           "    if [[ $cmd == help ]]; then",
           "        COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return" % " ".join(commands),
           "    fi",
           "    case $cmd in"]
    for name, options in commands.items():
        out.append("    %s)" % name)
        out.append("        case $prev in")
        for short, long_, kind in options:
            if kind is None:
                continue
            pats = "|".join(x for x in (short, long_) if x)
            action = value_completion("bash", kind)
            out.append("        %s) %s; return ;;" % (pats, action))
        out.append("        esac")
        opts = " ".join(x for short, long_, _ in options for x in (short, long_) if x)
        out.append("        if [[ $cur == --*=* ]]; then")
        out.append("            local opt=${cur%%=*} val=${cur#*=}")
        out.append("            case $opt in")
        for short, long_, kind in options:
            if kind and kind[0] == "words":
                out.append("            %s) COMPREPLY=($(compgen -P \"$opt=\" -W \"%s\" -- \"$val\")); return ;;"
                           % (long_, " ".join(kind[1])))
        out.append("            esac")
        out.append("        fi")
        out.append("        if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return; fi" % opts)
        if name == "run":
            out.append("        COMPREPLY=($(compgen -c -- \"$cur\")); return ;;")
        else:
            out.append("        COMPREPLY=($(compgen -f -X '!*.json' -- \"$cur\") $(compgen -d -- \"$cur\")); return ;;")
    out += ["    esac", "}", "complete -F _vramtrace vramtrace", ""]
    return "\n".join(out)


def zsh(commands):
    out = ["#compdef vramtrace", "# zsh completion for vramtrace, generated from its --help (packaging/completion.py)",
           "_vramtrace() {", "  local -a commands", "  commands=(%s help)" % " ".join(commands),
           "  if (( CURRENT == 2 )); then _describe command commands; return; fi", "  case ${words[2]} in",
           "  help) (( CURRENT == 3 )) && _describe command commands ;;"]
    for name, options in commands.items():
        specs = []
        for short, long_, kind in options:
            action = value_completion("zsh", kind) if kind is not None else ""
            for opt in (short, long_):
                if opt:
                    specs.append("'%s[%s]%s'" % (opt + ("=" if kind and opt.startswith("--") else ""), opt, action))
        rest = "'*::program:_command_names -e'" if name == "run" else "'*:snapshot:_files -g \"*.json\"'"
        out.append("  %s) _arguments -s %s %s ;;" % (name, " ".join(specs), rest))
    out += ["  esac", "}", "_vramtrace \"$@\"", ""]
    return "\n".join(out)


def fish(commands):
    out = ["# fish completion for vramtrace, generated from its --help (packaging/completion.py)",
           "complete -c vramtrace -f",
           "complete -c vramtrace -n __fish_use_subcommand -a '%s help'" % " ".join(commands),
           "complete -c vramtrace -n '__fish_seen_subcommand_from help' -a '%s'" % " ".join(commands)]
    for name, options in commands.items():
        cond = "-n '__fish_seen_subcommand_from %s'" % name
        for short, long_, kind in options:
            line = "complete -c vramtrace %s -l %s" % (cond, long_[2:])
            if short:
                line += " -s %s" % short[1:]
            if kind is not None:
                line += value_completion("fish", kind)
            out.append(line)
        if name == "run":
            out.append("complete -c vramtrace %s -a '(__fish_complete_command)'" % cond)
        else:
            out.append("complete -c vramtrace %s -F" % cond)
    out.append("")
    return "\n".join(out)


def main():
    binary, outdir = sys.argv[1], sys.argv[2]
    commands = read_commands(binary)
    os.makedirs(outdir, exist_ok=True)
    for name, text in (("vramtrace", bash(commands)), ("_vramtrace", zsh(commands)), ("vramtrace.fish", fish(commands))):
        with open(os.path.join(outdir, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
