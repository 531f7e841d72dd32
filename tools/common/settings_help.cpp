#include "common/settings_help.h"

#include "settings/settings.h"

namespace vramtrace::cli {
namespace {

using settings::Audience;
using settings::Info;

const char *read_by_text(settings::ReadBy r) {
    switch (r) {
    case settings::ReadBy::library: return "library";
    case settings::ReadBy::cli: return "CLI";
    case settings::ReadBy::both: return "library and CLI";
    }
    return "";
}

std::string markdown_section(Audience audience) {
    std::string out = "| Variable | Default | Accepts | Read by | What it does |\n|---|---|---|---|---|\n";
    for (const Info &s : settings::kTable) {
        if (s.audience != audience) continue;
        char accepts[192];
        out += "| `";
        out += s.name;
        out += "` | `";
        out += s.shown_default;
        out += "` | ";
        out += settings::accepts(s, accepts, sizeof accepts);
        out += " | ";
        out += read_by_text(s.read_by);
        out += " | ";
        out += s.doc;
        out += " |\n";
    }
    return out;
}

} // namespace

std::string environment_help() {
    constexpr size_t kHelpColumn = 35, kWidth = 100;
    std::string out = "Environment (read by the library in PROGRAM and its children; a value it cannot take gives\n"
                      "one warning and the default; all of them: docs/configuration.md):\n";
    for (const Info &s : settings::kTable) {
        if (s.audience != Audience::user) continue;
        std::string line = "  ";
        line += s.name;
        line.append(line.size() < kHelpColumn ? kHelpColumn - line.size() : 1, ' ');
        line += s.help;
        std::string shown = std::string(" (default ") + s.shown_default + ")";
        if (line.size() + shown.size() <= kWidth) {
            out += line + shown + "\n";
        } else {
            out += line + "\n" + std::string(kHelpColumn, ' ') + shown.substr(1) + "\n";
        }
    }
    return out;
}

std::string configuration_markdown() {
    std::string out =
        "<!-- Generated from lib/settings/settings.def by tools/settings_doc.cpp: edit the table, then run\n"
        "     `cmake --build build --target configuration-doc`. A test fails when this file differs. -->\n"
        "# Configuration\n\n"
        "The library reads these environment variables once, when it starts in a traced process (the\n"
        "trigger settings on first use); `vramtrace run` passes them on to the program and sets some\n"
        "from its options (`--output`, `--no-summary`, `--no-follow`, `--backend`). A value a setting\n"
        "cannot take gives one warning line on stderr naming the variable, and the default applies:\n\n"
        "```\nvramtrace: warning: VRAMTRACE_STACK_DEPTH=\"lots\" is not a whole number from 0 to 256; using the "
        "default 32\n```\n\n"
        "Booleans take `0`/`1` (also `false`/`true`, `no`/`yes`, `off`/`on`). Seconds may have a fraction\n"
        "(`0.5`). Sizes take `B`, `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024) or `KB`, `MB`, `GB`, `TB`.\n\n"
        "## Settings\n\n";
    out += markdown_section(Audience::user);
    out += "\n## Set by `vramtrace run`\n\n"
           "The command sets these for the library in the program it runs; they are not meant to be set by\n"
           "hand.\n\n";
    out += markdown_section(Audience::internal);
    out += "\n## For the test suite\n\n"
           "Switches the tests use to reach paths a healthy run never takes; they change what is recorded.\n\n";
    out += markdown_section(Audience::tests);
    return out;
}

} // namespace vramtrace::cli
