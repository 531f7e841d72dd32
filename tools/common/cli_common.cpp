// Diagnostics and output helpers shared by the subcommands.
#include "common/cli.h"

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cctype>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "report/text_safety.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace vramtrace::cli {

void setup_logging() {
    // Plain stderr, no colours or timestamps: "vramtrace: error: ...".
    auto logger = spdlog::stderr_logger_st("vramtrace");
    logger->set_pattern("vramtrace: %l: %v");
    logger->set_level(spdlog::level::info);
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);
}

// Messages hold file names, option values and text from snapshots: each is one line of at most
// kMaxMessageBytes (cut with its full length said), control characters escaped.
constexpr size_t kMaxMessageBytes = 1024;

void log_error(std::string_view message) { spdlog::error("{}", report::shown_value(message, kMaxMessageBytes)); }
void log_warning(std::string_view message) { spdlog::warn("{}", report::shown_value(message, kMaxMessageBytes)); }

void log_line(std::string_view message) {
    std::string line = "vramtrace: " + report::shown_value(message, kMaxMessageBytes) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
}

int usage_error(std::string_view message, std::string_view help_for) {
    std::string hint = help_for.empty() ? "vramtrace --help" : "vramtrace " + std::string(help_for) + " --help";
    spdlog::error("{} (see '{}')", report::shown_value(message, kMaxMessageBytes), hint);
    return kExitUsage;
}

namespace {

// Optimal string alignment distance: edits, with a swap of two neighbours as one.
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

} // namespace

std::string did_you_mean(std::string_view word, const std::vector<std::string> &candidates) {
    const std::string *best = nullptr;
    // Short words are close to too much: at most one edit per three characters, and two in all.
    size_t best_distance = std::min<size_t>(2, std::max<size_t>(1, word.size() / 3)) + 1;
    const std::string *prefixed = nullptr;
    size_t prefixes = 0;
    for (const std::string &c : candidates) {
        size_t d = edit_distance(word, c);
        if (d < best_distance) best_distance = d, best = &c;
        if (word.size() >= 3 && c.size() > word.size() && c.compare(0, word.size(), word) == 0) ++prefixes, prefixed = &c;
    }
    if (!best && prefixes == 1) best = prefixed;
    return best ? " (did you mean '" + *best + "'?)" : std::string();
}

std::vector<std::string> long_options_of(std::string_view help) {
    std::vector<std::string> out;
    for (size_t at = help.find("--"); at != std::string_view::npos; at = help.find("--", at + 2)) {
        if (at > 0 && help[at - 1] != ' ' && help[at - 1] != '[' && help[at - 1] != '|') continue;
        size_t end = at + 2;
        while (end < help.size() && (std::islower(static_cast<unsigned char>(help[end])) || help[end] == '-' ||
                                     std::isdigit(static_cast<unsigned char>(help[end]))))
            ++end;
        if (end == at + 2) continue;
        std::string name(help.substr(at, end - at));
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    }
    return out;
}

const std::vector<std::string> &command_names() {
    static const std::vector<std::string> names = {"run", "summary", "diff", "merge", "export", "top", "view", "help"};
    return names;
}

int unknown_option(std::string_view command, std::string_view arg, const char *help) {
    std::string_view name = arg.substr(0, arg.find('='));
    std::string hint = help && name.rfind("--", 0) == 0 ? did_you_mean(name, long_options_of(help)) : std::string();
    return usage_error(std::string(command) + ": unknown option '" + std::string(arg) + "'" + hint, command);
}

int run_reporting_exceptions(std::string_view command, int failure, int (*body)(int argc, char **argv), int argc,
                             char **argv) {
    try {
        return body(argc, argv);
    } catch (const std::bad_alloc &) {
        log_error(std::string(command) + ": out of memory");
    } catch (const std::exception &e) {
        log_error(std::string(command) + ": " + e.what());
    }
    return failure;
}

bool write_stdout(std::string_view raw) {
    // Reports are shown on terminals: no control character of a frame name, file name or label
    // reaches them raw (report::escape_control_characters; newlines and tabs of the layout stay).
    std::string text = report::escape_control_characters(raw, /*keep_newlines=*/true);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
        int err = errno;
        log_error(std::string("cannot write to standard output: ") + std::strerror(err));
        return false;
    }
    return true;
}

} // namespace vramtrace::cli
