// `vramtrace summary [--top N] SNAPSHOT`: the summary of a snapshot file, on stdout.
#include <charconv>
#include <string>
#include <string_view>

#include "cli.h"
#include "reporting/summary_format.h"
#include "offline_symbolize.h"
#include "snapshot_reader.h"

namespace vramtrace::cli {

const char *const kSummaryHelp =
    "usage: vramtrace summary [--top N] SNAPSHOT\n"
    "\n"
    "Prints the summary of a snapshot written by libvramtrace.so: per device the current, peak,\n"
    "total allocated and total freed memory (also by kind and by size class, small < 1 MiB and\n"
    "large >= 1 MiB, where the snapshot's event history allows), what nvidia-smi counts beyond it,\n"
    "the top call sites by live bytes and at each device's peak, out-of-memory failures, memory\n"
    "pools, and the allocations still live (leaks, for a snapshot taken at exit). It is the summary\n"
    "the library prints on stderr at exit.\n"
    "\n"
    "options:\n"
    "  --top N       list N call sites per table (default 10; 0 = all)\n"
    "  -h, --help    show this help\n"
    "\n"
    "Exit status: 0 success, 1 the file is missing, unreadable or not a valid snapshot,\n"
    "2 usage error.\n";

namespace {

bool parse_count(std::string_view text, size_t &out) {
    auto res = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && res.ec == std::errc() && res.ptr == text.data() + text.size();
}

} // namespace

int summary_command(int argc, char **argv) {
    report::SummaryOptions options;
    std::string path;
    bool have_path = false, options_done = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (!options_done && (arg == "-h" || arg == "--help")) return write_stdout(kSummaryHelp) ? kExitOk : kExitFailure;
        if (!options_done && arg == "--") {
            options_done = true;
            continue;
        }
        if (!options_done && (arg == "--top" || arg.rfind("--top=", 0) == 0)) {
            std::string_view value;
            if (arg == "--top") {
                if (i + 1 >= argc) return usage_error("summary: --top needs a number", "summary");
                value = argv[++i];
            } else {
                value = arg.substr(6);
            }
            if (!parse_count(value, options.top_n))
                return usage_error("summary: --top needs a number, got '" + std::string(value) + "'", "summary");
            continue;
        }
        if (!options_done && arg.size() > 1 && arg[0] == '-')
            return usage_error("summary: unknown option '" + std::string(arg) + "'", "summary");
        if (have_path) return usage_error("summary: more than one snapshot given", "summary");
        path = arg;
        have_path = true;
    }
    if (!have_path) return usage_error("summary: no snapshot file given", "summary");

    report::Snapshot snapshot;
    std::string error;
    if (!read_snapshot_file(path, &snapshot, &error)) {
        log_error(error);
        return kExitFailure;
    }
    symbolize_offline(snapshot, path); // a crash snapshot: name its frames from the files on disk
    std::string text = report::format_summary(snapshot, options);
    if (text.empty()) {
        log_error(path + ": out of memory while formatting the summary");
        return kExitFailure;
    }
    return write_stdout(text) ? kExitOk : kExitFailure;
}

} // namespace vramtrace::cli
