// Diagnostics and output helpers shared by the subcommands.
#include "cli.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

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

void log_error(std::string_view message) { spdlog::error("{}", message); }
void log_warning(std::string_view message) { spdlog::warn("{}", message); }

int usage_error(std::string_view message, std::string_view help_for) {
    std::string hint = help_for.empty() ? "vramtrace --help" : "vramtrace " + std::string(help_for) + " --help";
    spdlog::error("{} (see '{}')", message, hint);
    return kExitUsage;
}

bool write_stdout(std::string_view text) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
        int err = errno;
        log_error(std::string("cannot write to standard output: ") + std::strerror(err));
        return false;
    }
    return true;
}

} // namespace vramtrace::cli
