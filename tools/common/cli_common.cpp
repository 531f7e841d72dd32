// Diagnostics and output helpers shared by the subcommands.
#include "common/cli.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

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
